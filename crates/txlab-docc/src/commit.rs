//! The commit phase (Algorithm 1 lines 17 to 21; Algorithm 2 lines 16 to 21) and the garbage
//! collection it drives (section 3.4).
//!
//! Only one transaction is in its commit phase at a time (the waiting phase orders them, and the
//! interactive path holds the committer lock), so the `Committer` state needs no
//! synchronization of its own beyond the mutex that hands it from one committer to the next.
//!
//! ```text
//! for each buffered write (one per key):
//!     install version N (a value, or a tombstone for a delete) with the horizon;
//!     if the record is sealed: look the key up again (the fresh record) and install there;
//!     queue a delete on a hash or ordered table for retirement
//! retire a few queued tombstones below the horizon:
//!     if the key's record still holds that tombstone: seal it, then unlink it
//! ```
//!
//! **What stays** (section 3.4.1, sharpened). Every worker publishes the `Seq` of the job it holds
//! (`crate::wait::Waiters::bounds`), so the committer knows the bound of every running transaction;
//! a transaction not running yet comes later in the order than the committer. An install keeps, of
//! the older versions, only the newest one below each running bound (`layout::Keep::Below`): at
//! most one version per worker beyond the newest. A worker publishes the job it is about to claim
//! before claiming it (`crate::schedule`), so a job the committer cannot see is later in the order
//! than the committer and needs nothing older. The paper keeps every version above the oldest
//! running transaction's (`TID_earliest`), which grows without bound while one reader is
//! descheduled. The interactive path reads only the newest versions: it keeps nothing older.
//!
//! **Retiring a tombstone** (section 3.4.2): once every running transaction is above the delete
//! (the horizon, the smallest running bound), every running
//! and future transaction sees the key absent through it, so the record can leave the index. It is
//! sealed first, in the same commit phase, then unlinked; the index destroys it after every
//! guard that could still see it is dropped. A transaction that had found the sealed record fails
//! validation (it cannot know whether a fresh record was written since); a blind write to it is
//! installed into a fresh record instead. When recording histories, the retired tombstone's
//! version is remembered so that a read of the fresh record reports the state after that
//! delete, not the initial version (`txlab_core::protocol::history::RetiredTags`).
//!
//! **Freeing.** Trimmed versions and retired records go to crossbeam-epoch's collector
//! (`Guard::defer_destroy`), into the committing worker's bag of 64; a full bag is sealed into a
//! node of a global queue (one allocation per 64 objects) and waits there until two epoch
//! advances have passed. The collector frees only when a participant pins for the 128th time
//! since it last tried, and then at most 8 bags (512 objects): at most 4 objects per pin. A DOCC
//! worker pins once per transaction and `Chain` trims about 6 versions per TPC-C transaction, so
//! left alone the queue grows for the whole run, every new version lands in memory that was
//! never freed, and the run is slowed by cache and page-fault misses (`docs/results/docc.md`,
//! "Snapshot cost per transaction"). So a worker counts the objects its commits hand over
//! (`Reclaim`) and, after the transaction, between two transactions (not pinned), pins and
//! unpins once more per `OBJECTS_PER_PIN` (4) of them, which raises the collector's rate to
//! what the worker hands over. An extra pin allocates nothing: it never pushes a partly filled
//! bag, unlike `Guard::flush`, which seals the bag into a queue node whatever its fill (one
//! allocation per flush, on top of the one per full bag). A worker that hands nothing over (the
//! basic layout on a workload that deletes nothing) does nothing extra, and its commit path
//! allocates nothing (`tests/no_alloc.rs`); a `Chain` worker allocates one version per written
//! key plus one queue node per 64 objects handed over.
//!
//! Extra pins change when memory is reused, never what anyone reads: versions a running
//! transaction may still read are never trimmed in the first place (above), and a trimmed one is
//! freed only after every guard pinned before it was unlinked has been dropped, which the
//! collector checks whoever triggers the collection.

use crate::exec::{ExecState, WriteKind};
use crate::layout::{Keep, Layout};
use crate::seq::Seq;
use crossbeam_epoch::Guard;
use txlab_core::Error;
use txlab_core::TableId;
use txlab_core::protocol::history::{RetiredTags, WriteEvent, WriteKind as HWriteKind};
use txlab_core::protocol::retire_queue::{Retire, RetireQueue};
use txlab_core::protocol::storage::Index;
use txlab_storage::Tables;

/// A committed delete waiting to be retired.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tombstone {
    pub table: TableId,
    pub key: u64,
    pub seq: u64,
}

/// Garbage-collection counters, reported by the engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcCounters {
    /// Versions allocated by installs (`Chain`: one per written key).
    pub versions_allocated: u64,
    /// Versions unlinked from chains (section 3.4.1).
    pub versions_trimmed: u64,
    /// Tombstone records sealed and unlinked from their index (section 3.4.2).
    pub tombstones_retired: u64,
}

impl GcCounters {
    /// Versions still linked from some record beyond the loaded ones (allocated minus trimmed).
    pub fn versions_live(&self) -> u64 {
        self.versions_allocated - self.versions_trimmed
    }

    /// Objects handed to the epoch collector so far: trimmed versions and retired records
    /// (module docs, "Freeing").
    pub(crate) fn deferred(&self) -> u64 {
        self.versions_trimmed + self.tombstones_retired
    }
}

/// Objects handed to the collector per extra pin (module docs, "Freeing"): a collection frees
/// at most 8 bags of 64 objects, and one runs every 128 pins.
pub(crate) const OBJECTS_PER_PIN: u64 = 4;

/// A worker's account of the objects its commits handed to the epoch collector, paid back in
/// extra pins between transactions (module docs, "Freeing").
#[derive(Debug, Default)]
pub(crate) struct Reclaim {
    owed: u64,
}

impl Reclaim {
    /// Counts the objects handed over by one commit: call with the committer's
    /// `GcCounters::deferred` before and after it.
    #[inline]
    pub fn handed(&mut self, before: u64, after: u64) {
        self.owed += after - before;
    }

    /// Pins and unpins `handle` once per `OBJECTS_PER_PIN` objects owed. `handle` must not be
    /// pinned (only an outermost pin counts towards a collection).
    #[inline]
    pub fn pay(&mut self, handle: &crossbeam_epoch::LocalHandle) {
        while self.owed >= OBJECTS_PER_PIN {
            self.owed -= OBJECTS_PER_PIN;
            drop(handle.pin());
        }
    }
}

/// State only the committer touches (module docs).
#[derive(Debug, Default)]
pub(crate) struct Committer {
    pub retire: RetireQueue<Tombstone>,
    pub gc: GcCounters,
    /// The last `Seq` an interactive commit took (`None` after a deterministic run began: the
    /// next one opens a new epoch above that run's).
    pub interactive: Option<Seq>,
}

// SAFETY-relevant note: `Tombstone` holds keys, not record pointers, so nothing in the queue
// outlives the guard it was obtained under; `Committer` is `Send`.

impl Committer {
    /// The `Seq` of the next interactive commit: the next index of the current interactive
    /// epoch, or index 0 of a fresh epoch from `take_epoch`.
    pub fn next_interactive(
        &mut self,
        take_epoch: impl FnOnce() -> Result<u32, Error>,
    ) -> Result<Seq, Error> {
        let next = match self.interactive {
            Some(s) if s.index() + 1 < Seq::MAX_BATCH => Seq::from_raw(s.raw() + 1),
            _ => Seq::new(take_epoch()?, 0, 0)?,
        };
        self.interactive = Some(next);
        Ok(next)
    }

    /// Installs every buffered write of `st` with version `seq`, keeping what `keep` keeps
    /// (module docs); appends the history's write events to `h_writes` when `record` is set.
    #[allow(clippy::too_many_arguments)]
    pub fn install<L: Layout>(
        &mut self,
        st: &ExecState<L::Record>,
        tables: &Tables<L::Record>,
        seq: u64,
        keep: Keep<'_>,
        guard: &Guard,
        record: bool,
        h_writes: &mut Vec<WriteEvent>,
    ) -> Result<(), Error> {
        for w in &st.writes {
            let value = match w.kind {
                WriteKind::Delete => None,
                WriteKind::Put | WriteKind::Insert => {
                    Some(&st.wbuf[w.off as usize..(w.off + w.len) as usize])
                }
            };
            // SAFETY: obtained under `guard`, pinned for the whole transaction.
            let mut done = L::install(unsafe { &*w.rec }, seq, value, keep, guard);
            if done.sealed {
                // Retired since we found it (a blind write; a read of it would have failed
                // validation): the key's record now is a fresh one.
                let entry = tables.get(w.table)?.get_or_insert(w.key, guard)?;
                done = L::install(entry.record, seq, value, keep, guard);
                if done.sealed {
                    return Err(Error::Internal(format!(
                        "table {} key {}: the index still maps a sealed record after its unlink",
                        w.table.0, w.key
                    )));
                }
            }
            self.gc.versions_allocated += u64::from(done.allocated);
            self.gc.versions_trimmed += u64::from(done.trimmed);
            if w.kind == WriteKind::Delete && tables.get(w.table)?.unlinks_deleted_records() {
                self.retire.push(Tombstone {
                    table: w.table,
                    key: w.key,
                    seq,
                });
            }
            if record {
                h_writes.push(WriteEvent {
                    table: w.table,
                    key: w.key,
                    version: seq,
                    order: seq,
                    kind: if w.kind == WriteKind::Delete {
                        HWriteKind::Delete
                    } else {
                        HWriteKind::Put
                    },
                    visible: true,
                });
            }
        }
        Ok(())
    }

    /// Retires every queued tombstone (when nothing is running: the end of a run).
    pub fn retire_all<L: Layout>(
        &mut self,
        tables: &Tables<L::Record>,
        guard: &Guard,
        tags: Option<&RetiredTags>,
    ) {
        while !self.retire.is_empty() {
            self.retire::<L>(tables, u64::MAX, guard, tags);
        }
    }

    /// Retires a few queued tombstones below `horizon`, the smallest running bound (module
    /// docs; 0 retires nothing).
    pub fn retire<L: Layout>(
        &mut self,
        tables: &Tables<L::Record>,
        horizon: u64,
        guard: &Guard,
        tags: Option<&RetiredTags>,
    ) {
        let gc = &mut self.gc;
        // `process` hands over entries with `seq + 1 <= horizon`.
        self.retire.process(
            horizon,
            1,
            |t| t.seq,
            |t| {
                let Ok(index) = tables.get(t.table) else {
                    return Retire::Revived;
                };
                let Ok(Some(rec)) = index.get(t.key, guard) else {
                    return Retire::Revived;
                };
                if !L::seal_tombstone(rec, t.seq, guard) {
                    return Retire::Revived;
                }
                if let Some(tags) = tags {
                    tags.remember(t.table, t.key, t.seq);
                }
                match index.unlink(t.key, rec, guard) {
                    Ok(_) => {
                        gc.tombstones_retired += 1;
                        Retire::Done
                    }
                    Err(_) => Retire::Revived,
                }
            },
        );
    }
}
