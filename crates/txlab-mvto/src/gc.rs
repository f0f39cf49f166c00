//! Rapid garbage collection (Cicada §3.5, simplified): after a commit, cut each written record's
//! list below the newest committed version older than the horizon.
//!
//! Why it is safe: the horizon `h` is a lower bound on the timestamp of every active or future
//! transaction (`crate::timestamp`). Let `K` be the newest committed version with `wts < h`. A
//! transaction with `ts >= h` sees `K` or a newer version, and every protocol walk (read,
//! validation, write check, initial-version linking) stops at the first committed version below
//! its timestamp, so none of them needs a version older than `K`. The cut is one atomic `swap` of
//! `K.older` to null; the detached chain goes to the collecting worker's pool of versions
//! (`crate::pool`), which reuses it once every transaction that could have reached it has ended (a walker that was already past `K` may still read it, and an
//! initial-version link that lands in it is destroyed with it: see
//! `MvtoRecord::materialize_initial`).
//!
//! Two collectors cutting the same record concurrently detach disjoint chains: each `swap` takes
//! what is below its own cut point, and a chain is walked for destruction only after both have
//! unpinned, when the later cut is visible.
//!
//! Aborted versions above `K` stay until a newer committed version passes below the horizon.

use crate::pool::VersionPool;
use crate::record::{MvtoRecord, deref};
use crate::timestamp::Clocks;
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
