//! Simulated stable storage: a key-value map per node that lives outside the node, so a crash
//! (the `step` driver's crash choice, turmoil's `crash`/`bounce`) loses the node's memory but not
//! what it wrote here.
//!
//! Writes are durable when the call returns (no fsync to simulate). In `inproc` and `tcp` runs
//! the store is process memory: nodes there never crash and restart in place.

use std::collections::BTreeMap;

use serde::{Serialize, de::DeserializeOwned};
use txlab_core::protocol::sync::{Arc, Mutex};

use crate::error::NetError;

/// A node's stable storage (cheap to clone; clones share the map).
#[derive(Clone, Debug, Default)]
pub struct Durable {
    map: Arc<Mutex<BTreeMap<Vec<u8>, Vec<u8>>>>,
}

impl Durable {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes `value` under `key`, replacing what was there.
    pub fn put(&self, key: &[u8], value: &[u8]) {
        self.lock().insert(key.to_vec(), value.to_vec());
    }

    /// The value under `key`.
    pub fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.lock().get(key).cloned()
    }

    /// Removes `key`; returns whether it was present.
    pub fn remove(&self, key: &[u8]) -> bool {
        self.lock().remove(key).is_some()
    }

    /// Every entry whose key starts with `prefix`, in key order.
    pub fn scan_prefix(&self, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.lock()
            .range(prefix.to_vec()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes a serializable value (encoded with [`crate::wire`], unlimited size).
    pub fn put_value<T: Serialize>(&self, key: &[u8], value: &T) -> Result<(), NetError> {
        let bytes = crate::wire::encode(value, usize::MAX)?;
        self.put(key, &bytes);
        Ok(())
    }

    /// Reads a value written by [`Durable::put_value`].
    pub fn get_value<T: DeserializeOwned>(&self, key: &[u8]) -> Result<Option<T>, NetError> {
        self.get(key)
            .map(|b| crate::wire::decode(&b, usize::MAX))
            .transpose()
    }

    fn lock(&self) -> txlab_core::protocol::sync::MutexGuard<'_, BTreeMap<Vec<u8>, Vec<u8>>> {
        // A panic while holding this lock leaves a complete map (every operation is one call on
        // the map), so a poisoned lock is still consistent.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_and_prefix_scans_stop_at_the_prefix() {
        let d = Durable::new();
        let d2 = d.clone();
        d.put(b"log/1", b"a");
        d.put(b"log/2", b"b");
        d.put(b"lz", b"c");
        assert_eq!(d2.get(b"log/2").as_deref(), Some(&b"b"[..]));
        let keys: Vec<_> = d2
            .scan_prefix(b"log/")
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, vec![b"log/1".to_vec(), b"log/2".to_vec()]);
        d2.put_value(b"n", &(7u32, "x".to_string())).unwrap();
        assert_eq!(
            d.get_value::<(u32, String)>(b"n").unwrap(),
            Some((7, "x".into()))
        );
        assert!(d.remove(b"lz"));
        assert_eq!(d.len(), 3);
    }
}
