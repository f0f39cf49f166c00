//! The pivot version object: one 128-bit word per data item, read, validated and replaced with a
//! single compare-and-swap (the NWR paper, §5.1, Figure 3 and Figure 4).
//!
//! ```text
//!  127          96 95           64 63            32 31             0
//! +--------------+---------------+----------------+----------------+
//! |  epoch (32)  |  pivot (32)   |   mRS (8 x 4)  |   mWS (8 x 4)  |
//! +--------------+---------------+----------------+----------------+
//!   slot i of mRS / mWS = bits 4i..4i+4 of its 32-bit field
//! ```
//!
//! - `epoch`: the epoch the other three fields describe. A word whose epoch is older than the
//!   committing transaction's is treated as empty (the paper resets mRS/mWS when the epoch
//!   advances; we reset lazily, on the first update in the new epoch).
//! - `pivot`: the per-epoch *pivot version* counter. It starts at [`PIVOT_BASE`] and every omitted
//!   write decrements it (the paper: "the version number of `x_j` is given by decrement of
//!   `x_pv`"), so it also counts the writes ordered before the pivot in this epoch.
//! - `mRS` / `mWS`: merged read and write sets, eight 4-bit slots each, indexed by
//!   [`slot_of`]`(table, key)`. A slot holds the *lowest* per-epoch version number merged into it
//!   ([`VersionNumber`]); 0 means empty; numbers above 15 saturate to 15.
//!
//! Invariant: every update is one `compare_exchange` from the word this thread loaded and
//! validated; a failed CAS means someone else changed the object, and the caller reloads and
//! validates again from the start (Algorithms 2 and 3: "when CAS has failed, we retry").

use txlab_core::protocol::sync::{AtomicU128, Ordering};

/// The `pivot` field at the start of an epoch (omitted writes count down from here).
pub const PIVOT_BASE: u32 = 1 << 31;

/// Number of slots in mRS and in mWS.
pub const SLOTS: u32 = 8;

/// A per-epoch version number as stored in a 4-bit slot.
///
/// - `0`: empty slot;
/// - [`PRE_EPOCH`]: a version written before the current epoch (older than every version of it);
/// - `2..=14`: the epoch's `n`-th visible version (`n + 1`), in the baseline's version order;
/// - [`SATURATED`]: "15 or later": the exact number is lost (the paper's 4-bit truncation).
///
/// An omitted write's number lies strictly between `PRE_EPOCH` and the first visible version of
/// the epoch (it is ordered after every older version and before the pivot).
pub type VersionNumber = u8;

/// Slot value of a version from an earlier epoch.
pub const PRE_EPOCH: VersionNumber = 1;
/// Slot value of an epoch's `n`-th version (`n >= 15` is [`SATURATED`]).
pub const SATURATED: VersionNumber = 15;

/// The slot of data item `(table, key)` in mRS / mWS (Fibonacci hashing, top three bits).
#[inline]
pub fn slot_of(table: u16, key: u64) -> u32 {
    let h = (key ^ ((table as u64) << 48)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 61) as u32
}

/// The per-epoch version number of the `n`-th (1-based) version of an epoch, saturated.
#[inline]
pub fn epoch_version_number(n: u64) -> VersionNumber {
    (n.saturating_add(1)).min(SATURATED as u64) as VersionNumber
}

/// An unpacked pivot version object (see the module docs for the layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PivotWord {
    /// The epoch the other fields describe.
    pub epoch: u32,
    /// The pivot version counter ([`PIVOT_BASE`] minus the writes omitted this epoch).
    pub pivot: u32,
    /// Merged read set: eight 4-bit [`VersionNumber`]s.
    pub mrs: u32,
    /// Merged write set: eight 4-bit [`VersionNumber`]s.
    pub mws: u32,
}

impl PivotWord {
    /// The empty object of `epoch`.
    pub const fn fresh(epoch: u32) -> Self {
        Self {
            epoch,
            pivot: PIVOT_BASE,
            mrs: 0,
            mws: 0,
        }
    }

    /// Packs into the 128-bit layout.
    #[inline]
    pub const fn pack(self) -> u128 {
        ((self.epoch as u128) << 96)
            | ((self.pivot as u128) << 64)
            | ((self.mrs as u128) << 32)
            | self.mws as u128
    }

    /// Unpacks the 128-bit layout.
    #[inline]
    pub const fn unpack(w: u128) -> Self {
        Self {
            epoch: (w >> 96) as u32,
            pivot: (w >> 64) as u32,
            mrs: (w >> 32) as u32,
            mws: w as u32,
        }
    }

    /// The object as seen by a transaction of `epoch`: an older epoch's object is empty.
    #[inline]
    pub fn in_epoch(self, epoch: u32) -> Self {
        if self.epoch == epoch {
            self
        } else {
            Self::fresh(epoch)
        }
    }

    /// The value of slot `slot` of a merged set.
    #[inline]
    pub fn slot(set: u32, slot: u32) -> VersionNumber {
        ((set >> (4 * slot)) & 0xF) as VersionNumber
    }

    /// Merges version number `v` into slot `slot` of `set`, keeping the lowest non-empty value.
    #[inline]
    pub fn merge(set: u32, slot: u32, v: VersionNumber) -> u32 {
        let cur = Self::slot(set, slot);
        if v == 0 || (cur != 0 && cur <= v) {
            return set;
        }
        let v = v.min(SATURATED) as u32;
        (set & !(0xF << (4 * slot))) | (v << (4 * slot))
    }
}

/// The atomic pivot version object of one data item, kept beside the records as a cold
/// companion by Silo+NWR, TicToc+NWR and MVTO+NWR, where only omitters touch it
/// (`txlab_storage::Companions`).
#[derive(Debug, Default)]
pub struct PivotCell(AtomicU128);

/// A companion cell starts empty ([`PivotCell::new`]), like a record's embedded object.
impl txlab_core::protocol::storage::Record for PivotCell {
    fn absent(_value_size: usize) -> Self {
        Self::new()
    }
}

impl PivotCell {
    /// An empty object (epoch 0).
    #[cfg(not(txlab_loom))]
    pub const fn new() -> Self {
        Self(AtomicU128::new(PivotWord::fresh(0).pack()))
    }

    /// An empty object (epoch 0). Not `const` under loom, whose cell is a mutex emulation.
    #[cfg(txlab_loom)]
    pub fn new() -> Self {
        Self(AtomicU128::new(PivotWord::fresh(0).pack()))
    }

    /// Loads the object (`SeqCst`: pivot-object operations form one total order with the
    /// baseline's validation loads, see the protocol docs).
    #[inline]
    pub fn load(&self) -> PivotWord {
        PivotWord::unpack(self.0.load(Ordering::SeqCst))
    }

    /// Replaces `old` by `new` if the object still holds `old`; returns the current word on failure.
    #[inline]
    pub fn compare_exchange(&self, old: PivotWord, new: PivotWord) -> Result<(), PivotWord> {
        self.0
            .compare_exchange(old.pack(), new.pack(), Ordering::SeqCst, Ordering::SeqCst)
            .map(|_| ())
            .map_err(PivotWord::unpack)
    }

    /// Algorithm 3 (1): merges a read of version number `v` of item `slot` by a transaction of
    /// `epoch` into mRS. Returns the CAS retries it took.
    ///
    /// Writes unless the object already carries this epoch's mark at least as low as `v` (the
    /// common case for a hot item: another reader of the epoch merged first). Skipping the CAS
    /// then is safe: marks are only lowered within an epoch, so an omitter whose CAS follows the
    /// marking write in the object's modification order sees the mark and declines; an omitter
    /// whose CAS precedes it heads a release sequence that the marking CAS (an RMW) continues, so
    /// this `SeqCst` load synchronizes with the omitter, and the reader's later validation load of
    /// the item's version word happens after the omitter's load that saw the pivot version, hence
    /// (read-read coherence) sees the pivot too and fails. Without AVX a 128-bit load is itself a
    /// `lock cmpxchg16b`, so the skip saves only the retry loop there (docs/architecture.md).
    pub fn merge_read(&self, epoch: u32, slot: u32, v: VersionNumber) -> u64 {
        let mut cur = self.load();
        let mut retries = 0;
        loop {
            if cur.epoch > epoch {
                // A later epoch owns the object; nothing of ours can matter to its omitters, but
                // we still write to keep the ordering argument uniform.
                match self.compare_exchange(cur, cur) {
                    Ok(()) => return retries,
                    Err(now) => cur = now,
                }
            } else {
                if cur.epoch == epoch {
                    let have = PivotWord::slot(cur.mrs, slot);
                    if have != 0 && have <= v {
                        return retries;
                    }
                }
                let mut next = cur.in_epoch(epoch);
                next.mrs = PivotWord::merge(next.mrs, slot, v);
                match self.compare_exchange(cur, next) {
                    Ok(()) => return retries,
                    Err(now) => cur = now,
                }
            }
            retries += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_roundtrips_every_field() {
        let w = PivotWord {
            epoch: 0xDEAD_BEEF,
            pivot: 0x1234_5678,
            mrs: 0x9ABC_DEF0,
            mws: 0x0FED_CBA9,
        };
        assert_eq!(PivotWord::unpack(w.pack()), w);
        assert_eq!(w.pack() >> 96, 0xDEAD_BEEF);
        assert_eq!(w.pack() as u32, 0x0FED_CBA9);
    }

    #[test]
    fn merge_keeps_the_lowest_version_and_saturates() {
        let s = PivotWord::merge(0, 3, 7);
        assert_eq!(PivotWord::slot(s, 3), 7);
        assert_eq!(PivotWord::slot(PivotWord::merge(s, 3, 9), 3), 7);
        assert_eq!(
            PivotWord::slot(PivotWord::merge(s, 3, PRE_EPOCH), 3),
            PRE_EPOCH
        );
        assert_eq!(PivotWord::slot(PivotWord::merge(0, 0, 40), 0), SATURATED);
        // Other slots untouched.
        for i in (0..SLOTS).filter(|&i| i != 3) {
            assert_eq!(PivotWord::slot(s, i), 0);
        }
        assert_eq!(epoch_version_number(1), 2);
        assert_eq!(epoch_version_number(100), SATURATED);
    }

    #[test]
    fn slots_spread_keys() {
        let mut seen = [false; SLOTS as usize];
        for k in 0..64 {
            seen[slot_of(0, k) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
    }

    #[test]
    fn merge_read_resets_an_older_epoch() {
        let c = PivotCell::new();
        c.merge_read(3, 2, PRE_EPOCH);
        assert_eq!(c.load().epoch, 3);
        assert_eq!(PivotWord::slot(c.load().mrs, 2), PRE_EPOCH);
        c.merge_read(4, 5, 4);
        let w = c.load();
        assert_eq!((w.epoch, w.pivot), (4, PIVOT_BASE));
        assert_eq!(
            PivotWord::slot(w.mrs, 2),
            0,
            "epoch 3's footprint was reset"
        );
        assert_eq!(PivotWord::slot(w.mrs, 5), 4);
        // A stale epoch leaves a newer object alone.
        c.merge_read(3, 1, PRE_EPOCH);
        assert_eq!(c.load(), w);
    }
}
