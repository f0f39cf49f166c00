//! The versioned storage and its workers (Ding, Kot, Gehrke, VLDB 2018, §2 and §3.1).
//!
//! Every key holds one value and a version: the commit timestamp of the transaction that wrote
//! it (0 for the loaded or never-written value). **A write whose version is not higher than the
//! stored one is ignored**, so committed writes may reach the storage in any order, from any
//! storage worker, and the stored value of a key is always that of its highest committed writer
//! seen so far. Reads return the version with the value; the validator compares it with the
//! latest committed version.
//!
//! Storage batching (§3.1): a worker takes up to a batch of requests from its queue. With
//! [`StorageBatching::WritesFirst`] it first applies, for every key, the highest-version write of
//! the batch (the others are stale and skipped), then serves all the batch's reads, so no read of
//! the batch misses a committed write that was already waiting in the queue. The highest-version
//! writes are found without a per-batch hash table: the batch's write requests are applied
//! newest first, so the first write of a key that reaches [`VersionedStorage::put`] is its
//! highest version in the batch, and `put`, which never replaces a higher version, skips the
//! older ones. With
//! [`StorageBatching::ArrivalOrder`] it serves the batch in queue order; with
//! [`StorageBatching::Off`] one request at a time.
//!
//! Which worker serves a request is the processor's choice ([`StorageRouting`]): by default each
//! worker owns a hash partition of the keys, so writes and later reads of one key from one
//! processor are served in the order they were sent. Every read reply carries the validator's
//! latest commit timestamp at the time it was served (diagnostics; see
//! [`ValidatorCache::staleness`]).
//!
//! [`StorageRouting`]: super::config::StorageRouting
//!
//! The key space is sharded over mutex-protected hash maps; a storage worker, a processor's
//! fallback read and an interactive worker's read all go through [`VersionedStorage::get`], which
//! copies the value out under the shard lock (no unsynchronised access to shared memory).

use super::config::StorageBatching;
use super::messages::{Key, ReadReply, StorageRequest, Value};
use super::validator::ValidatorCache;
use foldhash::HashMap;
use std::collections::hash_map::Entry;
use txlab_core::protocol::sync::mpsc::Receiver;
use txlab_core::protocol::sync::{IgnorePoison, Mutex};

const SHARDS: usize = 64;

/// One stored key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Slot {
    version: u64,
    value: Value,
}

/// The versioned key-value store (module docs).
#[derive(Debug)]
pub struct VersionedStorage {
    shards: Box<[Mutex<HashMap<Key, Slot>>]>,
}

impl Default for VersionedStorage {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn shard_of(key: Key) -> usize {
    let h = (key.1 ^ ((key.0 as u64) << 48)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 58) as usize % SHARDS
}

impl VersionedStorage {
    /// An empty store: every key absent at version 0.
    pub fn new() -> Self {
        Self {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(HashMap::default()))
                .collect(),
        }
    }

    /// The version and value of `key` (`(0, None)` if never written).
    pub fn get(&self, key: Key) -> (u64, Value) {
        let shard = self.shards[shard_of(key)].lock().ignore_poison();
        match shard.get(&key) {
            Some(slot) => (slot.version, slot.value.clone()),
            None => (0, None),
        }
    }

    /// Installs `value` as version `version` of `key` unless the stored version is at least as
    /// high. Returns whether it was installed.
    pub fn put(&self, key: Key, version: u64, value: Value) -> bool {
        let mut shard = self.shards[shard_of(key)].lock().ignore_poison();
        match shard.entry(key) {
            Entry::Occupied(mut e) => {
                if e.get().version >= version {
                    return false;
                }
                *e.get_mut() = Slot { version, value };
                true
            }
            Entry::Vacant(e) => {
                e.insert(Slot { version, value });
                true
            }
        }
    }

    /// Sets the initial (version 0) value of `key`, before any transaction runs.
    pub fn load(&self, key: Key, value: &[u8]) {
        let mut shard = self.shards[shard_of(key)].lock().ignore_poison();
        shard.insert(
            key,
            Slot {
                version: 0,
                value: Some(value.into()),
            },
        );
    }
}

/// Counters one storage worker accumulates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StorageCounters {
    /// Batches (or single requests) handled.
    pub batches: u64,
    /// Writes installed.
    pub installed: u64,
    /// Writes skipped because a higher version was stored or in the same batch.
    pub skipped: u64,
}

impl StorageCounters {
    /// Installs `writes` as version `ts` (each skipped when a version at least as high is
    /// stored), counting both outcomes.
    fn apply(
        &mut self,
        storage: &VersionedStorage,
        ts: u64,
        writes: impl IntoIterator<Item = (Key, Value)>,
    ) {
        for (key, value) in writes {
            if storage.put(key, ts, value) {
                self.installed += 1;
            } else {
                self.skipped += 1;
            }
        }
    }
}

/// A storage worker's loop: serves its queue until every sender is gone (module docs).
pub(crate) fn storage_worker(
    storage: &VersionedStorage,
    clock: &ValidatorCache,
    queue: Receiver<StorageRequest>,
    batching: StorageBatching,
    batch_size: usize,
) -> StorageCounters {
    let mut counters = StorageCounters::default();
    let mut batch: Vec<StorageRequest> = Vec::with_capacity(batch_size);
    // `(commit timestamp, position in the batch)` of the batch's write requests.
    let mut by_version: Vec<(u64, usize)> = Vec::new();
    while let Ok(first) = queue.recv() {
        batch.push(first);
        if batching != StorageBatching::Off {
            while batch.len() < batch_size {
                match queue.try_recv() {
                    Ok(r) => batch.push(r),
                    Err(_) => break,
                }
            }
        }
        counters.batches += 1;
        if batching == StorageBatching::WritesFirst {
            // The batch's write requests, newest first: the first write of a key applied is its
            // highest version in the batch, and `put` skips every older one after it.
            by_version.clear();
            by_version.extend(
                batch
                    .iter()
                    .enumerate()
                    .filter_map(|(i, request)| match request {
                        StorageRequest::Write { ts, .. } => Some((*ts, i)),
                        StorageRequest::Read { .. } => None,
                    }),
            );
            by_version.sort_unstable_by_key(|&(ts, _)| std::cmp::Reverse(ts));
            for &(ts, i) in &by_version {
                if let StorageRequest::Write { writes, .. } = &mut batch[i] {
                    counters.apply(storage, ts, writes.drain(..));
                }
            }
        }
        for request in batch.drain(..) {
            match request {
                StorageRequest::Read { slot, keys, reply } => {
                    let snapshot_ts = clock.last_commit();
                    let values = keys
                        .into_iter()
                        .map(|key| {
                            let (version, value) = storage.get(key);
                            (key, version, value)
                        })
                        .collect();
                    reply.deliver(ReadReply {
                        slot,
                        values,
                        snapshot_ts,
                    });
                }
                StorageRequest::Write { ts, writes } => counters.apply(storage, ts, writes),
            }
        }
    }
    counters
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::mpsc::channel;

    #[test]
    fn an_older_write_never_replaces_a_newer_one() {
        let s = VersionedStorage::new();
        assert_eq!(s.get((0, 1)), (0, None));
        s.load((0, 1), &[1]);
        assert!(s.put((0, 1), 5, Some(vec![5].into())));
        assert!(!s.put((0, 1), 3, Some(vec![3].into())), "older version");
        assert!(!s.put((0, 1), 5, None), "same version");
        assert_eq!(s.get((0, 1)), (5, Some(vec![5u8].into_boxed_slice())));
        assert!(s.put((0, 1), 9, None));
        assert_eq!(s.get((0, 1)), (9, None));
    }

    #[test]
    fn writes_first_batching_serves_reads_after_the_batchs_writes() {
        // A read queued *before* a write in the same batch sees the write only with writes-first
        // batching.
        for (batching, expected) in [
            (StorageBatching::WritesFirst, 7u64),
            (StorageBatching::ArrivalOrder, 0),
            (StorageBatching::Off, 0),
        ] {
            let storage = VersionedStorage::new();
            storage.load((0, 4), &[0]);
            let (tx, rx) = channel();
            let (reply_tx, reply_rx) = channel::<ReadReply>();
            let reply: super::super::messages::ReplyTo<ReadReply> = Arc::new(reply_tx);
            tx.send(StorageRequest::Read {
                slot: 1,
                keys: vec![(0, 4)],
                reply,
            })
            .unwrap();
            tx.send(StorageRequest::Write {
                ts: 3,
                writes: vec![((0, 4), Some(vec![3].into()))],
            })
            .unwrap();
            tx.send(StorageRequest::Write {
                ts: 7,
                writes: vec![((0, 4), Some(vec![7].into()))],
            })
            .unwrap();
            drop(tx);
            let counters = storage_worker(&storage, &ValidatorCache::new(), rx, batching, 40);
            let r = reply_rx.recv().unwrap();
            assert_eq!(r.values[0].1, expected, "{batching:?}");
            assert_eq!(storage.get((0, 4)).0, 7, "{batching:?}");
            if batching == StorageBatching::WritesFirst {
                assert_eq!(counters.installed, 1, "only the highest write is applied");
                assert_eq!(counters.batches, 1);
            }
        }
    }
}
