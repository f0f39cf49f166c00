//! Unlinking deleted records ("retiring" tombstones) under TicToc's logical time.
//!
//! A committed delete leaves its record in the index as an absent *tombstone*, because
//! transactions that located the record earlier still hold pointers to it and validate against
//! its word. Left there, tombstones pile up: TPC-C's Delivery scans NEW-ORDER from its oldest row
//! and would walk every row ever delivered, so the TPC-C rate would fall with run length
//! (`docs/results/tpcc.md#throughput-against-run-length`). Silo
//! unlinks them (`txlab_silo::retire`); this module does the same for TicToc, whose serial order
//! is its computed commit timestamps, not physical time, which changes what unlinking must
//! preserve.
//!
//! ## What unlinking must preserve
//!
//! A tombstone of key `k` installed at timestamp `d` and extended by its readers to `rts = R` says
//! "`k` is absent over `[d, R]`, and the next version of `k` has a timestamp above `R`". Once the
//! record is unlinked, a transaction that looks `k` up links a *fresh* record, never written
//! (absent, history tag 0, `wts = rts = 0`), and a scan of `k`'s range does not visit anything.
//! Neither carries `d` or `R`. Without more, a transaction could
//! - read the fresh record's absence at a timestamp below `d`, where `k` was still present; or
//! - write `k`'s next version at a timestamp at or below `R`, below reads of the tombstone; or
//! - scan past `k` at a timestamp below `d` without seeing it.
//!
//! ## The retire floor
//!
//! Each table with an unlinking index keeps *floors*: timestamps raised by retirements, never
//! lowered. Ordered tables have one per phantom stripe (so a scan finds the floor of every key it
//! covers), hash tables `txlab_core::protocol::retire_floor::HASH_FLOOR_SLOTS` slots by key hash
//! (`txlab_core::protocol::retire_floor`). Writing `F(k)` for `k`'s slot:
//!
//! ```text
//! retirer    lock the tombstone (CAS from the unlocked word: R = rts, frozen while locked)
//!            F(k) = max(F(k), R)                          (SeqCst fetch_max)
//!            ordered table: announce on k's stripe        (SeqCst fetch_add of its version)
//!            unlink k's record from the index; publish RETIRED (Release store, final)
//! reader     of a never-written absent record (tag 0, read inside the seqlock window with the
//!            word, recorder or not):  commit_ts >= F(k), loaded after the read
//! writer     of a never-written record (its first write): commit_ts >= F(k) + 1, loaded after
//!            locking
//! scanner    per stripe s, before the traversal:  v0 = version(s); commit_ts >= F(s)  (SeqCst)
//!            at validation (as before): abort unless version(s) == v0
//! ```
//!
//! **Why it suffices.** Take a retired tombstone of `k` with `[d, R]` and a transaction `T` that
//! uses `k`'s fresh record `f`. `T` found `f` in the index, so `f` was linked after the unlink, and
//! the unlink happens-before `T`'s lookup (the index publishes links with release stores and
//! finds them with acquire loads; a lookup that missed the old record synchronised with its
//! removal). `T` loads `F(k)` after that lookup, so it sees at least `R` (the raise is sequenced
//! before the unlink). So a reader of `f`'s absence commits at `>= R >= d`, where `k` is indeed
//! absent, and the first version written to `f` commits above `R`, after every reader of the
//! tombstone. Later versions of `f` are above that (TicToc's rule within one record).
//! A scanner `S` that does not visit the old record either traversed after the unlink, which the
//! stripe announce precedes, so `S`'s validation load of the version sees the announce and `S`
//! aborts unless its first load `v0` saw it too, in which case its floor load (after `v0`, all
//! `SeqCst`) sees the raise and `S` commits at `>= R`; or it traversed before the old record was
//! linked at all, in which case the tombstone's first write (the key's insert) ordered it
//! (`crate::stripe_clock`). A scanner that did visit the tombstone validates it like any read:
//! valid if the tombstone's `rts` already covered its timestamp, otherwise it finds the word
//! locked or [`RETIRED`] and aborts. The timestamp arguments above do not use the two epochs of
//! waiting (below); other parts do: TicToc+NWR needs every transaction that can meet `f` to be of
//! an epoch above the delete's (so an omitter, which sits at the start of its epoch or just
//! before its pivot, is after `d`), and recorded histories need a reader's lookup of
//! [`RetiredTags`] not to find a later retirement (`txlab_core::protocol::history::RetiredTags`). The wait
//! also keeps recently deleted tombstones, which racing transactions most likely hold, in place.
//!
//! Raising a floor only ever raises commit timestamps: a false abort at worst (an `rts`
//! extension that now fails), never a wrong commit. Floors are shared by keys of one slot, which
//! only raises more timestamps than needed.
//!
//! **TicToc+NWR.** An omitter never writes before the first version of a fresh record within that
//! version's epoch: installing the first version of a never-written record marks it as read
//! (`crate::commit`: the read-epoch word for `tictoc-nwr`, `TAG_PIVOT_READ` for
//! `tictoc-nwr-single`), so that version is no pivot an omission can use. From the next epoch on,
//! the pivot's predecessor is `f`'s version, above `R`. An omitter that reads `f`'s absence sits
//! in an epoch above the delete's, so after `d`.
//!
//! ## Steps
//!
//! 1. **Queue.** A committing delete on a hash or ordered table pushes `(table, key, tag, epoch)`
//!    onto its worker's queue (`txlab_core::protocol::retire_queue`): `tag` is the tombstone's install timestamp (unique among
//!    the record's versions and above every earlier incarnation's, by the floor), `epoch` the
//!    delete's epoch. Dense tables never unlink; user-supplied indexes may not, so neither queues.
//! 2. **Wait two epochs.** At each transaction begin (guard pinned) the worker handles a few
//!    entries (`txlab_core::protocol::retire_queue`'s budget) whose `epoch + 2 <= E`.
//! 3. **Retire.** Look the key up under the guard; read the record's word and tag consistently. If
//!    the version is no longer the tombstone (another tag, present, or the record is retired), the
//!    key lived on: drop the entry. If it is locked by a committer, requeue it. Otherwise CAS the
//!    unlocked word to itself plus `LOCK` (so `R` is frozen), remember the tag for histories
//!    ([`RetiredTags`]), raise the floor, announce on ordered tables, unlink, and store
//!    [`RETIRED`].
//!
//! ## A retired record is never used again
//!
//! [`RETIRED`] is locked and final. A read that meets it aborts with
//! `ConflictCause::RecordRetired`; a committer that meets it while locking its write set unlocks
//! what it holds and aborts the same way; read validation fails on it (its `wts` is no version's).
//! A retry looks the key up again and finds, or links, the fresh record. Entries still queued
//! when a worker is dropped are forgotten: their tombstones stay (correct, merely unreclaimed).

use crate::record::TicTocRecord;
use crate::stripe_clock::StripeClocks;
use crate::word::{LOCK, RETIRED, is_absent, is_locked, is_retired, rts};
use crossbeam_epoch::Guard;
use txlab_core::protocol::history::RetiredTags;
use txlab_core::protocol::retire_floor::RetireFloors;
use txlab_core::protocol::retire_queue::Retire;
use txlab_core::protocol::storage::{Index, PhantomStripes};
use txlab_core::protocol::sync::Ordering;
use txlab_nwr::PivotCell;
use txlab_occ::{LockWord, RetireEntry};
use txlab_storage::{AnyIndex, Companions};

/// What [`retire_one`] needs of the engine for one table.
pub(crate) struct TableRetire<'a> {
    pub index: &'a AnyIndex<TicTocRecord>,
    /// TicToc+NWR's pivot objects (empty for the other variants).
    pub pivots: &'a Companions<PivotCell>,
    pub floors: &'a RetireFloors,
    pub stripes: Option<(&'a PhantomStripes, &'a StripeClocks)>,
}

/// Step 3 for one queued entry (module docs) of a table with parts `t`, under `guard`, which is
/// pinned for the whole call; `history` is set when recording; `raise_floor` is `false` only in a
/// test mutant.
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
    let Some((word, tag)) = rec.stable_tag() else {
        return if rec.is_retired() {
            Retire::Revived
        } else {
            Retire::Busy
        };
    };
    if tag != e.version || !is_absent(word) {
        return Retire::Revived;
    }
    debug_assert!(!is_locked(word));
    // The word names one version (its wts only grows, and a changed rts changes the word): the
    // CAS succeeds only if the tombstone is still current and no extension slipped in. From here
    // on its rts is frozen (extensions need an unlocked word).
    if rec
        .word
        .compare_exchange(word, word | LOCK, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return Retire::Busy;
    }
    if let Some(h) = history {
        // Before the unlink: a fresh record can only be found after it.
        h.remember(e.table, e.key, tag);
    }
    let stripes = t.stripes.map(|(s, _)| s);
    if raise_floor {
        t.floors.raise(e.key, stripes, rts(word));
    }
    if let Some((s, clocks)) = t.stripes {
        clocks.announce_first_write(s.stripe_of(e.key));
    }
    // We hold the lock on a mapped record no other retirer can claim (queue entries name one
    // tombstone), so this unlink removes it; built-in indexes cannot fail here.
    let unlinked = t.index.unlink(e.key, rec, guard);
    debug_assert!(
        unlinked.is_ok(),
        "unlinking a retired tombstone: {unlinked:?}"
    );
    rec.word.store(RETIRED, Ordering::Release);
    debug_assert!(is_retired(rec.word.load(Ordering::Relaxed)));
    // TicToc+NWR: the key's pivot object goes too (a fresh one is published for the next
    // record). It carries nothing the rule relies on across records: an omitter uses it only
    // after it saw a version of its own epoch on the record it writes
    // (`docs/protocols/nwr.md`, "Layouts").
    t.pivots.remove(e.table, e.key, guard);
    Retire::Done
}
