//! Unlinking deleted records ("retiring" tombstones) under MVTO's timestamp order.
//!
//! A committed delete leaves a tombstone version at the head of its key's list, and the record
//! stays in the index: transactions that located it earlier still hold pointers to it. Left there,
//! tombstones pile up: TPC-C's Delivery scans NEW-ORDER from its oldest row and walks every row
//! ever delivered, and the TPC-C rate falls with run length
//! (`docs/results/tpcc.md#throughput-against-run-length`). Silo and TicToc unlink
//! theirs (`txlab_silo::retire`, `txlab_tictoc::retire`); this module does it for MVTO and its
//! NWR variants.
//!
//! ## What unlinking must preserve
//!
//! Let the tombstone of key `k` have write timestamp `d` and read timestamp `R` (the largest
//! timestamp that read it). Once the record is unlinked, a transaction that looks `k` up links a
//! *fresh* record with an empty list; a reader then links the initial absent version (`wts = 0`)
//! and reads "absent". That is right only if
//!
//! 1. the reader's timestamp is above `d` (below it, `k` may have been present);
//! 2. no version of `k` with a timestamp in `(d, R]` is ever committed (the tombstone's readers
//!    saw `k` absent up to `R`); and
//! 3. nobody commits a version into the unlinked record (it is no longer reachable).
//!
//! ## How each is kept
//!
//! 1. **Only below the horizon.** A tombstone is retired only when `d` is below the GC horizon,
//!    which bounds from below the timestamp of every transaction active at or after the horizon
//!    was computed (`crate::timestamp`). Every transaction that can meet the fresh record has a
//!    larger timestamp.
//! 2. **The floor.** The retirer raises the key's *absent floor* to `R`: on an ordered table the
//!    stripe scan timestamp of `k`'s phantom stripe (retiring is then exactly a scan that saw `k`
//!    absent at `R`), on a hash table a slot of the table's `txlab_core::protocol::retire_floor::RetireFloors`.
//!    A writer whose version has no committed non-absent version below it (the first version of a
//!    fresh record is one) already checks that timestamp in Phase 1 and aborts `WriteTooLate`
//!    when it is above its own (`crate::commit`). The raise is sequenced before the unlink, and a
//!    writer that found the fresh record looked it up after the unlink (the index publishes with
//!    release stores and a lookup that missed the old record synchronised with its removal), so
//!    its `SeqCst` load sees the raise.
//! 3. **The retired tag.** Before reading `R`, the retirer sets `crate::head::RETIRED_TAG` on the head
//!    pointer by `SeqCst` CAS. From then on [`MvtoRecord::link`] refuses new versions and
//!    [`MvtoRecord::visible`] answers `Retired`: readers abort with
//!    `ConflictCause::RecordRetired`, and so does read validation. `R` is then final for every
//!    committing reader, by the store-load pattern of `crate::commit`: a reader raises the
//!    tombstone's `rts` (`SeqCst` compare-and-swap, or a `SeqCst` load that already reads its
//!    timestamp, `crate::commit`) and later validates with a `SeqCst` load of the
//!    head; the retirer CASes the head and then loads `rts`. In the single order of `SeqCst`
//!    operations either the reader's validation load comes after the tag (it aborts), or its
//!    raise came before the tag and the retirer's `rts` load sees it. MVTO+NWR omitters
//!    validate their reads with the same kind of head load (`crate::nwr`), and `mvto-nwr-single`
//!    raises `rts` to its pivot's timestamp before validating again, so the same holds for them.
//!    Linkers: a version linked at the head position cannot land in a tagged record (the CAS
//!    expects the untagged head). One linked lower, below aborted versions, re-loads the head
//!    after its CAS and aborts itself if tagged; the retirer, after tagging, walks the list again
//!    and clears the tag if anything but aborted versions lies above the tombstone. One of the two
//!    sees the other.
//!
//! **MVTO+NWR.** An omitter of epoch `e` places its write at the start of `e`, after the item's
//! pre-epoch versions; readers of epoch `e` that read a pre-epoch version set the read mark in
//! the record's head word (`crate::head`, the protocol of `txlab_nwr::read_omit`), and the
//! omitter gives up if it sees a mark. The fresh record has its own head word, so the marks made on the retired record by readers
//! of its tombstone do not reach an omitter on the fresh record. They need not: such a reader `T` of epoch `e` committed, so
//! `R >= ts_T >= start of e`, and the fresh record's first version is above `R`, so it is of
//! epoch `e` or later. If later, the fresh record has no version of `e` and nothing of `e` is
//! omitted on it. If of `e`, its writer found the key absent below it and merged a pre-epoch
//! mark into the fresh record's word in `e` before committing (`crate::commit`'s scan-miss rule), and an
//! omitter uses only committed pivots, so it sees that mark and gives up. `mvto-nwr-single`
//! places an omitter just below a pivot `p` whose predecessor, if absent, has an absent floor
//! below `wts(p)` (`crate::nwr`), so every reader of the retired tombstone (`ts <= R <=` the
//! floor) precedes it. The key's pivot object, a companion beside the records
//! (`txlab_storage::Companions`), is removed with the record: nothing MVTO+NWR's soundness rests
//! on lives there (the head word's marks do check (4) and tell readers of omissions; the
//! object's counter and mWS can only make an omitter decline), so a fresh object, or a stale
//! one, is safe either way.
//!
//! **Histories.** The fresh record's initial absent version has tag 0, which the checker would
//! read as the key's initial version; observers report the retired tombstone's tag instead
//! (`txlab_core::protocol::history::RetiredTags`, updated before the unlink). A committed reader cannot find
//! a *later* retirement of the key there: that tombstone would have a timestamp below the horizon,
//! hence below the reader's own, and would sit above the version the reader read, which the
//! reader's `rts` raise and validation exclude.
//!
//! ## Steps
//!
//! 1. **Queue.** A committed delete on a hash or ordered table pushes `(table, key, d, epoch)` onto
//!    its worker's queue (`txlab_core::protocol::retire_queue`). Dense tables never unlink; user-supplied indexes may not.
//! 2. **Wait.** At each transaction begin (guard pinned) the worker handles a few entries
//!    (`txlab_core::protocol::retire_queue`'s budget) whose delete epoch is two epochs old; an entry whose
//!    `d` is not yet below the horizon goes to the back.
//! 3. **Retire.** Look the key up; walk its list past aborted versions. A pending version above
//!    the tombstone: try later. Any other newest version (rewritten, or already retired): drop the
//!    entry. Otherwise tag the head, walk again (clear the tag and try later if something
//!    appeared), read `R`, remember `d` for histories, raise the floor, unlink.
//!
//! Entries still queued when a worker is dropped are forgotten: their tombstones stay (correct,
//! merely unreclaimed).

use crate::head::Head;
use crate::record::{MvtoRecord, deref};
use crate::version::{ABORTED, COMMITTED, Version};
use crossbeam_epoch::{Guard, Shared};
use crossbeam_utils::CachePadded;
use txlab_core::protocol::history::RetiredTags;
use txlab_core::protocol::retire_floor::RetireFloors;
use txlab_core::protocol::retire_queue::Retire;
use txlab_core::protocol::storage::Index;
use txlab_core::protocol::sync::{AtomicU64, Ordering};
use txlab_nwr::PivotCell;
use txlab_occ::RetireEntry;
use txlab_storage::{AnyIndex, Companions};

/// Where a table keeps its absent floor (module docs, step 2 of "How each is kept").
pub(crate) enum AbsentFloor<'a> {
    /// An ordered table: the stripe scan timestamps, indexed by phantom stripe.
    Stripes(&'a [CachePadded<AtomicU64>]),
    /// A hash table: its retire floors.
    Hash(&'a RetireFloors),
}

/// What [`retire_one`] needs of the engine for one table.
pub(crate) struct TableRetire<'a> {
    pub index: &'a AnyIndex<MvtoRecord>,
    pub floor: AbsentFloor<'a>,
    /// The engine's pivot objects (MVTO+NWR; empty otherwise): a retired key's is removed.
    pub pivots: &'a Companions<PivotCell>,
}

/// The newest version of a list that is not aborted, if any.
fn newest_live<'g>(mut cur: Shared<'g, Version>, guard: &'g Guard) -> Option<&'g Version> {
    while let Some(v) = deref(cur) {
        if v.status() != ABORTED {
            return Some(v);
        }
        cur = v.older.load(Ordering::SeqCst, guard);
    }
    None
}

/// Step 3's first walk: the untagged head of `rec` and its tombstone with write timestamp
/// `wts`, if that is the newest version that is not aborted and it is committed; otherwise what
/// to do with the entry.
fn find_tombstone<'g>(
    rec: &'g MvtoRecord,
    wts: u64,
    guard: &'g Guard,
) -> Result<(Head, &'g Version), Retire> {
    let head = rec.head.load(Ordering::SeqCst);
    if head.is_retired() {
        return Err(Retire::Revived);
    }
    match newest_live(head.version(guard), guard) {
        Some(v) if v.wts == wts && v.tombstone && v.status() == COMMITTED => Ok((head, v)),
        Some(v) if v.status() != COMMITTED => Err(Retire::Busy),
        _ => Err(Retire::Revived),
    }
}

/// Step 3's tag: sets `crate::head::RETIRED_TAG` on `head` (as [`find_tombstone`] loaded it) and walks
/// again. If anything but aborted versions now lies above `tomb` (a version linked below aborted
/// ones just before the tag, which may have missed it, `MvtoRecord::link`), clears the tag and
/// answers `Busy`; so does a tag CAS that fails because the head moved since `find_tombstone`.
/// On `Ok` the record refuses new versions from here on.
fn tag_head<'g>(
    rec: &'g MvtoRecord,
    head: Head,
    tomb: &Version,
    guard: &'g Guard,
) -> Result<(), Retire> {
    if rec
        .head
        .compare_exchange(head, head.retired(), Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return Err(Retire::Busy);
    }
    if !newest_live(head.version(guard), guard).is_some_and(|v| std::ptr::eq(v, tomb)) {
        // Readers and omitters may have changed the marks since; only the retirer changes the
        // tag and, while it is set, the address.
        let before = rec.head.clear_retired(Ordering::SeqCst);
        debug_assert!(before.is_retired(), "only the retirer clears the tag");
        return Err(Retire::Busy);
    }
    Ok(())
}

/// Step 3 for one queued entry (module docs) whose tombstone is below the horizon, of a table with
/// parts `t`, under `guard`, which is pinned for the whole call; `history` is set when recording;
/// `raise_floor` is `false` only in a test mutant.
pub(crate) fn retire_one(
    t: &TableRetire<'_>,
    e: RetireEntry,
    guard: &Guard,
    history: Option<&RetiredTags>,
    raise_floor: bool,
) -> Retire {
    let Ok(Some(rec)) = t.index.get(e.key, guard) else {
        return Retire::Revived;
    };
    // `rec` stays valid while `guard` is pinned (`txlab_core::protocol::storage` invariant 1).
    let (head, tomb) = match find_tombstone(rec, e.version, guard) {
        Ok(found) => found,
        Err(why) => return why,
    };
    if let Err(why) = tag_head(rec, head, tomb, guard) {
        return why;
    }
    // Final for every reader that commits (module docs, 3).
    let read_ts = tomb.rts.load(Ordering::SeqCst);
    if let Some(h) = history {
        // Before the unlink: a fresh record can only be found after it.
        h.remember(e.table, e.key, e.version);
    }
    if raise_floor {
        match t.floor {
            AbsentFloor::Stripes(rts) => {
                if let Some(s) = t.index.phantom_stripes() {
                    rts[s.stripe_of(e.key) as usize].fetch_max(read_ts, Ordering::SeqCst);
                }
            }
            AbsentFloor::Hash(f) => f.raise(e.key, None, read_ts),
        }
    }
    // Queue entries name one tombstone and the tag admits one retirer, so this unlink removes
    // `rec`; built-in indexes cannot fail here.
    let unlinked = t.index.unlink(e.key, rec, guard);
    debug_assert!(
        unlinked.is_ok(),
        "unlinking a retired tombstone: {unlinked:?}"
    );
    t.pivots.remove(e.table, e.key, guard);
    Retire::Done
}

/// The two interleavings of a retirer and a linker that `MvtoRecord::link` and [`tag_head`]
/// guard against, each forced step by step on one thread. The list is an aborted version `A`
/// (`wts = 30`) above a committed tombstone `T` (`wts = 10`), so a version with `wts = 20` is
/// linked below the head, into `A.older`.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{LinkAttempt, LinkRefused};
    use crate::version::PENDING;
    use crossbeam_epoch::Owned;
    use txlab_core::protocol::storage::Record;

    fn tombstone_under_aborted(guard: &Guard) -> MvtoRecord {
        let rec = MvtoRecord::absent(8);
        let t = Owned::new(Version::new(10, COMMITTED, true, &[]));
        rec.link(t, guard).expect("tombstone linked");
        let a = Owned::new(Version::new(30, ABORTED, false, b"aborted"));
        rec.link(a, guard).expect("aborted version linked");
        rec
    }

    fn status_of(rec: &MvtoRecord, wts: u64, guard: &Guard) -> Option<usize> {
        let mut cur = rec.head.load(Ordering::SeqCst).version(guard);
        while let Some(v) = deref(cur) {
            if v.wts == wts {
                return Some(v.status());
            }
            cur = v.older.load(Ordering::SeqCst, guard);
        }
        None
    }

    /// The retirer tags the head between a linker's walk and its CAS below the head: the
    /// linker's re-check of the head sees the tag, marks its version aborted and refuses. A
    /// linker that skipped the re-check would leave a pending version in a record about to be
    /// unlinked, and commit into it.
    #[test]
    fn a_link_below_the_head_sees_a_tag_set_after_its_walk() {
        let guard = &crossbeam_epoch::pin();
        let rec = tombstone_under_aborted(guard);
        let slot = rec.link_slot(20, guard).expect("walk");

        let (head, tomb) = find_tombstone(&rec, 10, guard).expect("T is the newest live version");
        assert_eq!(tag_head(&rec, head, tomb, guard), Ok(()));

        let new = Owned::new(Version::new(20, PENDING, false, b"late"));
        match rec.link_at(slot, new, guard) {
            LinkAttempt::Retired => {}
            other => panic!("a link into a tagged record must be refused, got {other:?}"),
        }
        assert_eq!(
            status_of(&rec, 20, guard),
            Some(ABORTED),
            "the version that reached the list must be aborted, so no reader takes it"
        );
        // So the record the retirer goes on to unlink holds nothing live above `T`.
        assert!(
            newest_live(rec.head.load(Ordering::SeqCst).version(guard), guard)
                .is_some_and(|v| v.wts == 10)
        );
    }

    /// The same slot without a retirer: the link succeeds (the test above fails for the tag,
    /// not for the slot).
    #[test]
    fn a_link_below_the_head_without_a_retirer_goes_in() {
        let guard = &crossbeam_epoch::pin();
        let rec = tombstone_under_aborted(guard);
        let slot = rec.link_slot(20, guard).expect("walk");
        let new = Owned::new(Version::new(20, PENDING, false, b"v"));
        assert!(matches!(
            rec.link_at(slot, new, guard),
            LinkAttempt::Linked(_)
        ));
        assert_eq!(status_of(&rec, 20, guard), Some(PENDING));
        assert!(!rec.head.load(Ordering::SeqCst).is_retired());
    }

    /// A version linked below the aborted head after the retirer's first walk and before its
    /// tag: the retirer's walk after tagging finds it, clears the tag and tries later, so the
    /// version's commit lands in a record that stays in the index. A retirer that skipped the
    /// second walk would unlink a record holding a live version.
    #[test]
    fn the_retirer_untags_when_a_version_slipped_in_before_its_tag() {
        let guard = &crossbeam_epoch::pin();
        let rec = tombstone_under_aborted(guard);
        let (head, tomb) = find_tombstone(&rec, 10, guard).expect("T is the newest live version");

        let new = Owned::new(Version::new(20, PENDING, false, b"v"));
        rec.link(new, guard).expect("no tag yet: the link goes in");
        assert_eq!(
            rec.head.load(Ordering::SeqCst),
            head,
            "linked below the head, so the head the retirer loaded is unchanged"
        );

        assert_eq!(tag_head(&rec, head, tomb, guard), Err(Retire::Busy));
        assert!(
            !rec.head.load(Ordering::SeqCst).is_retired(),
            "the retirer must clear its tag"
        );
        assert_eq!(status_of(&rec, 20, guard), Some(PENDING));
        // And the record accepts versions again.
        let next = Owned::new(Version::new(40, PENDING, false, b"w"));
        assert!(rec.link(next, guard).is_ok());
    }

    /// The first walk: a pending version above the tombstone means "later", a committed
    /// non-tombstone means the key was rewritten, a tagged head means another retirer has it.
    #[test]
    fn the_first_walk_tells_busy_from_revived() {
        let guard = &crossbeam_epoch::pin();
        let rec = tombstone_under_aborted(guard);
        let p = rec
            .link(Owned::new(Version::new(50, PENDING, false, b"p")), guard)
            .expect("linked");
        assert_eq!(find_tombstone(&rec, 10, guard).err(), Some(Retire::Busy));
        deref(p)
            .expect("linked")
            .status
            .store(COMMITTED, Ordering::SeqCst);
        assert_eq!(find_tombstone(&rec, 10, guard).err(), Some(Retire::Revived));

        let rec = tombstone_under_aborted(guard);
        let (head, tomb) = find_tombstone(&rec, 10, guard).expect("T");
        assert_eq!(tag_head(&rec, head, tomb, guard), Ok(()));
        assert_eq!(find_tombstone(&rec, 10, guard).err(), Some(Retire::Revived));
        assert_eq!(rec.link_slot(20, guard).err(), Some(LinkRefused::Retired));
    }
}
