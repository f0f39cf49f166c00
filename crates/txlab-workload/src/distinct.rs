//! [`DistinctKeys`]: draws keys from a [`Zipf`] without repeats within one transaction.
//!
//! Keys are drawn by rejection: a key already picked for the current transaction is drawn again,
//! up to [`MAX_REDRAWS`] times. Conditioning on "not yet picked" is what YCSB's client does too
//! (it simply redraws). When the remaining mass is tiny (a transaction asks for almost all keys of
//! a small, very skewed table) rejection could take unbounded time, so after the redraw budget the
//! next free key at or after a fresh draw (wrapping around) is taken instead; this slight bias
//! only arises in such degenerate configurations and keeps the cost bounded by `n`.
//!
//! Invariants: within one transaction (between two [`DistinctKeys::clear`] calls) every returned
//! key is distinct and in `0..n`; callers never ask for more than `n` keys. Picked keys are kept in
//! a reused vector (plus a reused hash set when a transaction picks many), so a warmed-up picker
//! does not allocate.

use crate::zipf::Zipf;
use rand::Rng;
use std::collections::HashSet;

/// How many times a repeated key is redrawn before falling back to probing.
pub const MAX_REDRAWS: u32 = 64;

/// Above this many keys per transaction membership is tracked in a hash set, not a linear scan.
const LINEAR_SCAN_LIMIT: usize = 32;

/// Draws distinct keys per transaction (module docs).
#[derive(Debug, Clone)]
pub struct DistinctKeys {
    zipf: Zipf,
    picked: Vec<u64>,
    picked_set: HashSet<u64>,
}

impl DistinctKeys {
    /// A picker over the items of `zipf`.
    pub fn new(zipf: Zipf) -> Self {
        Self {
            zipf,
            picked: Vec::new(),
            picked_set: HashSet::new(),
        }
    }

    /// Starts a new transaction: forgets the keys picked so far (keeping the buffers).
    pub fn clear(&mut self) {
        if self.picked.len() > LINEAR_SCAN_LIMIT {
            self.picked_set.clear();
        }
        self.picked.clear();
    }

    /// The keys picked since the last [`clear`](Self::clear), in order.
    pub fn picked(&self) -> &[u64] {
        &self.picked
    }

    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        if self.picked.len() <= LINEAR_SCAN_LIMIT {
            self.picked.contains(&key)
        } else {
            self.picked_set.contains(&key)
        }
    }

    #[inline]
    fn record(&mut self, key: u64) -> u64 {
        self.picked.push(key);
        if self.picked.len() > LINEAR_SCAN_LIMIT {
            if self.picked_set.is_empty() {
                self.picked_set.extend(self.picked.iter().copied());
            } else {
                self.picked_set.insert(key);
            }
        }
        key
    }

    /// A key not picked since the last [`clear`](Self::clear).
    ///
    /// The caller must not ask for more than `n` keys per transaction; if it does, a repeated key
    /// is returned rather than looping forever.
    #[inline(always)]
    pub fn pick<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        let key = self.zipf.sample(rng);
        if !self.contains(key) {
            return self.record(key);
        }
        self.redraw(rng)
    }

    /// The rare path of [`pick`](Self::pick): the first draw repeated a picked key.
    #[cold]
    #[inline(never)]
    fn redraw<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        for _ in 0..MAX_REDRAWS {
            let key = self.zipf.sample(rng);
            if !self.contains(key) {
                return self.record(key);
            }
        }
        let n = self.zipf.n();
        let mut key = self.zipf.sample(rng);
        for _ in 0..n {
            if !self.contains(key) {
                break;
            }
            key = if key + 1 == n { 0 } else { key + 1 };
        }
        self.record(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::worker_rng;

    #[test]
    fn every_key_of_a_small_skewed_table_can_be_picked_once() {
        // 50 keys at theta 10: items past the first few are almost never drawn, so this exercises
        // the probing fallback and the hash-set path.
        let mut keys = DistinctKeys::new(Zipf::new(50, 10.0).unwrap());
        let mut rng = worker_rng(1, 0);
        for _ in 0..3 {
            keys.clear();
            for _ in 0..50 {
                keys.pick(&mut rng);
            }
            let mut sorted = keys.picked().to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        }
    }

    #[test]
    fn picks_are_distinct_within_a_transaction_but_repeat_across_transactions() {
        let mut keys = DistinctKeys::new(Zipf::new(20, 0.99).unwrap());
        let mut rng = worker_rng(2, 0);
        let mut hot_seen_twice = 0;
        for _ in 0..1000 {
            keys.clear();
            for _ in 0..10 {
                keys.pick(&mut rng);
            }
            let mut sorted = keys.picked().to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 10);
            hot_seen_twice += usize::from(keys.picked().contains(&0));
        }
        assert!(
            hot_seen_twice > 900,
            "the hottest key appeared in only {hot_seen_twice} of 1000 txns"
        );
    }
}
