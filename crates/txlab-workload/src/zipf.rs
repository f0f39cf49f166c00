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
//! Items are not scrambled: item 0 is the hottest, item 1 the next, so the hot items are
//! adjacent keys. CCBench (`zipf() % tuple_num`) and DBx1000 draw YCSB keys the same way; the YCSB
//! client itself hashes the rank (`ScrambledZipfianGenerator`), spreading hot keys over the key
//! space. A workload that wants spread keys maps the item itself.
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
//! - `theta > 0`, larger `n`: rejection-inversion (W. Hörmann and G. Derflinger,
//!   "Rejection-inversion to generate variates from monotone discrete distributions", ACM TOMACS
//!   6(3), 1996), with its squeeze. Rank `k` in `1..=n` owns the interval `[k - 1/2, k + 1/2)` of
//!   a continuous envelope with density `x^-theta`, whose integral
//!   `H(x) = (x^(1-theta) - 1) / (1 - theta)` (`ln x` at `theta = 1`) inverts in closed form. A
//!   draw takes one uniform `u` on the envelope's integral, `x = H^-1(u)` and `k = round(x)`; it
//!   accepts `k` when `u >= H(k + 1/2) - k^-theta`, an interval of length exactly `k^-theta` at
//!   the top of `k`'s share, so accepted ranks follow the law exactly (rank 1's share is
//!   shortened to length 1 at set-up, so it always accepts). The squeeze `k - x <= s`, with the
//!   constant `s` from rank 2 (the paper shows it bounds every rank's acceptance region from
//!   inside), decides almost every draw without evaluating `H`: a draw costs one random word, a
//!   `ln_1p` and an `exp`. At `n = 100,000` the full test runs for 1.5 % of draws at theta 0.99
//!   (2 % at theta 1.5), and 0.14 % are rejected and drawn again (0.8 % at theta 1.5). No table
//!   and no O(n) set-up, so `n` may be as large as a dense table (2^40).
//!
//! Why the table where it fits: it is the fastest exact method measured here, even though its
//! column is read at random (800 KB at 100,000 items, about one first-level miss per key in
//! callgrind's cache simulation): 5.8 ns per draw against 19 ns for rejection-inversion, 16 ns
//! for Gray et al.'s closed form and 50 ns for `rand_distr::Zipf`, and inside a whole YCSB
//! transaction the table's misses overlap with the rest of the work while the arithmetic does not
//! (`docs/workloads.md` has the numbers; example `zipf_draws`).
//!
//! Why not the closed form of Gray et al. (used by CCBench and YCSB's `ZipfianGenerator`; kept for
//! comparisons as [`GrayZipf`](crate::gray::GrayZipf)): it is exact only for the two hottest
//! items and approximates rank `k >= 3` by the envelope's mass over `[k - 1, k)`, which
//! over-weights the next hottest ranks (at `n = 100,000`, `theta = 0.99`: rank 3 by 19 %, rank 4
//! by 13 %, rank 5 by 9 %; the top-rank test below rejects it). It also needs the O(n) sum
//! `zeta(n, theta)` and divides by `1 - theta`.
//!
//! # Accepted `theta`: finite, `0.0..=10.0`
//!
//! `H` and `H^-1` are evaluated through `exp_m1` and `ln_1p`, which stay accurate as
//! `1 - theta -> 0`, with the limit `ln` / `exp` at `theta = 1`, so `theta = 1` and its
//! neighbourhood are ordinary values. The upper bound 10 is a sanity bound rather than a numerical
//! one: at `theta = 10` item 0 already gets `1 / zeta(10) > 99.9 %` of the draws, so larger values
//! describe no different workload and are most likely a typo (e.g. `99` for `0.99`). Negative,
//! NaN and infinite values are rejected.
//!
//! Cost per draw (instructions and simulated cache misses from callgrind, native time): see the
//! example `zipf_draws` and `docs/workloads.md`.
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
    Skewed(RejectionInversion),
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

/// The constants of rejection-inversion for ranks `1..=n` with density `h(x) = x^-theta`
/// (module docs). Ranks are 1-based here; [`Zipf::sample`] returns `rank - 1`.
#[derive(Debug, Clone, Copy)]
struct RejectionInversion {
    n: u64,
    theta: f64,
    /// `1 - theta`.
    q: f64,
    /// `1 / (1 - theta)`; unused at `theta = 1`.
    inv_q: f64,
    /// `H(1.5) - 1`: the bottom of the envelope, shortened so that rank 1 always accepts.
    h_x1: f64,
    /// `H(n + 0.5)`: the top of the envelope.
    h_n: f64,
    /// The squeeze: a draw with `k - x <= s` is accepted without evaluating `H`.
    s: f64,
}

impl RejectionInversion {
    fn new(n: u64, theta: f64) -> RejectionInversion {
        let q = 1.0 - theta;
        let mut ri = RejectionInversion {
            n,
            theta,
            q,
            inv_q: if q == 0.0 { 0.0 } else { 1.0 / q },
            h_x1: 0.0,
            h_n: 0.0,
            s: 0.0,
        };
        ri.h_x1 = ri.big_h(1.5) - 1.0;
        ri.h_n = ri.big_h(n as f64 + 0.5);
        ri.s = 2.0 - ri.big_h_inv(ri.big_h(2.5) - ri.h(2.0));
        ri
    }

    /// `h(x) = x^-theta`.
    fn h(&self, x: f64) -> f64 {
        x.powf(-self.theta)
    }

    /// `H(x) = integral_1^x h = (x^q - 1) / q = expm1(q ln x) / q` (`ln x` at `q = 0`).
    fn big_h(&self, x: f64) -> f64 {
        let ln_x = x.ln();
        if self.q == 0.0 {
            ln_x
        } else {
            (self.q * ln_x).exp_m1() * self.inv_q
        }
    }

    /// `H^-1(y) = (1 + q y)^(1/q) = exp(ln_1p(q y) / q)` (`exp y` at `q = 0`).
    #[inline(always)]
    fn big_h_inv(&self, y: f64) -> f64 {
        let ln_x = if self.q == 0.0 {
            y
        } else {
            // For theta > 1, `q y` approaches -1 at the top of the envelope; rounding past it
            // would give NaN where the exact value is a rank at the far end (clamped to n).
            (self.q * y).max(-1.0).ln_1p() * self.inv_q
        };
        ln_x.exp()
    }

    /// A rank in `1..=n`.
    #[inline(always)]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        loop {
            // 53 random bits: a uniform double in [0, 1), so `u` lies in (h_x1, h_n].
            let unit = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            let u = self.h_n + unit * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            // `as` saturates (and maps NaN to 0); the clamp keeps a rounding at either end of
            // the envelope inside 1..=n.
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            if k as f64 - x <= self.s || self.accepts(k, u) {
                return k;
            }
        }
    }

    /// The full acceptance test, for the few draws the squeeze leaves undecided.
    #[cold]
    #[inline(never)]
    fn accepts(&self, k: u64, u: f64) -> bool {
        let k = k as f64;
        u >= self.big_h(k + 0.5) - self.h(k)
    }
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
            Sampler::Skewed(RejectionInversion::new(n, theta))
        };
        Ok(Zipf {
            n,
            theta,
            sampler,
            normaliser: OnceLock::new(),
        })
    }

    /// The same distribution sampled by rejection-inversion even where an alias table would be
    /// used (tests hold both samplers to the analytic law).
    #[cfg(test)]
    fn rejection_inversion(n: u64, theta: f64) -> Zipf {
        let mut z = Zipf::new(n, theta).expect("valid parameters");
        if theta > 0.0 {
            z.sampler = Sampler::Skewed(RejectionInversion::new(n, theta));
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
            Sampler::Skewed(ri) => ri.sample(rng) - 1,
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

    /// Draws `draws` items and checks the `ranks` hottest: each count within `Z` binomial
    /// standard deviations of `draws * P(i)`. The tolerance follows the sample size (about
    /// `Z * sqrt(draws * P(i))`); `Z = 5` leaves a chance below 10^-6 per rank that a correct
    /// sampler fails. Returns the first rank outside its tolerance.
    fn top_ranks(
        law: &Zipf,
        draws: u64,
        ranks: u64,
        mut draw: impl FnMut() -> u64,
    ) -> Result<(), String> {
        const Z: f64 = 5.0;
        let mut counts = vec![0u64; ranks as usize];
        for _ in 0..draws {
            let i = draw();
            assert!(i < law.n(), "draw {i} outside 0..{}", law.n());
            if i < ranks {
                counts[i as usize] += 1;
            }
        }
        for (i, &got) in counts.iter().enumerate() {
            let p = law.probability(i as u64);
            let expected = p * draws as f64;
            let sd = (draws as f64 * p * (1.0 - p)).sqrt();
            if (got as f64 - expected).abs() > Z * sd {
                return Err(format!(
                    "theta {} item {i}: {got} draws, expected {expected:.0} ± {:.0} (5 sd)",
                    law.theta(),
                    Z * sd
                ));
            }
        }
        Ok(())
    }

    /// The hottest items of a YCSB-sized table drawn as often as the law says, for skews around
    /// YCSB's 0.99 and past 1; Gray's approximation fails the same test.
    #[test]
    fn the_hottest_items_match_the_law_and_grays_approximation_does_not() {
        const ITEMS: u64 = 100_000;
        const DRAWS: u64 = 1_000_000;
        for (seed, theta) in [0.5, 0.9, 0.99, 1.0, 1.5].into_iter().enumerate() {
            for z in [
                Zipf::new(ITEMS, theta).unwrap(),
                Zipf::rejection_inversion(ITEMS, theta),
            ] {
                let mut rng = worker_rng(40 + seed as u64, 0);
                let ok = top_ranks(&z, DRAWS, 10, || z.sample(&mut rng));
                assert!(
                    ok.is_ok(),
                    "alias {}: {}",
                    z.uses_alias_table(),
                    ok.unwrap_err()
                );
            }
        }
        for (seed, theta) in [0.9, 0.99].into_iter().enumerate() {
            let z = Zipf::new(ITEMS, theta).unwrap();
            let gray = crate::gray::GrayZipf::new(ITEMS, theta).unwrap();
            let mut rng = worker_rng(50 + seed as u64, 0);
            assert!(
                top_ranks(&z, DRAWS, 10, || gray.sample(&mut rng)).is_err(),
                "theta {theta}: Gray's approximation passed the top-rank test"
            );
        }
    }

    /// Near `theta = 1`, where `1 / (1 - theta)` is huge, and at the largest table, the draws
    /// stay in range and the hottest items keep their probabilities.
    #[test]
    fn skews_next_to_one_and_the_largest_table_sample_correctly() {
        for (seed, theta) in [1.0 - 1e-9, 1.0 + 1e-9, 0.999_999].into_iter().enumerate() {
            for z in [
                Zipf::new(1_000, theta).unwrap(),
                Zipf::rejection_inversion(1_000, theta),
            ] {
                let mut rng = worker_rng(60 + seed as u64, 0);
                let ok = top_ranks(&z, 200_000, 10, || z.sample(&mut rng));
                assert!(
                    ok.is_ok(),
                    "alias {}: {}",
                    z.uses_alias_table(),
                    ok.unwrap_err()
                );
            }
        }
        // n = 2^40: H(n) has no O(n) sum here; item 0's share is 1 / H(n, 1.5), and
        // H(2^40, 1.5) = zeta(1.5) - 2 / sqrt(2^40) + O(2^-60), zeta(1.5) = 2.612375348685488.
        let z = Zipf::new(MAX_ITEMS, 1.5).unwrap();
        let mut rng = worker_rng(70, 0);
        const DRAWS: u64 = 200_000;
        let mut zeros = 0u64;
        let mut past_a_million = 0u64;
        for _ in 0..DRAWS {
            let i = z.sample(&mut rng);
            assert!(i < MAX_ITEMS);
            zeros += u64::from(i == 0);
            past_a_million += u64::from(i >= 1_000_000);
        }
        let p0 = 1.0 / (2.612_375_348_685_488 - 2.0 / (MAX_ITEMS as f64).sqrt());
        let sd = (DRAWS as f64 * p0 * (1.0 - p0)).sqrt();
        assert!(
            (zeros as f64 - DRAWS as f64 * p0).abs() < 5.0 * sd,
            "item 0 drew {zeros}, expected {:.0} ± {:.0}",
            DRAWS as f64 * p0,
            5.0 * sd
        );
        // P(item >= 10^6) = (H(n) - H(10^6)) / H(n), about 2 / sqrt(10^6) / 2.61 = 7.7e-4.
        let p_tail = 2.0 * (1e-6f64.sqrt() - (1.0 / MAX_ITEMS as f64).sqrt()) * p0;
        let sd = (DRAWS as f64 * p_tail).sqrt();
        assert!(
            (past_a_million as f64 - DRAWS as f64 * p_tail).abs() < 5.0 * sd,
            "{past_a_million} draws past item 10^6, expected {:.0} ± {:.0}",
            DRAWS as f64 * p_tail,
            5.0 * sd
        );
    }

    #[test]
    fn the_rejection_inversion_sampler_also_matches_the_analytic_law() {
        for (k, theta) in [0.5, 0.9, 0.99, 1.0, 1.5].into_iter().enumerate() {
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
        for (k, theta) in [0.0, 0.5, 0.9, 0.99, 1.0, 1.5, 3.0].into_iter().enumerate() {
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
            if theta <= 1.5 {
                // At larger skews most items expect under one draw: no chi-square there.
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

    #[test]
    fn the_same_seed_draws_the_same_items() {
        let z = Zipf::new(100_000, 0.99).unwrap();
        let draws = |seed| {
            let mut rng = worker_rng(seed, 0);
            (0..1000).map(|_| z.sample(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
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
