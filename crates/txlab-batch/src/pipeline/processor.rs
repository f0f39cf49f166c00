//! A processor: the non-blocking transaction coordinator of Ding, Kot, Gehrke, VLDB 2018, §5.1.
//!
//! One thread multiplexes many live transactions. It reacts to one event at a time from its
//! queue and never waits for a particular reply:
//!
//! ```text
//! New(program)        -> declare its accesses; ask a storage worker for the declared reads
//! Reads(values)       -> run the program on the prefetched snapshot (Execution), buffer writes,
//!                        send the read versions and written keys to the validator
//! Decided(Ok(ts))     -> ship the writes with version ts to a storage worker (write phase),
//!                        tell the client
//! Decided(Err(cause)) -> restart: ask the storage for the declared reads again
//! ```
//!
//! Ordering: a transaction aborted because another one committed is restarted when the processor
//! handles its abort decision, which the validator sends after the commit decision (one
//! validation worker, decisions in validation order). With storage routed by key (the default),
//! the processor has already queued the committed writes to the storage worker owning each key
//! when it queues the restart's reads of those keys, so the restart reads them (for commits of
//! this processor; another processor's writes may still be in flight).
//!
//! Scheduling ([`ProcessorScheduling`]): by default the processor takes everything waiting in
//! its queue and handles commit decisions first, then abort decisions, then read replies and new
//! transactions. A commit decision waiting behind hundreds of executions would keep its writes
//! from the storage that long, and every read of those keys served meanwhile is stale and bound
//! to fail validation (the argument of §3.1 for applying writes before reads, applied to the
//! processor's queue).
//!
//! Only commit decisions reach the client; aborted attempts are restarted here, except once the
//! run's `abandon` flag is up (the drain bound has passed, module docs of `driver`): then an
//! abort decision ends the transaction as abandoned. A program whose
//! accesses depend on what it reads ([`txlab_core::AccessSet::dependent`]) reads the undeclared
//! keys from the storage directly during execution. A program that returns a user abort or an
//! error finishes without validation and the client is told so.

use super::config::ProcessorScheduling;
use super::engine::{Pipeline, record_attempt};
use super::execution::{Execution, TxnBuffer};
use super::messages::{Decision, Key, ReadReply, ReplyTo, Sink, ValidationRequest};
use std::collections::VecDeque;
use std::time::Instant;
use txlab_core::protocol::history::{Outcome, Recorder, txn_id};
use txlab_core::protocol::meter::Ticket;
use txlab_core::protocol::sync::mpsc::{Receiver, Sender};
use txlab_core::protocol::sync::{Arc, AtomicBool, Ordering};
use txlab_core::{AccessSet, ConflictCause, Error, Program, TxError};

/// What a processor's queue carries.
pub(crate) enum ProcessorEvent<P> {
    /// A new transaction from client `client`, stamped by the client's meter.
    New {
        client: usize,
        program: P,
        ticket: Ticket,
    },
    /// A storage worker's answer.
    Reads(ReadReply),
    /// The validator's answer.
    Decided(Decision),
    /// Finish (sent once every client has had all its transactions answered).
    Stop,
}

/// How a transaction ended, as told to its client.
#[derive(Debug)]
pub(crate) enum Finished {
    Committed,
    UserAborted,
    /// Its last attempt aborted with this cause after the drain bound: not restarted.
    Abandoned(ConflictCause),
    Failed(Error),
}

/// A processor's answer to a client.
#[derive(Debug)]
pub(crate) struct Completion {
    pub(crate) ticket: Ticket,
    /// Attempts the validator aborted before this outcome.
    pub(crate) restarts: u32,
    /// The program's `Program::kind()`.
    pub(crate) kind: &'static str,
    pub(crate) finished: Finished,
}

/// The reply destination storage workers and the validator answer to.
struct ProcessorSink<P>(Sender<ProcessorEvent<P>>);

impl<P: Send> Sink<ReadReply> for ProcessorSink<P> {
    fn deliver(&self, msg: ReadReply) {
        let _ = self.0.send(ProcessorEvent::Reads(msg));
    }
}

impl<P: Send> Sink<Decision> for ProcessorSink<P> {
    fn deliver(&self, msg: Decision) {
        let _ = self.0.send(ProcessorEvent::Decided(msg));
    }
}

struct Live<P> {
    client: usize,
    program: P,
    ticket: Ticket,
    restarts: u32,
    /// Read replies still awaited (a read split over storage partitions has several parts).
    pending_reads: u32,
    /// The lowest `snapshot_ts` of the replies so far (diagnostics).
    snapshot_ts: u64,
    seq: u64,
    begin_ns: u64,
    /// When the current stage (reads or validation) was asked for.
    asked: Instant,
    buffer: TxnBuffer,
}

/// A processor's live transactions by slot, with the free slots and spare write buffers.
struct Slots<P> {
    live: Vec<Option<Live<P>>>,
    free: Vec<u32>,
    spare: Vec<TxnBuffer>,
    in_flight: usize,
}

impl<P: Program> Slots<P> {
    fn new() -> Self {
        Self {
            live: Vec::new(),
            free: Vec::new(),
            spare: Vec::new(),
            in_flight: 0,
        }
    }

    /// A free slot (filled by the caller) and a buffer for its transaction.
    fn reserve(&mut self) -> (u32, TxnBuffer) {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.live.push(None);
            (self.live.len() - 1) as u32
        });
        self.in_flight += 1;
        (slot, self.spare.pop().unwrap_or_default())
    }

    /// Ends the transaction in `slot` and tells its client.
    fn finish(&mut self, slot: u32, finished: Finished, clients: &[Sender<Completion>]) {
        let txn = self.live[slot as usize].take().expect("slot is live");
        let _ = clients[txn.client].send(Completion {
            ticket: txn.ticket,
            restarts: txn.restarts,
            kind: txn.program.kind(),
            finished,
        });
        self.spare.push(txn.buffer);
        self.free.push(slot);
        self.in_flight -= 1;
    }
}

/// Counters of one processor over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ProcessorCounters {
    /// Attempts aborted by the validator and restarted.
    pub(crate) restarts: u64,
    /// Most transactions live at once.
    pub(crate) peak_live: usize,
    /// The stage times and queue samples of [`StageTimes`].
    pub(crate) stages: StageTimes,
}

/// Where a processor's transactions spend their time, over a run (module docs of `driver`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// Attempts whose reads were fetched, and the nanoseconds from asking the storage to having
    /// every value back at the processor (storage queue and work, the reply's wait in the
    /// processor's queue).
    pub reads: u64,
    /// See [`StageTimes::reads`].
    pub read_ns: u64,
    /// Attempts sent to the validator, and the nanoseconds from sending to handling the decision
    /// (every validator stage's queue and work, the decision's wait in the processor's queue).
    pub validations: u64,
    /// See [`StageTimes::validations`].
    pub validation_ns: u64,
    /// Times the processor took the events waiting in its queue, and the events it took in all
    /// (their ratio is the mean queue length it found; `WritePhaseFirst` only).
    pub drains: u64,
    /// See [`StageTimes::drains`].
    pub drained: u64,
}

impl StageTimes {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &StageTimes) {
        self.reads += other.reads;
        self.read_ns += other.read_ns;
        self.validations += other.validations;
        self.validation_ns += other.validation_ns;
        self.drains += other.drains;
        self.drained += other.drained;
    }

    /// `(name, value)` pairs for engine counters.
    pub fn counters(&self) -> [(&'static str, u64); 6] {
        [
            ("stage_reads", self.reads),
            ("stage_read_ns", self.read_ns),
            ("stage_validations", self.validations),
            ("stage_validation_ns", self.validation_ns),
            ("processor_drains", self.drains),
            ("processor_drained", self.drained),
        ]
    }
}

/// Most events taken from the queue at once under [`ProcessorScheduling::WritePhaseFirst`].
const DRAIN_LIMIT: usize = 4096;

/// The processor's view of its queue: the events already taken from it, by priority.
struct Inbox<P> {
    scheduling: ProcessorScheduling,
    /// Drains and events drained ([`StageTimes::drains`]).
    drains: u64,
    drained: u64,
    commits: VecDeque<Decision>,
    aborts: VecDeque<Decision>,
    others: VecDeque<ProcessorEvent<P>>,
}

impl<P> Inbox<P> {
    fn new(scheduling: ProcessorScheduling) -> Self {
        Self {
            scheduling,
            drains: 0,
            drained: 0,
            commits: VecDeque::new(),
            aborts: VecDeque::new(),
            others: VecDeque::new(),
        }
    }

    /// The next event to handle; `None` once the queue is closed and everything taken was
    /// handled.
    ///
    /// Under [`ProcessorScheduling::WritePhaseFirst`], when nothing taken is left, it waits for
    /// one event and takes whatever else is queued (up to [`DRAIN_LIMIT`]); it then hands out
    /// the commit decisions first (each ships its writes to the storage), then the abort
    /// decisions (each queues its restart's reads, after those writes), then read replies and
    /// new transactions, each class in arrival order.
    fn next(&mut self, queue: &Receiver<ProcessorEvent<P>>) -> Option<ProcessorEvent<P>> {
        if self.scheduling == ProcessorScheduling::ArrivalOrder {
            return queue.recv().ok();
        }
        if self.commits.is_empty() && self.aborts.is_empty() && self.others.is_empty() {
            let first = queue.recv().ok()?;
            self.sort(first);
            self.drains += 1;
            self.drained += 1;
            for _ in 1..DRAIN_LIMIT {
                match queue.try_recv() {
                    Ok(event) => self.sort(event),
                    Err(_) => break,
                }
                self.drained += 1;
            }
        }
        if let Some(d) = self.commits.pop_front() {
            return Some(ProcessorEvent::Decided(d));
        }
        if let Some(d) = self.aborts.pop_front() {
            return Some(ProcessorEvent::Decided(d));
        }
        self.others.pop_front()
    }

    fn sort(&mut self, event: ProcessorEvent<P>) {
        match event {
            ProcessorEvent::Decided(d) if d.outcome.is_ok() => self.commits.push_back(d),
            ProcessorEvent::Decided(d) => self.aborts.push_back(d),
            other => self.others.push_back(other),
        }
    }
}

/// Runs one processor until [`ProcessorEvent::Stop`] (module docs).
pub(crate) fn processor<P, Rec>(
    engine: &Pipeline<Rec>,
    queue: Receiver<ProcessorEvent<P>>,
    own: Sender<ProcessorEvent<P>>,
    clients: &[Sender<Completion>],
    abandon: &AtomicBool,
) -> Result<ProcessorCounters, Error>
where
    P: Program<Output = ()> + Send + 'static,
    Rec: Recorder,
{
    let id = engine.allocate_worker_id()?;
    let sink = Arc::new(ProcessorSink(own));
    let read_reply: ReplyTo<ReadReply> = sink.clone();
    let decision_reply: ReplyTo<Decision> = sink;
    let mut slots = Slots::new();
    let mut access = AccessSet::default();
    let mut keys: Vec<Key> = Vec::new();
    let mut parts: Vec<Vec<Key>> = Vec::new();
    let mut seq = 0u64;
    let mut counters = ProcessorCounters::default();

    // Starts (or restarts) the attempt in `slot`: fetch the declared reads.
    let start = |slot: u32,
                 txn: &mut Live<P>,
                 seq: &mut u64,
                 access: &mut AccessSet,
                 keys: &mut Vec<Key>,
                 parts: &mut Vec<Vec<Key>>|
     -> Result<bool, Error> {
        *seq += 1;
        txn.seq = *seq;
        txn.begin_ns = if Rec::ENABLED {
            engine.recorder.now_ns()
        } else {
            0
        };
        txn.buffer.clear();
        txn.asked = Instant::now();
        txn.snapshot_ts = u64::MAX;
        txn.pending_reads = 0;
        access.clear();
        txn.program.declare(access);
        keys.clear();
        keys.extend(
            access
                .accesses
                .iter()
                .filter(|a| a.2.reads())
                .map(|a| (a.0.0, a.1)),
        );
        keys.sort_unstable();
        keys.dedup();
        if keys.is_empty() {
            txn.snapshot_ts = 0;
            return Ok(true); // nothing to fetch: execute at once
        }
        txn.pending_reads = engine.read_from_storage(slot, keys, &read_reply, parts)?;
        Ok(txn.pending_reads == 0)
    };

    let mut inbox = Inbox::new(engine.config.processor_scheduling);
    while let Some(event) = inbox.next(&queue) {
        let ready: u32 = match event {
            ProcessorEvent::Stop => break,
            ProcessorEvent::New {
                client,
                program,
                ticket,
            } => {
                let (slot, buffer) = slots.reserve();
                let mut txn = Live {
                    client,
                    program,
                    ticket,
                    restarts: 0,
                    pending_reads: 0,
                    snapshot_ts: 0,
                    seq: 0,
                    begin_ns: 0,
                    asked: Instant::now(),
                    buffer,
                };
                counters.peak_live = counters.peak_live.max(slots.in_flight);
                let execute_now =
                    start(slot, &mut txn, &mut seq, &mut access, &mut keys, &mut parts)?;
                slots.live[slot as usize] = Some(txn);
                if !execute_now {
                    continue;
                }
                slot
            }
            ProcessorEvent::Reads(reply) => {
                let Some(Some(txn)) = slots.live.get_mut(reply.slot as usize) else {
                    return Err(Error::Internal(format!(
                        "storage replied for unknown slot {}",
                        reply.slot
                    )));
                };
                for (key, version, value) in reply.values {
                    txn.buffer.prefetch(key, version, value);
                }
                txn.snapshot_ts = txn.snapshot_ts.min(reply.snapshot_ts);
                txn.pending_reads = txn.pending_reads.saturating_sub(1);
                if txn.pending_reads > 0 {
                    continue;
                }
                counters.stages.reads += 1;
                counters.stages.read_ns += txn.asked.elapsed().as_nanos() as u64;
                reply.slot
            }
            ProcessorEvent::Decided(decision) => {
                let slot = decision.slot;
                let Some(Some(txn)) = slots.live.get_mut(slot as usize) else {
                    return Err(Error::Internal(format!(
                        "validator replied for unknown slot {slot}"
                    )));
                };
                counters.stages.validations += 1;
                counters.stages.validation_ns += txn.asked.elapsed().as_nanos() as u64;
                match decision.outcome {
                    Ok(ts) => {
                        let writes = txn.buffer.take_writes();
                        if Rec::ENABLED {
                            record_attempt(
                                &*engine.recorder,
                                txn_id(id, txn.seq),
                                &txn.buffer,
                                &writes,
                                Outcome::Committed,
                                ts,
                                txn.begin_ns,
                            );
                        }
                        if !writes.is_empty() {
                            engine.write_to_storage(ts, writes)?;
                        }
                        slots.finish(slot, Finished::Committed, clients);
                        continue;
                    }
                    Err(cause) => {
                        if Rec::ENABLED {
                            record_attempt(
                                &*engine.recorder,
                                txn_id(id, txn.seq),
                                &txn.buffer,
                                &[],
                                Outcome::Aborted(cause),
                                0,
                                txn.begin_ns,
                            );
                        }
                        if abandon.load(Ordering::Relaxed) {
                            slots.finish(slot, Finished::Abandoned(cause), clients);
                            continue;
                        }
                        counters.restarts += 1;
                        txn.restarts += 1;
                        if !start(slot, txn, &mut seq, &mut access, &mut keys, &mut parts)? {
                            continue;
                        }
                        slot
                    }
                }
            }
        };
        // Execute the transaction in `ready` and send it to the validator.
        let txn = slots.live[ready as usize].as_mut().expect("slot is live");
        let result = txn.program.run(&mut Execution {
            storage: &engine.shared.storage,
            shapes: &engine.shapes,
            buffer: &mut txn.buffer,
        });
        let finished = match result {
            Ok(()) => {
                txn.asked = Instant::now();
                engine.submit(ValidationRequest {
                    slot: ready,
                    reads: txn.buffer.reads().map(|(k, v, _)| (k, v)).collect(),
                    writes: txn.buffer.writes().iter().map(|(k, _)| *k).collect(),
                    restarts: txn.restarts,
                    snapshot_ts: txn.snapshot_ts,
                    reply: decision_reply.clone(),
                })?;
                continue;
            }
            Err(TxError::UserAbort(_)) => Finished::UserAborted,
            Err(TxError::Error(e)) => Finished::Failed(e),
            Err(e) => Finished::Failed(Error::Internal(format!(
                "a pipeline read phase cannot conflict, got {e}"
            ))),
        };
        if Rec::ENABLED {
            record_attempt(
                &*engine.recorder,
                txn_id(id, txn.seq),
                &txn.buffer,
                &[],
                Outcome::UserAborted,
                0,
                txn.begin_ns,
            );
        }
        slots.finish(ready, finished, clients);
    }
    counters.stages.drains = inbox.drains;
    counters.stages.drained = inbox.drained;
    Ok(counters)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    fn label(event: &ProcessorEvent<()>) -> String {
        match event {
            ProcessorEvent::Decided(d) if d.outcome.is_ok() => format!("commit{}", d.slot),
            ProcessorEvent::Decided(d) => format!("abort{}", d.slot),
            ProcessorEvent::Reads(r) => format!("reads{}", r.slot),
            ProcessorEvent::New { .. } => "new".into(),
            ProcessorEvent::Stop => "stop".into(),
        }
    }

    fn handled(scheduling: ProcessorScheduling) -> Vec<String> {
        let (tx, rx) = channel::<ProcessorEvent<()>>();
        let decided = |slot, outcome| ProcessorEvent::Decided(Decision { slot, outcome });
        tx.send(ProcessorEvent::Reads(ReadReply {
            slot: 1,
            values: Vec::new(),
            snapshot_ts: 0,
        }))
        .unwrap();
        tx.send(decided(2, Err(ConflictCause::ReadValidation)))
            .unwrap();
        tx.send(decided(3, Ok(7))).unwrap();
        tx.send(ProcessorEvent::New {
            client: 0,
            program: (),
            ticket: Ticket::new(std::time::Instant::now(), true),
        })
        .unwrap();
        tx.send(decided(4, Ok(8))).unwrap();
        drop(tx);
        let mut inbox = Inbox::new(scheduling);
        std::iter::from_fn(|| inbox.next(&rx))
            .map(|e| label(&e))
            .collect()
    }

    #[test]
    fn commit_decisions_are_handled_before_restarts_and_executions() {
        assert_eq!(
            handled(ProcessorScheduling::WritePhaseFirst),
            ["commit3", "commit4", "abort2", "reads1", "new"]
        );
        assert_eq!(
            handled(ProcessorScheduling::ArrivalOrder),
            ["reads1", "abort2", "commit3", "new", "commit4"]
        );
    }
}
