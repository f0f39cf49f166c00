//! Retire floors: per-slot timestamps raised when a tombstone is unlinked from its index, for
//! engines whose serial order is a timestamp order (`txlab_tictoc::retire`, `txlab_mvto::retire`;
//! each module states what its floors guarantee and who loads them).
//!
//! Unlinking a tombstone loses what its record said about the key: when it became absent and how
//! far readers extended that absence. The next record linked for the key starts blank. A floor
//! keeps the part an engine needs, the largest read timestamp of a tombstone retired in the slot,
//! so that the key's next version can be forced above it.
//!
//! Layout: ordered tables have one floor per phantom stripe ([`PhantomStripes::stripe_of`]), so a
//! scan can find the floor of every key it covers; hash tables have [`HASH_FLOOR_SLOTS`] floors
//! chosen by a multiplicative hash of the key. Keys sharing a slot share its floor, which only
//! raises more timestamps than needed (a false abort at worst).
//!
//! Invariant: a floor only grows (`fetch_max`); every access is `SeqCst`, because engines order a
//! floor load after other `SeqCst` operations (a stripe's version, an index lookup) in their
//! arguments.

use crate::protocol::storage::PhantomStripes;
use crate::protocol::sync::{AtomicU64, Ordering};

/// Floor slots of a hash table (keys share a slot by hash).
pub const HASH_FLOOR_SLOTS: usize = 1024;

/// The retire floors of one table (module docs): per phantom stripe for an ordered table, per
/// hash slot for a hash table.
#[derive(Debug)]
pub struct RetireFloors {
    slots: Box<[AtomicU64]>,
    /// Ordered tables: slots are the phantom stripes (`PhantomStripes::stripe_of`).
    by_stripe: bool,
}

impl RetireFloors {
    /// Floors for an ordered table (one per stripe of its `stripes`) or, with `None`, a hash
    /// table; all 0.
    pub fn new(stripes: Option<&PhantomStripes>) -> Self {
        let n = stripes.map_or(HASH_FLOOR_SLOTS, PhantomStripes::len);
        Self {
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
            by_stripe: stripes.is_some(),
        }
    }

    /// The slot of `key`; `stripes` are the table's phantom stripes (`Some` for ordered tables).
    #[inline]
    fn slot(&self, key: u64, stripes: Option<&PhantomStripes>) -> &AtomicU64 {
        let i = match stripes {
            Some(s) if self.by_stripe => s.stripe_of(key) as usize,
            _ => (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize,
        };
        &self.slots[i % self.slots.len()]
    }

    /// The floor of `key`'s slot (a `SeqCst` load).
    #[inline]
    pub fn of_key(&self, key: u64, stripes: Option<&PhantomStripes>) -> u64 {
        self.slot(key, stripes).load(Ordering::SeqCst)
    }

    /// The floor of phantom stripe `stripe` (ordered tables; a `SeqCst` load).
    #[inline]
    pub fn of_stripe(&self, stripe: u32) -> u64 {
        self.slots[stripe as usize % self.slots.len()].load(Ordering::SeqCst)
    }

    /// Raises `key`'s floor to at least `ts` (`SeqCst`).
    #[inline]
    pub fn raise(&self, key: u64, stripes: Option<&PhantomStripes>, ts: u64) {
        self.slot(key, stripes).fetch_max(ts, Ordering::SeqCst);
    }
}

#[cfg(all(test, not(txlab_loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_floor_only_grows_and_is_shared_by_its_slot_only() {
        let f = RetireFloors::new(None);
        f.raise(7, None, 100);
        f.raise(7, None, 40);
        assert_eq!(f.of_key(7, None), 100, "a lower raise leaves the floor");
        let other = (0..10_000u64)
            .find(|&k| f.of_key(k, None) == 0)
            .expect("some key hashes to another slot");
        assert_ne!(other, 7);
        f.raise(other, None, 5);
        assert_eq!(f.of_key(7, None), 100);
        assert_eq!(f.of_key(other, None), 5);
    }
}
