//! [`Pipeline::run_metered`] and [`Pipeline::run`]: transaction clients and processors driving a
//! workload through the pipeline.
//!
//! Clients (§5.1) keep the system at its concurrency level: client `c` of `n` keeps up to its
//! share of [`PipelineConfig::concurrency`](super::PipelineConfig) transactions in flight,
//! hands each new one to a processor (round-robin) and waits only for completions. Each
//! transaction is stamped by the client's meter probe when it is submitted and reported to it
//! when its processor answers, so latency runs from submission to the commit decision, restarts
//! included (`txlab_core::protocol::meter`).
//!
//! `run_metered` runs until the meter stops issuing (the harness's meter: warm-up, measured
//! interval, cool-down); `run` is the stand-alone form bounded by a transaction count (tests) or
//! a duration, returning [`RunStats`]. In both, every submitted transaction finishes before the
//! call returns.
//!
//! The drain is bounded: a client that stopped issuing waits up to
//! [`PipelineConfig::drain`](super::PipelineConfig) for its transactions in flight, then raises
//! the run's `abandon` flag. From then on a processor that receives an abort decision reports
//! the transaction abandoned (`Probe::abandoned`, with the abort's cause) instead of restarting
//! it; commits still complete. Every live transaction has at most one attempt in the queues, so
//! the run ends one pass through them after the flag, however many transactions are live and
//! however often they would abort (a thousand-fold concurrency on ten keys otherwise restarts
//! forever).
//!
//! Stage times ([`StageTimes`]): each processor stamps an attempt when it asks the storage for
//! its reads and when it sends it to the validator, and adds the time to the answer when it
//! handles it; it also counts how many events it finds waiting each time it takes its queue.
//! By Little's law the time summed over attempts divided by the run's length is the mean number
//! of attempts in that stage.

use super::engine::Pipeline;
pub use super::processor::StageTimes;
use super::processor::{Completion, Finished, ProcessorCounters, ProcessorEvent, processor};
use super::validator::ValidatorSnapshot;
use crate::meter::LimitMeter;
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};
use txlab_core::Error;
use txlab_core::protocol::history::Recorder;
use txlab_core::protocol::meter::{Meter, Probe};
use txlab_core::protocol::sync::mpsc::{RecvTimeoutError, channel};
use txlab_core::protocol::sync::{AtomicBool, Ordering};
use txlab_workload::{Generator, Workload};

pub use txlab_core::RunLimit;

/// What a run measured.
#[derive(Debug, Clone)]
pub struct RunStats {
    /// The batching mode's name.
    pub mode: &'static str,
    /// Wall-clock time from the first submission to the last completion.
    pub elapsed: Duration,
    /// Transactions committed.
    pub committed: u64,
    /// Transactions the program rolled back itself.
    pub user_aborts: u64,
    /// Attempts the validator aborted (each was restarted, or ended an abandoned transaction).
    pub restarts: u64,
    /// Transactions abandoned after the drain bound instead of restarted (module docs).
    pub abandoned: u64,
    /// Most transactions live in one processor at once.
    pub peak_live: usize,
    /// Where the transactions spent their time, all processors together.
    pub stages: StageTimes,
    /// The validator's counters over the run.
    pub validator: ValidatorSnapshot,
    /// Latency (microseconds) from submission to the commit decision, committed transactions.
    pub latency_us: Histogram<u64>,
}

impl RunStats {
    /// Committed transactions per second.
    pub fn throughput(&self) -> f64 {
        self.committed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Mean latency in microseconds.
    pub fn mean_latency_us(&self) -> f64 {
        self.latency_us.mean()
    }

    /// Latency at `percentile` (0..=100) in microseconds.
    pub fn latency_percentile_us(&self, percentile: f64) -> u64 {
        self.latency_us.value_at_percentile(percentile)
    }

    /// Aborted attempts per committed transaction.
    pub fn abort_rate(&self) -> f64 {
        self.restarts as f64 / self.committed.max(1) as f64
    }

    /// Transactions one reordering worker (or, in the single-thread layout, the validator
    /// thread) processes per second of its busy time (pre-validation, graph and reordering);
    /// `None` if nothing was reordered. Busy time is wall-clock time, so a worker descheduled
    /// mid-batch counts as busy: compare rates within one layout and machine.
    pub fn reorder_rate(&self) -> Option<f64> {
        (self.validator.reorder_ns > 0).then(|| {
            self.validator.reordered_txns as f64 / (self.validator.reorder_ns as f64 / 1e9)
        })
    }
}

/// What [`Pipeline::run_metered`] returns besides what it reported to the meter.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeteredRun {
    /// Most transactions live in one processor at once.
    pub peak_live: usize,
    /// Where the transactions spent their time, all processors together, over the whole run.
    pub stages: StageTimes,
}

impl<Rec: Recorder> Pipeline<Rec> {
    /// Runs `workload`'s transactions (generators seeded with `seed`) through the pipeline with
    /// the configured clients, processors and concurrency until `limit` (module docs). The
    /// workload must already be loaded ([`Workload::load`] on this engine).
    pub fn run<W>(&self, workload: &W, limit: RunLimit, seed: u64) -> Result<RunStats, Error>
    where
        W: Workload,
        W::Program: Clone + Send + 'static,
    {
        let meter = LimitMeter::new(limit)?;
        let before = self.shared.counters.snapshot();
        let run = self.run_metered(workload, seed, &meter)?;
        let totals = meter.totals();
        Ok(RunStats {
            mode: self.config.mode.name(),
            elapsed: meter.elapsed(),
            committed: totals.committed,
            user_aborts: totals.user_aborts,
            restarts: totals.conflicts,
            abandoned: totals.abandoned,
            peak_live: run.peak_live,
            stages: run.stages,
            validator: self.shared.counters.snapshot().since(&before),
            latency_us: totals.latency_us,
        })
    }

    /// Runs `workload`'s transactions (generators seeded with `seed`) until `meter` stops
    /// issuing, reporting each one to it (`txlab_core::protocol::meter`): client `c` issues through probe
    /// `c`, and reports the commit (with the attempts the validator aborted) or the user abort
    /// when its processor answers. The validator's counters are
    /// [`Pipeline::validator_counters`]. The workload must already be loaded.
    pub fn run_metered<W, M>(&self, workload: &W, seed: u64, meter: &M) -> Result<MeteredRun, Error>
    where
        W: Workload,
        W::Program: Clone + Send + 'static,
        M: Meter,
    {
        let config = self.config;
        let mut processor_queues = Vec::new();
        let mut processor_inboxes = Vec::new();
        for _ in 0..config.processors {
            let (tx, rx) = channel::<ProcessorEvent<W::Program>>();
            processor_queues.push(tx);
            processor_inboxes.push(rx);
        }
        let mut client_queues = Vec::new();
        let mut client_inboxes = Vec::new();
        for _ in 0..config.clients {
            let (tx, rx) = channel::<Completion>();
            client_queues.push(tx);
            client_inboxes.push(rx);
        }

        let abandon = AtomicBool::new(false);
        let (client_results, processor_results) = std::thread::scope(|scope| {
            let (client_queues, abandon) = (&client_queues, &abandon);
            let processors: Vec<_> = processor_inboxes
                .into_iter()
                .zip(processor_queues.iter())
                .map(|(inbox, own)| {
                    let own = own.clone();
                    scope.spawn(move || processor(self, inbox, own, client_queues, abandon))
                })
                .collect();
            let clients: Vec<_> = client_inboxes
                .into_iter()
                .enumerate()
                .map(|(c, inbox)| {
                    let share = config.concurrency / config.clients
                        + usize::from(c < config.concurrency % config.clients);
                    let queues = processor_queues.clone();
                    let mut generator = workload.generator(c, seed);
                    scope.spawn(move || -> Result<(), Error> {
                        let mut probe = meter.probe(c);
                        let mut error = None;
                        let mut in_flight = 0usize;
                        let mut stopping = false;
                        let mut drain_until = None;
                        let mut next = c;
                        loop {
                            while !stopping && in_flight < share {
                                let Some(ticket) = probe.issue() else {
                                    stopping = true;
                                    break;
                                };
                                let program = generator.next().clone();
                                next = (next + 1) % queues.len();
                                queues[next]
                                    .send(ProcessorEvent::New {
                                        client: c,
                                        program,
                                        ticket,
                                    })
                                    .map_err(|_| {
                                        Error::Internal("a processor has stopped".into())
                                    })?;
                                in_flight += 1;
                            }
                            if in_flight == 0 {
                                break;
                            }
                            let deadline = stopping.then(|| {
                                *drain_until.get_or_insert_with(|| Instant::now() + config.drain)
                            });
                            let done = receive(&inbox, deadline, abandon)?;
                            in_flight -= 1;
                            if done.restarts > 0 {
                                probe.retried(&done.ticket, u64::from(done.restarts));
                            }
                            match done.finished {
                                Finished::Committed => probe.committed(&done.ticket, done.kind),
                                Finished::UserAborted => probe.user_aborted(&done.ticket),
                                Finished::Abandoned(cause) => probe.abandoned(&done.ticket, &cause),
                                Finished::Failed(e) => {
                                    error.get_or_insert(e);
                                    stopping = true;
                                }
                            }
                        }
                        error.map_or(Ok(()), Err)
                    })
                })
                .collect();
            let client_results: Vec<_> = clients
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::Internal("a client thread panicked".into())))
                })
                .collect();
            for q in &processor_queues {
                let _ = q.send(ProcessorEvent::Stop);
            }
            let processor_results: Vec<Result<ProcessorCounters, Error>> = processors
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::Internal("a processor thread panicked".into()))
                    })
                })
                .collect();
            (client_results, processor_results)
        });
        let mut run = MeteredRun {
            peak_live: 0,
            stages: StageTimes::default(),
        };
        for p in processor_results {
            let p = p?;
            run.peak_live = run.peak_live.max(p.peak_live);
            run.stages.add(&p.stages);
        }
        for c in client_results {
            c?;
        }
        Ok(run)
    }
}

/// The next completion for a client; once `deadline` (the end of its drain) has passed, raises
/// `abandon` and waits without a bound (module docs).
fn receive(
    inbox: &std::sync::mpsc::Receiver<Completion>,
    deadline: Option<Instant>,
    abandon: &AtomicBool,
) -> Result<Completion, Error> {
    let stopped = || Error::Internal("processors stopped before answering".into());
    if let Some(deadline) = deadline.filter(|_| !abandon.load(Ordering::Relaxed)) {
        match inbox.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(done) => return Ok(done),
            Err(RecvTimeoutError::Disconnected) => return Err(stopped()),
            Err(RecvTimeoutError::Timeout) => abandon.store(true, Ordering::Relaxed),
        }
    }
    inbox.recv().map_err(|_| stopped())
}
