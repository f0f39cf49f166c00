//! [`KeyDictionary`]: byte-string keys for every engine, through the `u64` key path.
//!
//! The storage trait's engine-facing instance is keyed by `u64` (the benchmark path: YCSB,
//! SmallBank and TPC-C keys are integers or packed integers). An application with byte-string
//! keys (user names, URLs, composite keys of unbounded length) interns each key once into a
//! dictionary that hands out a dense `u64` id, and uses the id as the table key with any engine
//! and any index. This keeps the protocols' hot paths on fixed-size keys, as DBx1000 and CCBench
//! do, while byte keys work "in general".
//!
//! # Invariants
//!
//! - **One id per key, forever.** [`intern`](KeyDictionary::intern) is atomic insert-if-absent:
//!   racing threads interning the same key get the same id; ids are `0, 1, 2, ...` in order of
//!   first interning and are never reused, so an id stays a valid name for its key for the
//!   dictionary's lifetime.
//! - **Not transactional, and it need not be.** The dictionary maps names to keys, it holds no
//!   data: whether the key's record exists is decided by the protocol (a transaction that interns
//!   a key and then aborts leaves the id allocated and the record absent, exactly as an aborted
//!   insert leaves an absent record in an index). Deleting the record does not forget the id.
//! - **No order.** Ids follow interning order, not byte order: use a byte-ordered
//!   [`OrderedIndex`](crate::OrderedIndex) through its inherent methods where a scan over byte
//!   keys is needed; engines' scans run over ids.
//!
//! Locks come from `txlab_core::protocol::sync` (sharded read-write locks: a lookup of a known key takes
//! one shard's read lock).

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use txlab_core::Error;
use txlab_core::protocol::sync::{AtomicU64, IgnorePoison, Ordering, RwLock};

/// Longest accepted key, in bytes.
pub const MAX_KEY_BYTES: usize = 64 * 1024;

const SHARDS: usize = 64;

/// One shard: interned keys to their ids.
type Shard = RwLock<HashMap<Box<[u8]>, u64>>;

/// Interns byte-string keys as dense `u64` ids (module docs).
pub struct KeyDictionary {
    shards: Box<[Shard]>,
    hasher: RandomState,
    next: AtomicU64,
    limit: u64,
}

impl KeyDictionary {
    /// An empty dictionary handing out ids `0..limit` (e.g. a dense table's capacity; use
    /// `u64::MAX` for a hash or ordered table).
    ///
    /// Errors: `limit == 0`.
    pub fn new(limit: u64) -> Result<Self, Error> {
        if limit == 0 {
            return Err(Error::invalid(
                "key dictionary limit",
                limit,
                "at least 1 id (e.g. the table's capacity, or u64::MAX)",
            ));
        }
        Ok(Self {
            shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(),
            hasher: RandomState::new(),
            next: AtomicU64::new(0),
            limit,
        })
    }

    fn shard(&self, key: &[u8]) -> &Shard {
        let h = self.hasher.hash_one(key);
        &self.shards[(h >> 58) as usize % SHARDS]
    }

    /// The id of `key`, if it was interned.
    pub fn get(&self, key: &[u8]) -> Option<u64> {
        self.shard(key).read().ignore_poison().get(key).copied()
    }

    /// The id of `key`, interning it first if needed (atomic insert-if-absent).
    ///
    /// Errors: a key longer than [`MAX_KEY_BYTES`]; no id left below the limit.
    pub fn intern(&self, key: &[u8]) -> Result<u64, Error> {
        if key.len() > MAX_KEY_BYTES {
            return Err(Error::invalid(
                "key length",
                key.len(),
                format!("byte-string keys of at most {MAX_KEY_BYTES} bytes"),
            ));
        }
        let shard = self.shard(key);
        if let Some(&id) = shard.read().ignore_poison().get(key) {
            return Ok(id);
        }
        let mut map = shard.write().ignore_poison();
        if let Some(&id) = map.get(key) {
            return Ok(id);
        }
        // Under the shard's write lock: no other thread can intern this key meanwhile, so the
        // id taken here is the key's only one. Ids of other shards interleave freely.
        let id = self
            .next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.limit).then_some(n + 1)
            })
            .map_err(|n| {
                Error::invalid(
                    "key dictionary size",
                    n,
                    format!("at most {} distinct keys (its limit)", self.limit),
                )
            })?;
        map.insert(key.into(), id);
        Ok(id)
    }

    /// Number of keys interned.
    pub fn len(&self) -> u64 {
        self.next.load(Ordering::Relaxed).min(self.limit)
    }

    /// Whether no key was interned.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for KeyDictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyDictionary")
            .field("len", &self.len())
            .field("limit", &self.limit)
            .finish()
    }
}

#[cfg(all(test, not(any(txlab_loom, txlab_shuttle))))]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Barrier;

    #[test]
    fn keys_get_dense_stable_ids() {
        let d = KeyDictionary::new(u64::MAX).unwrap();
        assert!(d.is_empty());
        assert_eq!(d.get(b"alice"), None);
        assert_eq!(d.intern(b"alice").unwrap(), 0);
        assert_eq!(d.intern(b"bob").unwrap(), 1);
        assert_eq!(
            d.intern(b"alice").unwrap(),
            0,
            "interning again returns the same id"
        );
        assert_eq!(d.intern(b"").unwrap(), 2, "the empty key is a key");
        assert_eq!(d.get(b"bob"), Some(1));
        assert_eq!(d.len(), 3);
        assert!(format!("{d:?}").contains("len: 3"));
    }

    #[test]
    fn bad_input_is_an_error_naming_the_value() {
        let e = KeyDictionary::new(0).unwrap_err();
        assert!(e.to_string().contains("key dictionary limit = 0"), "{e}");
        let d = KeyDictionary::new(2).unwrap();
        let long = vec![7u8; MAX_KEY_BYTES + 1];
        let e = d.intern(&long).unwrap_err();
        assert!(e.to_string().contains("key length = 65537"), "{e}");
        d.intern(b"a").unwrap();
        d.intern(b"b").unwrap();
        let e = d.intern(b"c").unwrap_err();
        assert!(e.to_string().contains("at most 2 distinct keys"), "{e}");
        assert_eq!(
            d.intern(b"a").unwrap(),
            0,
            "known keys still resolve when full"
        );
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn racing_threads_get_one_id_per_key() {
        const THREADS: usize = 4;
        const KEYS: usize = 2_000;
        let d = KeyDictionary::new(u64::MAX).unwrap();
        let barrier = Barrier::new(THREADS);
        let seen: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (d, barrier) = (&d, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        // Every thread interns every key, in a different order (strides
                        // coprime with KEYS = 2^4 * 5^3, so each visits all keys).
                        let stride = [1, 3, 7, 9][t];
                        (0..KEYS)
                            .map(|i| (i * stride) % KEYS)
                            .map(|i| (i, d.intern(format!("user-{i}").as_bytes()).unwrap()))
                            .fold(vec![0; KEYS], |mut ids, (i, id)| {
                                ids[i] = id;
                                ids
                            })
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for ids in &seen[1..] {
            assert_eq!(ids, &seen[0], "every thread saw the same id for every key");
        }
        let distinct: HashSet<u64> = seen[0].iter().copied().collect();
        assert_eq!(distinct.len(), KEYS, "no two keys share an id");
        assert!(distinct.iter().all(|&id| id < KEYS as u64), "ids are dense");
        assert_eq!(d.len(), KEYS as u64);
    }
}
