//! Driven runs: the sequencer on the calling thread, the engine's threads behind it, and the
//! [`RunStats`] they report (shaped like `txlab_batch::Pipeline::run`'s).
//!
//! `Docc::run(&workload, limit, driver)`: the workload must already be loaded. The calling
//! thread sequences (`crate::sequencer`): it sleeps until the next epoch boundary, takes the
//! completions that arrived, lets those clients submit again, seals the batch and pushes it to the
//! workers. Every submitted transaction finishes before `run` returns (a bounded drain: at most
//! the batches in flight when the limit is reached).

use crate::commit::GcCounters;
use crate::engine::Docc;
use crate::layout::Layout;
use crate::schedule::{Batch, Schedule};
use crate::seq::Seq;
use crate::sequencer::{BatchSink, DriverConfig, InputLog, Sequencer, Submission};
use crate::stats::DoccStats;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};
use txlab_core::deterministic::Deterministic;
use txlab_core::history::Recorder;
use txlab_core::{Error, Program, RunLimit, TxError, TxResult};
use txlab_workload::Workload;

/// Per-transaction-type counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindStats {
    /// Committed.
    pub committed: u64,
    /// Rolled back by the program.
    pub user_aborts: u64,
    /// DOCC: retries; Calvin: reconnaissance restarts.
    pub restarts: u64,
}

/// What a driven run measured.
#[derive(Debug, Clone)]
pub struct RunStats {
    /// The engine's name.
    pub engine: &'static str,
    /// From the first submission to the last completion.
    pub elapsed: Duration,
    /// Transactions committed.
    pub committed: u64,
    /// Transactions the program rolled back (deterministically).
    pub user_aborts: u64,
    /// Transactions that ended with a real error, and the first such error.
    pub errors: u64,
    /// The first real error, if any.
    pub first_error: Option<Error>,
    /// By transaction type (`Program::kind`).
    pub by_kind: BTreeMap<&'static str, KindStats>,
    /// Batches sealed, and transactions in them.
    pub batches: u64,
    /// Transactions sequenced (restarts included).
    pub sequenced: u64,
    /// DOCC's counters over the run (zero for Calvin).
    pub docc: DoccStats,
    /// Garbage collection over the run.
    pub gc: GcCounters,
    /// Calvin: reconnaissance restarts (`ollp_restarts`).
    pub ollp_restarts: u64,
    /// Calvin: nanoseconds the lock managers spent busy (summed over managers), for their
    /// utilization (`lock_manager_busy_ns / (elapsed * lock_managers)`).
    pub lock_manager_busy_ns: u64,
    /// Calvin: number of lock managers (0 for DOCC).
    pub lock_managers: usize,
    /// Latency (microseconds) from submission to commit, the epoch wait included.
    pub latency_us: Histogram<u64>,
}

impl RunStats {
    pub(crate) fn new(engine: &'static str) -> Result<Self, Error> {
        Ok(Self {
            engine,
            elapsed: Duration::ZERO,
            committed: 0,
            user_aborts: 0,
            errors: 0,
            first_error: None,
            by_kind: BTreeMap::new(),
            batches: 0,
            sequenced: 0,
            docc: DoccStats::default(),
            gc: GcCounters::default(),
            ollp_restarts: 0,
            lock_manager_busy_ns: 0,
            lock_managers: 0,
            latency_us: new_histogram()?,
        })
    }

    /// Committed transactions per second.
    pub fn throughput(&self) -> f64 {
        self.committed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Latency at `percentile` (0..=100), microseconds.
    pub fn latency_percentile_us(&self, percentile: f64) -> u64 {
        self.latency_us.value_at_percentile(percentile)
    }

    /// Fraction of the run the lock managers were busy (Calvin; 0 for DOCC).
    pub fn lock_manager_utilization(&self) -> f64 {
        if self.lock_managers == 0 {
            return 0.0;
        }
        self.lock_manager_busy_ns as f64
            / (self.elapsed.as_nanos() as f64 * self.lock_managers as f64).max(1.0)
    }

    /// Adds one worker's tally.
    pub(crate) fn absorb(&mut self, t: Tally) -> Result<(), Error> {
        self.committed += t.committed;
        self.user_aborts += t.user_aborts;
        self.errors += t.errors;
        if self.first_error.is_none() {
            self.first_error = t.first_error;
        }
        for (k, s) in t.by_kind {
            let e = self.by_kind.entry(k).or_default();
            e.committed += s.committed;
            e.user_aborts += s.user_aborts;
            e.restarts += s.restarts;
        }
        self.latency_us
            .add(&t.latency_us)
            .map_err(|e| Error::Internal(format!("latency histogram: {e}")))
    }
}

pub(crate) fn new_histogram() -> Result<Histogram<u64>, Error> {
    Histogram::new_with_bounds(1, 600_000_000, 3)
        .map_err(|e| Error::Internal(format!("latency histogram: {e}")))
}

/// One worker's counts during a driven run.
#[derive(Debug)]
pub(crate) struct Tally {
    pub committed: u64,
    pub user_aborts: u64,
    pub errors: u64,
    pub first_error: Option<Error>,
    pub by_kind: BTreeMap<&'static str, KindStats>,
    pub latency_us: Histogram<u64>,
    pub done: Sender<(u32, Instant)>,
}

impl Tally {
    pub fn new(done: Sender<(u32, Instant)>) -> Result<Self, Error> {
        Ok(Self {
            committed: 0,
            user_aborts: 0,
            errors: 0,
            first_error: None,
            by_kind: BTreeMap::new(),
            latency_us: new_histogram()?,
            done,
        })
    }

    /// Counts a finished transaction and tells its client.
    pub fn finished<T>(
        &mut self,
        kind: &'static str,
        client: u32,
        submitted: Instant,
        r: &TxResult<T>,
    ) {
        let now = Instant::now();
        let k = self.by_kind.entry(kind).or_default();
        match r {
            Ok(_) => {
                self.committed += 1;
                k.committed += 1;
                let us = now.duration_since(submitted).as_micros() as u64;
                self.latency_us.saturating_record(us.max(1));
            }
            Err(TxError::UserAbort(_)) => {
                self.user_aborts += 1;
                k.user_aborts += 1;
            }
            Err(e) => {
                self.errors += 1;
                if self.first_error.is_none() {
                    self.first_error = Some(match e {
                        TxError::Error(e) => e.clone(),
                        other => Error::Internal(other.to_string()),
                    });
                }
            }
        }
        // The sequencer outlives every worker; a failed send only means it already stopped.
        let _ = self.done.send((client, now));
    }

    /// Counts a restart of a transaction of `kind`.
    pub fn restarted(&mut self, kind: &'static str) {
        self.by_kind.entry(kind).or_default().restarts += 1;
    }
}

/// Sequences a run (module docs) into `sink` until `finished`; completions arrive on `done`.
pub(crate) fn sequence<W, Q, S>(
    seq: &mut Sequencer<'_, W, Q>,
    sink: &S,
    done: &Receiver<(u32, Instant)>,
    restarts: Option<&Receiver<Submission<Q>>>,
    stats: &mut RunStats,
) -> Result<(), Error>
where
    W: Workload,
    W::Program: Clone,
    Q: Clone,
    S: BatchSink<Q>,
{
    let mut next = seq.started();
    loop {
        let (batches, txns) = seq.seal(sink)?;
        stats.batches += batches;
        stats.sequenced += txns;
        if seq.finished() {
            return Ok(());
        }
        next += seq.epoch();
        // Sleep to the epoch boundary, taking completions as they come.
        loop {
            let now = Instant::now();
            let wait = next.saturating_duration_since(now);
            match done.recv_timeout(wait) {
                Ok((client, at)) => seq.completed(client, at),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Error::Internal(
                        "every worker stopped before the run finished".into(),
                    ));
                }
            }
            if wait.is_zero() {
                break;
            }
        }
        while let Ok((client, at)) = done.try_recv() {
            seq.completed(client, at);
        }
        if let Some(r) = restarts {
            while let Ok(s) = r.try_recv() {
                seq.in_flight -= 1;
                seq.resubmit(s);
            }
        }
        if next < Instant::now() {
            // Fell behind (a slow machine): start the next epoch from now.
            next = Instant::now();
        }
    }
}

/// A run's statistics and, if it was kept, its input log.
pub type Logged<P> = (RunStats, Option<InputLog<P>>);

/// DOCC's scheduler as the sequencer's sink.
struct DoccSink<'a, L: Layout, Rec: Recorder, P> {
    engine: &'a Docc<L, Rec>,
    schedule: &'a Schedule<Submission<P>>,
}

impl<L: Layout, Rec: Recorder, P: Program + Send + Sync> BatchSink<P> for DoccSink<'_, L, Rec, P> {
    fn push(&self, first: Seq, jobs: Vec<Submission<P>>) -> Result<(), Error> {
        let rank = self.engine.take_ranks(jobs.len() as u64);
        self.schedule.push(first, rank, jobs);
        Ok(())
    }

    fn next_epoch(&self) -> Result<u32, Error> {
        self.engine.take_epochs(1)
    }
}

impl<L: Layout, Rec: Recorder> Docc<L, Rec> {
    /// Runs `workload` (already loaded) with the sequencer on this thread and
    /// [`DoccConfig::workers`](crate::DoccConfig) workers until `limit` (module docs).
    pub fn run<W>(
        &self,
        workload: &W,
        limit: RunLimit,
        driver: DriverConfig,
    ) -> Result<RunStats, Error>
    where
        W: Workload,
        W::Program: Clone + Send + Sync,
    {
        self.run_logged(
            workload,
            limit,
            DriverConfig {
                keep_log: false,
                ..driver
            },
        )
        .map(|(stats, _)| stats)
    }

    /// [`run`](Self::run), also returning the input log when `driver.keep_log` is set.
    pub fn run_logged<W>(
        &self,
        workload: &W,
        limit: RunLimit,
        driver: DriverConfig,
    ) -> Result<Logged<W::Program>, Error>
    where
        W: Workload,
        W::Program: Clone + Send + Sync,
    {
        let mut seq = Sequencer::new(
            workload,
            limit,
            self.config.batch,
            &driver,
            std::convert::identity,
        )?;
        let _run = self.begin_run()?;
        let before = (self.stats(), self.gc());
        let mut stats = RunStats::new(self.mode().name())?;
        let schedule = Schedule::new(L::SNAPSHOT);
        let (done_tx, done_rx) = channel();
        let workers = self.config.workers;
        let tallies = std::thread::scope(|s| -> Result<Vec<Tally>, Error> {
            let schedule = &schedule;
            let runner = s.spawn(|| {
                self.drive(
                    schedule,
                    workers,
                    |_| Tally::new(done_tx.clone()),
                    |t: &mut Tally, batch: &Batch<Submission<W::Program>>, i, r, retried| {
                        let job = &batch.jobs[i];
                        if retried {
                            t.restarted(job.program.kind());
                        }
                        t.finished(job.program.kind(), job.client, job.submitted, &r);
                    },
                )
            });
            let sink = DoccSink {
                engine: self,
                schedule,
            };
            let sequenced = sequence(&mut seq, &sink, &done_rx, None, &mut stats);
            schedule.close();
            let tallies = runner
                .join()
                .map_err(|_| Error::Internal("the worker pool panicked".into()))??;
            sequenced?;
            Ok(tallies)
        })?;
        stats.elapsed = seq.started().elapsed();
        for t in tallies {
            stats.absorb(t)?;
        }
        stats.docc = self.stats().since(&before.0);
        let gc = self.gc();
        stats.gc = GcCounters {
            versions_allocated: gc.versions_allocated - before.1.versions_allocated,
            versions_trimmed: gc.versions_trimmed - before.1.versions_trimmed,
            tombstones_retired: gc.tombstones_retired - before.1.tombstones_retired,
        };
        Ok((stats, seq.log))
    }

    /// Re-executes a recorded input log on this engine (which must hold the state the recorded
    /// run started from) with `workers` workers; returns the results in log order. The same log
    /// gives the same final state at any worker count.
    ///
    /// Errors: a log whose positions do not increase or do not fit a batch (naming the batch),
    /// a log whose epochs this engine has already used, and `execute_log`'s errors.
    pub fn replay<P>(
        &self,
        log: &InputLog<P>,
        workers: usize,
    ) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send,
    {
        log.validate()?;
        crate::config::check_workers(workers)?;
        let _run = self.begin_run()?;
        let last = log.batches.last().map_or(0, |b| b.first.epoch());
        let first = log.batches.first().map_or(1, |b| b.first.epoch());
        self.reserve_epochs(first, last)?;
        let schedule = Schedule::new(L::SNAPSHOT);
        let total = log.len();
        let base = self.take_ranks(total as u64);
        let mut at = 0usize;
        for b in &log.batches {
            schedule.push(b.first, base + at as u64, b.programs.iter().collect());
            at += b.programs.len();
        }
        schedule.close();
        self.collect(&schedule, workers, base, total)
    }
}

impl<L: Layout, Rec: Recorder> Deterministic for Docc<L, Rec> {
    /// Runs the log as one epoch per `2^24` programs, claimed in order by `workers` threads
    /// (`crate::run`). Errors: `workers` outside `1..=1024`, interactive workers alive or another
    /// run in progress, or the engine's epochs used up.
    fn execute_log<P>(&self, log: &[P], workers: usize) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send,
    {
        crate::config::check_workers(workers)?;
        let _run = self.begin_run()?;
        let chunk = Seq::MAX_BATCH as usize;
        let epochs = log.len().div_ceil(chunk) as u32;
        let first_epoch = self.take_epochs(epochs.max(1))?;
        let schedule = Schedule::new(L::SNAPSHOT);
        let base = self.take_ranks(log.len() as u64);
        for (c, part) in log.chunks(chunk).enumerate() {
            let seq0 = Seq::new(first_epoch + c as u32, 0, 0)?;
            schedule.push(seq0, base + (c * chunk) as u64, part.iter().collect());
        }
        schedule.close();
        self.collect(&schedule, workers, base, log.len())
    }
}

impl<L: Layout, Rec: Recorder> Docc<L, Rec> {
    /// Drives a closed schedule of borrowed programs whose ranks start at `base` and collects
    /// the `total` results in rank order.
    fn collect<P>(
        &self,
        schedule: &Schedule<&P>,
        workers: usize,
        base: u64,
        total: usize,
    ) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send,
    {
        let parts = self.drive(
            schedule,
            workers,
            |_| Ok(Vec::new()),
            |out: &mut Vec<(usize, TxResult<P::Output>)>, batch: &Batch<&P>, i, r, _| {
                out.push(((batch.base_rank - base) as usize + i, r));
            },
        )?;
        let mut results: Vec<Option<TxResult<P::Output>>> = (0..total).map(|_| None).collect();
        for (at, r) in parts.into_iter().flatten() {
            results[at] = Some(r);
        }
        results
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.ok_or_else(|| Error::Internal(format!("log entry {i} was never executed")))
            })
            .collect()
    }
}
