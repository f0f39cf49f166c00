//! Epoch-based unlinking of deleted records ("retiring" tombstones).
//!
//! A committed delete leaves its record in the index as an absent *tombstone* (word
//! `tid | ABSENT`, plus `PIVOT_READ` under `silo-nwr-single`, see [`crate::tid`]), because readers and writers that located the record
//! earlier still hold pointers to it and validate against its word. Left there forever, tombstones
//! pile up: TPC-C's Delivery scans for the oldest NEW-ORDER row and would walk (and add to its read
//! set) every NEW-ORDER row ever delivered. This module removes them.
//!
//! ## Protocol
//!
//! 1. **Queue.** A committing transaction that installs a delete on a hash or ordered table pushes
//!    `(table, key, tombstone word)` onto its worker's [`RetireQueue`]
//!    (`txlab_core::protocol::retire_queue`). The tombstone's epoch `e_d` is `epoch_of(word)`. Dense tables
//!    keep their records for the index's lifetime (their unlink is a no-op) and user-supplied
//!    (`AnyIndex::Custom`) indexes may not unlink at all, so neither is queued.
//! 2. **Wait two epochs.** At the start of each transaction (after pinning its guard) the worker
//!    looks at the front of its queue and handles a few entries (`txlab_core::protocol::retire_queue`'s
//!    budget, more when the queue is long) whose `e_d + 2 <= E` (`E` the global epoch).
//! 3. **Retire.** Under the pinned guard the worker looks the key up again
//!    (`Index::get`). If the key maps to a record whose word is exactly the tombstone word, it
//!    CASes that word to `word | RETIRED | LOCK`; if the word is `word | LOCK` (a committer holds
//!    it and may still abort) the entry goes to the back of the queue; any other word means the
//!    key was re-inserted into this record (or it is a newer incarnation), and the entry is
//!    dropped. After a successful CAS it records the tombstone's tag for histories (below), calls
//!    `Index::unlink` (which removes the mapping only if it still points at this record, bumps the
//!    phantom stripe on ordered indexes, and defers the record's destruction through
//!    crossbeam-epoch), and finally publishes `word | RETIRED` unlocked with a `Release` store.
//!
//! ## Invariants and why they hold
//!
//! - **No stale pointers in the queue.** The queue stores no record pointer: a record can be
//!   deleted, re-inserted and deleted again by different workers, so several queues may name the
//!   same record, and only one of them (the one holding its final tombstone word) unlinks it; a
//!   pointer kept by the others across transactions could dangle once that one frees it. Looking
//!   the key up under the pinned guard yields a record that cannot be freed while the guard is
//!   pinned (`txlab_core::protocol::storage` invariant 1), whatever happened since the delete.
//! - **The word identifies one version of one incarnation.** TIDs of one record strictly increase
//!   (Silo's TID rule) and, across incarnations of a key, the next incarnation's TIDs exceed the
//!   retired tombstone's (next point), so a given tombstone word occurs at most once per key: the
//!   CAS succeeds only on the record and version the entry was queued for.
//! - **TIDs stay monotone per key across incarnations (the `e_d + 2` rule).** The retirer read
//!   `E >= e_d + 2` before unlinking; a fresh incarnation is created by `get_or_insert` after the
//!   unlink, and any transaction that commits a write to it reads the global epoch after locking it,
//!   which happens after the unlink, so (read-read coherence through the index's synchronisation)
//!   its commit epoch is `>= e_d + 2 > e_d` and its TID exceeds every TID of epoch `e_d`, the
//!   tombstone's included. (`e_d + 1` would already suffice for this argument; the second epoch is
//!   a margin that keeps tombstones of the current and previous epoch, the ones racing
//!   transactions are most likely to hold, in place.)
//! - **A retired record is never used again.** `RETIRED` is set only while holding the lock from
//!   an unlocked tombstone word, and once set the word never changes: committers abort when the
//!   word they lock has `RETIRED` (`ConflictCause::RecordRetired`), reads refuse it with the same
//!   cause, and read-set validation fails because the word differs from the one read. A retry
//!   looks the key up again and finds (or creates) the fresh incarnation. Readers that meet the
//!   record while it is being unlinked see it locked and wait, so nobody observes `RETIRED` on a
//!   record that is still mapped.
//! - **Phantoms.** `unlink` bumps the key's phantom stripe after removing it, so a scanner that
//!   read the stripe earlier fails validation; the record vanishing from a range is a structural
//!   change like an insert.
//! - **Lost entries only leak.** Entries still queued when a worker is dropped are forgotten: their
//!   tombstones stay in the index (correct, merely unreclaimed).
//!
//! ## Histories (only when recording)
//!
//! A fresh incarnation starts with word `ABSENT` (tag 0), which the checker would read as the key's
//! *initial* version. [`RetiredTags`] (in `txlab_core::protocol::history`) maps `(table, key)` to the tag of the key's last retired
//! tombstone; it is updated before the unlink, and a read that observes an absent tag-0 word on a
//! key in the map reports the mapped tag instead: the fresh record's absent state *is* the state
//! after that delete. Races: a reader that read tag 0 and looks the map up late may find the tag of
//! a *later* retirement; that can only happen if the record it read changed (was written, deleted
//! and retired) in between, so its read fails validation and the transaction aborts.

use crate::record::SiloRecord;
use crate::tid::{LOCK, RETIRED, tag};
use crossbeam_epoch::Guard;
use txlab_core::protocol::history::RetiredTags;
use txlab_core::protocol::retire_queue::Retire;
use txlab_core::protocol::storage::Index;
use txlab_core::protocol::sync::Ordering;
use txlab_nwr::PivotCell;
use txlab_occ::RetireEntry;
use txlab_storage::{Companions, Tables};

/// Step 3 for one queued entry (module docs), under `guard`, which is pinned for the whole call;
/// `history` is set when recording.
pub(crate) fn retire_one(
    tables: &Tables<SiloRecord>,
    pivots: &Companions<PivotCell>,
    e: RetireEntry,
    guard: &Guard,
    history: Option<&RetiredTags>,
) -> Retire {
    let Ok(index) = tables.get(e.table) else {
        return Retire::Revived;
    };
    let Ok(Some(rec)) = index.get(e.key, guard) else {
        return Retire::Revived;
    };
    // `rec` stays valid while `guard` is pinned (storage invariant 1). The CAS succeeds only on
    // the unlocked tombstone this entry was queued for (the word is unique per key, module docs).
    // SeqCst: a reader of the tombstone validates against this word with a SeqCst load and no
    // fence, so every change of a TID word that can fail a validation is in the SeqCst order
    // (crate::commit, "Why the orderings suffice").
    match rec.tid.compare_exchange(
        e.version,
        e.version | RETIRED | LOCK,
        Ordering::SeqCst,
        Ordering::Relaxed,
    ) {
        Ok(_) => {}
        Err(cur) if cur == e.version | LOCK => return Retire::Busy,
        Err(_) => return Retire::Revived,
    }
    if let Some(h) = history {
        // Before the unlink: a fresh incarnation can only be found after it.
        h.remember(e.table, e.key, tag(e.version));
    }
    // We hold the lock on a mapped record no other retirer can claim, so this unlink removes it;
    // built-in indexes cannot fail here (the guard comes from the default collector).
    let unlinked = index.unlink(e.key, rec, guard);
    debug_assert!(
        unlinked.is_ok(),
        "unlinking a retired tombstone: {unlinked:?}"
    );
    rec.tid.store(e.version | RETIRED, Ordering::Release);
    // Silo+NWR: the key's pivot object goes too (a fresh one is published for the next record).
    // It carries nothing the rule relies on across records: an omitter uses it only after it saw
    // a version of its own epoch on the record it writes (`docs/protocols/nwr.md`, "Layouts").
    pivots.remove(e.table, e.key, guard);
    Retire::Done
}
