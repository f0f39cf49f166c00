//! A worker's pool of versions to reuse (Cicada keeps such pools per thread, §3.5): the chains
//! garbage collection cuts go to the pool of the worker that cut them, and once nobody can still
//! reach them that worker's next writes take their versions from there, so a steady write load
//! allocates nothing and reuses memory it touched recently.
//!
//! ```text
//! gc::collect     cut a chain (swap of an `older` link) and add it to the pending chains
//! every BATCH     fence(SeqCst); snapshot the clock slots of the active transactions
//! cuts            (crate::timestamp): the pending chains wait with that snapshot
//! a write         take a free version; when there is none, splice every waiting batch whose
//!                 snapshot has passed (every recorded transaction ended) into the free list;
//!                 else allocate
//! ```
//!
//! **Why a passed batch is unreachable.** Only transactions walk version lists (reads,
//! validation, the write check, garbage collection, initial-version links, retirement, the NWR
//! checks), between the `SeqCst` compare-and-swap that makes their clock slot active at begin and
//! the `Release` store that ends it; every list pointer they load is a `SeqCst` load
//! (`crate::record`, `crate::head`, `crate::gc`). The engine's diagnostic walks hold an active
//! slot too (`Clocks::hold`). Take a chain cut by a swap `X`, a snapshot after it (`fence(SeqCst)`
//! `F`, then loads of the slots), and a transaction `R`. If `R`'s activation precedes `F` in the
//! single total order of `SeqCst` operations, the snapshot's load sees `R` active (or a later
//! word of its slot, in which case `R` already ended), and the batch waits for `R`'s slot to
//! change: the `Acquire` load that sees the change reads `R`'s end, so all of `R`'s accesses
//! happen-before the reuse. If `F` precedes `R`'s activation, it precedes every pointer load of
//! `R` in that order, and each of those observes `X` or a later write of its link (the fence rule
//! for a modification sequenced before a `SeqCst` fence): `R` never reaches the cut chain. A slot
//! word never repeats, since a transaction's clock exceeds its predecessor's.
//!
//! **Chains still growing.** A reader that found no version below its timestamp may link an
//! initial absent version at the null end of a chain it walked (`MvtoRecord::materialize_initial`)
//! even after the chain was cut; so the pool writes nothing into a chain before it is reusable
//! (chains are kept by their first version, in batches of [`BATCH`]), and such a version is
//! reused with its chain.
//!
//! **The free stack.** Reusable chains are kept whole, by their first version, on a stack with
//! room for [`MAX_FREE`] chains (reserved when the worker is created, so pushing never allocates);
//! a passed chain beyond that is freed. A write takes the first version of the top chain, whose
//! `older` link gives the rest of that chain, and prefetches the version it will take next. Cut
//! versions were written long ago and are usually out of the cache: walking every chain to its
//! end when it becomes reusable, or popping an intrusive free list, puts one dependent cache miss
//! on every write; with the stack and the prefetch the miss overlaps the rest of the transaction.
//! A reused version is reinitialized in full before it is linked again, and linking publishes it
//! with a `SeqCst` compare-and-swap (`crate::record`), as for a fresh allocation. Chains freed
//! some other way (a record dropped by its index, a chain replaced by a load) go through
//! crossbeam-epoch as before. When the worker is dropped, its free chains are freed and its
//! waiting chains go to crossbeam-epoch, whose guards every running transaction holds (`Drop`).

use crate::gc::free_chain;
use crate::timestamp::{Clocks, Slot, passed};
use crate::version::Version;
use crossbeam_epoch::Owned;
use txlab_core::protocol::sync::Ordering;

/// Cut chains per snapshot.
const BATCH: usize = 32;
/// Batches waiting at most; past that, cut chains wait in the pending batch.
const WAITING: usize = 4;
/// Free chains kept at most.
const MAX_FREE: usize = 1024;

/// Cut chains, by their first version.
#[derive(Debug)]
struct Chains {
    heads: [*mut Version; BATCH],
    len: usize,
}

impl Chains {
    const EMPTY: Self = Self {
        heads: [std::ptr::null_mut(); BATCH],
        len: 0,
    };
}

/// Chains waiting for every transaction active at their snapshot to end.
#[derive(Debug)]
struct Batch {
    chains: Chains,
    snapshot: Vec<(Slot, u64)>,
}

/// A worker's pool (module docs).
#[derive(Debug)]
pub(crate) struct VersionPool {
    /// Reusable chains by their first version, each linked through `older` (module docs).
    free: Vec<*mut Version>,
    /// Chains cut since the last snapshot.
    pending: Chains,
    waiting: [Batch; WAITING],
}

impl Default for VersionPool {
    fn default() -> Self {
        Self {
            free: Vec::with_capacity(MAX_FREE),
            pending: Chains::EMPTY,
            waiting: std::array::from_fn(|_| Batch {
                chains: Chains::EMPTY,
                snapshot: Vec::new(),
            }),
        }
    }
}

/// The `older` link of `v`, a version of a reusable chain.
#[inline]
fn older(v: *mut Version) -> *mut Version {
    // SAFETY: `v` is a version of a reusable chain, which nobody else reaches any more, so nobody
    // links below its end either (module docs); `unprotected` is enough for such a chain.
    unsafe { &*v }
        .older
        .load(Ordering::Relaxed, unsafe { crossbeam_epoch::unprotected() })
        .as_raw() as *mut Version
}

impl VersionPool {
    /// Takes a chain garbage collection cut; every `BATCH` chains, snapshots the active
    /// transactions (module docs). Chains are kept by their first version and never joined
    /// before they pass, so nothing here writes to them while other transactions may walk them.
    #[inline]
    pub(crate) fn retire_chain(&mut self, chain: *mut Version, clocks: &Clocks) {
        if self.pending.len == BATCH && !self.seal(clocks) {
            // Every batch is waiting and none has passed: this chain goes to crossbeam-epoch.
            free_later(chain);
            return;
        }
        self.pending.heads[self.pending.len] = chain;
        self.pending.len += 1;
    }

    /// Moves the pending chains into a free batch with a snapshot taken now (module docs), making
    /// room by taking the passed batches if every one is waiting. Returns whether it did.
    #[cold]
    fn seal(&mut self, clocks: &Clocks) -> bool {
        if self.waiting.iter().all(|b| b.chains.len != 0) {
            self.take_passed();
        }
        let Some(slot) = self.waiting.iter_mut().find(|b| b.chains.len == 0) else {
            return false;
        };
        clocks.snapshot(&mut slot.snapshot);
        std::mem::swap(&mut slot.chains, &mut self.pending);
        true
    }

    /// Splices the chains of every passed batch into the free list, freeing those beyond
    /// [`MAX_FREE`] versions.
    fn take_passed(&mut self) {
        for i in 0..WAITING {
            let b = &mut self.waiting[i];
            if b.chains.len == 0 || !passed(&b.snapshot) {
                continue;
            }
            let chains = std::mem::replace(&mut b.chains, Chains::EMPTY);
            b.snapshot.clear();
            for &head in &chains.heads[..chains.len] {
                self.splice(head);
            }
        }
    }

    /// Puts the reusable chain `head` on the free stack, or frees it when the stack is full.
    fn splice(&mut self, head: *mut Version) {
        if self.free.len() >= MAX_FREE {
            free_chain(head);
            return;
        }
        self.free.push(head);
        prefetch(head);
    }

    /// A version with these fields, reused from the pool when it has one nobody can reach any
    /// more (module docs).
    #[inline]
    pub(crate) fn version(
        &mut self,
        wts: u64,
        status: usize,
        tombstone: bool,
        value: &[u8],
    ) -> Owned<Version> {
        if self.free.is_empty() {
            self.take_passed();
        }
        let Some(top) = self.free.last_mut() else {
            return Owned::new(Version::new(wts, status, tombstone, value));
        };
        let v = *top;
        let rest = older(v);
        if rest.is_null() {
            self.free.pop();
        } else {
            *top = rest;
        }
        if let Some(&next) = self.free.last() {
            prefetch(next);
        }
        // SAFETY: reusable versions are owned by this worker alone (module docs) and were
        // allocated by `Owned::new`; `reinit` sets every field.
        unsafe {
            (*v).reinit(wts, status, tombstone, value);
            Owned::from_raw(v)
        }
    }
}

/// Asks the CPU to bring the cache line at `v` in ahead of its use (a hint: no effect on memory,
/// valid for any address).
#[inline]
pub(crate) fn prefetch<T>(v: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch never faults and changes no memory, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(v.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

/// Frees `chain` once every crossbeam guard pinned now is dropped: every transaction that may
/// walk it holds one (`txlab_occ::Txn`).
fn free_later(chain: *mut Version) {
    let guard = crossbeam_epoch::pin();
    // SAFETY: the chain is detached from every list; only transactions running now may reach it,
    // and it is freed after every guard pinned before this call is dropped.
    unsafe { guard.defer_unchecked(move || free_chain(chain)) };
}

impl Drop for VersionPool {
    /// The free chains are unreachable by anyone. Pending and waiting chains may still be walked by
    /// other workers' running transactions, each under a pinned crossbeam guard (`txlab_occ::Txn`),
    /// so they are freed once every guard pinned now is dropped.
    fn drop(&mut self) {
        for &head in &self.free {
            free_chain(head);
        }
        let waiting = self.waiting.iter().map(|b| &b.chains);
        for chains in std::iter::once(&self.pending).chain(waiting) {
            for &head in &chains.heads[..chains.len] {
                free_later(head);
            }
        }
    }
}
