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
//! - [`RETIRED`]: the one word a record holds after it was unlinked from its index
//!   (`crate::retire`): every bit set, so it is locked (nobody can extend, lock or read it) and its
//!   `wts` differs from any version's. No live word equals it: a live `rts` never exceeds
//!   [`MAX_WTS`], while this word's `wts + delta` does.
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
//!
//! **Epoch-prefixed timestamps (TicToc+NWR only).** The NWR paper (§6.1.1) puts the epoch into
//! TicToc's word so that the timestamp order respects epochs. txlab keeps the 64-bit layout above
//! and, in the NWR build (`Omit::ENABLED`), gives the 47-bit timestamps this meaning:
//!
//! ```text
//!  wts/rts (47 bits) = | epoch e (23 bits, timestamp bits 24..=46) | n (24 bits, bits 0..=23) |
//!  commit timestamps of a transaction of epoch e lie in [floor(e), base(e + 1))
//!      base(e)  = e << 24                 (EPOCH_TS_SHIFT = 24)
//!      floor(e) = e << 24 | 2^23          (epoch_floor)
//!  [base(e), floor(e)) is never a commit timestamp: the history order of omitted writes
//! ```
//!
//! A committer reads the global epoch `e` right after locking and takes
//! `commit_ts = max(TicToc's commit_ts, floor(e))`; if that reaches `base(e + 1)` (2^23 conflicting
//! commits on one record within one epoch) it aborts with the retryable
//! `ConflictCause::TimestampsExhausted` instead of spilling into the next epoch.
//! 23 epoch bits last 2^23 epochs (93 hours at 40 ms epochs); past that commit returns
//! `Error::Internal` (`MAX_WTS`). Plain TicToc (`NoNwr`) takes no floor and the bits mean plain
//! logical time.
//!
//! *Delta overflow across an epoch.* A version installed in epoch `e - 1` has `wts < base(e)`;
//! extending its `rts` to `floor(e)` or beyond is an overflow (`floor(e) - wts > MAX_DELTA`), so
//! the shift above moves `wts` to `rts - MAX_DELTA`, which may even land in epoch `e`'s range. The
//! word's `wts` therefore does *not* say in which epoch a version was installed. TicToc+NWR asks
//! that question of the record's history tag instead (`crate::record`: the install timestamp,
//! never shifted), read consistently with the word. The shift itself stays a false abort for a
//! concurrent reader that remembered the old `wts` (as in plain TicToc).

/// Lock bit.
pub const LOCK: u64 = 1;
/// Logically-absent bit.
pub const ABSENT: u64 = 1 << 1;
/// The word of a record unlinked from its index (module docs; `crate::retire`). Final: it never
/// changes again.
pub const RETIRED: u64 = u64::MAX;
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

/// Bits of a timestamp below its epoch in the NWR build (module docs).
pub const EPOCH_TS_SHIFT: u32 = 24;
/// The first timestamp of epoch `e` (`e << 24`); `[epoch_base(e), epoch_floor(e))` is reserved
/// for the recorded order of omitted writes.
#[inline]
pub const fn epoch_base(e: u64) -> u64 {
    e << EPOCH_TS_SHIFT
}
/// The smallest commit timestamp of a transaction of epoch `e` in the NWR build
/// (`e << 24 | 2^23`).
#[inline]
pub const fn epoch_floor(e: u64) -> u64 {
    epoch_base(e) | (1 << (EPOCH_TS_SHIFT - 1))
}
/// The epoch a timestamp belongs to in the NWR build.
#[cfg(test)]
#[inline]
pub const fn ts_epoch(ts: u64) -> u64 {
    ts >> EPOCH_TS_SHIFT
}

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

/// Whether this is the final word of a record unlinked from its index ([`RETIRED`]).
#[inline]
pub const fn is_retired(word: u64) -> bool {
    word == RETIRED
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
    fn the_retired_word_is_locked_and_no_live_word() {
        assert!(is_retired(RETIRED) && is_locked(RETIRED) && is_absent(RETIRED));
        // The largest live words: wts = rts = MAX_WTS, locked or not, absent or not.
        for w in [installed(MAX_WTS, true) | LOCK, installed(MAX_WTS, false)] {
            assert!(!is_retired(w));
        }
        assert!(
            rts(RETIRED) > MAX_WTS,
            "its rts is out of any live word's range"
        );
        assert!(!is_retired(with_rts(
            installed(MAX_WTS - MAX_DELTA, true) | LOCK,
            MAX_WTS
        )));
    }

    #[test]
    fn epoch_ranges_tile_the_timestamps() {
        assert_eq!(epoch_base(3), 3 << 24);
        assert_eq!(epoch_floor(3), (3 << 24) + (1 << 23));
        assert_eq!(ts_epoch(epoch_floor(3)), 3);
        assert_eq!(ts_epoch(epoch_base(4) - 1), 3);
        assert_eq!(ts_epoch(epoch_base(4)), 4);
        // The largest epoch whose floor fits the 47-bit field.
        assert!(epoch_floor((1 << 23) - 1) <= MAX_WTS);
        // Extending a version of epoch 2 into epoch 3 overflows the delta; the shifted wts may
        // land in epoch 3's range, so the word's wts cannot tell a version's install epoch.
        let old = installed(epoch_floor(2), false);
        let ext = with_rts(old, epoch_floor(3) + MAX_DELTA);
        assert_eq!(ts_epoch(wts(ext)), 3);
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
