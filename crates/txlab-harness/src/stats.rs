//! Medians with bootstrap intervals, and ratios between protocols measured side by side.
//!
//! A point run for several rounds gives one value per round. Its summary is the **median** over
//! the rounds with a **95 % percentile-bootstrap interval**: the rounds are resampled with
//! replacement [`RESAMPLES`] times, the median of every resample is taken, and the interval runs
//! from the 2.5th to the 97.5th percentile of those medians. The generator is seeded, so the same
//! rounds always give the same interval.
//!
//! A **ratio** of protocol B to a baseline A is computed per round (B's run divided by A's run of
//! the same round, which ran next to it: [`crate::sweep`] interleaves protocols round by round),
//! then summarized like any other value: the median of the per-round ratios with its bootstrap
//! interval. Pairing by round cancels the slow drifts of a shared machine that would otherwise
//! widen the interval. A ratio whose interval contains 1 does not distinguish B from A
//! ([`Estimate::distinguishes_from_one`]).
//!
//! With one round the interval is the value itself: it says nothing about noise, and tables mark
//! such points (`runs` = 1).

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

/// Bootstrap resamples per interval.
pub const RESAMPLES: usize = 4000;
/// The interval's coverage.
pub const CONFIDENCE: f64 = 0.95;

/// A median and its bootstrap interval over `n` values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The median of the values.
    pub median: f64,
    /// Lower end of the 95 % bootstrap interval.
    pub lo: f64,
    /// Upper end of the 95 % bootstrap interval.
    pub hi: f64,
    /// How many values (rounds).
    pub n: usize,
}

impl Estimate {
    /// The median of `values` with its bootstrap interval (module docs); `None` if there are no
    /// finite values.
    pub fn of(values: &[f64]) -> Option<Estimate> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        let m = median(&v);
        if v.len() == 1 {
            return Some(Estimate {
                median: m,
                lo: m,
                hi: m,
                n: 1,
            });
        }
        let mut rng = StdRng::seed_from_u64(0x0074_786c_6162);
        let mut sample = vec![0.0; v.len()];
        let mut medians: Vec<f64> = (0..RESAMPLES)
            .map(|_| {
                for s in sample.iter_mut() {
                    *s = v[rng.random_range(0..v.len())];
                }
                median(&sample)
            })
            .collect();
        medians.sort_by(f64::total_cmp);
        let tail = (1.0 - CONFIDENCE) / 2.0;
        let at = |q: f64| medians[((q * RESAMPLES as f64) as usize).min(RESAMPLES - 1)];
        Some(Estimate {
            median: m,
            lo: at(tail),
            hi: at(1.0 - tail),
            n: v.len(),
        })
    }

    /// The per-round ratios `num[i] / den[i]` summarized as an [`Estimate`] (module docs);
    /// rounds where either value is missing, not finite or the baseline is zero are left out.
    pub fn of_ratios(pairs: impl IntoIterator<Item = (f64, f64)>) -> Option<Estimate> {
        let ratios: Vec<f64> = pairs
            .into_iter()
            .filter(|&(_, d)| d != 0.0)
            .map(|(n, d)| n / d)
            .collect();
        Estimate::of(&ratios)
    }

    /// Whether the interval excludes 1 (for a ratio: the two protocols are distinguishable).
    pub fn distinguishes_from_one(&self) -> bool {
        self.n > 1 && (self.lo > 1.0 || self.hi < 1.0)
    }

    /// Whether two intervals overlap.
    pub fn overlaps(&self, other: &Estimate) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }
}

/// Median of a slice (mean of the middle two for an even count; NaN if empty).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_degenerate_inputs() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[5.0, 1.0, 3.0]), 3.0);
        assert!(median(&[]).is_nan());
        assert_eq!(Estimate::of(&[]), None);
        assert_eq!(Estimate::of(&[f64::NAN]), None);
        let one = Estimate::of(&[7.0]).unwrap();
        assert_eq!((one.median, one.lo, one.hi, one.n), (7.0, 7.0, 7.0, 1));
        assert!(
            !Estimate::of_ratios([(2.0, 1.0)])
                .unwrap()
                .distinguishes_from_one(),
            "one round distinguishes nothing"
        );
    }

    #[test]
    fn the_interval_brackets_the_median_and_shrinks_with_agreement() {
        let noisy = [90.0, 110.0, 95.0, 105.0, 100.0, 80.0, 120.0, 101.0];
        let e = Estimate::of(&noisy).unwrap();
        assert!(e.lo <= e.median && e.median <= e.hi, "{e:?}");
        assert!(e.lo >= 80.0 && e.hi <= 120.0, "{e:?}");
        assert!(e.hi > e.lo, "{e:?}");
        let tight = Estimate::of(&[100.0, 100.5, 99.5, 100.2, 99.8, 100.1, 99.9, 100.0]).unwrap();
        assert!(tight.hi - tight.lo < e.hi - e.lo);
        // Deterministic: the same values give the same interval.
        assert_eq!(Estimate::of(&noisy), Some(e));
    }

    #[test]
    fn paired_ratios_tell_apart_what_differs_and_not_what_does_not() {
        // B is 10 % faster in every round while both drift by ±30 % between rounds: the
        // per-round ratio is tight even though each protocol's own interval is wide.
        let drift = [1.0, 1.3, 0.7, 1.2, 0.8, 1.1, 0.9, 1.0];
        let a: Vec<f64> = drift.iter().map(|d| 1000.0 * d).collect();
        let b: Vec<f64> = drift.iter().map(|d| 1100.0 * d).collect();
        let r = Estimate::of_ratios(b.iter().copied().zip(a.iter().copied())).unwrap();
        assert!(
            (r.median - 1.1).abs() < 1e-9 && r.distinguishes_from_one(),
            "{r:?}"
        );
        assert!(
            Estimate::of(&a)
                .unwrap()
                .overlaps(&Estimate::of(&b).unwrap())
        );
        // Alternating ±5 %: the interval contains 1.
        let c: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, x)| x * if i % 2 == 0 { 1.05 } else { 0.95 })
            .collect();
        let r = Estimate::of_ratios(c.iter().copied().zip(a.iter().copied())).unwrap();
        assert!(!r.distinguishes_from_one(), "{r:?}");
        // A zero baseline is left out rather than dividing by it.
        assert_eq!(Estimate::of_ratios([(1.0, 0.0)]), None);
    }
}
