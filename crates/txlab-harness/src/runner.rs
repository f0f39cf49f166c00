//! The runner: drives one engine with one workload on pinned threads for a timed interval.
//!
//! Protocol of a run:
//!
//! 1. The coordinating (calling) thread plans CPU placement ([`crate::topology`]) and spawns
//!    `threads` scoped workers. Each pins itself, waits on a barrier, then creates its engine
//!    worker and workload generator (so a failure there cannot leave the barrier short).
//! 2. After the barrier the coordinator times the phases and publishes them in one shared atomic:
//!    `WARMUP` → `MEASURE` → `COOLDOWN` → `STOP`. Workers poll it (a `Relaxed` load: one cached
//!    line read) once per transaction, between transactions.
//!    - `WARMUP` ([`RunConfig::warmup`], may be zero): transactions run, nothing is counted.
//!    - `MEASURE` ([`RunConfig::duration`]): the measured interval; throughput divides by its
//!      length on the coordinator's clock, and process CPU time is sampled at its two ends.
//!    - `COOLDOWN` ([`RunConfig::cooldown`], may be zero): workers keep running transactions
//!      without counting them, so the contention seen by the last counted transactions is the
//!      same as in mid-interval (no worker has exited yet) and epoch acknowledgements of the
//!      interval's commits keep being collected.
//!    - `STOP`: workers finish their current transaction and leave.
//! 3. A transaction *counts* iff the phase was `MEASURE` when it started; it then counts through
//!    all its retries even if `COOLDOWN` or `STOP` arrives meanwhile. On leaving `WARMUP` each
//!    worker discards its engine's protocol counters (`Worker::drain_counters`), and on leaving
//!    `MEASURE` it drains them into its result, so counters cover exactly the counted
//!    transactions (cool-down counters are never drained into the result).
//! 4. Conflicts are retried with `txlab_core::retry::Backoff` until commit (or until the
//!    policy's `max_attempts`, counted as *abandoned*). A `UserAbort` finishes the transaction. A
//!    real error stops the whole run and is returned.
//!
//! Latency is measured from the first `begin` to the final commit, retries and backoff included,
//! in nanoseconds into an `hdrhistogram` per thread (merged at the end). To keep the harness cost
//! at one clock read per transaction, the start of a transaction is the end timestamp of the
//! previous one (transactions run back to back), so latency also includes the generator's
//! `next()` and the harness's own bookkeeping (a few ns).
//!
//! With [`AckMode::EpochStable`] a commit whose `CommitInfo::acknowledged` is false is only
//! acknowledged once `Engine::stable_epoch() >= info.epoch` (Silo's group commit): the worker
//! keeps a FIFO of pending commits and polls `stable_epoch()` at most every
//! [`ACK_POLL_INTERVAL`] (it may take a lock), never blocking. After `STOP` each worker waits
//! up to [`RunConfig::ack_timeout`] for its pending commits; any left are reported as
//! `unacknowledged` and have no latency sample.
//!
//! Throughput is commits divided by the coordinator's measured interval; the abort rate is
//! `conflicts / (commits + conflicts)`.

use crate::resources::{ResourceUsage, process_usage};
use crate::topology::{Placement, pin_current_thread, plan_for_this_machine};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
// `txlab_core::sync` has no barrier; the start barrier is the one primitive taken from std.
use std::sync::Barrier;
use std::time::{Duration, Instant};
use txlab_core::retry::Backoff;
use txlab_core::sync::{AtomicU32, Condvar, Mutex, Ordering};
use txlab_core::{AckMode, Engine, Error, Program, RetryPolicy, Transaction, TxError, Worker};
use txlab_workload::{Generator, Workload};

const WARMUP: u32 = 0;
const MEASURE: u32 = 1;
const COOLDOWN: u32 = 2;
const STOP: u32 = 3;

/// Largest accepted thread count.
pub const MAX_THREADS: usize = 1024;
/// Longest accepted warm-up, measurement or cool-down interval.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);
/// Largest latency the histograms hold (longer ones are clamped to it): one hour in ns.
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;
/// The default cool-down ([`RunConfig::cooldown`]).
pub const DEFAULT_COOLDOWN: Duration = Duration::from_millis(100);
/// How often a worker with pending epoch acknowledgements polls `Engine::stable_epoch`.
pub const ACK_POLL_INTERVAL: Duration = Duration::from_micros(20);

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
}

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
        Ok(())
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

/// The outcome of one run.
#[derive(Debug, Clone, Serialize)]
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
    /// Merged latency histogram in ns (first begin to acknowledged commit).
    #[serde(skip)]
    pub latency_ns: Histogram<u64>,
}

fn new_histogram() -> Result<Histogram<u64>, Error> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
        .map_err(|e| Error::Internal(format!("creating a latency histogram: {e:?}")))
}

/// A small name → count table; linear search is cheapest for the handful of names involved.
#[derive(Debug, Default)]
struct Tally(Vec<(&'static str, u64)>);

impl Tally {
    #[inline]
    fn add(&mut self, name: &'static str, n: u64) {
        if let Some(e) = self.0.iter_mut().find(|e| e.0 == name) {
            e.1 += n;
        } else {
            self.0.push((name, n));
        }
    }

    fn merge_into(&self, out: &mut BTreeMap<String, u64>) {
        for &(k, v) in &self.0 {
            *out.entry(k.to_string()).or_default() += v;
        }
    }
}

#[derive(Debug)]
struct ThreadStats {
    commits: u64,
    user_aborts: u64,
    conflicts: u64,
    retries: u64,
    abandoned: u64,
    unacknowledged: u64,
    causes: Tally,
    counters: Tally,
    /// Commits by `Program::kind()`.
    kinds: Tally,
    latency: Histogram<u64>,
}

struct Shared<'a, E> {
    engine: &'a E,
    phase: AtomicU32,
    barrier: Barrier,
    /// Set (and `failed_cv` notified) by a worker whose loop returned an error.
    failed: Mutex<bool>,
    failed_cv: Condvar,
    cfg: &'a RunConfig,
}

impl<E> Shared<'_, E> {
    /// Records that a worker failed and wakes the coordinator.
    fn report_failure(&self) {
        *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.failed_cv.notify_all();
    }

    /// Sleeps for `timeout` unless a worker fails first; returns whether one has failed.
    fn failed_within(&self, timeout: Duration) -> bool {
        let guard = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = self
            .failed_cv
            .wait_timeout_while(guard, timeout, |failed| !*failed)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }
}

/// Runs `workload` on `engine` as `cfg` says (see the module docs). The database must already
/// be loaded.
pub fn run_workload<E: Engine, W: Workload>(
    engine: &E,
    workload: &W,
    cfg: &RunConfig,
) -> Result<RunResult, Error> {
    cfg.validate()?;
    let plan = plan_for_this_machine(cfg.placement, cfg.threads);
    let shared = Shared {
        engine,
        phase: AtomicU32::new(WARMUP),
        barrier: Barrier::new(cfg.threads + 1),
        failed: Mutex::new(false),
        failed_cv: Condvar::new(),
        cfg,
    };
    let shared = &shared;
    let (outcomes, measured, usage0, usage1) = std::thread::scope(|s| {
        let handles: Vec<_> = plan
            .cpus
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                s.spawn(move || {
                    let pinned = cpu.filter(|&c| pin_current_thread(c));
                    shared.barrier.wait();
                    let r = worker_loop(shared, workload, i);
                    if r.is_err() {
                        shared.phase.store(STOP, Ordering::Relaxed);
                        shared.report_failure();
                    }
                    (r, pinned)
                })
            })
            .collect();
        shared.barrier.wait();
        // Timing, not synchronization: the coordinator sleeps through each phase unless a worker
        // reports an error first.
        // A worker that fails sets STOP itself, which the compare-exchange never overwrites.
        let failed_in_warmup = shared.failed_within(cfg.warmup);
        let usage0 = process_usage();
        let m0 = Instant::now();
        let measuring = !failed_in_warmup
            && shared
                .phase
                .compare_exchange(WARMUP, MEASURE, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
        let failed_in_measure = measuring && shared.failed_within(cfg.duration);
        let cooling = measuring
            && !failed_in_measure
            && shared
                .phase
                .compare_exchange(MEASURE, COOLDOWN, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
        let measured = m0.elapsed();
        let usage1 = process_usage();
        if cooling {
            shared.failed_within(cfg.cooldown);
        }
        shared.phase.store(STOP, Ordering::Relaxed);
        let outcomes: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        (outcomes, measured, usage0, usage1)
    });

    let mut cpus = Vec::with_capacity(outcomes.len());
    let mut stats = Vec::with_capacity(outcomes.len());
    for (r, pinned) in outcomes {
        stats.push(r?);
        cpus.push(pinned);
    }
    let (usage0, usage1): (ResourceUsage, ResourceUsage) = (usage0?, usage1?);
    let mut latency = new_histogram()?;
    let mut res = RunResult {
        threads: cfg.threads,
        elapsed_s: measured.as_secs_f64(),
        commits: 0,
        user_aborts: 0,
        conflicts: 0,
        retries: 0,
        abandoned: 0,
        conflicts_by_cause: BTreeMap::new(),
        counters: BTreeMap::new(),
        commits_by_kind: BTreeMap::new(),
        unacknowledged: 0,
        throughput_tps: 0.0,
        abort_rate: 0.0,
        latency: LatencySummary::default(),
        latency_cdf: Vec::new(),
        per_thread_commits: Vec::with_capacity(stats.len()),
        cpu_time_s: usage1.cpu().saturating_sub(usage0.cpu()).as_secs_f64(),
        peak_rss_bytes: usage1.max_rss_bytes,
        cpus,
        oversubscribed: plan.oversubscribed,
        ack: match engine.ack_mode() {
            AckMode::AtCommit => "commit".into(),
            AckMode::EpochStable => "epoch".into(),
        },
        latency_ns: new_histogram()?,
    };
    for t in &stats {
        res.commits += t.commits;
        res.user_aborts += t.user_aborts;
        res.conflicts += t.conflicts;
        res.retries += t.retries;
        res.abandoned += t.abandoned;
        res.unacknowledged += t.unacknowledged;
        res.per_thread_commits.push(t.commits);
        t.causes.merge_into(&mut res.conflicts_by_cause);
        t.counters.merge_into(&mut res.counters);
        for &(kind, n) in &t.kinds.0 {
            *res.commits_by_kind.entry(kind.to_string()).or_default() += n;
        }
        latency
            .add(&t.latency)
            .map_err(|e| Error::Internal(format!("merging latency histograms: {e:?}")))?;
    }
    res.throughput_tps = res.commits as f64 / measured.as_secs_f64();
    let attempts = res.commits + res.conflicts;
    res.abort_rate = if attempts == 0 {
        0.0
    } else {
        res.conflicts as f64 / attempts as f64
    };
    res.latency = LatencySummary::of(&latency);
    res.latency_cdf = latency_cdf(&latency);
    res.latency_ns = latency;
    Ok(res)
}

fn worker_loop<E: Engine, W: Workload>(
    shared: &Shared<'_, E>,
    workload: &W,
    index: usize,
) -> Result<ThreadStats, Error> {
    let engine = shared.engine;
    let mut worker = engine.worker()?;
    let mut generator = workload.generator(index, shared.cfg.seed);
    let policy = shared.cfg.retry;
    let mut backoff = Backoff::new(
        policy,
        shared.cfg.seed ^ (index as u64).wrapping_mul(0x9E37),
    );
    let track_epochs = engine.ack_mode() == AckMode::EpochStable;
    let mut pending: VecDeque<(Instant, u64)> = VecDeque::new();
    let mut last_ack_poll = Instant::now();
    let mut st = ThreadStats {
        commits: 0,
        user_aborts: 0,
        conflicts: 0,
        retries: 0,
        abandoned: 0,
        unacknowledged: 0,
        causes: Tally::default(),
        counters: Tally::default(),
        kinds: Tally::default(),
        latency: new_histogram()?,
    };
    let mut phase = WARMUP;
    let mut last = Instant::now();
    loop {
        let now_phase = shared.phase.load(Ordering::Relaxed);
        if now_phase != phase {
            match phase {
                // Leaving warm-up (possibly straight to a later phase): forget its counters.
                WARMUP => worker.drain_counters(&mut |_, _| {}),
                // Leaving the measured interval: its counters are the result's.
                MEASURE => worker.drain_counters(&mut |name, n| st.counters.add(name, n)),
                // Cool-down counters are never collected.
                _ => {}
            }
            phase = now_phase;
            if phase == STOP {
                break;
            }
        }
        let measuring = phase == MEASURE;
        let program = generator.next();
        let start = last;
        let mut attempts = 0u32;
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
            match r {
                Ok(info) => {
                    let now = Instant::now();
                    last = now;
                    if measuring {
                        st.commits += 1;
                        st.kinds.add(program.kind(), 1);
                        if track_epochs && !info.acknowledged {
                            pending.push_back((start, info.epoch));
                        } else {
                            st.latency
                                .saturating_record(nanos(now.saturating_duration_since(start)));
                        }
                    }
                    break;
                }
                Err(TxError::Conflict(c)) => {
                    if measuring {
                        st.conflicts += 1;
                        st.causes.add(c.cause.name(), 1);
                    }
                    if policy.max_attempts.is_some_and(|m| attempts >= m) {
                        if measuring {
                            st.abandoned += 1;
                        }
                        last = Instant::now();
                        break;
                    }
                    if measuring {
                        st.retries += 1;
                    }
                    backoff.wait();
                }
                Err(TxError::UserAbort(_)) => {
                    if measuring {
                        st.user_aborts += 1;
                    }
                    last = Instant::now();
                    break;
                }
                Err(TxError::Error(e)) => return Err(e),
                Err(other) => return Err(Error::Internal(format!("unexpected outcome: {other}"))),
            }
        }
        if !pending.is_empty() && last.duration_since(last_ack_poll) >= ACK_POLL_INTERVAL {
            // Read the stable epoch first and the clock after it: the thread may be descheduled
            // between the two, and an acknowledgement must never be dated before the moment
            // stability was observed (dating it at the last commit under-reported latency).
            let stable = engine.stable_epoch();
            let now = Instant::now();
            last_ack_poll = now;
            acknowledge(stable, now, &mut pending, &mut st.latency);
        }
    }
    // Wait (bounded) for the commits of the measured interval to be acknowledged.
    let deadline = Instant::now() + shared.cfg.ack_timeout;
    while !pending.is_empty() {
        let stable = engine.stable_epoch();
        let now = Instant::now();
        acknowledge(stable, now, &mut pending, &mut st.latency);
        if now >= deadline {
            break;
        }
        std::thread::yield_now();
    }
    st.unacknowledged = pending.len() as u64;
    Ok(st)
}

#[inline]
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn acknowledge(
    stable: u64,
    now: Instant,
    pending: &mut VecDeque<(Instant, u64)>,
    latency: &mut Histogram<u64>,
) {
    while let Some(&(start, epoch)) = pending.front() {
        if epoch > stable {
            break;
        }
        latency.saturating_record(nanos(now.saturating_duration_since(start)));
        pending.pop_front();
    }
}
