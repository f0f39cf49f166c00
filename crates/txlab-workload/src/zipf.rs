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
//! - `theta > 0`, `n <= ALIAS_MAX_ITEMS` (2^24): an alias table (A. J. Walker, 1977; built with
//!   M. D. Vose's stable O(n) construction, IEEE TSE 1991). A draw is one random `u64`: its high
//!   32 bits pick a column by multiply-shift, its low 32 bits are compared with the column's
//!   threshold. Exact up to the 32-bit quantisation of the thresholds (error below 2^-32 per
//!   item). The table is 8 bytes per item, shared between clones through an `Arc`, and built
//!   once in O(n) (about 0.1 s for 10^7 items).
//! - `theta > 0`, larger `n`: [`rand_distr::Zipf`], rejection sampling from a continuous envelope
//!   inverted in closed form. Expected O(1) work per draw, no table and no O(n) set-up, so `n`
//!   may be as large as a dense table (2^40). Exact: the envelope's mass over `[k-1, k)` is
//!   accepted with probability `(b / k)^theta`, which integrates to exactly `k^-theta`.
//!
//! Why txlab has its own alias table rather than only the crate: rejection-inversion costs
//! 70–90 ns per draw (three `powf` per envelope draw), which at 10 keys per YCSB transaction is
//! about 0.8 µs of key generation per transaction, as much as the protocol's own work, so a
//! skewed benchmark measured the sampler. The alias draw costs a few nanoseconds (see the ignored
//! test `zipf_sampling_cost` for both); the chi-square tests below hold both samplers to the
//! analytic distribution.
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
//! Measured cost: see the ignored test `zipf_sampling_cost` (numbers in `docs/workloads.md`).
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

/// Largest `n` sampled with an alias table (8 bytes per item: 128 MiB at the limit).
pub const ALIAS_MAX_ITEMS: u64 = 1 << 24;

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
    Alias(std::sync::Arc<[AliasColumn]>),
    Skewed(rand_distr::Zipf<f64>),
}

/// One column of the alias table: keep the column's own item if the low 32 random bits are below
/// `threshold`, else take `alias`.
#[derive(Debug, Clone, Copy)]
struct AliasColumn {
    threshold: u32,
    alias: u32,
}

/// Vose's construction: scaled probabilities split into columns below and above 1, each small
/// column topped up from a large one.
fn alias_table(n: u64, theta: f64) -> std::sync::Arc<[AliasColumn]> {
    let n_us = n as usize;
    let weights: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-theta)).collect();
    let total: f64 = weights.iter().rev().sum();
    let mut scaled: Vec<f64> = weights.iter().map(|w| w / total * n as f64).collect();
    let mut table = vec![
        AliasColumn {
            threshold: u32::MAX,
            alias: 0
        };
        n_us
    ];
    let (mut small, mut large): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    for (i, &p) in scaled.iter().enumerate() {
        if p < 1.0 {
            small.push(i as u32)
        } else {
            large.push(i as u32)
        }
    }
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        let p = scaled[s as usize];
        table[s as usize] = AliasColumn {
            threshold: (p * 4_294_967_296.0).min(u32::MAX as f64) as u32,
            alias: l,
        };
        scaled[l as usize] -= 1.0 - p;
        if scaled[l as usize] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // Columns left in either list hold (up to rounding) exactly 1: always keep their own item.
    for i in small.into_iter().chain(large) {
        table[i as usize] = AliasColumn {
            threshold: u32::MAX,
            alias: i,
        };
    }
    table.into()
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
        } else if n <= ALIAS_MAX_ITEMS {
            Sampler::Alias(alias_table(n, theta))
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
    /// The same distribution sampled by rejection-inversion even where an alias table would be
    /// used (tests hold both samplers to the analytic law).
    #[cfg(test)]
    fn rejection_inversion(n: u64, theta: f64) -> Zipf {
        let mut z = Zipf::new(n, theta).expect("valid parameters");
        if theta > 0.0 {
            z.sampler = Sampler::Skewed(rand_distr::Zipf::new(n as f64, theta).expect("valid"));
        }
        z
    }

    /// Whether draws come from an alias table.
    pub fn uses_alias_table(&self) -> bool {
        matches!(self.sampler, Sampler::Alias(_))
    }

    /// The number of items (draws are in `0..n`).
    pub fn n(&self) -> u64 {
        self.n
    }

    /// The skew.
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// Draws an item in `0..n`.
    #[inline(always)]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match &self.sampler {
            Sampler::Uniform(u) => u.sample(rng),
            Sampler::Alias(table) => {
                let r = rng.next_u64();
                let column = (((r >> 32) * table.len() as u64) >> 32) as usize;
                let c = table[column];
                // The last column keeps u32::MAX as threshold: the low bits are < it except for
                // the single value u32::MAX, which then takes the column's alias (itself).
                if (r as u32) < c.threshold {
                    column as u64
                } else {
                    c.alias as u64
                }
            }
            Sampler::Skewed(z) => self.sample_skewed(z, rng),
        }
    }

    /// Rejection-inversion, kept out of line so that the table and uniform draws above inline
    /// into their callers (a call with this path's register saves cost as much as the draw).
    #[inline(never)]
    fn sample_skewed<R: Rng + ?Sized>(&self, z: &rand_distr::Zipf<f64>, rng: &mut R) -> u64 {
        loop {
            // The distribution returns a rank in 1..=n as a float. Rounding at the very top of
            // the envelope could yield n + 1; such a draw is rejected like any other envelope
            // point outside the support, which keeps the result exact.
            let rank = z.sample(rng);
            if rank >= 1.0 && rank <= self.n as f64 {
                return rank as u64 - 1;
            }
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
        counts_of(&Zipf::new(N, theta).unwrap(), seed)
    }

    fn counts_of(z: &Zipf, seed: u64) -> Vec<u64> {
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
    fn the_rejection_inversion_sampler_also_matches_the_analytic_law() {
        for (k, theta) in [0.5, 0.9, 0.99, 1.0].into_iter().enumerate() {
            let z = Zipf::rejection_inversion(N, theta);
            assert!(!z.uses_alias_table());
            let observed = counts_of(&z, 300 + k as u64);
            let chi2 = chi_square(&observed, &z);
            assert!(chi2 < CHI2_LIMIT, "theta {theta}: chi-square {chi2:.1}");
            let wrong = Zipf::new(N, theta + 0.05).unwrap();
            assert!(
                chi_square(&observed, &wrong) > CHI2_LIMIT,
                "theta {theta}: a wrong model passes"
            );
        }
        assert!(Zipf::new(N, 0.9).unwrap().uses_alias_table());
        assert!(
            !Zipf::new(ALIAS_MAX_ITEMS + 1, 0.9)
                .unwrap()
                .uses_alias_table()
        );
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
        for (n, theta, alias) in [100_000u64, 10_000_000]
            .into_iter()
            .flat_map(|n| [0.0, 0.5, 0.9, 0.99, 1.0, 1.5].map(|t| (n, t)))
            .flat_map(|(n, t)| [(n, t, true), (n, t, false)])
        {
            let z = if alias {
                Zipf::new(n, theta).unwrap()
            } else {
                Zipf::rejection_inversion(n, theta)
            };
            if theta == 0.0 && !alias {
                continue;
            }
            let mut rng = worker_rng(1, 0);
            let start = std::time::Instant::now();
            let sum = (0..DRAWS)
                .map(|_| z.sample(&mut rng))
                .fold(0u64, u64::wrapping_add);
            let ns = start.elapsed().as_nanos() as f64 / DRAWS as f64;
            let how = if z.uses_alias_table() {
                "alias"
            } else if theta == 0.0 {
                "uniform"
            } else {
                "rejection-inversion"
            };
            println!("n {n}, theta {theta}: {ns:.1} ns/draw, {how} (checksum {sum})");
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
