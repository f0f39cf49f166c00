//! The Silo TID word: one `AtomicU64` per record.
//!
//! ```text
//!  63            32 31               4      3          2        1        0
//! +----------------+------------------+------------+--------+--------+------+
//! |  epoch (32)    |  sequence (28)   | PIVOT_READ | RETIRED| ABSENT | LOCK |
//! +----------------+------------------+------------+--------+--------+------+
//! ```
//!
//! - `epoch`: the global epoch the writing transaction committed in (Silo §4.2; the NWR paper
//!   §6.1.1 describes the same 32-bit epoch / per-epoch sequence / lock split, which its pivot
//!   object extends to 128 bits).
//! - `sequence`: within the epoch; a committing transaction picks the smallest TID greater than
//!   every TID it read or overwrote and than its worker's previous TID (Silo §4.4), so TIDs of one
//!   record strictly increase and are consistent with the serial order on every key. If the
//!   sequence overflows it carries into the epoch field; the word stays monotone.
//! - `ABSENT`: the record is logically absent (never inserted, or deleted). A delete installs a new
//!   TID with this bit, so readers of the old version notice.
//! - `LOCK`: held by a committing writer between locking its write set and installing, or by the
//!   worker retiring a tombstone while it unlinks it ([`crate::retire`]).
//! - `PIVOT_READ` (set only by Silo+NWR with single-write omitters, `SiloNwrSingle`; always clear
//!   otherwise): the record's first version of this word's epoch (the NWR *pivot*) was installed
//!   by a transaction that read the record's older version, through a read-modify-write, an
//!   insert, a delete or a scan hit, or that replaced an absent word of an earlier epoch (a scan
//!   may have missed the key). Sticky within the epoch: every later writer of the same epoch
//!   copies it from the word it replaces. It is the single-write rule's one mark
//!   (`crate::commit`, `docs/protocols/nwr.md`); a blind write of the record is then never
//!   omitted in this epoch.
//! - `RETIRED`: the record (always an absent tombstone) has been, or is being, unlinked from its
//!   index. The word never changes again and the record is never used again: every reader, writer
//!   and validator that meets it aborts with `ConflictCause::RecordRetired` (or fails validation),
//!   and a retry looks the key up again.
//!
//! The *version* of a record is the word without `LOCK`; the *tag* (what histories record) is the
//! word without the four status bits: `epoch << 32 | sequence << 4`. A loaded record has tag 0.

/// Lock bit.
pub const LOCK: u64 = 1;
/// Logically-absent bit.
pub const ABSENT: u64 = 1 << 1;
/// Retired-from-the-index bit (see [`crate::retire`]).
pub const RETIRED: u64 = 1 << 2;
/// The pivot writer's mark of the single-write NWR rule (module docs).
pub const PIVOT_READ: u64 = 1 << 3;
/// The four status bits (lock, absent, retired, pivot read).
pub const STATUS_MASK: u64 = 0b1111;
/// One step of the sequence field.
pub const SEQ_ONE: u64 = 1 << 4;

/// The version tag of a TID word (status bits cleared).
#[inline]
pub const fn tag(word: u64) -> u64 {
    word & !STATUS_MASK
}

/// The epoch field of a TID word.
#[inline]
pub const fn epoch_of(word: u64) -> u64 {
    word >> 32
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

/// Whether the pivot writer's mark is set (see [`PIVOT_READ`]).
#[inline]
pub const fn is_pivot_read(word: u64) -> bool {
    word & PIVOT_READ != 0
}

/// Whether the retired bit is set.
#[inline]
pub const fn is_retired(word: u64) -> bool {
    word & RETIRED != 0
}

/// The commit TID (Silo §4.4): in epoch `epoch`, greater than `floor` (the largest tag seen).
#[inline]
pub fn next_tid(floor: u64, epoch: u64) -> u64 {
    let epoch_start = epoch << 32;
    let after_floor = tag(floor) + SEQ_ONE;
    after_floor.max(epoch_start + SEQ_ONE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_tid_exceeds_the_floor_and_sits_in_the_epoch() {
        assert_eq!(next_tid(0, 1), (1 << 32) | SEQ_ONE);
        let t = next_tid((1 << 32) | (5 * SEQ_ONE) | LOCK | ABSENT, 1);
        assert_eq!(t, (1 << 32) | (6 * SEQ_ONE));
        // A newer epoch restarts the sequence.
        assert_eq!(next_tid((1 << 32) | (9 * SEQ_ONE), 3), (3 << 32) | SEQ_ONE);
        assert_eq!(epoch_of(t), 1);
        assert_eq!(t & STATUS_MASK, 0);
        // The retired bit is a status bit: not part of the tag, never produced by next_tid.
        assert_eq!(tag(t | RETIRED | ABSENT), t);
        assert!(is_retired(t | RETIRED) && !is_retired(t | ABSENT | LOCK));
        assert_eq!(next_tid(t | RETIRED, 1), t + SEQ_ONE);
        // So is the pivot writer's mark.
        assert_eq!(tag(t | PIVOT_READ), t);
        assert!(is_pivot_read(t | PIVOT_READ) && !is_pivot_read(t | STATUS_MASK & !PIVOT_READ));
        assert_eq!(next_tid(t | PIVOT_READ | LOCK, 1), t + SEQ_ONE);
    }
}
