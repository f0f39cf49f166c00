//! A record: the head of a version list ordered by write timestamp, newest first.
//!
//! Invariants:
//!
//! - Along `older` links, write timestamps strictly decrease; a key never has two versions with
//!   the same `wts` (timestamps are unique, and the initial version `wts = 0` is linked at most
//!   once, see `MvtoRecord::materialize_initial`).
//! - The empty list means "absent since the beginning". A reader that finds no version below its
//!   timestamp first links the committed initial-absent version (`wts = 0`) at the tail, so that it
//!   has a read timestamp to raise; this changes nothing about the key's history. Newer versions
//!   (inserted by younger transactions) may already be in the list above it.
//! - Links are published with `SeqCst` compare-and-swap; list pointers are read with `SeqCst`
//!   loads (`crate::commit`; the version pool's grace period relies on it, `crate::pool`).
//! - Versions unlinked by the garbage collector stay readable until every guard pinned before the
//!   unlink is dropped (`crate::gc`).
//! - The head is a `HeadWord` (`crate::head`): the newest version's address, the retired tag,
//!   and MVTO+NWR's read-and-omit marks. The tag `crate::head::RETIRED_TAG` marks a record whose tombstone is
//!   being unlinked from the index (`crate::retire`). Only the retirer sets or clears it (by
//!   `SeqCst` RMW); while it is set, [`MvtoRecord::visible`] answers [`Visible::Retired`] and
//!   [`MvtoRecord::link`] refuses new versions. Version pointers below the head are never
//!   tagged.

use crate::gc::free_chain;
use crate::head::{Head, HeadWord};
use crate::version::{ABORTED, COMMITTED, PENDING, Version};
use crossbeam_epoch::{Atomic, Guard, Owned, Shared};
use txlab_core::protocol::storage::Record;
use txlab_core::protocol::sync::Ordering;

/// Whether this build pads every record to its own 64-byte cache line (cargo feature
/// `line-aligned-records`, CCBench's layout) instead of packing records (the default).
pub const LINE_ALIGNED_RECORDS: bool = cfg!(feature = "line-aligned-records");

/// One key's versions (module docs). `P` is `()` for every MVTO engine: MVTO+NWR keeps its
/// read-and-omit marks in the head word (`crate::head`), so every record is 8 bytes; its pivot
/// object lives beside the records, `Mvto::pivots` (`crate::nwr`).
#[cfg_attr(feature = "line-aligned-records", repr(align(64)))]
#[derive(Debug)]
pub struct MvtoRecord {
    pub(crate) head: HeadWord,
}

impl Record for MvtoRecord {
    fn absent(_value_size: usize) -> Self {
        Self {
            head: HeadWord::null(),
        }
    }
}

/// Why [`MvtoRecord::link`] did not link a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkRefused {
    /// A version with the same `wts` is already there (a bug for transaction timestamps, which
    /// are unique).
    Duplicate,
    /// The record is being unlinked (`crate::retire`); the caller aborts with
    /// `ConflictCause::RecordRetired` and a retry finds the key's next record.
    Retired,
    /// The version's address does not fit the head word's 48 bits (`crate::head`): an internal
    /// error, never seen on x86-64 or AArch64 with 4-level paging.
    Unaddressable,
}

/// Where [`MvtoRecord::link`] puts a version. Only meaningful for the record whose
/// [`MvtoRecord::link_slot`] returned it (not `Copy`, so it is used once).
#[derive(Debug)]
pub(crate) enum LinkSlot<'g> {
    /// At the head: the head word as the walk loaded it.
    Head(Head),
    /// Below the head: a version's `older` link and the pointer it held when the walk passed it.
    Below(&'g Atomic<Version>, Shared<'g, Version>),
}

/// How one [`MvtoRecord::link_at`] ended.
#[derive(Debug)]
pub(crate) enum LinkAttempt<'g> {
    /// Linked; the version is in the list.
    Linked(Shared<'g, Version>),
    /// Linked below the head of a record that was tagged retired meanwhile: the version was
    /// marked aborted ([`LinkRefused::Retired`] for the caller).
    Retired,
    /// The link moved under the walk: walk again with the version handed back.
    Moved(Owned<Version>),
    /// The version's address does not fit the head word ([`LinkRefused::Unaddressable`]).
    Unaddressable,
}

/// What a transaction with timestamp `ts` sees of a record.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Visible<'g> {
    /// The newest committed version with `wts < ts` (no pending one above it).
    Committed(&'g Version),
    /// The newest non-aborted version below `ts` is still pending.
    Pending(&'g Version),
    /// No non-aborted version below `ts`.
    Nothing,
    /// The record is being unlinked from its index (`crate::retire`): abort, and a retry looks
    /// the key up again.
    Retired,
}

/// Dereferences a list pointer.
#[inline]
pub(crate) fn deref<'g>(p: Shared<'g, Version>) -> Option<&'g Version> {
    // SAFETY: list pointers are either null or point to versions published by a `SeqCst` CAS and
    // freed only by epoch-deferred destruction after being unlinked; the caller holds the guard
    // `'g` it loaded `p` under, so the version is alive for `'g` (module docs).
    unsafe { p.as_ref() }
}

impl MvtoRecord {
    /// The version a transaction with timestamp `ts` reads (skipping aborted versions), or
    /// [`Visible::Retired`] if the head carries `crate::head::RETIRED_TAG`. Read validation calls it with
    /// `SeqCst`: that head load is the reader's half of the retirer's store-load pattern
    /// (`crate::retire`).
    #[inline]
    pub(crate) fn visible<'g>(&self, ts: u64, order: Ordering, guard: &'g Guard) -> Visible<'g> {
        let head = self.head.load(order);
        if head.is_retired() {
            return Visible::Retired;
        }
        let mut cur = head.version(guard);
        while let Some(v) = deref(cur) {
            if v.wts < ts {
                match v.status() {
                    COMMITTED => return Visible::Committed(v),
                    PENDING => return Visible::Pending(v),
                    _ => {}
                }
            }
            cur = v.older.load(order, guard);
        }
        Visible::Nothing
    }

    /// Links `new` at its place in `wts` order and returns it; refuses with
    /// [`LinkRefused::Duplicate`] if a version already holds `new.wts`, or
    /// [`LinkRefused::Retired`] if the record is being unlinked (module docs).
    ///
    /// A version linked at the head cannot slip into a retired record: the CAS expects the
    /// untagged head. One linked lower (below aborted versions newer than it) can; so after such a
    /// link the head is loaded again (`SeqCst`, after the link's `SeqCst` CAS), and if it is
    /// tagged the version is marked aborted and refused. The retirer tags first and then walks the
    /// list (`crate::retire`): of the two, at least one sees the other, and a retirer that finds a
    /// version it did not expect clears the tag again. The two steps are [`MvtoRecord::link_slot`]
    /// and [`MvtoRecord::link_at`], separate so that tests can put a retirer between them.
    pub(crate) fn link<'g>(
        &'g self,
        mut new: Owned<Version>,
        guard: &'g Guard,
    ) -> Result<Shared<'g, Version>, LinkRefused> {
        loop {
            let slot = self.link_slot(new.wts, guard)?;
            match self.link_at(slot, new, guard) {
                LinkAttempt::Linked(linked) => return Ok(linked),
                LinkAttempt::Retired => return Err(LinkRefused::Retired),
                LinkAttempt::Unaddressable => return Err(LinkRefused::Unaddressable),
                LinkAttempt::Moved(back) => new = back,
            }
        }
    }

    /// [`MvtoRecord::link`]'s walk: the link a version with `wts` goes into (below every version
    /// with a larger `wts`) and what it holds now.
    #[inline]
    pub(crate) fn link_slot<'g>(
        &'g self,
        wts: u64,
        guard: &'g Guard,
    ) -> Result<LinkSlot<'g>, LinkRefused> {
        let head = self.head.load(Ordering::SeqCst);
        if head.is_retired() {
            return Err(LinkRefused::Retired);
        }
        let mut below: Option<&'g Atomic<Version>> = None;
        let mut cur = head.version(guard);
        while let Some(v) = deref(cur) {
            if v.wts > wts {
                below = Some(&v.older);
                cur = v.older.load(Ordering::SeqCst, guard);
            } else if v.wts == wts {
                return Err(LinkRefused::Duplicate);
            } else {
                break;
            }
        }
        Ok(match below {
            None => LinkSlot::Head(head),
            Some(at) => LinkSlot::Below(at, cur),
        })
    }

    /// [`MvtoRecord::link`]'s publication: one CAS of `slot`; at the head it carries the marks
    /// over (`crate::head`, "Rebasing"); below the head it is followed by the re-check of the
    /// head's retired tag.
    #[inline]
    pub(crate) fn link_at<'g>(
        &'g self,
        slot: LinkSlot<'g>,
        new: Owned<Version>,
        guard: &'g Guard,
    ) -> LinkAttempt<'g> {
        match slot {
            LinkSlot::Head(head) => {
                new.older.store(head.version(guard), Ordering::Relaxed);
                let addr: *const Version = &*new;
                let Some(next) = head.linking(addr, new.wts, guard) else {
                    return LinkAttempt::Unaddressable;
                };
                match self
                    .head
                    .compare_exchange(head, next, Ordering::SeqCst, Ordering::SeqCst)
                {
                    Ok(_) => LinkAttempt::Linked(new.into_shared(guard)),
                    Err(_) => LinkAttempt::Moved(new),
                }
            }
            LinkSlot::Below(at, cur) => {
                new.older.store(cur, Ordering::Relaxed);
                match at.compare_exchange(cur, new, Ordering::SeqCst, Ordering::SeqCst, guard) {
                    Ok(linked) => {
                        if self.head.load(Ordering::SeqCst).is_retired() {
                            if let Some(v) = deref(linked) {
                                v.status.store(ABORTED, Ordering::SeqCst);
                            }
                            return LinkAttempt::Retired;
                        }
                        LinkAttempt::Linked(linked)
                    }
                    Err(e) => LinkAttempt::Moved(e.new),
                }
            }
        }
    }

    /// For a reader with timestamp `ts` that found no version below `ts`: links the committed
    /// initial-absent version at the tail, behind any versions newer than `ts`. A no-op if a
    /// committed version below `ts` appeared meanwhile (the caller looks again).
    ///
    /// Garbage collection cuts below a committed version `K` with `wts < horizon <= ts`; this walk
    /// stops at such a version, so it only reaches a cut-off tail if `K` committed after the walk
    /// passed it. The version then lands in the detached chain, which is freed with it (the
    /// deferred destruction walks `older` links after this walker unpinned), and the caller's
    /// next look finds `K`.
    pub(crate) fn materialize_initial(&self, ts: u64, guard: &Guard) -> Result<(), LinkRefused> {
        let mut new = Owned::new(Version::initial_absent());
        loop {
            let head = self.head.load(Ordering::SeqCst);
            let mut below: Option<&Atomic<Version>> = None;
            let mut cur = head.version(guard);
            while let Some(v) = deref(cur) {
                if v.wts < ts && v.status() == COMMITTED {
                    return Ok(());
                }
                below = Some(&v.older);
                cur = v.older.load(Ordering::SeqCst, guard);
            }
            match below {
                // An empty list: the initial version becomes the head (its marks' base stays 0).
                None => {
                    if head.is_retired() {
                        // Only a list with a tombstone is retired; the caller looks again.
                        return Ok(());
                    }
                    let addr: *const Version = &*new;
                    let next = head
                        .linking(addr, new.wts, guard)
                        .ok_or(LinkRefused::Unaddressable)?;
                    if self
                        .head
                        .compare_exchange(head, next, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                    {
                        let _ = new.into_shared(guard);
                        return Ok(());
                    }
                }
                Some(at) => match at.compare_exchange(
                    Shared::null(),
                    new,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                    guard,
                ) {
                    Ok(_) => return Ok(()),
                    Err(e) => new = e.new,
                },
            }
        }
    }

    /// Non-transactional load: the record becomes one committed version with `wts = 0`, and its
    /// marks are cleared.
    pub(crate) fn load_initial(&self, value: &[u8], guard: &Guard) -> Result<(), LinkRefused> {
        let v = Owned::new(Version::new(0, COMMITTED, false, value));
        let addr: *const Version = &*v;
        let next = Head::fresh(addr).ok_or(LinkRefused::Unaddressable)?;
        let _ = v.into_shared(guard);
        let old = self.head.swap(next, Ordering::SeqCst).version(guard);
        if !old.is_null() {
            let raw = old.as_raw();
            // SAFETY: `old` is no longer reachable from the record; the chain is freed once every
            // guard that could have reached it is dropped.
            unsafe { guard.defer_unchecked(move || free_chain(raw)) };
        }
        Ok(())
    }

    /// Number of versions in the list, and how many of them are aborted (diagnostics).
    pub(crate) fn count(&self, guard: &Guard) -> (usize, usize) {
        let (mut n, mut aborted) = (0, 0);
        let mut cur = self.head.load(Ordering::SeqCst).version(guard);
        while let Some(v) = deref(cur) {
            n += 1;
            if v.status() == ABORTED {
                aborted += 1;
            }
            cur = v.older.load(Ordering::SeqCst, guard);
        }
        (n, aborted)
    }
}

impl Drop for MvtoRecord {
    fn drop(&mut self) {
        // SAFETY: a record is dropped by its index only when no guard can reach it any more, so
        // its versions are reachable by no one else.
        let head = self
            .head
            .load(Ordering::Acquire)
            .version(unsafe { crossbeam_epoch::unprotected() });
        free_chain(head.as_raw());
    }
}
