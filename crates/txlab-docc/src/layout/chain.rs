//! [`Chain`]: placeholders pointing to chains of immutable versions (the paper's sections 3.2
//! to 3.4).
//!
//! A [`Placeholder`] (the record the index holds, 8 bytes) is an epoch-protected pointer to the
//! newest version; tag bit 0 of the pointer is `SEALED`. A version is one allocation of atomic
//! words (crossbeam-epoch's slice `Pointable`, whose length lives in the allocation):
//!
//! ```text
//! word 0: seq (raw Seq) << 1 | TOMBSTONE
//! word 1: prev, the next older version (a crossbeam `Shared`'s address; 0 for none)
//! word 2..: the value, byte i in byte i % 8 (little-endian) of word 2 + i / 8
//! ```
//!
//! Invariants:
//!
//! - **Immutable after publication.** Words 0 and 2.. are written before the version is
//!   published (a `Release` store of the head) and never again, so readers copy them with
//!   relaxed loads after their `Acquire` load of the head; no seqlock is needed. Only `prev` is
//!   ever rewritten, and only to 0 (trimming).
//! - **One writer.** Only the committer (one at a time) publishes heads, trims and seals.
//! - **Trimming keeps what anyone can still read** (section 3.4.1). Installing with `horizon`
//!   (the `Seq` of the oldest transaction still running) keeps every version down to the first
//!   one below `horizon`, which is the newest version every running transaction can see, and
//!   cuts the chain after it. A reader bounded by `N >= horizon` stops at or before that version.
//!   Cut versions are freed through the committer's epoch guard, after every reader pinned
//!   before the cut is done.
//! - **Exactly one allocation per install** (the version), none per read.
//! - **A placeholder owns its chain**: dropping it (the index's epoch-deferred destruction after
//!   an unlink, or the table's drop) frees the versions still linked.

use super::{Installed, Layout, Observed, sealed};
use crossbeam_epoch::{Atomic, Guard, Owned, Pointer, Shared};
use std::mem::MaybeUninit;
use txlab_core::storage::Record;
use txlab_core::sync::{AtomicU64, Ordering};

type Words = [MaybeUninit<AtomicU64>];

const TOMBSTONE: u64 = 1;
const SEALED: usize = 1;
const HEADER: usize = 2;

/// The snapshot layout (module docs): `Docc<Chain>` is `docc-snapshot`, or `docc` with
/// prefetching.
#[derive(Debug, Clone, Copy, Default)]
pub struct Chain;

/// The record of the [`Chain`] layout: a pointer to the newest version.
#[derive(Debug)]
pub struct Placeholder {
    head: Atomic<Words>,
}

impl Record for Placeholder {
    fn absent(_value_size: usize) -> Self {
        Self {
            head: Atomic::null(),
        }
    }
}

/// A published version (module docs), borrowed under a guard.
#[derive(Clone, Copy)]
struct Version<'g>(&'g Words);

impl<'g> Version<'g> {
    /// The version `ptr` points to, if any.
    #[inline]
    fn at(ptr: Shared<'g, Words>) -> Option<Self> {
        // SAFETY: every non-null pointer reachable from a placeholder (its head, or a `prev` word
        // of a version reachable from it) was loaded under `'g`'s guard and points to a version
        // that is only destroyed through `Guard::defer_destroy` after being cut from the chain,
        // i.e. after every guard pinned before the cut, this one included, is dropped.
        unsafe { ptr.with_tag(0).as_ref() }.map(Version)
    }

    #[inline]
    fn word(self, i: usize) -> &'g AtomicU64 {
        // SAFETY: all words of a version are initialized before it is published (`new_version`);
        // readers only reach published versions.
        unsafe { self.0[i].assume_init_ref() }
    }

    #[inline]
    fn seq(self) -> u64 {
        self.word(0).load(Ordering::Relaxed) >> 1
    }

    #[inline]
    fn tombstone(self) -> bool {
        self.word(0).load(Ordering::Relaxed) & TOMBSTONE != 0
    }

    #[inline]
    fn prev(self) -> Shared<'g, Words> {
        let raw = self.word(1).load(Ordering::Acquire) as usize;
        // SAFETY: `prev` words only ever hold 0 or the `into_usize` of a `Shared` to a version
        // (`new_version`); a `Shared` is a plain copy, so rebuilding it any number of times is
        // fine.
        unsafe { Shared::from_usize(raw) }
    }

    #[inline]
    fn copy_value(self, out: &mut [u8]) {
        let mut chunks = out.chunks_exact_mut(8);
        let mut i = HEADER;
        for c in &mut chunks {
            c.copy_from_slice(&self.word(i).load(Ordering::Relaxed).to_le_bytes());
            i += 1;
        }
        let rem = chunks.into_remainder();
        if !rem.is_empty() {
            let w = self.word(i).load(Ordering::Relaxed).to_le_bytes();
            let n = rem.len();
            rem.copy_from_slice(&w[..n]);
        }
    }

    #[inline]
    fn observed(self, sealed: bool) -> Observed {
        Observed {
            version: self.seq(),
            present: !self.tombstone(),
            sealed,
        }
    }
}

/// A new, unpublished version: `seq`, a value or a tombstone, and `prev`.
fn new_version(seq: u64, value: Option<&[u8]>, prev: Shared<'_, Words>) -> Owned<Words> {
    let len = value.map_or(0, |v| v.len().div_ceil(8));
    let mut owned = Owned::<Words>::init(HEADER + len);
    let words = &mut *owned;
    words[0].write(AtomicU64::new(
        (seq << 1) | if value.is_none() { TOMBSTONE } else { 0 },
    ));
    words[1].write(AtomicU64::new(prev.with_tag(0).into_usize() as u64));
    if let Some(v) = value {
        for (i, chunk) in v.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            words[HEADER + i].write(AtomicU64::new(u64::from_le_bytes(w)));
        }
    }
    owned
}

/// Hands every version from `first` down the chain to the epoch collector; returns how many.
fn retire_from(first: Shared<'_, Words>, guard: &Guard) -> u32 {
    let mut cur = first;
    let mut n = 0;
    while let Some(v) = Version::at(cur) {
        let next = v.prev();
        // SAFETY: the versions from `first` down are unreachable from the placeholder (the
        // caller cut them off or replaced the whole chain, as the one committer), so no reader
        // pinned after this point can reach them; readers pinned before hold guards that delay
        // the destruction.
        unsafe { guard.defer_destroy(cur.with_tag(0)) };
        cur = next;
        n += 1;
    }
    n
}

impl sealed::Sealed for Chain {}

impl Layout for Chain {
    type Record = Placeholder;
    const SNAPSHOT: bool = true;
    const NAME: &'static str = "chain";

    #[inline]
    fn read(rec: &Placeholder, bound: u64, out: &mut [u8], guard: &Guard) -> Observed {
        let head = rec.head.load(Ordering::Acquire, guard);
        let sealed = head.tag() & SEALED != 0;
        let mut cur = head;
        while let Some(v) = Version::at(cur) {
            if v.seq() < bound {
                if !v.tombstone() {
                    v.copy_value(out);
                }
                return v.observed(sealed);
            }
            cur = v.prev();
        }
        Observed {
            version: 0,
            present: false,
            sealed,
        }
    }

    #[inline]
    fn current(rec: &Placeholder, bound: u64, guard: &Guard) -> Observed {
        let head = rec.head.load(Ordering::Acquire, guard);
        let sealed = head.tag() & SEALED != 0;
        let mut cur = head;
        while let Some(v) = Version::at(cur) {
            if v.seq() < bound {
                return v.observed(sealed);
            }
            cur = v.prev();
        }
        Observed {
            version: 0,
            present: false,
            sealed,
        }
    }

    fn install(
        rec: &Placeholder,
        seq: u64,
        value: Option<&[u8]>,
        horizon: u64,
        guard: &Guard,
    ) -> Installed {
        let head = rec.head.load(Ordering::Acquire, guard);
        if head.tag() & SEALED != 0 {
            return Installed {
                sealed: true,
                ..Installed::default()
            };
        }
        let new = new_version(seq, value, head).into_shared(guard);
        rec.head.store(new, Ordering::Release);
        // Trim: keep down to the first version below the horizon, cut after it.
        let mut cur = new;
        let mut trimmed = 0;
        while let Some(v) = Version::at(cur) {
            if v.seq() < horizon {
                let cut = v.prev();
                if !cut.is_null() {
                    v.word(1).store(0, Ordering::Release);
                    trimmed = retire_from(cut, guard);
                }
                break;
            }
            cur = v.prev();
        }
        Installed {
            sealed: false,
            allocated: 1,
            trimmed,
        }
    }

    fn load(rec: &Placeholder, value: &[u8], guard: &Guard) {
        let new = new_version(0, Some(value), Shared::null()).into_shared(guard);
        let old = rec.head.swap(new, Ordering::AcqRel, guard);
        retire_from(old, guard);
    }

    fn seal_tombstone(rec: &Placeholder, seq: u64, guard: &Guard) -> bool {
        let head = rec.head.load(Ordering::Acquire, guard);
        match Version::at(head) {
            Some(v) if head.tag() == 0 && v.tombstone() && v.seq() == seq => {
                rec.head.store(head.with_tag(SEALED), Ordering::Release);
                true
            }
            _ => false,
        }
    }

    #[inline]
    fn is_sealed(rec: &Placeholder, guard: &Guard) -> bool {
        rec.head.load(Ordering::Acquire, guard).tag() & SEALED != 0
    }

    fn versions(rec: &Placeholder, guard: &Guard) -> usize {
        let mut cur = rec.head.load(Ordering::Acquire, guard);
        let mut n = 0;
        while let Some(v) = Version::at(cur) {
            n += 1;
            cur = v.prev();
        }
        n
    }
}

impl Drop for Placeholder {
    fn drop(&mut self) {
        // SAFETY: a placeholder is dropped by its index, either with the whole table (no other
        // borrow exists) or through the epoch-deferred destruction after an unlink (no pinned
        // guard can still reach it), so nobody can reach its chain any more: free it at once.
        let guard = unsafe { crossbeam_epoch::unprotected() };
        let mut cur = self.head.load(Ordering::Relaxed, guard);
        while let Some(v) = Version::at(cur) {
            let next = v.prev();
            // SAFETY: as above, the chain is unreachable; each version is freed exactly once
            // (trimmed versions were cut off before being handed to the collector).
            drop(unsafe { cur.with_tag(0).into_owned() });
            cur = next;
        }
    }
}

#[cfg(all(test, not(any(txlab_loom, txlab_shuttle))))]
mod tests {
    use super::*;

    const E: u64 = 1 << 32;

    #[test]
    fn snapshot_reads_see_the_newest_version_below_their_bound() {
        let g = crossbeam_epoch::pin();
        let r = Placeholder::absent(10);
        let mut out = [0u8; 10];
        assert_eq!(Chain::read(&r, u64::MAX, &mut out, &g).version, 0);
        Chain::load(&r, &[1; 10], &g);
        Chain::install(&r, 2 * E, Some(&[2; 10]), 0, &g);
        Chain::install(&r, 4 * E, None, 0, &g);
        Chain::install(&r, 6 * E, Some(&[6; 10]), 0, &g);
        assert_eq!(Chain::versions(&r, &g), 4);
        for (bound, version, present, value) in [
            (1, 0, true, 1u8),
            (2 * E, 0, true, 1),
            (2 * E + 1, 2 * E, true, 2),
            (5 * E, 4 * E, false, 0),
            (u64::MAX, 6 * E, true, 6),
        ] {
            let mut out = [0u8; 10];
            let o = Chain::read(&r, bound, &mut out, &g);
            assert_eq!(
                (o.version, o.present),
                (version, present),
                "bound {bound:#x}"
            );
            assert_eq!(Chain::current(&r, bound, &g), o);
            if present {
                assert_eq!(out, [value; 10]);
            }
        }
    }

    #[test]
    fn install_trims_below_the_newest_version_under_the_horizon() {
        let g = crossbeam_epoch::pin();
        let r = Placeholder::absent(8);
        Chain::load(&r, &[0; 8], &g);
        for s in 1..=4 {
            Chain::install(&r, s * E, Some(&[s as u8; 8]), 0, &g);
        }
        assert_eq!(Chain::versions(&r, &g), 5);
        // The oldest running transaction is at 3E + 5: it sees version 3E, so 0, E, 2E go.
        let i = Chain::install(&r, 5 * E, Some(&[5; 8]), 3 * E + 5, &g);
        assert_eq!((i.allocated, i.trimmed), (1, 3));
        assert_eq!(Chain::versions(&r, &g), 3);
        let mut out = [0u8; 8];
        assert_eq!(Chain::read(&r, 3 * E + 5, &mut out, &g).version, 3 * E);
        assert_eq!(out, [3; 8]);
    }

    #[test]
    fn a_sealed_placeholder_takes_no_install() {
        let g = crossbeam_epoch::pin();
        let r = Placeholder::absent(8);
        Chain::install(&r, E, Some(&[1; 8]), 0, &g);
        assert!(
            !Chain::seal_tombstone(&r, E, &g),
            "a value, not a tombstone"
        );
        Chain::install(&r, 2 * E, None, 0, &g);
        assert!(
            !Chain::seal_tombstone(&r, E, &g),
            "not the newest tombstone"
        );
        assert!(Chain::seal_tombstone(&r, 2 * E, &g));
        assert!(Chain::is_sealed(&r, &g));
        assert!(Chain::current(&r, u64::MAX, &g).sealed);
        assert!(Chain::install(&r, 3 * E, Some(&[3; 8]), 0, &g).sealed);
        assert_eq!(Chain::versions(&r, &g), 2);
    }
}
