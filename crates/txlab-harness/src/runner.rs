//! The interactive runner: [`Interactive`], the [`Driver`] of engines whose worker threads run
//! each transaction from `begin` to `commit` themselves, and the types of every run
//! ([`RunConfig`], [`RunResult`]).
//!
//! Protocol of a run (the phases and what counts are [`crate::session`]'s):
//!
//! 1. The driver spawns `threads` scoped workers. Each pins itself ([`Session::pin`]) and waits
//!    at a start gate until the driver's thread has seen every worker arrive; the driver then
//!    tells the session it is ready, and each worker creates its engine worker and workload
//!    generator (inside the warm-up). A thread count the address-space limit cannot hold is
//!    refused before any worker is spawned; a worker thread that still cannot be spawned
//!    releases the others. Both end the run with an error naming `threads`.
//! 2. Each transaction asks its probe whether it counts (`SessionProbe::phase_check`); within one
//!    phase, without a transaction cap or history bound, the check is one `Relaxed` load. On
//!    leaving the warm-up each worker discards its engine's protocol counters
//!    (`Worker::drain_counters`), and on leaving the measured interval it drains them into its
//!    tally, so counters cover exactly the counted transactions.
//! 3. Conflicts are retried with `txlab_core::retry::Backoff` until commit (or until the
//!    policy's `max_attempts`, counted as *abandoned*). A `UserAbort` finishes the transaction. A
//!    real error stops the whole run and is returned.
//!
//! Latency is measured from a transaction's issue (before the generator produces it) to its
//! final commit, retries and backoff included, in nanoseconds into the worker's histogram. Only
//! some transactions are timed: the clock is read at the issue and the commit of a sampled one,
//! and its latency is recorded with a count equal to the commits it stands for
//! ([`crate::sampling`] says which ones are sampled and why the percentiles stay unbiased;
//! transactions of 4 µs or more are all timed). An untimed transaction reads no clock.
//!
//! With [`AckMode::EpochStable`] a commit whose `CommitInfo::acknowledged` is false is only
//! acknowledged once `Engine::stable_epoch() >= info.epoch` (Silo's group commit): the worker
//! counts such commits by epoch and queues the timed ones. It polls `stable_epoch()` (it may take
//! a lock) between transactions, never blocking, about every [`ACK_POLL_INTERVAL`] of real time
//! whatever the transactions' length: a countdown of transactions whose length follows the
//! worker's speed measured between two polls (as the sampler's spacing does), or earlier when a
//! timed transaction's end, whose clock was read anyway, shows the interval elapsed. A poll reads
//! the clock after `stable_epoch()`, and the timed commits it finds stable are acknowledged at
//! that instant; it then records at most [`ACK_RECORDS_PER_POLL`] acknowledged timed commits in
//! the histogram, so the work between two transactions stays bounded when an epoch's samples
//! become stable at once (recording a whole epoch in one poll would pause the worker at every
//! epoch's start, when its commits wait longest for their acknowledgement, and its commits
//! would miss from that part of the distribution). An untimed transaction reads no clock: a
//! poll's clock read is between transactions, outside every timed interval. After `STOP` each
//! worker records what is acknowledged and waits up to [`RunConfig::ack_timeout`] for its
//! pending commits; any left are reported as `unacknowledged` and the timed ones among them have
//! no latency sample.
//!
//! Throughput is commits divided by the coordinator's measured interval; the abort rate is
//! `conflicts / (commits + conflicts)`.

use crate::driver::{Driven, Driver, measure};
use crate::sampling::Sampler;
use crate::session::Session;
use crate::topology::Placement;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Condvar, Mutex};
// `txlab_core::protocol::sync` has no barrier; the start barrier is the one primitive taken from std.
use std::time::{Duration, Instant};
use txlab_core::protocol::meter::Meter;
use txlab_core::protocol::sync::IgnorePoison;
use txlab_core::retry::Backoff;
use txlab_core::{
    AckMode, Engine, Error, Program, RetryPolicy, RunLimit, Schema, TableId, Transaction,
};
use txlab_core::{TxError, Worker};
use txlab_workload::{Generator, Workload};

/// Largest accepted thread count.
pub const MAX_THREADS: usize = 1024;
/// Longest accepted warm-up, measurement or cool-down interval.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);
/// Largest latency the histograms hold (longer ones are clamped to it): one hour in ns.
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;
/// The default cool-down ([`RunConfig::cooldown`]).
pub const DEFAULT_COOLDOWN: Duration = Duration::from_millis(100);
/// How often a worker with pending epoch acknowledgements polls `Engine::stable_epoch`, in real
/// time (module docs).
pub const ACK_POLL_INTERVAL: Duration = Duration::from_micros(20);
/// The most acknowledged timed commits one poll records in the histogram (module docs). A worker
/// times about one transaction per [`crate::sampling::SAMPLE_SPACING`] of its work and polls
/// about every [`ACK_POLL_INTERVAL`], so about 5 timed commits are acknowledged per poll on
/// average; 32 per poll drain an epoch's samples, acknowledged together, in a sixth of the
/// epoch or less.
pub const ACK_RECORDS_PER_POLL: usize = 32;
/// The longest countdown between two acknowledgement polls, in transactions.
const MAX_POLL_SPACING_TXNS: u64 = 1 << 16;

/// What to run and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunConfig {
    /// Worker threads, `1..=MAX_THREADS`.
    pub threads: usize,
    /// Warm-up before measuring (may be zero).
    pub warmup: Duration,
    /// Measured interval (must be non-zero).
    pub duration: Duration,
    /// Unmeasured interval after the measured one, during which workers keep running (may be
    /// zero, at most [`MAX_DURATION`]).
    pub cooldown: Duration,
    /// Seed for the workload generators (thread `i` gets `generator(i, seed)`).
    pub seed: u64,
    /// CPU placement.
    pub placement: Placement,
    /// Conflict retry policy.
    pub retry: RetryPolicy,
    /// How long workers wait after the run for pending epoch acknowledgements.
    pub ack_timeout: Duration,
    /// If set, the measured interval also ends once this many transactions were issued in it
    /// (at least 1): the way to run a [`RunLimit::Transactions`] limit
    /// ([`RunConfig::with_limit`]).
    pub transaction_cap: Option<u64>,
    /// If set, the most attempts (transactions issued, and each of their retries) the whole
    /// run may make, warm-up and cool-down included (at least 1000): the bound on the size of a
    /// recorded history, which keeps every attempt of every phase. The session spends at most a
    /// quarter of it on the warm-up and ends the measured interval at seven eighths of it
    /// ([`crate::session`]).
    pub history_bound: Option<u64>,
}

/// The smallest [`RunConfig::history_bound`].
pub const MIN_HISTORY_BOUND: u64 = 1000;

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            threads: 1,
            warmup: Duration::from_secs(1),
            duration: Duration::from_secs(5),
            cooldown: DEFAULT_COOLDOWN,
            seed: 42,
            placement: Placement::PhysicalCores,
            retry: RetryPolicy::default(),
            ack_timeout: Duration::from_secs(10),
            transaction_cap: None,
            history_bound: None,
        }
    }
}

impl RunConfig {
    /// Checks the values; the error names the bad field and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.threads == 0 || self.threads > MAX_THREADS {
            return Err(Error::invalid(
                "threads",
                self.threads,
                format!("1..={MAX_THREADS}"),
            ));
        }
        if self.duration.is_zero() || self.duration > MAX_DURATION {
            return Err(Error::invalid(
                "duration",
                format!("{:?}", self.duration),
                "greater than 0 and at most 24h",
            ));
        }
        if self.warmup > MAX_DURATION {
            return Err(Error::invalid(
                "warmup",
                format!("{:?}", self.warmup),
                "at most 24h",
            ));
        }
        if self.cooldown > MAX_DURATION {
            return Err(Error::invalid(
                "cooldown",
                format!("{:?}", self.cooldown),
                "at most 24h",
            ));
        }
        if self.retry.max_attempts == Some(0) {
            return Err(Error::invalid("max_attempts", 0, "at least 1"));
        }
        if self.transaction_cap == Some(0) {
            return Err(Error::invalid("transaction_cap", 0, "at least 1"));
        }
        if let Some(b) = self.history_bound.filter(|&b| b < MIN_HISTORY_BOUND) {
            return Err(Error::invalid(
                "history_bound",
                b,
                format!("at least {MIN_HISTORY_BOUND}"),
            ));
        }
        Ok(())
    }

    /// This configuration with its measured interval bounded by `limit`: a duration, or a
    /// number of transactions issued in it (then the interval lasts at most [`MAX_DURATION`]).
    pub fn with_limit(self, limit: RunLimit) -> Result<Self, Error> {
        Ok(match limit.validate()? {
            RunLimit::Duration(duration) => Self {
                duration,
                transaction_cap: None,
                ..self
            },
            RunLimit::Transactions(n) => Self {
                duration: MAX_DURATION,
                transaction_cap: Some(n),
                ..self
            },
        })
    }
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Maximum.
    pub max_us: f64,
}

impl LatencySummary {
    /// Percentiles of a histogram of nanoseconds (all zero if it is empty).
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Self {
            p50_us: us(h.value_at_quantile(0.50)),
            p90_us: us(h.value_at_quantile(0.90)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            max_us: us(h.max()),
        }
    }
}

/// The percentiles (in %) at which [`RunResult::latency_cdf`] samples the latency distribution:
/// the minimum (0), every whole percent, the tail (99.5 … 99.99) and the maximum (100).
pub fn cdf_percentiles() -> impl Iterator<Item = f64> {
    (0..=99)
        .map(f64::from)
        .chain([99.5, 99.9, 99.95, 99.99, 100.0])
}

/// One point of a latency CDF: a fraction `percentile / 100` of the transactions had a latency of
/// at most `latency_us`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CdfPoint {
    /// Percentile, 0..=100.
    pub percentile: f64,
    /// Latency in microseconds (the histogram bucket's upper end: 3 significant digits).
    pub latency_us: f64,
}

/// The latency CDF of a histogram of nanoseconds, sampled at [`cdf_percentiles`] (empty if the
/// histogram is).
pub fn latency_cdf(h: &Histogram<u64>) -> Vec<CdfPoint> {
    if h.is_empty() {
        return Vec::new();
    }
    cdf_percentiles()
        .map(|percentile| CdfPoint {
            percentile,
            latency_us: h.value_at_quantile(percentile / 100.0) as f64 / 1000.0,
        })
        .collect()
}

/// The outcome of one run (read back from `results.json` without its histogram).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// Worker threads.
    pub threads: usize,
    /// The measured interval in seconds (the coordinator's clock).
    pub elapsed_s: f64,
    /// Committed transactions.
    pub commits: u64,
    /// Transactions the program rolled back (finished, not retried).
    pub user_aborts: u64,
    /// Conflict aborts (each one an aborted attempt).
    pub conflicts: u64,
    /// Re-executions after a conflict.
    pub retries: u64,
    /// Transactions given up after the retry policy's `max_attempts`.
    pub abandoned: u64,
    /// Conflict aborts by `ConflictCause::name()`.
    pub conflicts_by_cause: BTreeMap<String, u64>,
    /// Conflict aborts of the interactive runner by cause and by the table the conflict named:
    /// `<cause>@<table>` (e.g. `phantom_validation@new_order`; `@-` where it named no table).
    /// Tables are named by the workload's schema ([`RunResult::name_tables`]).
    pub conflicts_by_table: BTreeMap<String, u64>,
    /// Protocol-specific counters (`Worker::drain_counters`), summed over workers.
    pub counters: BTreeMap<String, u64>,
    /// Commits by transaction type (`Program::kind()`, e.g. TPC-C's `new_order`).
    pub commits_by_kind: BTreeMap<String, u64>,
    /// Commits still waiting for their epoch to become stable when the run ended.
    pub unacknowledged: u64,
    /// Commits per second.
    pub throughput_tps: f64,
    /// `conflicts / (commits + conflicts)`.
    pub abort_rate: f64,
    /// Latency percentiles.
    pub latency: LatencySummary,
    /// The latency distribution at [`cdf_percentiles`] (empty without commits), for CDF plots.
    pub latency_cdf: Vec<CdfPoint>,
    /// Committed transactions per worker.
    pub per_thread_commits: Vec<u64>,
    /// Process CPU time (user + system) during the measured interval, in seconds.
    pub cpu_time_s: f64,
    /// Peak resident set size of the process so far, in bytes.
    pub peak_rss_bytes: u64,
    /// The CPU each worker was pinned to (`None`: unpinned or pinning refused).
    pub cpus: Vec<Option<usize>>,
    /// More workers than the placement's distinct CPUs.
    pub oversubscribed: bool,
    /// Whether the engine acknowledged at commit or at epoch stability.
    pub ack: String,
    /// Merged latency histogram in ns (first begin to acknowledged commit); empty in a result
    /// read back from JSON.
    #[serde(skip, default = "unrecorded")]
    pub latency_ns: Histogram<u64>,
}

/// The histogram of a result read back from JSON, which does not carry one: empty.
fn unrecorded() -> Histogram<u64> {
    // 1 significant digit is within hdrhistogram's accepted 0..=5: creating it cannot fail.
    Histogram::new(1).expect("1 significant digit is accepted")
}

impl RunResult {
    /// A result with nothing measured: `threads` workers, no commits, empty histograms.
    pub fn empty(threads: usize) -> Result<Self, Error> {
        Ok(Self {
            threads,
            elapsed_s: 0.0,
            commits: 0,
            user_aborts: 0,
            conflicts: 0,
            retries: 0,
            abandoned: 0,
            conflicts_by_cause: BTreeMap::new(),
            conflicts_by_table: BTreeMap::new(),
            counters: BTreeMap::new(),
            commits_by_kind: BTreeMap::new(),
            unacknowledged: 0,
            throughput_tps: 0.0,
            abort_rate: 0.0,
            latency: LatencySummary::default(),
            latency_cdf: Vec::new(),
            per_thread_commits: Vec::new(),
            cpu_time_s: 0.0,
            peak_rss_bytes: 0,
            cpus: Vec::new(),
            oversubscribed: false,
            ack: "commit".into(),
            latency_ns: crate::session::new_histogram()?,
        })
    }
}

impl RunResult {
    /// Replaces the table ids in [`RunResult::conflicts_by_table`]'s keys (`cause@#3`) with the
    /// names `schema` gives them (`cause@order_line`); ids the schema lacks stay as they are.
    pub fn name_tables(&mut self, schema: &Schema) {
        let by_id = std::mem::take(&mut self.conflicts_by_table);
        for (key, n) in by_id {
            let named = key
                .split_once("@#")
                .and_then(|(cause, id)| {
                    let spec = schema.table(TableId(id.parse().ok()?)).ok()?;
                    Some(format!("{cause}@{}", spec.name))
                })
                .unwrap_or(key);
            *self.conflicts_by_table.entry(named).or_default() += n;
        }
    }
}

/// Runs `workload` on `engine` as `cfg` says (see the module docs). The database must already
/// be loaded.
pub fn run_workload<E: Engine, W: Workload>(
    engine: &E,
    workload: &W,
    cfg: &RunConfig,
) -> Result<RunResult, Error> {
    measure(&Interactive { engine, workload }, cfg)
}

/// The interactive execution model's [`Driver`] (module docs).
#[derive(Debug)]
pub struct Interactive<'a, E, W> {
    /// The engine, loaded.
    pub engine: &'a E,
    /// The workload whose generators the workers run.
    pub workload: &'a W,
}

impl<E: Engine, W: Workload> Driver for Interactive<'_, E, W> {
    fn engine_threads(&self, cfg: &RunConfig) -> usize {
        cfg.threads
    }

    fn ack(&self) -> AckMode {
        self.engine.ack_mode()
    }

    fn drive(&self, session: &Session<'_>) -> Result<Driven, Error> {
        let threads = session.config().threads;
        workers_fit_the_address_space(threads)?;
        let gate = StartGate::default();
        std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(threads);
            for i in 0..threads {
                let gate = &gate;
                let spawned = std::thread::Builder::new().spawn_scoped(s, move || {
                    let pinned = session.pin(i);
                    if !gate.arrive() {
                        return Ok(None);
                    }
                    let r = worker_loop(session, self.engine, self.workload, i);
                    if r.is_err() {
                        session.fail();
                    }
                    r.map(|()| pinned)
                });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        // The workers already started must not wait for this one.
                        gate.open(false);
                        session.fail();
                        return Err(Error::invalid(
                            "threads",
                            threads,
                            format!(
                                "as many worker threads as this process can start: worker {i} \
                                 could not be started ({e}); use fewer threads or give the \
                                 process more memory"
                            ),
                        ));
                    }
                }
            }
            gate.wait_for(threads);
            gate.open(true);
            session.ready();
            let cpus = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect::<Result<_, Error>>()?;
            Ok(Driven {
                cpus,
                counters: Vec::new(),
            })
        })
    }
}

/// The address space one worker thread takes: its stack and the allocator's per-thread heap
/// segment. Under `ulimit -v 524288` (512 MiB) the default YCSB run has about 220 MiB left after
/// loading and 13 of 64 workers started, about 17 MiB each; the rest is for what a worker
/// allocates once running (histograms, generator, engine worker).
const WORKER_ADDRESS_SPACE: u64 = 24 << 20;

/// Refuses a thread count the address-space limit cannot hold. Past it, which fails first is a
/// race: a spawn (an error) or a started worker's first allocation (an abort).
fn workers_fit_the_address_space(threads: usize) -> Result<(), Error> {
    let Some(left) = crate::resources::address_space_left() else {
        return Ok(());
    };
    let need = threads as u64 * WORKER_ADDRESS_SPACE;
    if need <= left {
        return Ok(());
    }
    Err(Error::invalid(
        "threads",
        threads,
        format!(
            "as many worker threads as this process can start: {threads} workers need about {} \
             of address space ({} each, a stack and an allocator heap) and the address-space \
             limit leaves {}, so they could not be started; use at most {} threads or raise \
             the limit (ulimit -v)",
            crate::resources::human_bytes(need),
            crate::resources::human_bytes(WORKER_ADDRESS_SPACE),
            crate::resources::human_bytes(left),
            left / WORKER_ADDRESS_SPACE
        ),
    ))
}

/// Holds the workers until all of them exist and are pinned, so that the warm-up clock starts
/// with every thread running; or releases them at once if one of them could not be spawned.
#[derive(Debug, Default)]
struct StartGate {
    /// Workers arrived, and the verdict once given (`true`: run).
    state: Mutex<(usize, Option<bool>)>,
    changed: Condvar,
}

impl StartGate {
    /// A worker has arrived; waits for the verdict and returns it.
    fn arrive(&self) -> bool {
        let mut st = self.state.lock().ignore_poison();
        st.0 += 1;
        self.changed.notify_all();
        let st = self
            .changed
            .wait_while(st, |st| st.1.is_none())
            .ignore_poison();
        st.1 == Some(true)
    }

    /// Waits until `threads` workers have arrived.
    fn wait_for(&self, threads: usize) {
        let st = self.state.lock().ignore_poison();
        drop(
            self.changed
                .wait_while(st, |st| st.0 < threads)
                .ignore_poison(),
        );
    }

    /// Gives the verdict.
    fn open(&self, run: bool) {
        self.state.lock().ignore_poison().1 = Some(run);
        self.changed.notify_all();
    }
}

fn worker_loop<E: Engine, W: Workload>(
    session: &Session<'_>,
    engine: &E,
    workload: &W,
    index: usize,
) -> Result<(), Error> {
    let cfg = session.config();
    let mut probe = session.probe(index);
    let mut worker = engine.worker()?;
    let mut generator = workload.generator(index, cfg.seed);
    let policy = cfg.retry;
    let mut backoff = Backoff::new(policy, cfg.seed ^ (index as u64).wrapping_mul(0x9E37));
    let mut sampler = Sampler::new(cfg.seed ^ SAMPLER_SEED ^ (index as u64).wrapping_mul(0x9E37));
    let mut strata = Strata::default();
    let track_epochs = engine.ack_mode() == AckMode::EpochStable;
    let mut pending = Pending::default();
    let mut poller = AckPoller::new(Instant::now());
    let mut armed_for_measure = false;
    loop {
        let (issued, transition) = probe.phase_check();
        if transition.left_warmup {
            // Leaving warm-up (possibly straight to a later phase): forget its counters.
            worker.drain_counters(&mut |_, _| {});
        }
        if transition.left_measure {
            // Leaving the measured interval: its counters are the result's, and the commits
            // after the last timed one join its stratum.
            let counters = &mut probe.tally.counters;
            worker.drain_counters(&mut |name, n| counters.add(name, n));
            strata.close(&mut pending, &mut probe.tally.latency);
        }
        let Some(measuring) = issued else { break };
        if measuring && !armed_for_measure {
            // Every worker's first counted transaction is timed (crate::sampling).
            armed_for_measure = true;
            sampler.arm();
        }
        let start = sampler.issue().then(|| sampler.start());
        let program = generator.next();
        let mut attempts = 0u32;
        let mut end = None;
        backoff.reset();
        loop {
            attempts += 1;
            let mut tx = worker.begin();
            let r = match program.run(&mut tx) {
                Ok(()) => tx.commit(),
                Err(e) => {
                    tx.abort();
                    Err(e)
                }
            };
            let t = &mut probe.tally;
            match r {
                Ok(info) => {
                    let now = start.map(|start| (start, Instant::now()));
                    if let Some((_, now)) = now {
                        sampler.taken();
                        end = Some(now);
                    }
                    if measuring {
                        t.commits += 1;
                        t.kinds.add(program.kind(), 1);
                        let queued = (track_epochs && !info.acknowledged).then_some(info.epoch);
                        strata.counted(&mut pending, queued, now, &mut t.latency);
                    }
                    break;
                }
                Err(TxError::Conflict(c)) => {
                    if measuring {
                        t.conflicts += 1;
                        t.causes.add(c.cause.name(), 1);
                        t.tables.add(c.cause.name(), c.table);
                    }
                    let out_of_attempts = policy.max_attempts.is_some_and(|m| attempts >= m);
                    // A retry is one more recorded attempt: the history bound counts it.
                    if out_of_attempts || !probe.spend(1) {
                        if measuring {
                            probe.tally.abandoned += 1;
                        }
                        break;
                    }
                    if measuring {
                        probe.tally.retries += 1;
                    }
                    backoff.wait();
                }
                Err(TxError::UserAbort(_)) => {
                    if measuring {
                        t.user_aborts += 1;
                    }
                    break;
                }
                Err(TxError::Error(e)) => return Err(e),
                Err(other) => return Err(Error::Internal(format!("unexpected outcome: {other}"))),
            }
        }
        if track_epochs {
            // Acknowledgements are polled by real time (module docs): when the countdown runs
            // out, or when a committed timed transaction's end shows the interval elapsed.
            let counted_out = poller.tick();
            let due = counted_out || end.is_some_and(|end| poller.elapsed(end));
            if due {
                if pending.is_idle() {
                    poller.skip();
                } else {
                    // Read the stable epoch first and the clock after it: the thread may be
                    // descheduled between the two, and an acknowledgement must never be dated
                    // before the moment stability was observed.
                    let stable = engine.stable_epoch();
                    let now = Instant::now();
                    poller.polled(now);
                    pending.observe(stable, now);
                    pending.record(ACK_RECORDS_PER_POLL, &mut probe.tally.latency);
                }
            }
        }
    }
    // Record what is acknowledged, and wait (bounded) for the other commits of the measured
    // interval to be acknowledged.
    let deadline = Instant::now() + cfg.ack_timeout;
    while !pending.is_idle() {
        let stable = engine.stable_epoch();
        let now = Instant::now();
        pending.observe(stable, now);
        pending.record(usize::MAX, &mut probe.tally.latency);
        if now >= deadline {
            break;
        }
        std::thread::yield_now();
    }
    probe.tally.unacknowledged = pending.unacknowledged();
    Ok(())
}

/// When a worker polls for acknowledgements: about every [`ACK_POLL_INTERVAL`] of real time,
/// by a countdown of transactions whose length is the interval divided by the time per
/// transaction measured between the two latest polls. The countdown may grow by at most a
/// factor of 2 per poll, so one unusually fast stretch cannot postpone the next polls by much.
#[derive(Debug)]
struct AckPoller {
    /// Transactions until the next poll is due (at least 1).
    countdown: u64,
    /// The current countdown length.
    spacing: u64,
    /// Transactions since `last`.
    since: u64,
    /// The clock read of the latest poll.
    last: Instant,
}

impl AckPoller {
    fn new(now: Instant) -> Self {
        Self {
            countdown: 1,
            spacing: 1,
            since: 0,
            last: now,
        }
    }

    /// Counts one transaction; whether the countdown ran out.
    #[inline]
    fn tick(&mut self) -> bool {
        self.since += 1;
        self.countdown -= 1;
        self.countdown == 0
    }

    /// Whether `now` (a clock read made anyway) is at least [`ACK_POLL_INTERVAL`] after the latest
    /// poll.
    #[inline]
    fn elapsed(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.last) >= ACK_POLL_INTERVAL
    }

    /// A due poll was skipped (nothing to poll for): restarts the countdown and keeps measuring
    /// from the latest poll.
    #[inline]
    fn skip(&mut self) {
        self.countdown = self.spacing;
    }

    /// A poll read the clock at `now`: sets the countdown from the speed since the latest poll.
    fn polled(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.last);
        let per_txn = elapsed.as_nanos() / u128::from(self.since.max(1));
        let k = ACK_POLL_INTERVAL.as_nanos() / per_txn.max(1);
        let cap = self.spacing.saturating_mul(2).min(MAX_POLL_SPACING_TXNS);
        self.spacing = u64::try_from(k).unwrap_or(u64::MAX).clamp(1, cap);
        self.countdown = self.spacing;
        self.since = 0;
        self.last = now;
    }
}

/// Mixed into the seed of a worker's [`Sampler`], so that its stream differs from the
/// workload generator's and the backoff's.
const SAMPLER_SEED: u64 = 0x5A3D_1E7C_0B2F_9A41;

/// A duration in nanoseconds, saturated.
#[inline]
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Where the latest timed commit of the measured interval went.
#[derive(Debug, Clone, Copy, Default)]
enum Last {
    /// None yet.
    #[default]
    None,
    /// Recorded at once with this latency (ns).
    Recorded(u64),
    /// Queued for its epoch's acknowledgement (the latest entry of [`Pending`]'s samples until
    /// acknowledged, then recorded with [`Pending::last_acknowledged`]).
    Queued,
}

/// The counted commits not yet represented by a timed one (`crate::sampling`'s strata).
#[derive(Debug, Default)]
struct Strata {
    /// Counted commits since the latest timed one, including a commit being timed.
    commits: u64,
    last: Last,
}

impl Strata {
    /// A counted commit: `queued` with its epoch if its acknowledgement waits for the epoch to
    /// become stable, `timed` with its issue and commit instants if it was timed.
    #[inline]
    fn counted(
        &mut self,
        pending: &mut Pending,
        queued: Option<u64>,
        timed: Option<(Instant, Instant)>,
        latency: &mut Histogram<u64>,
    ) {
        self.commits += 1;
        if let Some(epoch) = queued {
            pending.commit(epoch);
        }
        if let Some((start, end)) = timed {
            let weight = self.take();
            match queued {
                Some(epoch) => {
                    pending.sample(start, epoch, weight);
                    self.last = Last::Queued;
                }
                None => {
                    let ns = nanos(end.saturating_duration_since(start));
                    record(latency, ns, weight);
                    self.last = Last::Recorded(ns);
                }
            }
        }
    }

    /// The weight of the commit being timed: its stratum's commits.
    #[inline]
    fn take(&mut self) -> u64 {
        std::mem::take(&mut self.commits)
    }

    /// The measured interval is over: the commits after the latest timed one join its stratum.
    fn close(&mut self, pending: &mut Pending, latency: &mut Histogram<u64>) {
        let rest = self.take();
        if rest == 0 {
            return;
        }
        match self.last {
            // Every worker's first counted commit is timed: no commits without a sample.
            Last::None => {}
            Last::Recorded(ns) => record(latency, ns, rest),
            Last::Queued => match pending.samples.back_mut() {
                Some(s) => s.weight += rest,
                None => record(latency, pending.last_recorded, rest),
            },
        }
    }
}

/// Records a latency of `ns` nanoseconds standing for `commits` commits (`crate::sampling`).
#[inline]
fn record(latency: &mut Histogram<u64>, ns: u64, commits: u64) {
    latency.saturating_record_n(ns, commits);
}

/// A timed commit waiting for its epoch to become stable, or acknowledged and not yet recorded.
#[derive(Debug, Clone, Copy)]
struct PendingSample {
    start: Instant,
    epoch: u64,
    /// Its stratum's commits.
    weight: u64,
}

/// Commits of the measured interval not acknowledged at commit (`--ack epoch`): all of them by
/// epoch, as counts, for `unacknowledged`; the timed ones with their start for latency, until
/// recorded.
#[derive(Debug, Default)]
struct Pending {
    /// `(epoch, commits)` not acknowledged yet, epochs non-decreasing.
    commits: VecDeque<(u64, u64)>,
    /// Timed commits in commit order, epochs non-decreasing: the first `acked` were acknowledged
    /// (at the instants of `acks`) and wait to be recorded, the others wait for their epoch.
    samples: VecDeque<PendingSample>,
    /// `(instant, n)`, oldest first: the next `n` acknowledged samples were found stable at
    /// `instant`.
    acks: VecDeque<(Instant, usize)>,
    /// The acknowledged samples at the front of `samples` (the sum of `acks`' counts).
    acked: usize,
    /// The latency (ns) of the latest sample recorded.
    last_recorded: u64,
}

impl Pending {
    /// Nothing to poll for and nothing to record.
    #[inline]
    fn is_idle(&self) -> bool {
        self.commits.is_empty() && self.samples.is_empty()
    }

    #[inline]
    fn commit(&mut self, epoch: u64) {
        match self.commits.back_mut() {
            Some((e, n)) if *e == epoch => *n += 1,
            _ => self.commits.push_back((epoch, 1)),
        }
    }

    fn sample(&mut self, start: Instant, epoch: u64, weight: u64) {
        self.samples.push_back(PendingSample {
            start,
            epoch,
            weight,
        });
    }

    /// `stable` was observed at `now`: acknowledges every commit of an epoch up to it, and the
    /// timed ones at `now` (recorded later, by [`Pending::record`]). Takes time logarithmic in
    /// the timed commits waiting, whatever the number acknowledged.
    fn observe(&mut self, stable: u64, now: Instant) {
        while self.commits.front().is_some_and(|&(e, _)| e <= stable) {
            self.commits.pop_front();
        }
        let upto = self
            .samples
            .partition_point(|s| s.epoch <= stable)
            .max(self.acked);
        if upto > self.acked {
            self.acks.push_back((now, upto - self.acked));
            self.acked = upto;
        }
    }

    /// Records at most `budget` acknowledged timed commits, oldest first, each with its latency
    /// up to the instant its acknowledgement was observed.
    fn record(&mut self, budget: usize, latency: &mut Histogram<u64>) {
        for _ in 0..budget {
            let Some((at, n)) = self.acks.front_mut() else {
                return;
            };
            let at = *at;
            *n -= 1;
            if *n == 0 {
                self.acks.pop_front();
            }
            self.acked -= 1;
            let Some(s) = self.samples.pop_front() else {
                return;
            };
            let ns = nanos(at.saturating_duration_since(s.start));
            record(latency, ns, s.weight);
            self.last_recorded = ns;
        }
    }

    /// Commits whose epoch never became stable.
    fn unacknowledged(&self) -> u64 {
        self.commits.iter().map(|&(_, n)| n).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::new_histogram;
    use proptest::prelude::*;

    /// One counted commit of a simulated worker.
    #[derive(Debug, Clone, Copy)]
    struct Step {
        /// Whether the sampler timed it (the first commit always is).
        timed: bool,
        /// Its latency in ns if timed and acknowledged at commit.
        latency: u64,
        /// Whether the epoch advances before it.
        next_epoch: bool,
        /// Whether the worker polls after it.
        poll: bool,
    }

    /// Runs `steps` through the runner's weighting (`Strata`, and `Pending` with `epochs`),
    /// polling with `budget`; returns the histogram and the same latencies with every commit
    /// recorded once with the latency of the timed commit that stands for it (the first timed
    /// one at or after it; the last timed one for the commits after it).
    fn simulate(steps: &[Step], epochs: bool, budget: usize) -> (Histogram<u64>, Histogram<u64>) {
        let base = Instant::now();
        let at = |ns: u64| base + Duration::from_nanos(ns);
        let mut weighted = new_histogram().unwrap();
        let mut strata = Strata::default();
        let mut pending = Pending::default();
        let mut epoch = 1;
        // Polls as (after commit index, stable, time), for the reference.
        let mut polls = Vec::new();
        let mut timed = Vec::new();
        let mut clock = 0u64;
        for (i, step) in steps.iter().enumerate() {
            epoch += u64::from(step.next_epoch);
            clock += 1_000;
            let is_timed = i == 0 || step.timed;
            let queued = epochs.then_some(epoch);
            let times = is_timed.then(|| (at(clock), at(clock + step.latency)));
            strata.counted(&mut pending, queued, times, &mut weighted);
            if is_timed {
                timed.push((i, clock, epoch, step.latency));
            }
            if epochs && step.poll {
                let stable = epoch - 1;
                let now = clock + 500;
                polls.push((i, stable, now));
                pending.observe(stable, at(now));
                let waiting = pending.samples.len();
                pending.record(budget, &mut weighted);
                assert!(waiting - pending.samples.len() <= budget);
            }
        }
        strata.close(&mut pending, &mut weighted);
        let end = clock + 1_000_000;
        polls.push((steps.len(), u64::MAX, end));
        pending.observe(u64::MAX, at(end));
        pending.record(usize::MAX, &mut weighted);
        assert!(pending.is_idle() && pending.acks.is_empty() && pending.acked == 0);

        // The reference: each timed commit's latency, then every commit expanded.
        let latency_of = |&(i, start, e, lat): &(usize, u64, u64, u64)| {
            if !epochs {
                return lat;
            }
            let &(_, _, acked) = polls
                .iter()
                .find(|&&(after, stable, _)| after >= i && stable >= e)
                .unwrap();
            acked - start
        };
        let mut expanded = new_histogram().unwrap();
        let mut next = 0;
        for i in 0..steps.len() {
            while next + 1 < timed.len() && timed[next].0 < i {
                next += 1;
            }
            expanded.record(latency_of(&timed[next])).unwrap();
        }
        (weighted, expanded)
    }

    fn step(timed: bool, latency: u64) -> Step {
        Step {
            timed,
            latency,
            next_epoch: false,
            poll: false,
        }
    }

    #[test]
    fn weighted_percentiles_by_hand() {
        // Commits: timed 100 ns, 2 untimed, timed 500 ns, 1 untimed, timed 2000 ns, 2 untimed.
        // Weights 1, 3 and 2 + 2: the expanded latencies are 100, 500 x 3, 2000 x 4.
        let steps = [
            step(true, 100),
            step(false, 0),
            step(false, 0),
            step(true, 500),
            step(false, 0),
            step(true, 2000),
            step(false, 0),
            step(false, 0),
        ];
        let (h, _) = simulate(&steps, false, ACK_RECORDS_PER_POLL);
        assert_eq!(h.len(), 8);
        assert_eq!(h.count_at(100), 1);
        assert_eq!(h.count_at(500), 3);
        assert_eq!(h.count_at(2000), 4);
        // p50: the 4th of 8 is 500 ns; p90, p99, p99.9: the 8th is 2000 ns.
        let s = LatencySummary::of(&h);
        assert_eq!(
            (s.p50_us, s.p90_us, s.p99_us, s.p999_us, s.max_us),
            (0.5, 2.0, 2.0, 2.0, 2.0)
        );
        // 12 % of 8 is 0.96 (the 1st commit), 13 % 1.04 (the 2nd), 50 % the 4th, 51 % the 5th.
        let cdf = latency_cdf(&h);
        let at = |p: f64| cdf.iter().find(|c| c.percentile == p).unwrap().latency_us;
        assert_eq!((at(0.0), at(12.0), at(13.0)), (0.1, 0.1, 0.5));
        assert_eq!((at(50.0), at(51.0), at(100.0)), (0.5, 2.0, 2.0));
    }

    #[test]
    fn epoch_acknowledgements_are_dated_when_observed_and_recorded_a_few_per_poll() {
        // 100 timed commits of epoch 1, then one of epoch 2 whose poll sees epoch 1 stable.
        let mut steps = vec![step(true, 0); 100];
        steps.push(Step {
            next_epoch: true,
            poll: true,
            ..step(true, 0)
        });
        // Each later commit polls: 4 of them record the 100 at 32 per poll.
        steps.extend((0..5).map(|_| Step {
            poll: true,
            ..step(false, 0)
        }));
        let base = Instant::now();
        let mut h = new_histogram().unwrap();
        let mut strata = Strata::default();
        let mut pending = Pending::default();
        let mut recorded = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let epoch = 1 + u64::from(i >= 100);
            let t = base + Duration::from_micros(i as u64);
            strata.counted(&mut pending, Some(epoch), s.timed.then_some((t, t)), &mut h);
            if s.poll {
                pending.observe(epoch - 1, base + Duration::from_millis(1));
                pending.record(ACK_RECORDS_PER_POLL, &mut h);
                recorded.push(h.len());
            }
        }
        assert_eq!(recorded, [32, 64, 96, 100, 100, 100]);
        // Every one is dated at the poll that saw epoch 1 stable (1 ms), not at its recording:
        // the i-th waited 1000 - i µs.
        assert!(h.equivalent(h.min(), 901_000), "{}", h.min());
        assert!(h.equivalent(h.max(), 1_000_000), "{}", h.max());
        // The epoch-2 commit and the 5 after it wait for epoch 2.
        assert_eq!(pending.unacknowledged(), 6);
    }

    #[test]
    fn the_poll_countdown_follows_real_time() {
        let t0 = Instant::now();
        let mut p = AckPoller::new(t0);
        assert!(p.tick(), "the first transaction polls");
        // Fast transactions (20 ns): the countdown doubles per poll up to 1000 (20 µs of them).
        let mut t = t0;
        let mut spacings = Vec::new();
        for _ in 0..12 {
            let n = p.spacing;
            t += Duration::from_nanos(20 * n);
            p.polled(t);
            spacings.push(p.spacing);
            for _ in 0..p.spacing - 1 {
                assert!(!p.tick());
            }
            assert!(p.tick());
        }
        assert_eq!(spacings[..4], [2, 4, 8, 16]);
        assert_eq!(*spacings.last().unwrap(), 1000);
        // Slow transactions (1 ms): every transaction polls from the next poll on.
        t += Duration::from_millis(p.spacing);
        p.polled(t);
        assert_eq!(p.spacing, 1);
        // A skipped poll keeps the window: after 10 more transactions of 2 µs the speed is the
        // window's (10 per 20 µs).
        assert!(p.tick());
        p.skip();
        for _ in 0..9 {
            assert!(p.tick());
            p.skip();
        }
        t += Duration::from_micros(20);
        assert!(p.elapsed(t) && !p.elapsed(t - Duration::from_nanos(1)));
        p.polled(t);
        assert_eq!(p.spacing, 2, "capped at twice the previous spacing");
    }

    fn steps() -> impl Strategy<Value = Vec<Step>> {
        proptest::collection::vec(
            (any::<bool>(), 1u64..5_000_000, 0u8..8, any::<bool>()).prop_map(
                |(timed, latency, e, poll)| Step {
                    timed,
                    latency,
                    next_epoch: e == 0,
                    poll,
                },
            ),
            1..400,
        )
    }

    proptest! {
        /// The weighted histogram is the histogram of every commit with the latency of the timed
        /// commit that stands for it, so every percentile is the same.
        #[test]
        fn weights_are_the_expanded_commits(
            steps in steps(),
            epochs in any::<bool>(),
            budget in 1usize..40,
        ) {
            let (weighted, expanded) = simulate(&steps, epochs, budget);
            prop_assert_eq!(weighted.len(), steps.len() as u64);
            prop_assert!(weighted == expanded);
            prop_assert_eq!(LatencySummary::of(&weighted), LatencySummary::of(&expanded));
            prop_assert_eq!(latency_cdf(&weighted), latency_cdf(&expanded));
        }
    }
}
