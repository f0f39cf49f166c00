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
//! - **latency sampling.** A meter-driven driver's transactions are timed as the interactive
//!   runner's are ([`crate::sampling`], "Drivers that run their own threads"): the issuing
//!   probe's `Sampler` decides at [`Probe::issue`] whether the ticket is timed (only a timed
//!   ticket reads the clock, at issue and at its outcome), and the committing probe records a
//!   timed commit with a weight equal to its counted commits since its previous timed one, and
//!   its trailing commits with its last sample when it is dropped, so the run's histogram
//!   counts exactly its counted commits.
//! - **pinning.** [`Session::pin`] pins the calling thread to the CPU the placement plan gives
//!   its index ([`crate::topology`]).
//!
//! Drivers outside this crate see the session through `txlab_core::protocol::meter` ([`Meter`], [`Probe`]);
//! the interactive runner ([`crate::runner`]) also uses the inherent methods of [`SessionProbe`]
//! (the phase check without a clock read, weighted latency samples, abandoned transactions).

use crate::driver::Driven;
use crate::resources::{ResourceUsage, process_usage};
use crate::runner::{LatencySummary, MAX_LATENCY_NS, RunConfig, RunResult, latency_cdf};
use crate::sampling::Sampler;
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
        // The names are static strings, usually the same few passed through the same `&'static
        // str`: a pass comparing addresses alone (two words per entry) finds them; only a name
        // first seen through another copy of the string is compared by content.
        if let Some(e) = self.0.iter_mut().find(|e| std::ptr::eq(e.0, name)) {
            e.1 += n;
        } else {
            self.add_slow(name, n);
        }
    }

    #[cold]
    fn add_slow(&mut self, name: &'static str, n: u64) {
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
    /// Counted commits the thread reported but could not give a latency sample to: it
    /// committed no timed transaction (`crate::sampling`, meter-driven drivers).
    pub(crate) unsampled: u64,
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
        let mut unsampled = 0;
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
            unsampled += t.unsampled;
        }
        spread(&mut latency, unsampled);
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

/// Adds `n` commits without a latency sample to `latency` in proportion to its counts (the
/// remainder of the rounding at its median), so the histogram's total includes them and its
/// distribution is unchanged up to rounding; nothing when `latency` is empty.
fn spread(latency: &mut Histogram<u64>, n: u64) {
    let total = latency.len();
    if n == 0 || total == 0 {
        return;
    }
    let shares: Vec<(u64, u64)> = latency
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    let mut added = 0;
    for (value, count) in shares {
        let share = u128::from(n) * u128::from(count) / u128::from(total);
        let share = u64::try_from(share).unwrap_or(u64::MAX);
        if share > 0 {
            latency.saturating_record_n(value, share);
            added += share;
        }
    }
    let rest = n - added;
    if rest > 0 {
        let median = latency.value_at_quantile(0.5);
        latency.saturating_record_n(median, rest);
    }
}

/// A duration in nanoseconds, saturated.
#[inline]
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
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
    /// Which of the transactions this probe issues through [`Probe::issue`] are timed
    /// (`crate::sampling`); the interactive runner keeps its own.
    sampler: Sampler,
    /// Whether this probe issued a counted transaction yet (the first one is timed).
    issued_counted: bool,
    /// Counted commits reported through [`Probe::committed`] since the latest timed one.
    stratum: u64,
    /// The latency (ns) of the latest timed commit reported through [`Probe::committed`].
    last_sample: Option<u64>,
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
                unsampled: 0,
            },
            sampler: Sampler::for_worker(self.cfg.seed, thread),
            issued_counted: false,
            stratum: 0,
            last_sample: None,
        }
    }
}

impl Probe for SessionProbe<'_> {
    /// The phase check, then the sampler's choice (`crate::sampling`): a timed ticket carries
    /// the clock read made here, an untimed one reads no clock.
    #[inline]
    fn issue(&mut self) -> Option<Ticket> {
        let counted = self.phase_check().0?;
        if counted && !self.issued_counted {
            // Every probe's first counted transaction is timed.
            self.issued_counted = true;
            self.sampler.arm();
        }
        Some(Ticket::new(self.sampler.select(), counted))
    }

    /// A counted commit joins this probe's stratum; a timed one reads the clock and is recorded
    /// with the stratum's commits as its weight (`crate::sampling`).
    #[inline]
    fn committed(&mut self, ticket: &Ticket, kind: &'static str) {
        if !ticket.counted() {
            return;
        }
        let end = ticket.issued().map(|issued| issued.elapsed());
        self.tally.commits += 1;
        self.tally.kinds.add(kind, 1);
        self.stratum += 1;
        if let Some(latency) = end {
            let ns = nanos(latency);
            let weight = std::mem::take(&mut self.stratum);
            self.latency(ns, weight);
            self.last_sample = Some(ns);
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
        // The commits after the latest timed one join its stratum (`crate::sampling`).
        let rest = std::mem::take(&mut self.stratum);
        if rest > 0 {
            match self.last_sample {
                Some(ns) => self.latency(ns, rest),
                None => self.tally.unsampled += rest,
            }
        }
        let tally = self.tally.clone();
        self.session
            .tallies
            .lock()
            .ignore_poison()
            .push((self.index, tally));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::process_usage;

    /// A session whose probes are measuring at once (no coordinator).
    fn measuring(cfg: &RunConfig) -> Session<'_> {
        let session = Session::new(cfg, 3).unwrap();
        session.phase.store(MEASURE, Ordering::Relaxed);
        session
    }

    fn result(session: &Session<'_>) -> RunResult {
        let timing = Timing {
            measured: Duration::from_millis(1),
            usage: (process_usage().unwrap(), process_usage().unwrap()),
            counters: BTreeMap::new(),
        };
        let driven = Driven {
            cpus: Vec::new(),
            counters: Vec::new(),
        };
        session
            .result(timing, AckMode::AtCommit, driven, 3)
            .unwrap()
    }

    #[test]
    fn a_meter_driven_run_times_a_sample_and_its_histogram_counts_every_counted_commit() {
        let cfg = RunConfig::default();
        let session = measuring(&cfg);
        let mut issuer = session.probe(0);
        let tickets: Vec<Ticket> = (0..200_000).map(|_| issuer.issue().unwrap()).collect();
        let timed = tickets.iter().filter(|t| t.issued().is_some()).count();
        // Issuing alone takes a few ns, so the spacing reaches its largest values: a small
        // sample, but one, the probe's first counted transaction, always.
        assert!(tickets[0].issued().is_some());
        assert!(timed > 10 && timed < tickets.len() / 10, "{timed} timed");
        // Two other probes commit them in another order than issued; probe 2 gets untimed
        // ones only (it has no sample of its own), and one in ten aborts.
        let (mut a, mut b) = (session.probe(1), session.probe(2));
        let mut commits = 0;
        for (i, t) in tickets.iter().enumerate().rev() {
            if i % 10 == 3 {
                a.user_aborted(t);
            } else if t.issued().is_none() && i % 10 == 7 {
                b.committed(t, "b");
                commits += 1;
            } else {
                a.committed(t, if i % 2 == 0 { "x" } else { "y" });
                commits += 1;
            }
        }
        assert_eq!(b.last_sample, None);
        drop((issuer, a, b));
        let r = result(&session);
        assert_eq!(r.commits, commits);
        assert_eq!(r.latency_ns.len(), commits);
        assert_eq!(r.commits_by_kind.values().sum::<u64>(), commits);
        assert_eq!(r.commits_by_kind["b"], r.per_thread_commits[2]);
        assert!(r.latency.p50_us > 0.0);
    }

    #[test]
    fn uncounted_tickets_are_not_recorded() {
        let cfg = RunConfig::default();
        let session = Session::new(&cfg, 1).unwrap();
        let mut p = session.probe(0);
        for _ in 0..1000 {
            let t = p.issue().unwrap();
            assert!(!t.counted());
            p.committed(&t, "x");
        }
        drop(p);
        let r = result(&session);
        assert_eq!((r.commits, r.latency_ns.len()), (0, 0));
    }

    #[test]
    fn transactions_of_4us_or_more_are_all_timed() {
        let cfg = RunConfig::default();
        let session = measuring(&cfg);
        let (mut issuer, mut committer) = (session.probe(0), session.probe(1));
        // Short transactions first: the spacing grows.
        for _ in 0..50_000 {
            let t = issuer.issue().unwrap();
            committer.committed(&t, "short");
        }
        // Then long ones (5 µs of work each, a spin on the clock standing for the engine): once
        // the sampler has measured them (its next two timed issues), every one is timed.
        let long = |issuer: &mut SessionProbe<'_>, committer: &mut SessionProbe<'_>| {
            let t = issuer.issue().unwrap();
            let start = Instant::now();
            while start.elapsed() < Duration::from_micros(5) {
                std::hint::spin_loop();
            }
            committer.committed(&t, "long");
            t.issued().is_some()
        };
        let mut seen = 0;
        let mut issued = 0;
        while seen < 3 {
            seen += u32::from(long(&mut issuer, &mut committer));
            issued += 1;
            assert!(
                issued < 200_000,
                "only {seen} timed of {issued} long transactions"
            );
        }
        let untimed = (0..500)
            .filter(|_| !long(&mut issuer, &mut committer))
            .count();
        assert_eq!(untimed, 0, "{untimed} of 500 long transactions untimed");
        drop((issuer, committer));
        let r = result(&session);
        assert_eq!(r.latency_ns.len(), r.commits);
        assert!(r.latency.p99_us >= 5.0, "{:?}", r.latency);
    }

    #[test]
    fn spreading_unsampled_commits_keeps_the_distribution() {
        let mut h = new_histogram().unwrap();
        h.record_n(1_000, 30).unwrap();
        h.record_n(9_000, 10).unwrap();
        spread(&mut h, 41);
        assert_eq!(h.len(), 81);
        // 41 * 30/40 and 41 * 10/40 rounded down; the remainder (1) at the median.
        assert_eq!(h.count_at(1_000), 30 + 30 + 1);
        assert_eq!(h.count_at(9_000), 10 + 10);
        let mut empty = new_histogram().unwrap();
        spread(&mut empty, 5);
        assert_eq!(empty.len(), 0);
    }
}
