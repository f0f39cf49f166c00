//! What a protocol supplies to the toolkit: its record type, how a read observes a record, how a
//! scan is protected against phantoms, how a deleted record is retired, and its commit protocol.
//! Everything else (the sets, the operations of `TxOps`, begin and end, the engine shell, the
//! worker) is [`crate`]'s, written once.

use crate::config::{OccConfig, Settings};
use crate::shell::Shell;
use crate::txn::Txn;
use crate::worker::Worker;
use std::fmt::Debug;
use txlab_core::protocol::history::{Recorder, RetiredTags};
use txlab_core::protocol::retire_queue::{GRACE_EPOCHS, Retire};
use txlab_core::protocol::storage::{Guard, Record, StripeBump};
use txlab_core::{CommitInfo, Error, TableId, TxResult};
use txlab_storage::AnyIndex;

/// What a read saw of a record ([`Protocol::observe`]).
#[derive(Debug, Clone, Copy)]
pub struct Observation<S> {
    /// What the read set remembers ([`Protocol::Seen`]).
    pub seen: S,
    /// Whether the version is present (not a tombstone, not the never-written absent state).
    pub present: bool,
    /// The version's tag in histories (0: the initial version; the toolkit substitutes the tag of
    /// the key's last retired tombstone for an absent tag 0, `txlab_core::protocol::history::RetiredTags`).
    /// Only used when recording.
    pub tag: u64,
}

/// An interactive optimistic protocol built on the toolkit (module docs). Implemented by the
/// engine type itself (`Silo`, `TicToc`, `Mvto`), which holds a [`Shell`].
pub trait Protocol: Sized + Send + Sync {
    /// The per-key record.
    type Record: Record + Debug;
    /// The history recorder (`NoRecorder` compiles recording out).
    type Recorder: Recorder;
    /// What a read remembers of the version it saw.
    type Seen: Copy + Debug;
    /// What commit notes per write (the word a lock replaced, the version a write linked).
    type Scratch: Copy + Default + Debug;
    /// Protocol state a worker keeps across transactions (Silo's last TID, MVTO's clock, NWR's
    /// counters).
    type WorkerState: Debug;
    /// The test-only mutations (`crate::NoMutation` without the protocol's `mutation` feature).
    type Mutation: Copy + PartialEq + Debug + Send + Sync + 'static;
    /// The protocol's own settings (`crate::NoSettings` for none).
    type Settings: Settings;

    /// Largest number of workers one engine hands out (history ids keep 24 bits of worker id).
    const MAX_WORKERS: u32 = 1 << 23;

    /// The shared parts of the engine.
    fn shell(&self) -> &Shell<Self>;

    /// The engine's name (`Engine::name`).
    fn name(&self) -> &'static str;

    /// A new worker's protocol state.
    fn worker_state(&self, id: u32) -> Self::WorkerState;

    /// Writes `value` into `rec` as its initial, committed version (`Engine::load`).
    fn load_record(rec: &Self::Record, value: &[u8], guard: &Guard) -> Result<(), Error>;

    /// The start of a transaction, before its guard is pinned: enters the current epoch (the
    /// default); MVTO also takes its timestamp.
    #[inline]
    fn begin(w: &mut Worker<'_, Self>) {
        w.epoch.enter();
    }

    /// Reads `rec` (of `(table, key)`, values of `vs` bytes) for the read set: a protocol that
    /// copies values out of records copies it into `w.sets.rbuf[..vs]` (long enough already). The
    /// toolkit adds the read entry and the history event. A conflict (`TxError::Conflict`)
    /// is recorded as the reason the transaction failed.
    fn observe(
        w: &mut Worker<'_, Self>,
        guard: &Guard,
        rec: &Self::Record,
        item: (TableId, u64),
        vs: usize,
    ) -> TxResult<Observation<Self::Seen>>;

    /// The value of a present version a read saw: in `rbuf` for a copying protocol, in the
    /// version itself otherwise. Valid while the transaction's guard is pinned.
    fn value<'a>(rbuf: &'a [u8], seen: &Self::Seen, vs: usize) -> &'a [u8];

    /// This transaction's lookup in `table` bumped a phantom stripe (`bump`): it linked a new
    /// absent record, or found one whose creator had not bumped yet (storage invariant 4). Returns
    /// whether `TxOps::write` must then read the record.
    ///
    /// The default (Silo, MVTO) moves a scan of ours past our own bump ([`crate::Sets::own_bump`]):
    /// otherwise our own link would fail our own scan's validation. A scan of ours then saw the
    /// key missing, and another transaction's later write of this record bumps no stripe, so Silo
    /// reads the record to validate it ([`Protocol::READ_AFTER_SCAN_MISS`]).
    #[inline]
    fn linked(w: &mut Worker<'_, Self>, table: TableId, bump: StripeBump) -> bool {
        w.sets.own_bump(table, bump) && Self::READ_AFTER_SCAN_MISS
    }

    /// Whether a blind write of a key this transaction's own scan found missing also reads the
    /// record it created ([`Protocol::linked`]).
    const READ_AFTER_SCAN_MISS: bool = false;

    /// `TxOps::write` buffered a blind write of `rec`, which the commit protocol will touch. A
    /// protocol may ask the CPU to bring the record's memory in now, so the miss overlaps the rest
    /// of the transaction (a hint that changes no memory; MVTO does). The default does nothing.
    #[inline]
    fn buffered_blind_write(_rec: *const Self::Record) {}

    /// Phantom protection of a scan of `lo..=hi`, run before the traversal. The default records
    /// the versions of the index's phantom stripes covering the range (Silo's node set, with
    /// stripes for tree nodes); commit validates them.
    #[inline]
    fn protect_scan(
        w: &mut Worker<'_, Self>,
        index: &AnyIndex<Self::Record>,
        table: TableId,
        lo: u64,
        hi: u64,
    ) {
        crate::sets::record_stripes(&mut w.sets.stripes, index, table, lo, hi);
    }

    /// The commit protocol.
    fn commit(tx: &mut Txn<'_, '_, Self>) -> TxResult<CommitInfo>;

    /// The end of every transaction (committed or aborted), after its sets were cleared and
    /// before it leaves its epoch.
    #[inline]
    fn end(_w: &mut Worker<'_, Self>) {}

    /// Reports the protocol's counters (`Worker::drain_counters`; retirements are reported by
    /// the toolkit).
    fn drain_counters(_w: &mut Worker<'_, Self>, _sink: &mut dyn FnMut(&'static str, u64)) {}

    /// Runs when a worker is dropped.
    fn drop_worker(_w: &mut Worker<'_, Self>) {}

    /// How many epochs a deleted record waits before it is unlinked.
    #[inline]
    fn retire_grace(&self) -> u64 {
        GRACE_EPOCHS
    }

    /// Unlinks one queued tombstone if it still is one (`txlab_core::protocol::retire_queue`), under
    /// `guard`; `history` is set when recording.
    fn retire(&self, e: RetireEntry, guard: &Guard, history: Option<&RetiredTags>) -> Retire;
}

/// A committed delete waiting to be unlinked (`txlab_core::protocol::retire_queue`): the tombstone's key,
/// the version that identifies it (Silo: its TID word; TicToc, MVTO: its timestamp) and the
/// delete's epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetireEntry {
    /// The table.
    pub table: TableId,
    /// The key.
    pub key: u64,
    /// What identifies the tombstone among the key's versions.
    pub version: u64,
    /// The epoch the delete committed in.
    pub epoch: u64,
}

/// The configuration type of protocol `P`.
pub type ConfigOf<P> = OccConfig<<P as Protocol>::Mutation, <P as Protocol>::Settings>;

/// Whether `index` unlinks deleted records (a hash or ordered table): only those queue deletes.
#[inline]
pub fn unlinks<R: Record>(index: Result<&AnyIndex<R>, Error>) -> bool {
    index.is_ok_and(|i| i.unlinks_deleted_records())
}
