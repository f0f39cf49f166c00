//! [`Zipf`]: a skewed choice among `n` items, item 0 the hottest.
//!
//! Item `i` (0-based) is drawn with probability
//!
//! ```text
//! P(i) = (i + 1)^-theta / H(n, theta),   H(n, theta) = sum_{k=1..n} k^-theta
//! ```
//!
//! the Zipfian distribution of YCSB (Cooper et al., SoCC 2010, §4) and of the OCC-batching
//! paper's micro benchmark (Ding, Kot, Gehrke, VLDB 2018, §5.1), which both cite Gray et al.,
//! "Quickly generating billion-record synthetic databases" (SIGMOD 1994).
//!
//! # Sampling
//!
//! - `theta = 0`: exactly uniform, drawn with [`rand::distr::Uniform`] (Lemire's widening-multiply
//!   method with rejection, which has no modulo bias).
//! - `theta > 0`: [`rand_distr::Zipf`], rejection sampling from a continuous envelope that is
//!   inverted in closed form (J. Crease's method). Expected O(1) work per draw, no O(n) table and
//!   no O(n) set-up, so `n` may be as large as a dense table (2^40). The method is exact: the
//!   envelope's mass over `[k-1, k)` is accepted with probability `(b / k)^theta`, which integrates
//!   to exactly `k^-theta`.
//!
//! # Accepted `theta`: finite, `0.0..=10.0`
//!
//! The classic generator of Gray et al. (used by YCSB's `ZipfianGenerator`) computes
//! `alpha = 1 / (1 - theta)` and `eta = (1 - (2/n)^(1-theta)) / (1 - zeta(2, theta) / zeta(n, theta))`,
//! which divide by zero at `theta = 1` and become ill-conditioned near it; it also needs the O(n)
//! sum `zeta(n, theta)`. The envelope used here integrates `x^-theta` with a separate closed form
//! for `theta = 1` (`1 + ln x`, inverted with `exp`), so `theta = 1` and its neighbourhood are
//! ordinary values. The upper bound 10 is a sanity bound rather than a numerical one: at
//! `theta = 10` item 0 already gets `1 / zeta(10) > 99.9 %` of the draws, so larger values
//! describe no different workload and are most likely a typo (e.g. `99` for `0.99`). Negative,
//! NaN and infinite values are rejected.
//!
//! Measured cost (release build, shared 2-core machine, `n = 10^7`): about 6 ns per draw at
//! `theta = 0` and 70–90 ns at `theta` in `0.5..=1.5` (three `powf` per envelope draw, about 1.1
//! envelope draws per sample); see the ignored test `zipf_sampling_cost`.
//!
//! # Probabilities for tests
//!
//! [`Zipf::probability`] evaluates `P(i)` exactly; the normalising sum `H(n, theta)` is O(n) and
//! computed once, on first use (never on the sampling path).

use rand::Rng;
use rand::distr::{Distribution, Uniform};
use std::sync::OnceLock;
use txlab_core::Error;

/// The accepted range of the skew parameter `theta`.
pub const THETA_RANGE: std::ops::RangeInclusive<f64> = 0.0..=10.0;

/// Largest accepted number of items (the largest dense table, 2^40).
pub const MAX_ITEMS: u64 = 1 << 40;

/// Checks a skew parameter: finite and in [`THETA_RANGE`]. `name` names the parameter in errors.
pub fn validate_theta(name: &'static str, theta: f64) -> Result<(), Error> {
    if !theta.is_finite() || !THETA_RANGE.contains(&theta) {
        return Err(Error::invalid(
            name,
            theta,
            format!(
                "a finite Zipf skew in {}..={} (0 is uniform; 0.99 is YCSB's usual hot spot)",
                THETA_RANGE.start(),
                THETA_RANGE.end()
            ),
        ));
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Sampler {
    Uniform(Uniform<u64>),
    Skewed(rand_distr::Zipf<f64>),
}

/// A Zipfian distribution over items `0..n`, item 0 the hottest (see the module docs).
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    theta: f64,
    sampler: Sampler,
    /// `H(n, theta)`, computed on the first call of [`Zipf::probability`].
    normaliser: OnceLock<f64>,
}

impl Zipf {
    /// A distribution over `n` items with skew `theta`.
    ///
    /// Errors: `n` outside `1..=2^40`, or `theta` not a finite value in `0.0..=10.0`
    /// ([`Error::InvalidConfig`] naming the value and the accepted range).
    pub fn new(n: u64, theta: f64) -> Result<Zipf, Error> {
        if n == 0 || n > MAX_ITEMS {
            return Err(Error::invalid(
                "n",
                n,
                format!("the number of Zipf items must be in 1..={MAX_ITEMS}"),
            ));
        }
        validate_theta("theta", theta)?;
        let sampler = if theta == 0.0 {
            let uniform = Uniform::new(0, n)
                .map_err(|e| Error::Internal(format!("uniform over 0..{n} rejected: {e}")))?;
            Sampler::Uniform(uniform)
        } else {
            let zipf = rand_distr::Zipf::new(n as f64, theta).map_err(|e| {
                Error::Internal(format!("Zipf(n = {n}, theta = {theta}) rejected: {e}"))
            })?;
            Sampler::Skewed(zipf)
        };
        Ok(Zipf {
            n,
            theta,
            sampler,
            normaliser: OnceLock::new(),
        })
    }

    /// Number of items.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// The skew.
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// Draws an item in `0..n`.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match &self.sampler {
            Sampler::Uniform(u) => u.sample(rng),
            Sampler::Skewed(z) => loop {
                // The distribution returns a rank in 1..=n as a float. Rounding at the very top of
                // the envelope could yield n + 1; such a draw is rejected like any other envelope
                // point outside the support, which keeps the result exact.
                let rank = z.sample(rng);
                if rank >= 1.0 && rank <= self.n as f64 {
                    return rank as u64 - 1;
                }
            },
        }
    }

    /// The probability of item `i` (0 for `i >= n`). The first call costs O(n) (module docs).
    pub fn probability(&self, i: u64) -> f64 {
        if i >= self.n {
            return 0.0;
        }
        let h = *self.normaliser.get_or_init(|| {
            // Sum the smallest terms first to limit rounding error.
            (1..=self.n)
                .rev()
                .map(|k| (k as f64).powf(-self.theta))
                .sum()
        });
        ((i + 1) as f64).powf(-self.theta) / h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::worker_rng;

    const N: u64 = 100;
    const DRAWS: usize = 200_000;
    /// The chi-square critical value for 99 degrees of freedom at p = 0.001 is 148.2.
    const CHI2_LIMIT: f64 = 148.2;

    fn counts(theta: f64, seed: u64) -> Vec<u64> {
        let z = Zipf::new(N, theta).unwrap();
        let mut rng = worker_rng(seed, 0);
        let mut counts = vec![0u64; N as usize];
        for _ in 0..DRAWS {
            let i = z.sample(&mut rng);
            assert!(i < N, "draw {i} outside 0..{N}");
            counts[i as usize] += 1;
        }
        counts
    }

    fn chi_square(counts: &[u64], model: &Zipf) -> f64 {
        let total: u64 = counts.iter().sum();
        counts
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let expected = model.probability(i as u64) * total as f64;
                (c as f64 - expected).powi(2) / expected
            })
            .sum()
    }

    #[test]
    fn probabilities_sum_to_one_and_decrease() {
        for theta in [0.0, 0.5, 0.99, 1.0, 2.0] {
            let z = Zipf::new(N, theta).unwrap();
            let sum: f64 = (0..N).map(|i| z.probability(i)).sum();
            assert!((sum - 1.0).abs() < 1e-9, "theta {theta}: sum {sum}");
            for i in 1..N {
                assert!(z.probability(i) <= z.probability(i - 1));
            }
            assert_eq!(z.probability(N), 0.0);
        }
        let uniform = Zipf::new(N, 0.0).unwrap();
        assert!((uniform.probability(0) - 0.01).abs() < 1e-15);
    }

    #[test]
    fn observed_frequencies_match_the_analytic_law_and_a_wrong_exponent_fails() {
        for (k, theta) in [0.0, 0.5, 0.9, 0.99, 1.0].into_iter().enumerate() {
            let observed = counts(theta, 11 + k as u64);
            let model = Zipf::new(N, theta).unwrap();
            // The top items, each within 5 standard deviations of its binomial expectation.
            for i in 0..5u64 {
                let p = model.probability(i);
                let expected = p * DRAWS as f64;
                let sd = (DRAWS as f64 * p * (1.0 - p)).sqrt();
                let got = observed[i as usize] as f64;
                assert!(
                    (got - expected).abs() < 5.0 * sd,
                    "theta {theta} item {i}: {got} vs {expected} ± {sd}"
                );
            }
            let chi2 = chi_square(&observed, &model);
            assert!(
                chi2 < CHI2_LIMIT,
                "theta {theta}: chi-square {chi2} >= {CHI2_LIMIT}"
            );
            // The same check must reject draws from a slightly different exponent.
            let off = Zipf::new(N, theta + 0.05).unwrap();
            let wrong = chi_square(&observed, &off);
            assert!(
                wrong > CHI2_LIMIT,
                "theta {theta}: a model with theta + 0.05 passed (chi-square {wrong})"
            );
            let other = counts(theta + 0.05, 99 + k as u64);
            let wrong = chi_square(&other, &model);
            assert!(
                wrong > CHI2_LIMIT,
                "theta {theta}: draws with theta + 0.05 passed (chi-square {wrong})"
            );
        }
    }

    #[test]
    fn theta_zero_is_uniform_and_large_theta_concentrates_on_item_zero() {
        let observed = counts(0.0, 5);
        let (min, max) = (
            observed.iter().min().unwrap(),
            observed.iter().max().unwrap(),
        );
        // 2000 expected per item, sd ~ 44.5: every item within 5 sd.
        assert!(*min > 1777 && *max < 2223, "min {min} max {max}");
        let z = Zipf::new(1 << 40, 10.0).unwrap();
        let mut rng = worker_rng(1, 0);
        let zeros = (0..10_000).filter(|_| z.sample(&mut rng) == 0).count();
        assert!(zeros > 9_970, "item 0 drew {zeros} of 10000 at theta 10");
    }

    #[test]
    fn single_item_always_draws_zero() {
        for theta in [0.0, 0.99, 1.0, 10.0] {
            let z = Zipf::new(1, theta).unwrap();
            let mut rng = worker_rng(3, 1);
            assert!((0..1000).all(|_| z.sample(&mut rng) == 0));
            assert_eq!(z.probability(0), 1.0);
        }
    }

    /// Sampling cost, for the record (not an assertion of speed). Run with
    /// `CARGO_TARGET_DIR=/work/target-workload cargo test -p txlab-workload --release -- --ignored --nocapture zipf_sampling_cost`.
    #[test]
    #[ignore = "timing measurement; run explicitly"]
    fn zipf_sampling_cost() {
        const DRAWS: u64 = 10_000_000;
        for theta in [0.0, 0.5, 0.9, 0.99, 1.0, 1.5] {
            let z = Zipf::new(10_000_000, theta).unwrap();
            let mut rng = worker_rng(1, 0);
            let start = std::time::Instant::now();
            let sum = (0..DRAWS)
                .map(|_| z.sample(&mut rng))
                .fold(0u64, u64::wrapping_add);
            let ns = start.elapsed().as_nanos() as f64 / DRAWS as f64;
            println!("theta {theta}: {ns:.1} ns/draw (checksum {sum})");
            assert!(sum > 0);
        }
    }

    #[test]
    fn bad_parameters_are_rejected_with_the_value_and_range() {
        let e = Zipf::new(0, 0.5).unwrap_err().to_string();
        assert!(e.contains("n = 0") && e.contains("1..="), "{e}");
        let e = Zipf::new(MAX_ITEMS + 1, 0.5).unwrap_err().to_string();
        assert!(e.contains(&format!("n = {}", MAX_ITEMS + 1)), "{e}");
        for bad in [f64::NAN, -0.1, 10.5, f64::INFINITY, f64::NEG_INFINITY] {
            let e = Zipf::new(10, bad).unwrap_err();
            assert!(
                matches!(e, Error::InvalidConfig { name: "theta", .. }),
                "{e:?}"
            );
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("theta = {bad}")) && msg.contains("0..=10"),
                "{msg}"
            );
        }
    }
}
