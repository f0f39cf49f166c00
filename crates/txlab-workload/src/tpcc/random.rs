//! TPC-C's random functions (clause 2.1.6, 4.3.2).
//!
//! - `random(x, y)`: uniform in `x..=y` ([`uniform`]).
//! - `NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x` (clause 2.1.6),
//!   with `A = 255` for customer last names, `1023` for customer ids and `8191` for item ids
//!   ([`nurand`]).
//! - The constant `C` is chosen at random in `0..=A` once per run and per field
//!   ([`NuRandConstants`]). Clause 2.1.6.1: the value `C_LOAD` used for `C_LAST` during the
//!   population and the value `C_RUN` used for `C_LAST` during the measurement must satisfy
//!   `delta = |C_RUN - C_LOAD|` in `65..=119`, `delta != 96`, `delta != 112`
//!   ([`NuRandConstants::for_run`], [`valid_last_name_delta`]). `C_ID` and `OL_I_ID`'s run
//!   constants are free (they may equal the load values).
//! - Last names (clause 4.3.2.3): the three decimal digits of a number `0..=999` each pick a
//!   syllable of `BAR OUGHT ABLE PRI PRES ESE ANTI CALLY ATION EING`, concatenated
//!   ([`last_name`]).
//! - Random a-strings and n-strings (clause 4.3.2.2), zip codes (4.3.2.7) and the 10 % "ORIGINAL"
//!   data strings (4.3.3.1) ([`a_string`], [`n_string`], [`zip`], [`data_with_original`]).

use rand::{Rng, RngExt};

/// `A` of NURand for `C_LAST`.
pub const A_LAST: u32 = 255;
/// `A` of NURand for `C_ID`.
pub const A_CUSTOMER: u32 = 1023;
/// `A` of NURand for `OL_I_ID`.
pub const A_ITEM: u32 = 8191;

/// The syllables of clause 4.3.2.3.
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// Uniform in `lo..=hi` (`lo <= hi`).
#[inline]
pub fn uniform<R: Rng + ?Sized>(rng: &mut R, lo: u32, hi: u32) -> u32 {
    rng.random_range(lo..=hi)
}

/// `NURand(A, x, y)` with constant `c` (module docs); `x <= y`.
#[inline]
pub fn nurand<R: Rng + ?Sized>(rng: &mut R, a: u32, x: u32, y: u32, c: u32) -> u32 {
    let span = u64::from(y - x) + 1;
    let mixed = u64::from(uniform(rng, 0, a) | uniform(rng, x, y));
    ((mixed + u64::from(c)) % span) as u32 + x
}

/// Whether `|c_run - c_load|` is a valid `C_LAST` delta (clause 2.1.6.1).
pub fn valid_last_name_delta(c_load: u32, c_run: u32) -> bool {
    let delta = c_load.abs_diff(c_run);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// The three NURand constants of one phase (load or run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NuRandConstants {
    /// `C` for `C_LAST` (`0..=255`).
    pub c_last: u32,
    /// `C` for `C_ID` (`0..=1023`).
    pub c_id: u32,
    /// `C` for `OL_I_ID` (`0..=8191`).
    pub ol_i_id: u32,
}

impl NuRandConstants {
    /// Constants for the population phase, drawn uniformly.
    pub fn for_load<R: Rng + ?Sized>(rng: &mut R) -> Self {
        NuRandConstants {
            c_last: uniform(rng, 0, A_LAST),
            c_id: uniform(rng, 0, A_CUSTOMER),
            ol_i_id: uniform(rng, 0, A_ITEM),
        }
    }

    /// Constants for a measurement run following `load` (clause 2.1.6.1): `c_last` is drawn
    /// uniformly among the values in `0..=255` whose delta to `load.c_last` is valid (there are
    /// always some: every `c_load` in `0..=255` has a valid partner at distance 65..=95 on at
    /// least one side); the other two uniformly.
    pub fn for_run<R: Rng + ?Sized>(load: &NuRandConstants, rng: &mut R) -> Self {
        let valid = (0..=A_LAST)
            .filter(|&c| valid_last_name_delta(load.c_last, c))
            .count() as u32;
        let pick = uniform(rng, 0, valid - 1) as usize;
        let c_last = (0..=A_LAST)
            .filter(|&c| valid_last_name_delta(load.c_last, c))
            .nth(pick)
            .unwrap_or(load.c_last);
        NuRandConstants {
            c_last,
            c_id: uniform(rng, 0, A_CUSTOMER),
            ol_i_id: uniform(rng, 0, A_ITEM),
        }
    }
}

/// Writes the last name of number `n` (`0..=999`) into a 16-byte CHAR and returns it.
pub fn last_name(n: u32) -> [u8; 16] {
    debug_assert!(n < 1000);
    let mut out = [0u8; 16];
    let mut pos = 0;
    for digit in [n / 100, (n / 10) % 10, n % 10] {
        let s = SYLLABLES[digit as usize].as_bytes();
        out[pos..pos + s.len()].copy_from_slice(s);
        pos += s.len();
    }
    out
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Fills `out` with a random a-string of length `lo..=hi` (clamped to `out.len()`), NUL-padding
/// the rest. Returns the length.
pub fn a_string<R: Rng + ?Sized>(rng: &mut R, out: &mut [u8], lo: usize, hi: usize) -> usize {
    let hi = hi.min(out.len());
    let len = rng.random_range(lo.min(hi)..=hi);
    for b in &mut out[..len] {
        *b = ALNUM[rng.random_range(0..ALNUM.len())];
    }
    out[len..].fill(0);
    len
}

/// Fills `out` with a random n-string (digits) of its full length.
pub fn n_string<R: Rng + ?Sized>(rng: &mut R, out: &mut [u8]) {
    for b in out {
        *b = b'0' + rng.random_range(0..10u8);
    }
}

/// A zip code: 4 random digits followed by `11111` (clause 4.3.2.7).
pub fn zip<R: Rng + ?Sized>(rng: &mut R) -> [u8; 9] {
    let mut z = *b"000011111";
    n_string(rng, &mut z[..4]);
    z
}

/// The literal placed in 10 % of `I_DATA` and `S_DATA` (clause 4.3.3.1).
pub const ORIGINAL: &[u8] = b"ORIGINAL";

/// Fills `out` with an a-string of length `26..=50` (clamped to `out.len()`); with probability
/// 10 % "ORIGINAL" is written at a random position inside it. Returns whether it was.
pub fn data_with_original<R: Rng + ?Sized>(rng: &mut R, out: &mut [u8]) -> bool {
    let len = a_string(rng, out, 26, 50);
    if rng.random_range(0..10u32) == 0 && len >= ORIGINAL.len() {
        let at = rng.random_range(0..=len - ORIGINAL.len());
        out[at..at + ORIGINAL.len()].copy_from_slice(ORIGINAL);
        return true;
    }
    false
}

/// Whether a CHAR value contains "ORIGINAL" (NewOrder's brand-generic test, clause 2.4.2.2).
pub fn contains_original(data: &[u8]) -> bool {
    data.windows(ORIGINAL.len()).any(|w| w == ORIGINAL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::worker_rng;

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = worker_rng(1, 0);
        for &(a, x, y) in &[
            (255, 0, 999),
            (1023, 1, 3000),
            (8191, 1, 100_000),
            (8191, 1, 1000),
            (1023, 1, 1),
        ] {
            let c = uniform(&mut rng, 0, a);
            for _ in 0..20_000 {
                let v = nurand(&mut rng, a, x, y, c);
                assert!((x..=y).contains(&v), "NURand({a},{x},{y}) = {v}");
            }
        }
        // Skew: with A = 1023 over 1..=3000 the most popular tenth of ids gets far more than a
        // tenth of the draws.
        let mut counts = vec![0u32; 3001];
        for _ in 0..100_000 {
            counts[nurand(&mut rng, 1023, 1, 3000, 7) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top: u32 = counts[..300].iter().sum();
        assert!(
            top > 20_000,
            "top 10% of ids got only {top} of 100000 draws"
        );
    }

    #[test]
    fn run_constant_respects_the_c_delta_rule() {
        for seed in 0..300 {
            let mut rng = worker_rng(seed, 0);
            let load = NuRandConstants::for_load(&mut rng);
            let run = NuRandConstants::for_run(&load, &mut rng);
            assert!(
                valid_last_name_delta(load.c_last, run.c_last),
                "{load:?} {run:?}"
            );
            assert!(run.c_last <= A_LAST && run.c_id <= A_CUSTOMER && run.ol_i_id <= A_ITEM);
        }
        // Every possible load constant has a valid run constant.
        for c_load in 0..=A_LAST {
            assert!(
                (0..=A_LAST).any(|c| valid_last_name_delta(c_load, c)),
                "{c_load}"
            );
        }
        assert!(valid_last_name_delta(0, 65) && valid_last_name_delta(200, 81));
        assert!(!valid_last_name_delta(0, 96) && !valid_last_name_delta(10, 122));
        assert!(!valid_last_name_delta(0, 64) && !valid_last_name_delta(0, 120));
    }

    #[test]
    fn last_names_follow_the_syllable_rule() {
        assert_eq!(&last_name(0)[..9], b"BARBARBAR");
        assert_eq!(
            crate::tpcc::codec::trimmed(&last_name(371)),
            b"PRICALLYOUGHT"
        );
        assert_eq!(
            crate::tpcc::codec::trimmed(&last_name(999)),
            b"EINGEINGEING"
        );
    }

    #[test]
    fn strings_have_the_requested_shape() {
        let mut rng = worker_rng(3, 0);
        let mut originals = 0;
        for _ in 0..2000 {
            let mut buf = [0u8; 50];
            if data_with_original(&mut rng, &mut buf) {
                originals += 1;
                assert!(contains_original(&buf));
            }
            let len = crate::tpcc::codec::trimmed(&buf).len();
            assert!((26..=50).contains(&len), "{len}");
        }
        assert!(
            (120..=280).contains(&originals),
            "{originals} of 2000 ORIGINAL"
        );
        let z = zip(&mut rng);
        assert!(z[..4].iter().all(u8::is_ascii_digit) && &z[4..] == b"11111");
    }
}
