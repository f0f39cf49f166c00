//! [`AtomicValue`]: a fixed-size byte value stored as `AtomicU64` words.
//!
//! Optimistic protocols read a record's value while a writer may be installing a new one and
//! detect the race afterwards by re-reading a version word (a seqlock). In Rust a plain `memcpy` of
//! memory another thread writes concurrently is a data race, i.e. undefined behaviour, even if the
//! torn result is thrown away. So values are stored as atomic words: readers copy with `Relaxed`
//! loads, writers (holding the record's lock) store with `Relaxed` stores, and the surrounding
//! version word supplies the ordering:
//!
//! ```text
//! writer: lock (CAS, Acquire); fence(Release); store words (Relaxed); unlock/publish (Release)
//! reader: v1 = load(Acquire); copy words (Relaxed); fence(Acquire); v2 = load(Relaxed); v1 == v2?
//! ```
//!
//! This is the seqlock shape whose correctness under the C++/Rust memory model is argued in
//! H.-J. Boehm, "Can seqlocks get along with programming language memory models?" (MSPC 2012).
//! On x86-64 a relaxed 8-byte load or store is a plain `mov`, so this costs nothing over `memcpy`
//! beyond losing vectorisation.
//!
//! Byte order: byte `i` of the value is byte `i % 8` (little-endian) of word `i / 8`; the tail of
//! the last word beyond `len` is always zero. Word 0 is stored inline, the others on the heap
//! ([`AtomicValue`], "Layout").

use crate::protocol::sync::{AtomicU32, AtomicU64, Ordering};

/// A fixed-length byte value stored as atomic words (see the module docs for the protocol).
///
/// **Layout.** The first word (bytes `0..8`) is stored inline, in the value itself; the words
/// after it, if the value is longer than 8 bytes, in one heap allocation made at creation and
/// never changed until drop. A value of up to 8 bytes (YCSB's 8-byte payloads) therefore lives
/// entirely in its record: a read or an install touches the record's cache line only, not a
/// second line elsewhere on the heap.
///
/// It also carries one [`sidecar`](Self::sidecar) word that the value never uses: the 4 bytes
/// after `len` would be padding anyway (the struct is 24 bytes either way), so an engine can keep
/// a 32-bit atomic of its own there without growing its record.
#[derive(Debug)]
pub struct AtomicValue {
    first: AtomicU64,
    /// The words after the first (`word_count(len) - 1` of them), or null when there are none.
    /// Allocated as a boxed slice in `zeroed`, freed in `drop`, never changed in between.
    rest: *mut AtomicU64,
    len: u32,
    sidecar: AtomicU32,
}

// SAFETY: the value owns its words, which are atomics; `rest` is written only at creation and
// drop, and read through `&self` only with atomic operations on the words it points to.
unsafe impl Send for AtomicValue {}
// SAFETY: as for `Send`: every access through `&self` is an atomic operation.
unsafe impl Sync for AtomicValue {}

#[inline]
fn word_count(len: usize) -> usize {
    len.div_ceil(8)
}

impl AtomicValue {
    /// A zeroed value of `len` bytes.
    pub fn zeroed(len: usize) -> Self {
        assert!(len <= u32::MAX as usize, "value length {len} exceeds u32");
        let extra = word_count(len).saturating_sub(1);
        let rest = if extra == 0 {
            std::ptr::null_mut()
        } else {
            let words: Box<[AtomicU64]> = (0..extra).map(|_| AtomicU64::new(0)).collect();
            Box::into_raw(words).cast::<AtomicU64>()
        };
        Self {
            first: AtomicU64::new(0),
            rest,
            len: len as u32,
            sidecar: AtomicU32::new(0),
        }
    }

    /// A value holding a copy of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let v = Self::zeroed(bytes.len());
        v.store(bytes);
        v
    }

    /// A 32-bit atomic word stored in what would be the struct's padding (0 when the value is
    /// created). The value's own methods never touch it; its meaning and its orderings belong to
    /// the engine that uses it (NWR's read-epoch mark, `txlab_nwr::read_mark`).
    #[inline]
    pub fn sidecar(&self) -> &AtomicU32 {
        &self.sidecar
    }

    /// Length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the value has zero length.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The words after the first.
    #[inline]
    fn rest(&self) -> &[AtomicU64] {
        let extra = word_count(self.len()).saturating_sub(1);
        if extra == 0 {
            return &[];
        }
        // SAFETY: `rest` points to `extra` initialized words allocated in `zeroed` and freed only
        // in `drop`, so they live as long as `self`; they are atomics, shared through `&self`.
        unsafe { std::slice::from_raw_parts(self.rest, extra) }
    }

    /// Copies the value into `out` word by word with `Relaxed` loads.
    ///
    /// `out.len()` must equal [`len`](Self::len). The copy may be torn if a writer runs
    /// concurrently; the caller detects that with its version word (module docs).
    #[inline]
    pub fn load_into(&self, out: &mut [u8]) {
        debug_assert_eq!(out.len(), self.len());
        if let Ok(word) = <&mut [u8; 8]>::try_from(&mut *out) {
            // The common 8-byte value: one load and one store, no `memcpy` call.
            *word = self.first.load(Ordering::Relaxed).to_le_bytes();
            return;
        }
        let head = out.len().min(8);
        let (first, tail) = out.split_at_mut(head);
        first.copy_from_slice(&self.first.load(Ordering::Relaxed).to_le_bytes()[..head]);
        if tail.is_empty() {
            return;
        }
        let words = self.rest();
        let mut chunks = tail.chunks_exact_mut(8);
        let mut i = 0;
        for c in &mut chunks {
            c.copy_from_slice(&words[i].load(Ordering::Relaxed).to_le_bytes());
            i += 1;
        }
        let rem = chunks.into_remainder();
        if !rem.is_empty() {
            let w = words[i].load(Ordering::Relaxed).to_le_bytes();
            let n = rem.len();
            rem.copy_from_slice(&w[..n]);
        }
    }

    /// Stores `bytes` word by word with `Relaxed` stores.
    ///
    /// `bytes.len()` must equal [`len`](Self::len). The caller must hold the record's write lock
    /// and publish with a `Release` store of its version word (module docs).
    #[inline]
    pub fn store(&self, bytes: &[u8]) {
        debug_assert_eq!(bytes.len(), self.len());
        if let Ok(word) = <[u8; 8]>::try_from(bytes) {
            self.first
                .store(u64::from_le_bytes(word), Ordering::Relaxed);
            return;
        }
        let head = bytes.len().min(8);
        self.first.store(word_of(&bytes[..head]), Ordering::Relaxed);
        if bytes.len() <= 8 {
            return;
        }
        let words = self.rest();
        for (w, c) in words.iter().zip(bytes[8..].chunks(8)) {
            w.store(word_of(c), Ordering::Relaxed);
        }
    }

    /// Heap bytes used by the words beyond the first (for memory accounting).
    pub fn heap_bytes(&self) -> usize {
        self.rest().len() * 8
    }
}

/// Up to 8 bytes as a little-endian word, zero-padded.
#[inline]
fn word_of(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(w)
}

impl Drop for AtomicValue {
    fn drop(&mut self) {
        let extra = word_count(self.len()).saturating_sub(1);
        if extra != 0 {
            // SAFETY: `rest` came from `Box::into_raw` of a boxed slice of `extra` words in
            // `zeroed` and is freed exactly once, here.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.rest, extra)) });
        }
    }
}

#[cfg(all(test, not(any(txlab_loom, txlab_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_length_including_partial_words() {
        for len in 0..40 {
            let bytes: Vec<u8> = (0..len as u8)
                .map(|b| b.wrapping_mul(37).wrapping_add(1))
                .collect();
            let v = AtomicValue::from_bytes(&bytes);
            assert_eq!(v.len(), len);
            assert_eq!(
                v.heap_bytes(),
                len.div_ceil(8).saturating_sub(1) * 8,
                "len {len}"
            );
            let mut out = vec![0xAA; len];
            v.load_into(&mut out);
            assert_eq!(out, bytes, "len {len}");
            let again: Vec<u8> = bytes.iter().map(|b| !b).collect();
            v.store(&again);
            v.load_into(&mut out);
            assert_eq!(out, again, "len {len}, overwritten");
        }
    }
}
