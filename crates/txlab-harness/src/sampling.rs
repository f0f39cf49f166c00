//! Latency sampling of the interactive runner ([`crate::runner`]) and of the harness's meter
//! ([`crate::session`], for drivers that run their own threads): which commits are timed, and
//! how a timed commit stands for the untimed ones before it.
//!
//! Timing every transaction costs two clock reads (`Instant::now` is about 20 ns on a KVM guest)
//! and a histogram record per commit, about a fifth of a 4-operation YCSB transaction's own
//! time and is paid by the engine's throughput, not by the transaction's latency. The runner
//! therefore times only some transactions:
//!
//! - **Positions.** Each worker keeps a countdown over the transactions it issues. When it runs
//!   out, the sampler is *armed*: the next transactions read the clock when issued (before the
//!   workload generates them) and the first of them to commit is timed (from that read to the
//!   commit, or to its acknowledgement with `--ack epoch`). Its commit disarms the sampler and
//!   draws the next countdown from the geometric distribution on `1, 2, ...` with mean `k`
//!   (each transaction is the first timed one with probability `1/k`, whatever came before it)
//!   with the worker's own xoshiro256++ stream, seeded apart from the workload's. The first
//!   counted transaction of a worker always arms the sampler, so every worker with commits has
//!   a sample.
//! - **Spacing.** `k` follows the worker's speed: when a timed transaction commits, the sampler
//!   divides the time between the last two armed issues by the transactions issued in it and
//!   sets `k` to [`SAMPLE_SPACING`] divided by that, clamped to `1..=MAX_SPACING_TXNS`. A worker
//!   whose transactions take 4 µs or more on average therefore times all of them, exactly as
//!   with no sampling (a long transaction among short ones is timed with probability about
//!   `1/k`); a 150 ns YCSB transaction is timed about once in 26, about 250,000 samples per
//!   worker-second.
//! - **Weights.** A timed commit is recorded in the worker's histogram with a count equal to the
//!   counted commits since the previous timed one, itself included (its *stratum*). The commits a
//!   worker makes after its last timed one in the measured interval are added to that last
//!   sample. The histogram's total count is therefore exactly the worker's counted commits (with
//!   `--ack epoch`, less the strata of samples whose epoch never became stable).
//!
//! **Why the percentiles stay unbiased.** Which transaction is timed is decided by the countdown
//! before the transaction exists, from a random stream independent of the engine, the workload
//! and every latency; `k` depends on past throughput only, never on the transaction it selects,
//! and the weights are stratum lengths, counted in commits, not in time. A timed commit is thus a
//! draw, independent of its own latency, from the commits a few microseconds before it, and the
//! weighted histogram estimates the latency distribution of all counted commits without bias for
//! any distribution that does not change within a stratum (at most `2k - 1` transactions, a few
//! microseconds). Random rather than fixed spacing keeps a workload with a periodic pattern
//! (e.g. a transaction type every `n`-th) from aliasing with the sampler; a memoryless
//! (geometric) countdown also keeps the weights unbiased when commits come in another order
//! than their issues (below). What sampling does
//! change is the maximum and the far tail: `max_us` is the largest *timed* latency, and a single
//! outlier among `k` commits is seen with probability `1/k`; percentiles up to p99.9 rest on
//! hundreds of thousands of samples per worker-second.
//!
//! Time before the timed transaction's issue (the previous transaction, the harness's
//! acknowledgement polling) is not part of its latency; retries and backoff are.
//!
//! # Drivers that run their own threads (the harness's meter)
//!
//! A meter-driven driver (thread-aware batching, the validator pipeline, DOCC, ROCOCO) issues
//! a transaction through one thread's probe and may report its commit through another's
//! (`txlab_core::protocol::meter`). The harness's meter samples the same way with the same
//! `Sampler`, split across the two probes:
//!
//! - **Choice, at issue.** The *issuing* probe's sampler decides, per issued transaction,
//!   whether it is timed (the countdown and spacing above; a probe's first counted issue is
//!   always timed). A timed transaction reads the clock at issue and its ticket carries that
//!   instant; an untimed ticket carries none, and neither its issue nor its commit reads the
//!   clock. The issuing probe does not see the commit, so an armed sampler times exactly one
//!   transaction, the one it arms for, and draws the next countdown at once (the spacing
//!   arithmetic runs before that transaction's clock read, so it is not part of its latency).
//! - **Weights, at commit.** The *committing* probe keeps its own stratum: its counted commits
//!   since its previous timed one, itself included. A timed commit is recorded with that
//!   weight; when the probe is dropped (after the run), its commits after its last timed one
//!   are added to that sample. A probe whose counted commits include no timed one at all (a run
//!   of a few transactions) hands them to the session, which spreads them over the run's
//!   histogram in proportion to its counts. The histogram's total is therefore exactly the
//!   counted commits of the run.
//!
//! Why this stays unbiased although the issuing and committing threads differ and commits come
//! in another order than their issues: the choice is made before the transaction exists, from
//! the issuer's random stream, independent of the engine, the workload and every latency. With
//! the geometric countdown every issued transaction is timed with probability `1/k`
//! independently of which other transactions were (memoryless), so the timed ones among a
//! committing probe's commits, *in commit order*, are again independent draws with that
//! probability, however the engine reorders or moves them between threads; the number of
//! commits since the previous timed one, a timed commit's weight, is then independent of its
//! own latency, with mean `k`. (A countdown with more regular gaps would not be: a timed
//! transaction that commits later than its issue position, e.g. one queued behind conflicting
//! ones, would find a longer gap behind it and get a larger weight exactly when its latency is
//! larger.) What the estimate assumes is that the commits a probe interleaves were sampled at
//! one rate `k`: exact with a single issuer (DOCC's sequencer) and with issuers that run the
//! same loop at the same speed (thread-aware batching's formers, whose `k` all follow the
//! run's transaction rate); transactions from an issuer sampled at a very different rate,
//! interleaved with others at one committer, would be over- or under-weighted by the ratio of
//! the rates.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::time::{Duration, Instant};

/// Mixed into the seed of a worker's [`Sampler`], so that its stream differs from the workload
/// generator's and the backoff's.
const SAMPLER_SEED: u64 = 0x5A3D_1E7C_0B2F_9A41;

/// The time a worker runs between two timed transactions when its transactions are shorter:
/// `k` is chosen so that `k` transactions take about this long.
pub const SAMPLE_SPACING: Duration = Duration::from_micros(4);

/// The largest mean spacing `k`, in transactions.
pub const MAX_SPACING_TXNS: u64 = 1024;

/// One worker's sampler (module docs).
#[derive(Debug)]
pub(crate) struct Sampler {
    rng: Xoshiro256PlusPlus,
    /// Transactions to issue before the sampler arms (at least 1 while disarmed).
    countdown: u64,
    /// The mean spacing `k` in transactions.
    spacing: u64,
    /// Whether issued transactions are timed until one of them commits.
    armed: bool,
    /// Transactions issued since the previous armed issue.
    issued: u64,
    /// The clock read of the previous armed issue.
    previous: Option<Instant>,
    /// `(k, ln(1 - 1/k))` for the spacing `k` of the latest draw (the geometric countdown's
    /// scale, recomputed when `k` changes).
    ln_skip: (u64, f64),
    /// The time between the last two armed issues and the transactions issued in it, for the
    /// next update of `k`.
    measured: Option<(Duration, u64)>,
}

impl Sampler {
    /// A sampler with its own random stream from `seed`, armed (the first transaction is timed).
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            countdown: 1,
            spacing: 1,
            armed: true,
            issued: 0,
            previous: None,
            ln_skip: (1, f64::NEG_INFINITY),
            measured: None,
        }
    }

    /// The sampler of worker (or probe) `index` of a run seeded with `seed`.
    pub(crate) fn for_worker(seed: u64, index: usize) -> Self {
        Self::new(seed ^ SAMPLER_SEED ^ (index as u64).wrapping_mul(0x9E37))
    }

    /// Called once per issued transaction: whether it is timed.
    #[inline]
    pub(crate) fn issue(&mut self) -> bool {
        self.issued += 1;
        if !self.armed {
            self.countdown -= 1;
            if self.countdown != 0 {
                return false;
            }
            self.armed = true;
        }
        true
    }

    /// Arms the sampler now (the first counted transaction of a worker).
    #[inline]
    pub(crate) fn arm(&mut self) {
        self.armed = true;
    }

    /// The start of a timed transaction: reads the clock first, then notes what the next
    /// spacing `k` follows from (a subtraction; the divisions wait for [`Sampler::taken`], after
    /// the timed transaction's end, so they are not part of its latency).
    #[inline]
    pub(crate) fn start(&mut self) -> Instant {
        let now = Instant::now();
        if let Some(previous) = self.previous {
            self.measured = Some((now.saturating_duration_since(previous), self.issued.max(1)));
        }
        self.previous = Some(now);
        self.issued = 0;
        now
    }

    /// The timed transaction committed (its end read already): updates `k` from the speed
    /// since the previous armed issue, disarms, and draws the next countdown.
    #[inline]
    pub(crate) fn taken(&mut self) {
        if let Some((elapsed, issued)) = self.measured.take() {
            let per_txn = elapsed.as_nanos() / u128::from(issued);
            let k = SAMPLE_SPACING.as_nanos() / per_txn.max(1);
            self.spacing = u64::try_from(k)
                .unwrap_or(MAX_SPACING_TXNS)
                .clamp(1, MAX_SPACING_TXNS);
        }
        self.armed = false;
        self.countdown = self.draw();
    }

    /// One draw of the geometric countdown with mean `k` (module docs): the number of
    /// transactions up to and including the next timed one when each is timed with
    /// probability `1/k`, by inversion.
    #[inline]
    fn draw(&mut self) -> u64 {
        let k = self.spacing;
        if k == 1 {
            return 1;
        }
        if self.ln_skip.0 != k {
            self.ln_skip = (k, (1.0 - 1.0 / k as f64).ln());
        }
        // `1 - u` is in (0, 1], so its logarithm is finite and at most 0 (at least
        // `ln 2^-53`): the quotient is at most about `37 k`.
        let u: f64 = self.rng.random();
        1 + ((1.0 - u).ln() / self.ln_skip.1) as u64
    }

    /// The meter's choice at issue (module docs, "Drivers that run their own threads"): whether
    /// the transaction issued now is timed, and if so its issue instant. An armed sampler
    /// times this one transaction and draws the next countdown before reading the clock.
    #[inline]
    pub(crate) fn select(&mut self) -> Option<Instant> {
        if !self.issue() {
            return None;
        }
        self.taken();
        Some(self.start())
    }

    /// The current mean spacing `k` (for tests).
    #[cfg(test)]
    fn spacing(&self) -> u64 {
        self.spacing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_transaction_is_timed_and_later_ones_follow_the_countdown() {
        let mut s = Sampler::new(7);
        assert!(s.issue());
        s.start();
        s.spacing = 8;
        s.taken();
        let mut timed = 0u64;
        let n = 80_000u64;
        for _ in 0..n {
            if s.issue() {
                timed += 1;
                s.taken();
            }
        }
        // Countdowns uniform on 1..=15, mean 8: n / 8 timed, within a few percent.
        let expected = n / 8;
        assert!(
            timed.abs_diff(expected) < expected / 20,
            "{timed} timed of {n}, expected about {expected}"
        );
    }

    #[test]
    fn the_countdown_is_geometric_so_each_transaction_is_timed_with_probability_1_over_k() {
        // Memoryless: P(countdown = 1) = 1/k and P(countdown > 2k) = (1 - 1/k)^(2k), about
        // e^-2 (a uniform draw on 1..=2k-1 would give 1/(2k-1) and 0).
        let mut s = Sampler::new(11);
        s.spacing = 16;
        let n = 100_000u32;
        let (mut ones, mut long, mut sum) = (0u32, 0u32, 0u64);
        for _ in 0..n {
            let c = s.draw();
            assert!(c >= 1);
            ones += u32::from(c == 1);
            long += u32::from(c > 32);
            sum += c;
        }
        let (ones, long, mean) = (
            f64::from(ones) / f64::from(n),
            f64::from(long) / f64::from(n),
            sum as f64 / f64::from(n),
        );
        assert!((ones - 1.0 / 16.0).abs() < 0.005, "P(1) = {ones}");
        assert!(
            (long - (15.0f64 / 16.0).powi(32)).abs() < 0.01,
            "P(> 32) = {long}"
        );
        assert!((mean - 16.0).abs() < 0.3, "mean {mean}");
    }

    #[test]
    fn an_armed_sampler_stays_armed_until_a_commit_takes_it() {
        let mut s = Sampler::new(1);
        s.spacing = 1024;
        s.taken();
        s.arm();
        assert!(s.issue() && s.issue() && s.issue());
        s.taken();
        // A countdown of at least 1 follows: the very next issue is timed only if it drew 1.
        // The geometric draw is at most about 53 mean spacings (the smallest `1 - u` is 2^-53).
        let mut issues = 1u64;
        while !s.issue() {
            issues += 1;
        }
        assert!(issues <= 38 * 1024, "{issues}");
    }

    #[test]
    fn the_spacing_follows_the_time_per_transaction() {
        let mut s = Sampler::new(3);
        s.issue();
        let t0 = s.start();
        // Pretend 100 transactions took 400 µs: 4 µs each, so every one is timed.
        s.previous = Some(t0 - Duration::from_micros(400));
        s.issued = 100;
        s.start();
        // The spacing changes when the timed transaction commits, not at its start.
        assert_eq!(s.spacing(), 1);
        s.spacing = 5;
        s.taken();
        assert_eq!(s.spacing(), 1);
        // A billion in 1 ms (well under 4 ns each even if this thread stalls for a second):
        // clamped to the largest spacing.
        s.previous = Some(Instant::now() - Duration::from_millis(1));
        s.issued = 1_000_000_000;
        s.start();
        assert_eq!(s.spacing(), 1);
        s.taken();
        assert_eq!(s.spacing(), MAX_SPACING_TXNS);
    }
}
