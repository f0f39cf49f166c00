//! [`Session`]: one measured run, shared by the coordinator and every thread of the driver.
//!
//! The session owns everything a measurement consists of, once for every driver:
//!
//! - **the phase clock.** The coordinator (the thread calling [`crate::driver::measure`]) waits
//!   until the driver says it is [`ready`](Session::ready), then publishes the phases in one
//!   shared atomic: `WARMUP` → `MEASURE` → `COOLDOWN` → `STOP`. Probes read it (a `Relaxed`
//!   load: one cached line) once per issued transaction. `WARMUP` and `COOLDOWN` may be empty;
//!   `MEASURE` lasts [`RunConfig::duration`], or ends earlier once
//!   [`RunConfig::transaction_cap`] transactions were issued in it. A worker error or the end
//!   of the driver wakes the coordinator at once.
//! - **the history bound.** A recorded history keeps every attempt of every phase, so with
//!   [`RunConfig::history_bound`] `B` the probes count attempts (each issued transaction and
//!   each retry) in one shared atomic, in every phase: the warm-up ends early once `B / 4` were
//!   made, the measured interval once `B - B / 8` were, and at `B` the phase becomes `STOP` and
//!   no probe issues again, and a retry once the bound is spent abandons its transaction
//!   instead. A run therefore records at most `B` attempts plus one per thread.
//! - **which transactions count.** A transaction counts iff it was issued during `MEASURE`
//!   ([`Ticket::counted`]); it then counts through all its retries even if `COOLDOWN` or `STOP`
//!   arrives meanwhile. Cool-down keeps every thread running without counting, so the last
//!   counted transactions see mid-interval contention and their acknowledgements keep coming.
//! - **per-thread tallies.** Each thread's [`SessionProbe`] keeps its own `ThreadTally`
//!   (counts, conflicts by cause, counters, an `hdrhistogram` of latency in nanoseconds) with no
//!   sharing; a probe hands its tally to the session when it is dropped, and
//!   `Session::result` merges them into one [`RunResult`].
//! - **pinning.** [`Session::pin`] pins the calling thread to the CPU the placement plan gives
//!   its index ([`crate::topology`]).
//!
//! Drivers outside this crate see the session through `txlab_core::protocol::meter` ([`Meter`], [`Probe`]);
//! the interactive runner ([`crate::runner`]) also uses the inherent methods of [`SessionProbe`]
//! (the phase check without a clock read, weighted latency samples, abandoned transactions).

use crate::driver::Driven;
use crate::resources::{ResourceUsage, process_usage};
use crate::runner::{LatencySummary, MAX_LATENCY_NS, RunConfig, RunResult, latency_cdf};
use crate::topology::{CpuPlan, pin_current_thread, plan_for_this_machine};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use txlab_core::protocol::meter::{Meter, Probe, Ticket};
use txlab_core::protocol::sync::{AtomicU32, AtomicU64, Condvar, IgnorePoison, Mutex, Ordering};
use txlab_core::{AckMode, ConflictCause, Error, TableId};

const WARMUP: u32 = 0;
const MEASURE: u32 = 1;
const COOLDOWN: u32 = 2;
const STOP: u32 = 3;

/// A new latency histogram: nanoseconds, 1 ns to [`MAX_LATENCY_NS`], 3 significant digits.
pub(crate) fn new_histogram() -> Result<Histogram<u64>, Error> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
        .map_err(|e| Error::Internal(format!("creating a latency histogram: {e:?}")))
}

/// A small name → count table; linear search is cheapest for the handful of names involved.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally(Vec<(&'static str, u64)>);

impl Tally {
    #[inline]
    pub(crate) fn add(&mut self, name: &'static str, n: u64) {
        // The names are static strings, usually the same few: compare addresses first.
        if let Some(e) = self
            .0
            .iter_mut()
            .find(|e| std::ptr::eq(e.0, name) || e.0 == name)
        {
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

/// Conflict aborts by cause and by the table the conflict named (`None`: it named none).
#[derive(Debug, Default, Clone)]
pub(crate) struct TableTally(Vec<(&'static str, Option<TableId>, u64)>);

impl TableTally {
    #[inline]
    pub(crate) fn add(&mut self, cause: &'static str, table: Option<TableId>) {
        if let Some(e) = self.0.iter_mut().find(|e| e.0 == cause && e.1 == table) {
            e.2 += 1;
        } else {
            self.0.push((cause, table, 1));
        }
    }

    /// Adds the counts to `out` under [`RunResult::conflicts_by_table`]'s keys, with tables by
    /// id (`#3`) until [`RunResult::name_tables`] names them.
    fn merge_into(&self, out: &mut BTreeMap<String, u64>) {
        for &(cause, table, n) in &self.0 {
            let table = table.map_or_else(|| "-".to_string(), |t| format!("#{}", t.0));
            *out.entry(format!("{cause}@{table}")).or_default() += n;
        }
    }
}

/// What one thread counted (only transactions issued in the measured interval).
#[derive(Debug, Clone)]
pub(crate) struct ThreadTally {
    pub(crate) commits: u64,
    pub(crate) user_aborts: u64,
    pub(crate) conflicts: u64,
    pub(crate) retries: u64,
    pub(crate) abandoned: u64,
    pub(crate) unacknowledged: u64,
    pub(crate) causes: Tally,
    /// Conflicts by cause and table (reported by the interactive runner, which sees the table).
    pub(crate) tables: TableTally,
    pub(crate) counters: Tally,
    /// Commits by `Program::kind()`.
    pub(crate) kinds: Tally,
    pub(crate) latency: Histogram<u64>,
}

/// How the measured interval ended and what the coordinator sampled at its two ends.
#[derive(Debug)]
pub(crate) struct Timing {
    measured: Duration,
    usage: (ResourceUsage, ResourceUsage),
    counters: BTreeMap<String, u64>,
}

#[derive(Debug, Default)]
struct Signals {
    ready: bool,
    failed: bool,
    driver_done: bool,
    cap_reached: bool,
    /// The history bound's share for the warm-up is spent.
    warmup_spent: bool,
    /// The history bound's share for the measured interval is spent.
    history_full: bool,
    /// The whole history bound is spent.
    history_spent: bool,
}

/// One measured run (module docs).
#[derive(Debug)]
pub struct Session<'c> {
    cfg: &'c RunConfig,
    plan: CpuPlan,
    phase: AtomicU32,
    /// Transactions issued during `MEASURE` (kept only with a transaction cap).
    issued: AtomicU64,
    /// Attempts made in every phase (kept only with a history bound).
    attempts: AtomicU64,
    signals: Mutex<Signals>,
    wake: Condvar,
    tallies: Mutex<Vec<(usize, ThreadTally)>>,
    /// An empty histogram with the probes' bounds, copied for every probe.
    histogram: Histogram<u64>,
}

impl<'c> Session<'c> {
    /// A session for `cfg` whose placement plan covers `threads` pinned threads.
    pub(crate) fn new(cfg: &'c RunConfig, threads: usize) -> Result<Self, Error> {
        Ok(Self {
            histogram: new_histogram()?,
            cfg,
            plan: plan_for_this_machine(cfg.placement, threads),
            phase: AtomicU32::new(WARMUP),
            issued: AtomicU64::new(0),
            attempts: AtomicU64::new(0),
            signals: Mutex::new(Signals::default()),
            wake: Condvar::new(),
            tallies: Mutex::new(Vec::new()),
        })
    }

    /// The run's configuration.
    pub fn config(&self) -> &RunConfig {
        self.cfg
    }

    /// Pins the calling thread to the CPU the placement plan gives `thread`; returns it, or
    /// `None` if the plan leaves the thread unpinned or the OS refused.
    pub fn pin(&self, thread: usize) -> Option<usize> {
        self.plan
            .cpus
            .get(thread)
            .copied()
            .flatten()
            .filter(|&c| pin_current_thread(c))
    }

    /// The driver has started its threads: the warm-up clock starts now.
    pub fn ready(&self) {
        self.signal(|s| s.ready = true);
    }

    /// A thread of the driver failed: every probe stops issuing and the coordinator wakes.
    pub fn fail(&self) {
        self.phase.store(STOP, Ordering::Relaxed);
        self.signal(|s| s.failed = true);
    }

    pub(crate) fn driver_done(&self) {
        self.signal(|s| s.driver_done = true);
    }

    fn signal(&self, f: impl FnOnce(&mut Signals)) {
        f(&mut self.signals.lock().ignore_poison());
        self.wake.notify_all();
    }

    /// Sleeps up to `timeout` or until `stop` holds; returns whether a failure (or the driver's
    /// end) cut it short.
    fn wait(&self, timeout: Duration, stop: impl Fn(&Signals) -> bool) -> bool {
        let guard = self.signals.lock().ignore_poison();
        let (guard, _) = self
            .wake
            .wait_timeout_while(guard, timeout, |s| !(s.failed || s.driver_done || stop(s)))
            .ignore_poison();
        guard.failed || guard.driver_done
    }

    fn advance(&self, from: u32, to: u32) -> bool {
        self.phase
            .compare_exchange(from, to, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// The coordinator's side of a run (module docs); `counters` samples the engine's
    /// cumulative counters at both ends of the measured interval.
    pub(crate) fn coordinate(
        &self,
        counters: impl Fn() -> Vec<(&'static str, u64)>,
    ) -> Result<Timing, Error> {
        // Waiting for the driver's threads is not a phase: only an error or the driver's end
        // bounds it.
        if self.wait(Duration::MAX, |s| s.ready) {
            self.phase.store(STOP, Ordering::Relaxed);
        }
        let failed_in_warmup = self.wait(self.cfg.warmup, |s| s.warmup_spent);
        let usage0 = process_usage();
        let c0 = counters();
        let m0 = Instant::now();
        let measuring = !failed_in_warmup && self.advance(WARMUP, MEASURE);
        let failed_in_measure =
            measuring && self.wait(self.cfg.duration, |s| s.cap_reached || s.history_full);
        let cooling = measuring && !failed_in_measure && self.advance(MEASURE, COOLDOWN);
        let measured = m0.elapsed();
        let usage1 = process_usage();
        let c1 = counters();
        if cooling {
            self.wait(self.cfg.cooldown, |s| s.history_spent);
        }
        self.phase.store(STOP, Ordering::Relaxed);
        let mut grown = BTreeMap::new();
        for (name, v1) in c1 {
            let v0 = c0.iter().find(|c| c.0 == name).map_or(0, |c| c.1);
            grown.insert(name.to_string(), v1.saturating_sub(v0));
        }
        Ok(Timing {
            measured,
            usage: (usage0?, usage1?),
            counters: grown,
        })
    }

    /// Merges the tallies of every dropped probe into the run's result.
    pub(crate) fn result(
        &self,
        timing: Timing,
        ack: AckMode,
        driven: Driven,
        engine_threads: usize,
    ) -> Result<RunResult, Error> {
        let mut tallies = std::mem::take(&mut *self.tallies.lock().ignore_poison());
        tallies.sort_by_key(|t| t.0);
        let (usage0, usage1) = timing.usage;
        let mut latency = new_histogram()?;
        let mut res = RunResult::empty(self.cfg.threads)?;
        res.elapsed_s = timing.measured.as_secs_f64();
        res.counters = timing.counters;
        res.per_thread_commits = Vec::with_capacity(tallies.len());
        res.cpu_time_s = usage1.cpu().saturating_sub(usage0.cpu()).as_secs_f64();
        res.peak_rss_bytes = usage1.max_rss_bytes;
        res.cpus = driven.cpus;
        res.oversubscribed =
            plan_for_this_machine(self.cfg.placement, engine_threads).oversubscribed;
        res.ack = match ack {
            AckMode::AtCommit => "commit".into(),
            _ => "epoch".into(),
        };
        for (_, t) in &tallies {
            res.commits += t.commits;
            res.user_aborts += t.user_aborts;
            res.conflicts += t.conflicts;
            res.retries += t.retries;
            res.abandoned += t.abandoned;
            res.unacknowledged += t.unacknowledged;
            res.per_thread_commits.push(t.commits);
            t.causes.merge_into(&mut res.conflicts_by_cause);
            t.tables.merge_into(&mut res.conflicts_by_table);
            t.counters.merge_into(&mut res.counters);
            t.kinds.merge_into(&mut res.commits_by_kind);
            latency
                .add(&t.latency)
                .map_err(|e| Error::Internal(format!("merging latency histograms: {e:?}")))?;
        }
        for (name, n) in driven.counters {
            res.counters.insert(name.to_string(), n);
        }
        res.throughput_tps = res.commits as f64 / timing.measured.as_secs_f64().max(1e-9);
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
}

/// Which phases a probe saw end since its previous `SessionProbe::phase_check`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Transition {
    /// The warm-up ended (the thread's engine counters so far belong to no one).
    pub(crate) left_warmup: bool,
    /// The measured interval ended (the thread's engine counters so far are the result's).
    pub(crate) left_measure: bool,
}

/// One thread's handle on a [`Session`] (module docs).
#[derive(Debug)]
pub struct SessionProbe<'s> {
    session: &'s Session<'s>,
    index: usize,
    phase: u32,
    /// The run has a transaction cap or a history bound (the phase check must count).
    bounded: bool,
    pub(crate) tally: ThreadTally,
}

impl<'s> SessionProbe<'s> {
    /// The phase check of every issued transaction: `None` once the run stops, else whether the
    /// transaction counts, and the phases that ended since the previous call. Without a
    /// transaction cap or history bound, and within one phase, it is one `Relaxed` load and a
    /// comparison.
    #[inline]
    pub(crate) fn phase_check(&mut self) -> (Option<bool>, Transition) {
        let mut phase = self.session.phase.load(Ordering::Relaxed);
        if !self.bounded && phase == self.phase {
            return (
                match phase {
                    STOP => None,
                    MEASURE => Some(true),
                    _ => Some(false),
                },
                Transition::default(),
            );
        }
        if phase != STOP && !self.spend(1) {
            phase = STOP;
        }
        let mut t = Transition::default();
        if phase != self.phase {
            t.left_warmup = self.phase == WARMUP;
            t.left_measure = self.phase <= MEASURE && phase > MEASURE;
            self.phase = phase;
        }
        let counted = match phase {
            STOP => return (None, t),
            MEASURE => self.within_cap(),
            _ => false,
        };
        (Some(counted), t)
    }

    /// Whether a transaction issued now in `MEASURE` is within the transaction cap (always,
    /// without one); the one that reaches the cap ends the measured interval.
    #[inline]
    fn within_cap(&self) -> bool {
        let Some(cap) = self.session.cfg.transaction_cap else {
            return true;
        };
        let n = self.session.issued.fetch_add(1, Ordering::Relaxed) + 1;
        if n == cap {
            self.session.signal(|s| s.cap_reached = true);
        }
        n <= cap
    }

    /// Counts `attempts` more against the history bound (module docs); false once it is
    /// spent. Always true without one.
    #[inline]
    pub(crate) fn spend(&self, attempts: u64) -> bool {
        let Some(bound) = self.session.cfg.history_bound else {
            return true;
        };
        let before = self.session.attempts.fetch_add(attempts, Ordering::Relaxed);
        let after = before + attempts;
        let crossed = |limit: u64| before < limit && after >= limit;
        if crossed(bound / 4) {
            self.session.signal(|s| s.warmup_spent = true);
        }
        if crossed(bound - bound / 8) {
            self.session.signal(|s| s.history_full = true);
        }
        if crossed(bound) {
            self.session.phase.store(STOP, Ordering::Relaxed);
            self.session.signal(|s| s.history_spent = true);
        }
        after <= bound
    }

    /// Records a latency of `ns` nanoseconds standing for `commits` commits (`crate::sampling`).
    #[inline]
    pub(crate) fn latency(&mut self, ns: u64, commits: u64) {
        self.tally.latency.saturating_record_n(ns, commits);
    }
}

impl<'s> Meter for Session<'s> {
    type Probe<'m>
        = SessionProbe<'m>
    where
        Self: 'm;

    fn probe(&self, thread: usize) -> SessionProbe<'_> {
        SessionProbe {
            session: self,
            index: thread,
            phase: WARMUP,
            bounded: self.cfg.transaction_cap.is_some() || self.cfg.history_bound.is_some(),
            tally: ThreadTally {
                commits: 0,
                user_aborts: 0,
                conflicts: 0,
                retries: 0,
                abandoned: 0,
                unacknowledged: 0,
                causes: Tally::default(),
                tables: TableTally::default(),
                counters: Tally::default(),
                kinds: Tally::default(),
                latency: Histogram::new_from(&self.histogram),
            },
        }
    }
}

impl Probe for SessionProbe<'_> {
    #[inline]
    fn issue(&mut self) -> Option<Ticket> {
        let counted = self.phase_check().0?;
        Some(Ticket::new(Instant::now(), counted))
    }

    fn committed(&mut self, ticket: &Ticket, kind: &'static str) {
        if ticket.counted() {
            self.tally.commits += 1;
            self.tally.kinds.add(kind, 1);
            let ns = u64::try_from(ticket.issued().elapsed().as_nanos()).unwrap_or(u64::MAX);
            self.latency(ns, 1);
        }
    }

    fn user_aborted(&mut self, ticket: &Ticket) {
        if ticket.counted() {
            self.tally.user_aborts += 1;
        }
    }

    fn conflict(&mut self, ticket: &Ticket, cause: &ConflictCause) {
        self.spend(1);
        if ticket.counted() {
            self.tally.conflicts += 1;
            self.tally.retries += 1;
            self.tally.causes.add(cause.name(), 1);
        }
    }

    fn retried(&mut self, ticket: &Ticket, attempts: u64) {
        self.spend(attempts);
        if ticket.counted() {
            self.tally.conflicts += attempts;
            self.tally.retries += attempts;
        }
    }

    fn abandoned(&mut self, ticket: &Ticket, cause: &ConflictCause) {
        self.spend(1);
        if ticket.counted() {
            self.tally.conflicts += 1;
            self.tally.abandoned += 1;
            self.tally.causes.add(cause.name(), 1);
        }
    }

    fn count(&mut self, name: &'static str, n: u64) {
        if self.session.phase.load(Ordering::Relaxed) == MEASURE {
            self.tally.counters.add(name, n);
        }
    }
}

impl Drop for SessionProbe<'_> {
    fn drop(&mut self) {
        let tally = self.tally.clone();
        self.session
            .tallies
            .lock()
            .ignore_poison()
            .push((self.index, tally));
    }
}
