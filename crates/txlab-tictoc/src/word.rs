//! The TicToc timestamp word: one `AtomicU64` per record holding the lock bit, the absent bit,
//! the write timestamp `wts` and the read timestamp `rts` in delta form.
//!
//! ```text
//!  63                               17 16               2    1        0
//! +-----------------------------------+------------------+--------+------+
//! |            wts (47 bits)          |  delta (15 bits) | ABSENT | LOCK |
//! +-----------------------------------+------------------+--------+------+
//!                      rts = wts + delta
//! ```
//!
//! - `wts`: the logical time the current version was written (its commit timestamp).
//! - `delta = rts - wts`: the version is known valid for every logical time in `[wts, rts]`.
//!   Storing the difference instead of a second full timestamp is the paper's delta encoding
//!   (Yu et al., SIGMOD 2016, §3.6), which keeps lock, `wts` and `rts` in one word so a single CAS
//!   updates them together.
//! - `ABSENT`: the version is logically absent (never inserted, or deleted). The paper's layout is
//!   1 lock bit, 15-bit delta, 48-bit `wts`; txlab takes the absent bit from `wts`, leaving 47 bits
//!   (1.4·10^14 timestamps: at a billion conflicting commits per second, more than a day of
//!   continuous contention on one record; commit returns `Error::Internal` rather than wrapping).
//! - `LOCK`: held by a committing writer between locking its write set and installing.
//!
//! **Delta overflow (§3.6).** When a validating reader must extend `rts` to a timestamp more than
//! [`MAX_DELTA`] above `wts`, it moves `wts` forward to `rts - MAX_DELTA`. The version then claims
//! validity only over `[rts - MAX_DELTA, rts]`, a sub-interval of the truth; every transaction
//! that read the version at a time inside the new interval stays correct, and one that remembered
//! the old `wts` fails its `wts` comparison and aborts (a false abort, never a wrong commit). A
//! shift never moves `wts` past `rts`, and `rts` never decreases, so the word's timestamps stay
//! monotone.
//!
//! **Monotonicity.** `rts` only grows: extensions raise it, installs set `wts = rts = commit_ts`
//! with `commit_ts > rts` (Algorithm 2 picks `commit_ts >= rts + 1` for every written record while
//! it is locked), and a shift changes `wts` but not `rts`. Hence the `wts` of successive versions
//! of one record strictly increases (see `crate::record` for the history tag built on that).

/// Lock bit.
pub const LOCK: u64 = 1;
/// Logically-absent bit.
pub const ABSENT: u64 = 1 << 1;
/// First bit of the delta field.
pub const DELTA_SHIFT: u32 = 2;
/// Width of the delta field in bits.
pub const DELTA_BITS: u32 = 15;
/// Largest representable `rts - wts`.
pub const MAX_DELTA: u64 = (1 << DELTA_BITS) - 1;
/// First bit of the `wts` field.
pub const WTS_SHIFT: u32 = DELTA_SHIFT + DELTA_BITS;
/// Largest representable `wts` (47 bits).
pub const MAX_WTS: u64 = (1 << (64 - WTS_SHIFT)) - 1;

/// The write timestamp.
#[inline]
pub const fn wts(word: u64) -> u64 {
    word >> WTS_SHIFT
}

/// `rts - wts`.
#[inline]
pub const fn delta(word: u64) -> u64 {
    (word >> DELTA_SHIFT) & MAX_DELTA
}

/// The read timestamp `wts + delta`.
#[inline]
pub const fn rts(word: u64) -> u64 {
    wts(word) + delta(word)
}

/// Whether the lock bit is set.
#[inline]
pub const fn is_locked(word: u64) -> bool {
    word & LOCK != 0
}

/// Whether the absent bit is set.
#[inline]
pub const fn is_absent(word: u64) -> bool {
    word & ABSENT != 0
}

/// A new unlocked word for a version written at `ts` (`wts = rts = ts`), absent or present.
///
/// `ts` must be at most [`MAX_WTS`] (commit checks it before installing).
#[inline]
pub const fn installed(ts: u64, absent: bool) -> u64 {
    debug_assert!(ts <= MAX_WTS);
    (ts << WTS_SHIFT) | if absent { ABSENT } else { 0 }
}

/// `word` with `rts` raised to `new_rts` (which must be `>= rts(word)`), keeping the lock and
/// absent bits; if `new_rts - wts` exceeds [`MAX_DELTA`], `wts` moves forward to
/// `new_rts - MAX_DELTA` (§3.6, module docs).
#[inline]
pub const fn with_rts(word: u64, new_rts: u64) -> u64 {
    let mut w = wts(word);
    if new_rts - w > MAX_DELTA {
        w = new_rts - MAX_DELTA;
    }
    let status = word & (LOCK | ABSENT);
    (w << WTS_SHIFT) | ((new_rts - w) << DELTA_SHIFT) | status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_do_not_overlap() {
        let w = installed(12345, true) | LOCK;
        assert_eq!(wts(w), 12345);
        assert_eq!(rts(w), 12345);
        assert_eq!(delta(w), 0);
        assert!(is_absent(w) && is_locked(w));
        let e = with_rts(w, 12345 + 77);
        assert_eq!((wts(e), rts(e), delta(e)), (12345, 12422, 77));
        assert!(is_absent(e) && is_locked(e), "status bits are kept");
        let top = installed(MAX_WTS, false);
        assert_eq!(wts(top), MAX_WTS);
        assert!(!is_absent(top) && !is_locked(top));
    }

    #[test]
    fn extending_past_the_delta_range_shifts_wts_forward() {
        let w = installed(10, false);
        let e = with_rts(w, 10 + MAX_DELTA);
        assert_eq!((wts(e), rts(e)), (10, 10 + MAX_DELTA), "fits exactly");
        let far = 10 + MAX_DELTA + 1000;
        let s = with_rts(w, far);
        assert_eq!(rts(s), far, "rts is what was asked for");
        assert_eq!(wts(s), far - MAX_DELTA, "wts moved up just enough");
        assert_eq!(delta(s), MAX_DELTA);
        assert!(wts(s) > wts(w));
    }
}
