//! Driven runs: the sequencer on the calling thread, the engine's threads behind it, reporting
//! every transaction to a `txlab_core::protocol::meter::Meter` (the harness's, or the stand-alone meter
//! behind [`RunStats`] of `run`).
//!
//! `Docc::run_metered(&workload, driver, &meter)`: the workload must already be loaded. The
//! calling thread sequences (`crate::sequencer`) through probe 0: it sleeps until the next epoch
//! boundary, takes the completions that arrived, lets those clients submit again (while the meter
//! issues tickets), seals the batch and pushes it to the workers. Worker `w` reports through probe
//! `1 + w`: the commit (with the transaction's type) or the user abort, a retry before it
//! (`Probe::retried`), and per-transaction counters (`Probe::count`): `docc_retries`,
//! `docc_validation_failures`, `docc_retry_lookups_saved`, `docc_retry_lookups_seen_before`,
//! `docc_waits`, `docc_wait_ns`, `docc_settled`, and `restarts:<kind>` per transaction type. Latency runs from
//! the client's submission (its previous transaction's end) to the commit, so it includes the wait
//! for the epoch to close. Every submitted transaction finishes before the run returns (a bounded
//! drain: the batches in flight when the meter stops issuing).

use crate::commit::GcCounters;
use crate::engine::Docc;
use crate::layout::Layout;
use crate::meter::RunMeter;
use crate::pool::Threads;
use crate::run::JobReport;
use crate::schedule::{Batch, Entry, Positioned, Schedule, in_order, log_positions};
use crate::seq::Seq;
use crate::sequencer::{BatchSink, DriverConfig, InputLog, Sequencer, Submission};
use crate::stats::DoccStats;
use hdrhistogram::Histogram;
use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use txlab_core::deterministic::Deterministic;
use txlab_core::protocol::history::Recorder;
use txlab_core::protocol::meter::{Meter, Probe, Ticket};
use txlab_core::{Engine, Error, Program, RunLimit, TxError, TxResult};
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

/// What a stand-alone driven run measured (`StandAlone::run` of DOCC and Calvin).
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
    /// Transactions that ended with a real error.
    pub errors: u64,
    /// The first real error, if any.
    pub first_error: Option<Error>,
    /// By transaction type (`Program::kind`).
    pub by_kind: BTreeMap<&'static str, KindStats>,
    /// Batches sealed.
    pub batches: u64,
    /// Transactions sequenced (restarts included).
    pub sequenced: u64,
    /// DOCC's counters over the run (zero for Calvin).
    pub docc: DoccStats,
    /// Garbage collection over the run.
    pub gc: GcCounters,
    /// Calvin: reconnaissance restarts (`ollp_restarts`).
    pub ollp_restarts: u64,
    /// Calvin: transactions admitted as barriers after repeated restarts.
    pub barriers: u64,
    /// Calvin: nanoseconds the lock managers spent busy (summed over managers), for their
    /// utilization (`lock_manager_busy_ns / (elapsed * lock_managers)`).
    pub lock_manager_busy_ns: u64,
    /// Calvin: number of lock managers (0 for DOCC).
    pub lock_managers: usize,
    /// Latency (microseconds) from submission to commit, the epoch wait included.
    pub latency_us: Histogram<u64>,
}

impl RunStats {
    /// The stand-alone meter's totals as the statistics of a run of `engine`.
    pub(crate) fn from_meter(engine: &'static str, meter: &RunMeter, run: &Metered) -> RunStats {
        let totals = meter.totals();
        let mut by_kind = totals.by_kind;
        for (name, n) in &totals.counters {
            if let Some(kind) = name.strip_prefix(RESTARTS)
                && let Some(k) = by_kind.keys().find(|k| **k == kind).copied()
            {
                by_kind.entry(k).or_default().restarts += n;
            }
        }
        RunStats {
            engine,
            elapsed: meter.elapsed(),
            committed: totals.committed,
            user_aborts: totals.user_aborts,
            errors: run.errors,
            first_error: run.first_error.clone(),
            by_kind,
            batches: run.batches,
            sequenced: run.sequenced,
            docc: DoccStats::default(),
            gc: GcCounters::default(),
            ollp_restarts: 0,
            barriers: 0,
            lock_manager_busy_ns: 0,
            lock_managers: 0,
            latency_us: totals.latency_us,
        }
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
}

pub(crate) fn new_histogram() -> Result<Histogram<u64>, Error> {
    Histogram::new_with_bounds(1, 600_000_000, 3)
        .map_err(|e| Error::Internal(format!("latency histogram: {e}")))
}

/// The prefix of the per-type restart counters (`restarts:<kind>`).
pub const RESTARTS: &str = "restarts:";

/// The counter name `<prefix><kind>`, interned (the meter's counters take `&'static str`;
/// kinds are the `&'static str`s of program types, a small set, so each name is built once).
pub(crate) fn counter_name(prefix: &'static str, kind: &'static str) -> &'static str {
    type Names = HashMap<(&'static str, &'static str), &'static str>;
    static NAMES: OnceLock<Mutex<Names>> = OnceLock::new();
    let map = NAMES.get_or_init(Default::default);
    let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
    map.entry((prefix, kind))
        .or_insert_with(|| Box::leak(format!("{prefix}{kind}").into_boxed_str()))
}

/// What a metered run returns besides what it reported to the meter.
#[derive(Debug, Clone, Default)]
pub struct Metered {
    /// Batches sealed.
    pub batches: u64,
    /// Transactions sequenced (restarts included).
    pub sequenced: u64,
    /// Transactions that ended with a real error (reported to the meter as rolled back).
    pub errors: u64,
    /// The first real error.
    pub first_error: Option<Error>,
}

/// One worker's reporting: its probe, the channel back to the sequencer, and its real errors.
pub(crate) struct Reporter<P> {
    pub probe: P,
    done: Sender<(u32, Instant)>,
    errors: u64,
    first_error: Option<Error>,
}

impl<P: Probe> Reporter<P> {
    pub fn new(probe: P, done: Sender<(u32, Instant)>) -> Self {
        Self {
            probe,
            done,
            errors: 0,
            first_error: None,
        }
    }

    /// Reports a finished transaction and tells its client.
    pub fn finished<T>(
        &mut self,
        kind: &'static str,
        client: u32,
        ticket: &Ticket,
        r: &TxResult<T>,
    ) {
        match r {
            Ok(_) => self.probe.committed(ticket, kind),
            Err(TxError::UserAbort(_)) => self.probe.user_aborted(ticket),
            Err(e) => {
                // A real error is a deterministic result too; the run reports it at the end.
                self.probe.user_aborted(ticket);
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
        let _ = self.done.send((client, Instant::now()));
    }

    /// Reports a restart of a transaction of `kind` (it will run again).
    pub fn restarted(&mut self, kind: &'static str, ticket: &Ticket) {
        self.probe.retried(ticket, 1);
        self.probe.count(counter_name(RESTARTS, kind), 1);
    }

    /// Adds this worker's errors to `run`.
    pub fn into_errors(self, run: &mut Metered) {
        run.errors += self.errors;
        if run.first_error.is_none() {
            run.first_error = self.first_error;
        }
    }
}

/// Sequences a run (module docs) into `sink` until the meter stops issuing and everything
/// finished; completions arrive on `done`, restarted transactions on `restarts`.
pub(crate) fn sequence<W, Q, S>(
    seq: &mut Sequencer<'_, W, Q>,
    sink: &S,
    probe: &mut impl Probe,
    done: &Receiver<(u32, Instant)>,
    restarts: Option<&Receiver<Submission<Q>>>,
    run: &mut Metered,
) -> Result<(), Error>
where
    W: Workload,
    W::Program: Clone,
    Q: Clone,
    S: BatchSink<Q>,
{
    let mut next = seq.started();
    loop {
        let (batches, txns) = seq.seal(sink, probe)?;
        run.batches += batches;
        run.sequenced += txns;
        probe.count("batches", batches);
        if seq.finished() {
            return Ok(());
        }
        next += seq.epoch();
        // Sleep to the epoch boundary, taking completions as they come.
        loop {
            let wait = next.saturating_duration_since(Instant::now());
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

/// A metered run's results and, if it was kept, its input log.
pub type MeteredLog<P> = (Metered, Option<InputLog<P>>);

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

/// Reports a job's DOCC counters (module docs).
fn report_job<P: Probe>(probe: &mut P, kind: &'static str, ticket: &Ticket, job: &JobReport) {
    if job.retried {
        probe.retried(ticket, 1);
        probe.count("docc_retries", 1);
        probe.count(counter_name(RESTARTS, kind), 1);
        if job.validation_failed {
            probe.count("docc_validation_failures", 1);
        }
        probe.count("docc_retry_lookups_saved", job.lookups_saved);
        probe.count("docc_retry_lookups_seen_before", job.lookups_seen_before);
    }
    if let Some(ns) = job.waited_ns {
        probe.count("docc_waits", 1);
        probe.count("docc_wait_ns", ns);
    }
    if job.settled {
        probe.count("docc_settled", 1);
    }
}

impl<L: Layout, Rec: Recorder> Docc<L, Rec> {
    /// Runs `workload` (already loaded) with the sequencer on this thread and
    /// [`DoccConfig::workers`](crate::DoccConfig) workers, reporting to `meter` until it stops
    /// issuing (module docs). Returns the input log if `driver.keep_log` is set.
    pub fn run_metered<W, M>(
        &self,
        workload: &W,
        driver: DriverConfig,
        meter: &M,
    ) -> Result<MeteredLog<W::Program>, Error>
    where
        W: Workload,
        W::Program: Clone + Send + Sync,
        M: Meter,
    {
        let mut seq = Sequencer::new(workload, self.config.batch, &driver, std::convert::identity)?;
        let _run = self.begin_run()?;
        let schedule = Schedule::new(L::SNAPSHOT);
        let (done_tx, done_rx) = channel();
        let workers = self.config.workers;
        let mut run = Metered::default();
        let reporters = std::thread::scope(|s| -> Result<Vec<Reporter<M::Probe<'_>>>, Error> {
            let schedule = &schedule;
            let done_tx = &done_tx;
            let pool = s.spawn(move || {
                self.drive(
                    schedule,
                    workers,
                    Threads::Scoped,
                    |w| Ok(Reporter::new(meter.probe(1 + w), done_tx.clone())),
                    |r: &mut Reporter<M::Probe<'_>>,
                     batch: &Batch<Submission<W::Program>>,
                     i,
                     x,
                     job| {
                        let sub = &batch.jobs[i];
                        let kind = sub.program.kind();
                        report_job(&mut r.probe, kind, &sub.ticket, job);
                        r.finished(kind, sub.client, &sub.ticket, &x);
                    },
                )
            });
            let sink = DoccSink {
                engine: self,
                schedule,
            };
            let mut probe = meter.probe(0);
            let sequenced = sequence(&mut seq, &sink, &mut probe, &done_rx, None, &mut run);
            schedule.close();
            let reporters = pool
                .join()
                .map_err(|_| Error::Internal("the worker pool panicked".into()))??;
            sequenced?;
            Ok(reporters)
        })?;
        for r in reporters {
            r.into_errors(&mut run);
        }
        Ok((run, seq.log))
    }
}

/// The stand-alone runs of a driven engine (DOCC, Calvin), written once over what differs: the
/// engine's metered run and its engine-wide counters around it. `run` and `run_logged` report to
/// a `RunLimit` meter and return [`RunStats`].
pub trait StandAlone: Engine {
    /// What the input log holds for a program `P` (`P` for DOCC; for Calvin, `P` with its
    /// reconnaissance prediction).
    type Entry<P>: Program<Output = P::Output> + Clone + Send + Sync
    where
        P: Program + Clone + Send + Sync;

    /// The engine's counters at the start of a run.
    type Before;

    /// The engine's `run_metered`.
    fn metered<W, M>(
        &self,
        workload: &W,
        driver: DriverConfig,
        meter: &M,
    ) -> Result<MeteredLog<Self::Entry<W::Program>>, Error>
    where
        W: Workload,
        W::Program: Clone + Send + Sync,
        M: Meter;

    /// The engine's counters now.
    fn before(&self) -> Self::Before;

    /// Fills the engine's own fields of `stats` with what its counters did since `before`.
    fn since(&self, before: Self::Before, stats: &mut RunStats);

    /// Runs `workload` (already loaded) until `limit` with the stand-alone meter (module docs).
    fn run<W>(&self, workload: &W, limit: RunLimit, driver: DriverConfig) -> Result<RunStats, Error>
    where
        W: Workload,
        W::Program: Clone + Send + Sync,
    {
        let driver = DriverConfig {
            keep_log: false,
            ..driver
        };
        self.run_logged(workload, limit, driver)
            .map(|(stats, _)| stats)
    }

    /// [`run`](Self::run), also returning the input log when `driver.keep_log` is set.
    fn run_logged<W>(
        &self,
        workload: &W,
        limit: RunLimit,
        driver: DriverConfig,
    ) -> Result<Logged<Self::Entry<W::Program>>, Error>
    where
        W: Workload,
        W::Program: Clone + Send + Sync,
    {
        let meter = RunMeter::new(limit)?;
        let before = self.before();
        let (run, log) = self.metered(workload, driver, &meter)?;
        let mut stats = RunStats::from_meter(self.name(), &meter, &run);
        self.since(before, &mut stats);
        Ok((stats, log))
    }
}

/// `StandAlone::metered` as the engine's own `run_metered` (both engines have one).
macro_rules! metered_by_run_metered {
    () => {
        fn metered<W, M>(
            &self,
            workload: &W,
            driver: DriverConfig,
            meter: &M,
        ) -> Result<MeteredLog<Self::Entry<W::Program>>, Error>
        where
            W: Workload,
            W::Program: Clone + Send + Sync,
            M: Meter,
        {
            self.run_metered(workload, driver, meter)
        }
    };
}
pub(crate) use metered_by_run_metered;

impl<L: Layout, Rec: Recorder> StandAlone for Docc<L, Rec> {
    type Entry<P>
        = P
    where
        P: Program + Clone + Send + Sync;
    type Before = (DoccStats, GcCounters);

    metered_by_run_metered!();

    fn before(&self) -> Self::Before {
        (self.stats(), self.gc())
    }

    fn since(&self, (stats, gc): Self::Before, out: &mut RunStats) {
        out.docc = self.stats().since(&stats);
        let now = self.gc();
        out.gc = GcCounters {
            versions_allocated: now.versions_allocated - gc.versions_allocated,
            versions_trimmed: now.versions_trimmed - gc.versions_trimmed,
            tombstones_retired: now.tombstones_retired - gc.tombstones_retired,
        };
    }
}

impl<L: Layout, Rec: Recorder> Docc<L, Rec> {
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
        let base = self.take_ranks(log.len() as u64);
        let jobs: Vec<_> = log
            .batches
            .iter()
            .flat_map(|b| {
                b.programs
                    .iter()
                    .enumerate()
                    .map(move |(i, program)| (Seq::from_raw(b.first.raw() + i as u64), program))
            })
            .enumerate()
            .map(|(at, (seq, program))| Positioned {
                seq,
                rank: base + at as u64,
                program,
            })
            .collect();
        self.run_positioned(&jobs, workers, Threads::Scoped)
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
        let jobs = self.log_jobs(log)?;
        self.run_positioned(&jobs, workers, Threads::Scoped)
    }
}

impl<L: Layout, Rec: Recorder> Docc<L, Rec> {
    /// The positions of `log` run as this engine's own log (`Deterministic::execute_log`, DOCC's
    /// and Calvin's): one epoch per `2^24` programs, ranks after every earlier run's.
    pub(crate) fn log_jobs<'p, P>(&self, log: &'p [P]) -> Result<Vec<Positioned<'p, P>>, Error> {
        let epochs = log.len().div_ceil(Seq::MAX_BATCH as usize) as u32;
        let first_epoch = self.take_epochs(epochs.max(1))?;
        let base = self.take_ranks(log.len() as u64);
        log_positions(log, first_epoch, base)
    }

    /// Drives `jobs` (positions strictly increasing) as batches of consecutive positions and
    /// collects the results in list order.
    pub(crate) fn run_positioned<P>(
        &self,
        jobs: &[Positioned<'_, P>],
        workers: usize,
        threads: Threads<'_>,
    ) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send,
    {
        let schedule = Schedule::new(L::SNAPSHOT);
        let mut start = 0;
        while start < jobs.len() {
            let (seq0, rank0) = (jobs[start].seq.raw(), jobs[start].rank);
            let mut end = start + 1;
            while end < jobs.len()
                && jobs[end].seq.raw() == seq0 + (end - start) as u64
                && jobs[end].rank == rank0 + (end - start) as u64
            {
                end += 1;
            }
            let batch = (start..end)
                .map(|index| Entry {
                    program: jobs[index].program,
                    index,
                })
                .collect();
            schedule.push(jobs[start].seq, rank0, batch);
            start = end;
        }
        schedule.close();
        let parts = self.drive(
            &schedule,
            workers,
            threads,
            |_| Ok(Vec::new()),
            |out: &mut Vec<(usize, TxResult<P::Output>)>, batch: &Batch<Entry<'_, P>>, i, r, _| {
                out.push((batch.jobs[i].index, r));
            },
        )?;
        in_order(parts.into_iter().flatten(), jobs.len())
    }
}
