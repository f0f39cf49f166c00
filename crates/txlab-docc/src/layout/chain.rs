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
//! - **Trimming keeps what anyone can still read** (section 3.4.1, sharpened). An install given
//!   the bounds of the running transactions (`Keep::Below`, descending) keeps the new version
//!   and, for each bound, the newest version below it, which is the one that transaction reads;
//!   it relinks the kept versions and unlinks the others. A transaction that is not running yet
//!   is later in the order than the committer, so it reads the new version or a later one. So a
//!   record holds at most one version more than there are workers. The paper keeps every version
//!   above the oldest running transaction's newest one, which grows without bound while one
//!   reader is descheduled.
//! - **Unlink, then free.** A version is handed to the epoch collector only after no kept
//!   version points to it any more (the relinking store comes first); readers already on it
//!   keep it alive with their guards, and its own `prev` is left as it was, so they still walk
//!   down to the versions they need.
//! - **Exactly one allocation per install** (the version), none per read.
//! - **A placeholder owns its chain**: dropping it (the index's epoch-deferred destruction after
//!   an unlink, or the table's drop) frees the versions still linked.

use super::{Installed, Keep, Layout, Observed, sealed};
use crossbeam_epoch::{Atomic, Guard, Owned, Pointer, Shared};
use std::mem::MaybeUninit;
use txlab_core::protocol::storage::Record;
use txlab_core::protocol::sync::{AtomicU64, Ordering};

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
        // Whole words first (fixed-size copies, no per-chunk `memcpy` call), then the tail.
        let mut chunks = v.chunks_exact(8);
        let mut i = HEADER;
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
            words[i].write(AtomicU64::new(w));
            i += 1;
        }
        let rem = chunks.remainder();
        if !rem.is_empty() {
            let mut w = [0u8; 8];
            w[..rem.len()].copy_from_slice(rem);
            words[i].write(AtomicU64::new(u64::from_le_bytes(w)));
        }
    }
    owned
}

/// Keeps `new` and, for each bound (descending), the newest version below it; unlinks the
/// other versions below `new` and hands them to the collector (module docs). Returns how many.
fn trim(new: Shared<'_, Words>, bounds: &[u64], guard: &Guard) -> u32 {
    let Some(mut kept) = Version::at(new) else {
        return 0;
    };
    let newest = kept.seq();
    // Bounds above the new version read it.
    let mut b = bounds
        .iter()
        .position(|&x| x <= newest)
        .unwrap_or(bounds.len());
    let mut trimmed = 0;
    let mut cur = kept.prev();
    while b < bounds.len() {
        let Some(v) = Version::at(cur) else {
            return trimmed;
        };
        let next = v.prev();
        if v.seq() < bounds[b] {
            // `v` is the newest version below `bounds[b]` (and maybe below later ones).
            let linked = kept.prev();
            if linked.with_tag(0) != cur.with_tag(0) {
                kept.word(1)
                    .store(cur.with_tag(0).into_usize() as u64, Ordering::Release);
                trimmed += retire_until(linked, cur, guard);
            }
            kept = v;
            while b < bounds.len() && v.seq() < bounds[b] {
                b += 1;
            }
        }
        cur = next;
    }
    let rest = kept.prev();
    if !rest.is_null() {
        kept.word(1).store(0, Ordering::Release);
        trimmed += retire_until(rest, Shared::null(), guard);
    }
    trimmed
}

/// Hands every version from `first` down the chain, up to (not including) `stop`, to the epoch
/// collector; returns how many. The caller has unlinked them.
fn retire_until(first: Shared<'_, Words>, stop: Shared<'_, Words>, guard: &Guard) -> u32 {
    let mut cur = first;
    let mut n = 0;
    while cur.with_tag(0) != stop.with_tag(0) {
        let Some(v) = Version::at(cur) else {
            break;
        };
        let next = v.prev();
        // SAFETY: the versions from `first` down to `stop` are unreachable from the placeholder
        // (the caller, the one committer, relinked past them, cut them off or replaced the
        // whole chain), so no reader pinned after this point can reach them; readers pinned
        // before hold guards that delay the destruction.
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
        keep: Keep<'_>,
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
        let trimmed = match keep {
            #[cfg(test)]
            Keep::All => 0,
            Keep::Below(bounds) => trim(new, bounds, guard),
        };
        Installed {
            sealed: false,
            allocated: 1,
            trimmed,
        }
    }

    fn load(rec: &Placeholder, value: &[u8], guard: &Guard) {
        let new = new_version(0, Some(value), Shared::null()).into_shared(guard);
        let old = rec.head.swap(new, Ordering::AcqRel, guard);
        retire_until(old, Shared::null(), guard);
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
        Chain::install(&r, 2 * E, Some(&[2; 10]), Keep::All, &g);
        Chain::install(&r, 4 * E, None, Keep::All, &g);
        Chain::install(&r, 6 * E, Some(&[6; 10]), Keep::All, &g);
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
    fn install_keeps_the_newest_version_below_each_running_bound() {
        let g = crossbeam_epoch::pin();
        let r = Placeholder::absent(8);
        Chain::load(&r, &[0; 8], &g);
        for s in 1..=6 {
            Chain::install(&r, s * E, Some(&[s as u8; 8]), Keep::All, &g);
        }
        assert_eq!(Chain::versions(&r, &g), 7);
        // Running: 7E + 1 (reads the new 7E), 5E + 3 and 5E + 2 (both read 5E), 2E + 5 (reads
        // 2E). Kept: 7E, 5E, 2E; unlinked: 6E, 4E, 3E (a run in the middle), E and 0 (the tail).
        let bounds = [7 * E + 1, 5 * E + 3, 5 * E + 2, 2 * E + 5];
        let i = Chain::install(&r, 7 * E, Some(&[7; 8]), Keep::Below(&bounds), &g);
        assert_eq!((i.allocated, i.trimmed), (1, 5));
        assert_eq!(Chain::versions(&r, &g), 3);
        for (bound, version) in [(u64::MAX, 7 * E), (5 * E + 2, 5 * E), (2 * E + 5, 2 * E)] {
            let mut out = [0u8; 8];
            assert_eq!(Chain::read(&r, bound, &mut out, &g).version, version);
            assert_eq!(out, [(version / E) as u8; 8]);
        }
        // Nothing running: the new version alone stays.
        let i = Chain::install(&r, 8 * E, Some(&[8; 8]), Keep::Below(&[]), &g);
        assert_eq!((i.trimmed, Chain::versions(&r, &g)), (3, 1));
    }

    #[test]
    fn a_sealed_placeholder_takes_no_install() {
        let g = crossbeam_epoch::pin();
        let r = Placeholder::absent(8);
        Chain::install(&r, E, Some(&[1; 8]), Keep::All, &g);
        assert!(
            !Chain::seal_tombstone(&r, E, &g),
            "a value, not a tombstone"
        );
        Chain::install(&r, 2 * E, None, Keep::All, &g);
        assert!(
            !Chain::seal_tombstone(&r, E, &g),
            "not the newest tombstone"
        );
        assert!(Chain::seal_tombstone(&r, 2 * E, &g));
        assert!(Chain::is_sealed(&r, &g));
        assert!(Chain::current(&r, u64::MAX, &g).sealed);
        assert!(Chain::install(&r, 3 * E, Some(&[3; 8]), Keep::All, &g).sealed);
        assert_eq!(Chain::versions(&r, &g), 2);
    }
}
