//! Rapid garbage collection (Cicada §3.5, simplified): after a commit, cut each written record's
//! list below the newest committed version older than the horizon.
//!
//! Why it is safe: the horizon `h` is a lower bound on the timestamp of every active or future
//! transaction (`crate::timestamp`). Let `K` be the newest committed version with `wts < h`. A
//! transaction with `ts >= h` sees `K` or a newer version, and every protocol walk (read,
//! validation, write check, initial-version linking) stops at the first committed version below
//! its timestamp, so none of them needs a version older than `K`. The cut sets `K.older` to null
//! (a `swap` on hash and ordered tables, a load and a store on dense ones, below); the detached
//! chain goes to the collecting worker's pool of versions (`crate::pool`), which reuses it once
//! every transaction that could have reached it has ended (a walker that was already past `K` may
//! still read it, and an initial-version link that lands in it is reused with it: see
//! `MvtoRecord::materialize_initial`).
//!
//! Two collectors cutting the same record of a hash or ordered table concurrently detach disjoint
//! chains: each `swap` takes what is below its own cut point, and a chain is reused only after
//! both cuts.
//!
//! Aborted versions above `K` stay until a newer committed version passes below the horizon.
//!
//! **Deferred cuts** ([`Deferred`]). A commit cannot cut below its own version: the horizon is at
//! most its own timestamp while it runs, so a cut at commit time leaves the version it overwrote
//! in the list, and a record written at a steady rate keeps two versions. Writes to dense tables
//! (whose records live as long as the engine, `txlab_storage::DenseIndex`) are therefore cut
//! later: the commit queues `(record, wts)`, and a later commit of the same worker, once the
//! horizon has passed `wts`, cuts the record's list ([`collect_own`]). A record then keeps one version once
//! the horizon has moved past its last write, and the version cut is the one the last write
//! walked over, still in the cache when the worker's pool hands it out again (`crate::pool`).
//! The queue is a bounded ring reserved with the worker (so it never allocates); when it is full,
//! its oldest entry is cut at once with the current horizon, as a commit-time cut would be. Collecting is safe with any valid horizon at any time (the argument above does
//! not depend on which transaction cuts), so the delay changes only how many versions wait.
//! Records of other tables may be unlinked and freed (`crate::retire`), so they are cut at
//! commit, while the transaction's guard keeps them alive.
//!
//! **Cuts of dense records by their owner** ([`collect_own`]). On a dense table, `K.older` is cut
//! only by the worker that wrote `K` (the worker id in `K.wts`, `crate::timestamp`); a deferred
//! cut that finds another worker's version as `K` leaves it to that worker, whose own entry for
//! `K` (or a newer version's writer's) comes later. With one cutter per link, the cut is a load
//! and a `Release` store instead of a `swap` (a locked instruction, a full barrier on x86),
//! because nothing else can change `K.older` between the two:
//!
//! - another cut: only `K`'s writer cuts it, one transaction at a time;
//! - a link below `K` (`MvtoRecord::link`): its writer's timestamp is below `K.wts < horizon`.
//!   The horizon is the minimum of the clock slots as a recomputation read them; a slot whose
//!   word is above that writer's timestamp was written at or after its `Release` end (or by a
//!   later RMW in the release sequence), so the link happens-before the recomputation's
//!   `fetch_max`, and hence before this cut's `Acquire` load of the horizon: the cut's load sees
//!   the link, and no such writer begins later (slots only grow). Hash and ordered records, where
//!   a tombstone's retirement races with late links, keep the `swap`;
//! - an initial-absent link (`MvtoRecord::materialize_initial`) only CASes a null link, and the
//!   cut stores only over a non-null one. A reader that walked past `K` while it was pending may
//!   link its initial version into `K.older` after the cut (as after a `swap`): below `K`, where
//!   nothing needs it, and cut with `K.older` later.
//!
//! The pool's grace period holds for the store as for the swap: its argument needs only that the
//! cut is sequenced before the snapshot's `SeqCst` fence (`crate::pool`). A record whose newest
//! committed version's writer stops writing (its worker dropped, or its entry cut early by a full
//! ring) keeps the versions below that one until a later write of the record is cut.

use crate::pool::VersionPool;
use crate::record::{MvtoRecord, deref};
use crate::timestamp::{Clocks, worker_of};
use crate::version::{COMMITTED, Version};
use crossbeam_epoch::{Guard, Owned, Shared};
use txlab_core::protocol::sync::Ordering;

/// Frees a detached chain of versions starting at `p` (null: nothing).
pub(crate) fn free_chain(mut p: *const Version) {
    while !p.is_null() {
        // SAFETY: the chain starting at `p` is detached and no guard can reach it any more (we
        // are in a deferred destructor, or in the record's destructor); each version was
        // allocated by `Owned::new` and is freed exactly once, by following `older` links.
        let owned = unsafe { Owned::from_raw(p as *mut Version) };
        // SAFETY: as above, nobody else accesses the chain.
        let next = owned
            .older
            .load(Ordering::Acquire, unsafe { crossbeam_epoch::unprotected() });
        p = next.as_raw();
        drop(owned);
    }
}

/// Cuts `rec`'s list below the newest committed version older than `horizon` (module docs) and
/// gives the detached chain to `pool`, the collecting worker's, which reuses it once nobody can
/// reach it (`crate::pool`; `clocks` tells who may). Returns whether something was detached.
pub(crate) fn collect(
    rec: &MvtoRecord,
    horizon: u64,
    guard: &Guard,
    pool: &mut VersionPool,
    clocks: &Clocks,
) -> bool {
    let mut cur = rec.head.load(Ordering::SeqCst).version(guard);
    while let Some(v) = deref(cur) {
        if v.wts < horizon && v.status() == COMMITTED {
            // Nothing below: no need for the swap's locked instruction.
            if v.older.load(Ordering::SeqCst, guard).is_null() {
                return false;
            }
            let tail = v.older.swap(Shared::null(), Ordering::AcqRel, guard);
            if tail.is_null() {
                return false;
            }
            pool.retire_chain(tail.as_raw() as *mut Version, clocks);
            return true;
        }
        cur = v.older.load(Ordering::SeqCst, guard);
    }
    false
}

/// [`collect`] for a record of a dense table, by worker `me` (module docs, "Cuts of dense records
/// by their owner"): cuts below `K` only if `me` wrote `K`, with a load and a store.
fn collect_own(
    rec: &MvtoRecord,
    horizon: u64,
    me: u64,
    guard: &Guard,
    pool: &mut VersionPool,
    clocks: &Clocks,
) -> bool {
    let mut cur = rec.head.load(Ordering::SeqCst).version(guard);
    while let Some(v) = deref(cur) {
        if v.wts < horizon && v.status() == COMMITTED {
            if worker_of(v.wts) != me {
                return false;
            }
            let tail = v.older.load(Ordering::SeqCst, guard);
            if tail.is_null() {
                return false;
            }
            v.older.store(Shared::null(), Ordering::Release);
            pool.retire_chain(tail.as_raw() as *mut Version, clocks);
            return true;
        }
        cur = v.older.load(Ordering::SeqCst, guard);
    }
    false
}

/// Entries a worker's [`Deferred`] queue holds at most (a power of two).
const DEFERRED: usize = 256;

/// A worker's deferred cuts (module docs, "Deferred cuts"): records of dense tables written by
/// its recent commits, with the write timestamp of the version written, oldest first, in a ring
/// of [`DEFERRED`] entries reserved with the worker.
#[derive(Debug)]
pub(crate) struct Deferred {
    ring: Box<[(*const MvtoRecord, u64)]>,
    /// Entries pushed and popped so far (wrapping); the queue is `popped..pushed`.
    pushed: usize,
    popped: usize,
}

impl Default for Deferred {
    fn default() -> Self {
        Self {
            ring: vec![(std::ptr::null(), 0); DEFERRED].into_boxed_slice(),
            pushed: 0,
            popped: 0,
        }
    }
}

/// A queued record.
#[inline]
fn queued<'a>(rec: *const MvtoRecord) -> &'a MvtoRecord {
    // SAFETY: only records of dense tables are queued ([`Deferred::push`]'s contract); a dense
    // index never frees or moves a record while it lives (`txlab_storage::DenseIndex`), and the
    // engine owning it outlives the worker that owns the queue.
    unsafe { &*rec }
}

impl Deferred {
    /// Queues `rec`, written at `wts`, for a later cut. `rec` must be a record of a dense table
    /// of the engine whose worker owns the queue. When the queue is full its oldest entry is cut
    /// now, with `horizon`. Runs inside a transaction, under its guard (`crate::pool`).
    #[inline]
    pub(crate) fn push(
        &mut self,
        rec: *const MvtoRecord,
        wts: u64,
        horizon: u64,
        guard: &Guard,
        pool: &mut VersionPool,
        clocks: &Clocks,
    ) {
        if self.pushed.wrapping_sub(self.popped) == DEFERRED {
            let (old, old_wts) = self.ring[self.popped % DEFERRED];
            self.popped = self.popped.wrapping_add(1);
            collect_own(
                queued(old),
                horizon,
                worker_of(old_wts),
                guard,
                pool,
                clocks,
            );
        }
        self.ring[self.pushed % DEFERRED] = (rec, wts);
        self.pushed = self.pushed.wrapping_add(1);
    }

    /// Cuts the lists of the queued records whose version is below `horizon` (entries are in
    /// timestamp order: a worker's timestamps increase). Runs inside a transaction, under its
    /// guard (`crate::pool`).
    #[inline]
    pub(crate) fn pass(
        &mut self,
        horizon: u64,
        guard: &Guard,
        pool: &mut VersionPool,
        clocks: &Clocks,
    ) {
        while self.popped != self.pushed {
            let (rec, wts) = self.ring[self.popped % DEFERRED];
            if wts >= horizon {
                return;
            }
            self.popped = self.popped.wrapping_add(1);
            collect_own(queued(rec), horizon, worker_of(wts), guard, pool, clocks);
        }
    }
}
