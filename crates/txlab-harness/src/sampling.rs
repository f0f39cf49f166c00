//! Latency sampling of the interactive runner ([`crate::runner`]): which commits are timed, and
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
//!   draws the next countdown uniformly from `1..=2k - 1` (mean `k`) with the worker's own
//!   xoshiro256++ stream, seeded apart from the workload's. The first counted transaction of a
//!   worker always arms the sampler, so every worker with commits has a sample.
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
//! (e.g. a transaction type every `n`-th) from aliasing with the sampler. What sampling does
//! change is the maximum and the far tail: `max_us` is the largest *timed* latency, and a single
//! outlier among `k` commits is seen with probability `1/k`; percentiles up to p99.9 rest on
//! hundreds of thousands of samples per worker-second.
//!
//! Time before the timed transaction's issue (the previous transaction, the harness's
//! acknowledgement polling) is not part of its latency; retries and backoff are.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::time::{Duration, Instant};

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
            measured: None,
        }
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
        self.countdown = self.rng.random_range(1..=2 * self.spacing - 1);
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
    fn an_armed_sampler_stays_armed_until_a_commit_takes_it() {
        let mut s = Sampler::new(1);
        s.spacing = 1024;
        s.taken();
        s.arm();
        assert!(s.issue() && s.issue() && s.issue());
        s.taken();
        // A countdown of at least 1 follows: the very next issue is timed only if it drew 1.
        let mut issues = 1u64;
        while !s.issue() {
            issues += 1;
        }
        assert!(issues <= 2047, "{issues}");
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
