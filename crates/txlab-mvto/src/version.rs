//! One version of a key: write timestamp, read timestamp, status, value, link to the older one.
//!
//! Invariants:
//!
//! - `wts`, `tombstone` and `value` are written once, before the version is published by a
//!   `SeqCst` compare-and-swap into its record's list, and never change afterwards. Readers reach a
//!   version only through `Acquire` (or stronger) loads of list pointers, so plain reads of these
//!   fields never race with a write. In particular the value of a *pending* version is already
//!   final; readers still wait for its status (Cicada's rule) because it may abort.
//! - `rts` (the largest timestamp of a transaction that read the version) only grows
//!   (`Version::raise_rts`: a `SeqCst` load, then `SeqCst` compare-and-swap until `rts >= ts`;
//!   it is half of the store-load pattern in `crate::commit`).
//! - `status` goes `PENDING → COMMITTED` or `PENDING → ABORTED` once, by the installing
//!   transaction; loaded and initial versions are born committed.
//! - Versions are freed only through crossbeam-epoch deferred destruction (`crate::gc`), never
//!   while a guard that could reach them is pinned.

use crossbeam_epoch::Atomic;
use txlab_core::protocol::sync::{AtomicU64, AtomicUsize, Ordering};

/// Installed by a transaction that has not finished committing.
pub const PENDING: usize = 0;
/// Part of the database.
pub const COMMITTED: usize = 1;
/// Its transaction aborted; readers skip it.
pub const ABORTED: usize = 2;

/// One version (module docs).
#[derive(Debug)]
pub struct Version {
    /// The writing transaction's timestamp (0: the loaded or initial-absent version).
    pub(crate) wts: u64,
    /// The largest timestamp that read this version.
    pub(crate) rts: AtomicU64,
    pub(crate) status: AtomicUsize,
    /// Whether the version makes the key absent (a delete, or the initial absent version).
    pub(crate) tombstone: bool,
    /// The value (empty for tombstones).
    pub(crate) value: Bytes,
    /// The next older version.
    pub(crate) older: Atomic<Version>,
}

impl Version {
    /// A version in `status`, not yet linked.
    pub(crate) fn new(wts: u64, status: usize, tombstone: bool, value: &[u8]) -> Self {
        Self {
            wts,
            rts: AtomicU64::new(wts),
            status: AtomicUsize::new(status),
            tombstone,
            value: Bytes::new(value),
            older: Atomic::null(),
        }
    }

    /// Makes this (unlinked, unshared) version a fresh one with these fields, keeping its heap
    /// buffer when the new value has the old one's length (a pooled version rewritten by the
    /// next write of a fixed-size table allocates nothing; `crate::pool`).
    pub(crate) fn reinit(&mut self, wts: u64, status: usize, tombstone: bool, value: &[u8]) {
        self.wts = wts;
        self.rts = AtomicU64::new(wts);
        self.status = AtomicUsize::new(status);
        self.tombstone = tombstone;
        self.older = Atomic::null();
        match &mut self.value {
            Bytes::Heap(b) if b.len() == value.len() => b.copy_from_slice(value),
            other => *other = Bytes::new(value),
        }
    }

    /// The committed initial version of a key that was never loaded: absent, timestamp 0.
    pub(crate) fn initial_absent() -> Self {
        Self::new(0, COMMITTED, true, &[])
    }

    /// Raises `rts` to at least `ts` (a reader with timestamp `ts`). A `SeqCst` load that sees
    /// `ts` or more serves as the raise (`crate::commit`); otherwise a compare-and-swap loop
    /// seeded with that load, which on x86-64 is one `lock cmpxchg` when no other reader raises
    /// the version meanwhile (`fetch_max` would load `rts` a second time before it).
    #[inline]
    pub(crate) fn raise_rts(&self, ts: u64) {
        let mut cur = self.rts.load(Ordering::SeqCst);
        while cur < ts {
            match self
                .rts
                .compare_exchange_weak(cur, ts, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    /// The status (`Acquire`: a reader that sees `COMMITTED` may use the version).
    #[inline]
    pub(crate) fn status(&self) -> usize {
        self.status.load(Ordering::Acquire)
    }

    /// The write timestamp (the version's tag in histories).
    #[inline]
    pub fn wts(&self) -> u64 {
        self.wts
    }

    /// Whether the version makes its key absent.
    #[inline]
    pub fn is_tombstone(&self) -> bool {
        self.tombstone
    }

    /// The value (empty for a tombstone).
    #[inline]
    pub fn value(&self) -> &[u8] {
        self.value.as_slice()
    }
}

/// Most values a version holds: bytes of a small value inside the version itself, a longer one on
/// the heap. A write of a small value (YCSB's 8-byte payloads, TPC-C's smaller rows) then costs one
/// allocation, the version's, instead of two.
#[derive(Debug)]
pub(crate) enum Bytes {
    /// Up to [`INLINE`] bytes, in place.
    Inline { len: u8, bytes: [u8; INLINE] },
    /// A longer value.
    Heap(Box<[u8]>),
}

/// The longest value a version holds in place.
pub(crate) const INLINE: usize = 22;

impl Bytes {
    fn new(value: &[u8]) -> Self {
        if value.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..value.len()].copy_from_slice(value);
            Bytes::Inline {
                len: value.len() as u8,
                bytes,
            }
        } else {
            Bytes::Heap(value.into())
        }
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Inline { len, bytes } => &bytes[..*len as usize],
            Bytes::Heap(b) => b,
        }
    }
}
