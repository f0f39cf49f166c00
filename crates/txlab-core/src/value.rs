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
//! the last word beyond `len` is always zero.

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// A fixed-length byte value stored as atomic words (see the module docs for the protocol).
///
/// It also carries one [`sidecar`](Self::sidecar) word that the value never uses: the 4 bytes
/// after `len` would be padding anyway (the struct is 24 bytes either way), so an engine can keep
/// a 32-bit atomic of its own there without growing its record.
#[derive(Debug)]
pub struct AtomicValue {
    words: Box<[AtomicU64]>,
    len: u32,
    sidecar: AtomicU32,
}

#[inline]
fn word_count(len: usize) -> usize {
    len.div_ceil(8)
}

impl AtomicValue {
    /// A zeroed value of `len` bytes.
    pub fn zeroed(len: usize) -> Self {
        assert!(len <= u32::MAX as usize, "value length {len} exceeds u32");
        let words = (0..word_count(len)).map(|_| AtomicU64::new(0)).collect();
        Self {
            words,
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

    /// Copies the value into `out` word by word with `Relaxed` loads.
    ///
    /// `out.len()` must equal [`len`](Self::len). The copy may be torn if a writer runs
    /// concurrently; the caller detects that with its version word (module docs).
    #[inline]
    pub fn load_into(&self, out: &mut [u8]) {
        debug_assert_eq!(out.len(), self.len());
        let mut chunks = out.chunks_exact_mut(8);
        let mut i = 0;
        for c in &mut chunks {
            let w = self.words[i].load(Ordering::Relaxed);
            c.copy_from_slice(&w.to_le_bytes());
            i += 1;
        }
        let rem = chunks.into_remainder();
        if !rem.is_empty() {
            let w = self.words[i].load(Ordering::Relaxed).to_le_bytes();
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
        let mut chunks = bytes.chunks_exact(8);
        let mut i = 0;
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.words[i].store(u64::from_le_bytes(w), Ordering::Relaxed);
            i += 1;
        }
        let rem = chunks.remainder();
        if !rem.is_empty() {
            let mut w = [0u8; 8];
            w[..rem.len()].copy_from_slice(rem);
            self.words[i].store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
    }

    /// Heap bytes used by the words (for memory accounting).
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8
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
            let mut out = vec![0xAA; len];
            v.load_into(&mut out);
            assert_eq!(out, bytes, "len {len}");
        }
    }
}
