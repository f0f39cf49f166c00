//! [`GrayZipf`]: the closed-form Zipf approximation of Gray et al., "Quickly generating
//! billion-record synthetic databases" (SIGMOD 1994), as CCBench and YCSB's `ZipfianGenerator`
//! use it. The workloads do not: they draw with the exact [`Zipf`](crate::Zipf).
//!
//! It is here to compare against: to reproduce the key distribution of a C++ testbed, to time
//! a draw beside [`Zipf`](crate::Zipf) (example `zipf_draws`), and to show that the exactness
//! test of [`crate::zipf`] rejects it. Item `0` is the hottest. Items 0 and 1 are drawn with their
//! exact probabilities; rank `k >= 3` gets the envelope `x^-theta`'s mass over `[k - 1, k)`,
//! which over-weights the ranks just below the top two (module docs of [`crate::zipf`]).
//!
//! Accepted: `n >= 2` items and `0 < theta < 1` (the formula divides by `1 - theta`).

use rand::Rng;
use txlab_core::Error;

/// Gray et al.'s generator over items `0..n` (module docs).
#[derive(Debug, Clone, Copy)]
pub struct GrayZipf {
    n: f64,
    zeta_n: f64,
    /// `1 / (1 - theta)`.
    alpha: f64,
    eta: f64,
    /// `zeta(2) = 1 + 0.5^theta`: below it (after scaling by `zeta(n)`) the draw is item 1.
    second: f64,
}

impl GrayZipf {
    /// The generator for `n` items with skew `theta`; O(n) to set up (the sum `zeta(n)`).
    pub fn new(n: u64, theta: f64) -> Result<GrayZipf, Error> {
        if n < 2 {
            return Err(Error::invalid("n", n, "at least 2 items"));
        }
        if !(theta > 0.0 && theta < 1.0) {
            return Err(Error::invalid(
                "theta",
                theta,
                "0 < theta < 1 (Gray's closed form divides by 1 - theta)",
            ));
        }
        let zeta = |m: u64| (1..=m).rev().map(|k| (k as f64).powf(-theta)).sum::<f64>();
        let zeta_n = zeta(n);
        Ok(GrayZipf {
            n: n as f64,
            zeta_n,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta(2) / zeta_n),
            second: zeta(2),
        })
    }

    /// One draw in `0..n`: one random word, and for ranks past the second a `powf`.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let uz = u * self.zeta_n;
        if uz < 1.0 {
            0
        } else if uz < self.second {
            1
        } else {
            ((self.n * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64)
                .min(self.n as u64 - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_parameters_are_refused_with_the_value() {
        for (n, theta, named) in [
            (1, 0.5, "invalid n = 1:"),
            (100, 0.0, "invalid theta = 0:"),
            (100, 1.0, "invalid theta = 1:"),
            (100, f64::NAN, "invalid theta = NaN:"),
        ] {
            let err = GrayZipf::new(n, theta).unwrap_err().to_string();
            assert!(err.starts_with(named), "{err}");
        }
    }

    #[test]
    fn draws_stay_in_range_and_the_hottest_item_leads() {
        let g = GrayZipf::new(1_000, 0.99).unwrap();
        let mut rng = crate::rng::worker_rng(7, 0);
        let mut counts = [0u64; 3];
        for _ in 0..100_000 {
            let i = g.sample(&mut rng);
            assert!(i < 1_000, "draw {i}");
            if i < 3 {
                counts[i as usize] += 1;
            }
        }
        assert!(counts[0] > counts[1] && counts[1] > counts[2], "{counts:?}");
    }
}
