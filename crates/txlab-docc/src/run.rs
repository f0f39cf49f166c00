//! The four phases of one transaction at its position in the order (Algorithms 1 to 3), the
//! worker loop that claims transactions in order (`Deterministic::execute_log` and the driver
//! run it).
//!
//! ```text
//! T_N at rank r with dependency `need` (crate::schedule):
//! settled     if the chain already reached `need` when T_N begins, T_N is at its serial
//!             position: it runs once like a retry (below), without waiting or validation
//! execution   run the program against Exec (crate::exec), reading at bound N (snapshots) or
//!             the newest version (basic); keep the lookups when prefetching
//! waiting     until the chain reached `need` (crate::wait): every transaction T_N may depend
//!             on has committed
//! validation  every read's record still shows the version read, at bound N; no scanned stripe
//!             moved; and the program reported no conflict
//! retry       (validation failed) run the program again at bound N, through the first attempt's
//!             references when prefetching; no waiting and no validation follow (Algorithm 3):
//!             every transaction that could change what T_N reads has committed, and none after
//!             T_N can commit before T_N does (they wait for it, or write nothing)
//! commit      if the program succeeded and wrote: install every write as version N (one
//!             committer at a time: crate::commit); then publish the chain (if later
//!             transactions wait for T_N) and mark T_N finished
//! ```
//!
//! The result is decided on validated reads: a user abort or an error after a failed validation
//! is retried like anything else, so what a program returns depends only on the state before it
//! in the order. A program that reports a conflict in its retry (impossible in a serial
//! execution) ends with `Error::Internal` naming its kind.

use crate::commit::Reclaim;
use crate::config::mutated;
use crate::engine::Docc;
use crate::exec::{Attempt, Exec, ExecState, misuse_message, no_conflict_at_serial_position};
use crate::layout::{Keep, Layout};
use crate::pool::Threads;
use crate::schedule::{Batch, Job, Schedule};
use crate::stats::DoccStats;
use crate::wait::Waiters;
use std::marker::PhantomData;
use std::time::Instant;
use txlab_core::protocol::history::{Outcome, Recorder, TxnRecord, WriteEvent, txn_id};
use txlab_core::{Error, Program, TxError, TxResult};

/// What happened to one job, for the driver's per-transaction counters.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct JobReport {
    /// It was retried (Algorithm 3).
    pub retried: bool,
    /// ... because its validation failed (otherwise its program reported a conflict).
    pub validation_failed: bool,
    /// Lookups of the retry answered from the first attempt's references.
    pub lookups_saved: u64,
    /// Lookups of the retry of keys the first attempt had looked up.
    pub lookups_seen_before: u64,
    /// Nanoseconds it waited for its dependency, if it had to.
    pub waited_ns: Option<u64>,
    /// Its dependency had committed before it began: it ran once, without waiting or
    /// validation (`docc_settled`).
    pub settled: bool,
}

/// One worker thread of a deterministic run.
pub(crate) struct RunWorker<'e, L: Layout, Rec: Recorder> {
    engine: &'e Docc<L, Rec>,
    /// This worker's parking slot.
    slot: usize,
    handle: crossbeam_epoch::LocalHandle,
    st: ExecState<L::Record>,
    history: Recording,
    /// The running bounds, read at each commit.
    bounds: Vec<u64>,
    /// Objects this worker handed to the epoch collector, paid back in extra pins
    /// (`crate::commit`, "Freeing").
    reclaim: Reclaim,
    pub stats: DoccStats,
    /// What happened to the last job processed.
    pub report: JobReport,
}

impl<'e, L: Layout, Rec: Recorder> RunWorker<'e, L, Rec> {
    pub fn new(engine: &'e Docc<L, Rec>, slot: usize) -> Self {
        Self {
            engine,
            slot,
            handle: crossbeam_epoch::default_collector().register(),
            st: ExecState::default(),
            history: Recording::new(
                engine
                    .next_worker
                    .fetch_add(1, txlab_core::protocol::sync::Ordering::Relaxed),
            ),
            bounds: Vec::with_capacity(16),
            reclaim: Reclaim::default(),
            stats: DoccStats::default(),
            report: JobReport::default(),
        }
    }

    /// Runs job `i` of `batch` through the four phases (module docs) and returns its result.
    pub fn process<J: Job>(
        &mut self,
        schedule: &Schedule<J>,
        waiters: &Waiters,
        batch: &Batch<J>,
        i: usize,
    ) -> TxResult<<J::P as Program>::Output> {
        let engine = self.engine;
        let config = &engine.config;
        let program = batch.jobs[i].program();
        let dep = batch.deps[i];
        let rank = batch.base_rank + i as u64;
        let seq = batch.seq(i);
        let bound = if L::SNAPSHOT && !mutated!(config, SnapshotIgnoresBound) {
            seq
        } else {
            u64::MAX
        };
        let read_only =
            (dep.read_only && !mutated!(config, InstallReadOnlyWrites)).then(|| program.kind());
        let guard = self.handle.pin();
        self.st.clear();
        let begin_ns = engine.now_ns();
        self.report = JobReport::default();
        // Settled: every transaction T_N depends on has committed already (an `Acquire` load of
        // the chain, which the committer published after its installs), so this execution is
        // already at its serial position, like a retry (Algorithm 3): nothing that T_N reads
        // can change before T_N commits, and neither waiting nor validation is needed.
        let settled = if mutated!(config, SettleEarly) {
            engine.chain.reached(dep.need.saturating_sub(1))
        } else {
            engine.chain.reached(dep.need) && !mutated!(config, SkipValidation)
        };
        let attempt = if settled {
            self.stats.settled += 1;
            self.report.settled = true;
            Attempt::Retry { prefetch: false }
        } else {
            Attempt::First {
                keep: config.prefetch,
            }
        };

        // Execution.
        let first = {
            let mut ops = self.exec(&guard, bound, read_only, attempt);
            program.run(&mut ops)
        };
        let first = if settled {
            no_conflict_at_serial_position(first, program.kind())
        } else {
            first
        };

        // Waiting (the `SettleEarly` mutant waits even when it wrongly settled, so that only
        // its settled decision is wrong).
        if (!settled || mutated!(config, SettleEarly)) && !mutated!(config, SkipWait) {
            let start = Instant::now();
            if waiters.wait(self.slot, &engine.chain, dep.need) {
                let ns = start.elapsed().as_nanos() as u64;
                self.stats.waits += 1;
                self.stats.wait_ns += ns;
                self.report.waited_ns = Some(ns);
            }
        }

        // Validation.
        let conflict = match &first {
            _ if settled => None,
            Err(TxError::Conflict(c)) => Some(*c),
            _ if mutated!(config, SkipValidation) => None,
            _ => crate::exec::validation_conflict::<L>(&self.st, &engine.tables, bound, &guard),
        };
        self.report.retried = conflict.is_some();
        let result = match conflict {
            None => first,
            Some(c) => {
                if Rec::ENABLED {
                    self.record(rank, begin_ns, Outcome::Aborted(c.cause), false);
                }
                self.stats.retries += 1;
                if !matches!(first, Err(TxError::Conflict(_))) {
                    self.stats.validation_failures += 1;
                    self.report.validation_failed = true;
                }
                self.st.start_retry();
                #[cfg(feature = "mutation")]
                {
                    self.st.mutant_prefetch_by_position = mutated!(config, PrefetchByPosition);
                }
                let retried = {
                    let mut ops = self.exec(
                        &guard,
                        bound,
                        read_only,
                        Attempt::Retry {
                            prefetch: config.prefetch,
                        },
                    );
                    program.run(&mut ops)
                };
                let saved = std::mem::take(&mut self.st.lookups_saved);
                let seen = std::mem::take(&mut self.st.lookups_seen_before);
                self.stats.retry_lookups_saved += saved;
                self.stats.retry_lookups_seen_before += seen;
                self.report.lookups_saved = saved;
                self.report.lookups_seen_before = seen;
                no_conflict_at_serial_position(retried, program.kind())
            }
        };
        let result = match (result, self.st.misuse) {
            (Ok(_), Some(kind)) => Err(Error::Misuse(misuse_message(kind)).into()),
            (r, _) => r,
        };

        // Commit.
        let installed = if result.is_ok() && !self.st.writes.is_empty() {
            self.install(waiters, seq, &guard)
        } else {
            Ok(())
        };
        let result = match installed {
            Ok(()) => result,
            Err(e) => Err(e.into()),
        };
        match &result {
            Ok(_) => self.stats.committed += 1,
            Err(TxError::UserAbort(_)) => self.stats.user_aborts += 1,
            Err(_) => self.stats.errors += 1,
        }
        if Rec::ENABLED {
            let outcome = if result.is_ok() {
                Outcome::Committed
            } else {
                Outcome::UserAborted
            };
            self.record(rank, begin_ns, outcome, result.is_ok());
        }
        self.st.clear();
        drop(guard);
        if dep.chain {
            engine.chain.publish(rank);
            waiters.wake(rank + 1);
        }
        schedule.complete(batch, i);
        self.reclaim.pay(&self.handle);
        result
    }

    fn exec<'a>(
        &'a mut self,
        guard: &'a crossbeam_epoch::Guard,
        bound: u64,
        read_only: Option<&'static str>,
        attempt: Attempt,
    ) -> Exec<'a, L, Rec> {
        Exec {
            tables: &self.engine.tables,
            st: &mut self.st,
            guard,
            bound,
            attempt,
            read_only,
            retired_tags: &self.engine.retired_tags,
            _rec: PhantomData,
        }
    }

    /// The commit phase's installs and garbage collection (crate::commit).
    fn install(
        &mut self,
        waiters: &Waiters,
        seq: u64,
        guard: &crossbeam_epoch::Guard,
    ) -> Result<(), Error> {
        let engine = self.engine;
        waiters.bounds(&mut self.bounds);
        let (keep, horizon) = if mutated!(engine.config, GcIgnoresRunning) {
            // Trim as if nothing else ran: keep the new version only, retire below ourselves.
            (Keep::Below(&[]), seq)
        } else {
            // Our own bound is among them, so the list is not empty.
            (
                Keep::Below(&self.bounds),
                self.bounds.last().copied().unwrap_or(seq),
            )
        };
        let mut committer = engine.committer();
        let before = committer.gc.deferred();
        committer.install::<L>(
            &self.st,
            &engine.tables,
            seq,
            keep,
            guard,
            Rec::ENABLED,
            &mut self.history.writes,
        )?;
        let tags = Rec::ENABLED.then_some(&engine.retired_tags);
        committer.retire::<L>(&engine.tables, horizon, guard, tags);
        self.reclaim.handed(before, committer.gc.deferred());
        Ok(())
    }

    /// Records the attempt that just ended (only called when recording).
    fn record(&mut self, rank: u64, begin_ns: u64, outcome: Outcome, with_writes: bool) {
        self.history.record(
            self.engine,
            &mut self.st,
            Some(rank),
            begin_ns,
            outcome,
            with_writes,
        );
    }
}

/// A worker's history recording: its id, its records so far and the write events of the
/// transaction being committed (shared by DOCC's workers, interactive ones and Calvin's).
#[derive(Debug)]
pub(crate) struct Recording {
    id: u32,
    records: u64,
    pub writes: Vec<WriteEvent>,
}

impl Recording {
    pub fn new(id: u32) -> Self {
        Self {
            id,
            records: 0,
            writes: Vec::new(),
        }
    }

    /// Hands the attempt that just ended to the engine's recorder: its reads and scans from
    /// `st`, its writes if `with_writes`. With the sequence clock a transaction of rank `r` runs
    /// from `2r` to `2r + 1`; otherwise from `begin_ns` to now.
    pub fn record<L: Layout, Rec: Recorder>(
        &mut self,
        engine: &Docc<L, Rec>,
        st: &mut ExecState<L::Record>,
        rank: Option<u64>,
        begin_ns: u64,
        outcome: Outcome,
        with_writes: bool,
    ) {
        let (begin_ns, end_ns) = match rank {
            Some(r) if engine.config.sequence_clock => (2 * r, 2 * r + 1),
            _ => (begin_ns, engine.now_ns()),
        };
        self.records += 1;
        let writes = if with_writes {
            std::mem::take(&mut self.writes)
        } else {
            self.writes.clear();
            Vec::new()
        };
        engine.recorder.record(TxnRecord {
            id: txn_id(self.id, self.records),
            reads: std::mem::take(&mut st.h_reads),
            writes,
            scans: std::mem::take(&mut st.h_scans),
            outcome,
            begin_ns,
            end_ns,
        });
    }
}

impl<L: Layout, Rec: Recorder> Docc<L, Rec> {
    /// Runs `schedule` on `workers` threads until it is closed and drained. Each thread keeps a
    /// state made by `make` (its index given), and `each` receives every job's result with the
    /// thread's state, the batch, the index and what happened to the job. Returns the states.
    pub(crate) fn drive<J, S, M, F>(
        &self,
        schedule: &Schedule<J>,
        workers: usize,
        threads: Threads<'_>,
        make: M,
        each: F,
    ) -> Result<Vec<S>, Error>
    where
        J: Job,
        S: Send,
        M: Fn(usize) -> Result<S, Error> + Sync,
        F: Fn(&mut S, &Batch<J>, usize, TxResult<<J::P as Program>::Output>, &JobReport) + Sync,
    {
        let waiters = Waiters::new(workers);
        let (outcomes, ()) = threads.run(
            workers,
            |w| -> Result<S, Error> {
                let mut state = make(w)?;
                let mut worker = RunWorker::new(self, w);
                let mut current = None;
                while let Some((batch, i)) = schedule.claim(&mut current, &waiters, w) {
                    let r = worker.process(schedule, &waiters, &batch, i);
                    each(&mut state, &batch, i, r, &worker.report);
                }
                self.merge_stats(&worker.stats);
                Ok(state)
            },
            || (),
        )?;
        outcomes.into_iter().map(|o| o.and_then(|s| s)).collect()
    }
}
