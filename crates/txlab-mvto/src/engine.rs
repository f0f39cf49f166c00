//! The MVTO engine (shared by all threads) and its per-thread worker.

use crate::config::MvtoConfig;
use crate::record::MvtoRecord;
use crate::retire::{AbsentFloor, RetireQueue, TableRetire};
use crate::timestamp::{Clocks, LocalClock, MAX_WORKERS};
use crate::txn::MvtoTxn;
use crate::worker_state::WorkerState;
use crossbeam_utils::CachePadded;
use std::marker::PhantomData;
use txlab_core::epoch::{EpochHandle, EpochManager};
use txlab_core::history::{NoRecorder, Recorder, RetiredTags};
use txlab_core::retire_floor::RetireFloors;
use txlab_core::storage::{Index, PhantomStripes};
use txlab_core::sync::{Arc, AtomicU32, AtomicU64, Ordering};
use txlab_core::{AckMode, Engine, Error, Schema, TableId, Worker};
use txlab_nwr::{NoNwr, Nwr, NwrSingleWrite, NwrStats, PivotCell, WriteOmission};
use txlab_storage::{Companions, Tables};

/// The error for a version whose address does not fit a record's head word (`crate::head`).
pub(crate) const UNADDRESSABLE: &str =
    "mvto: a version was allocated above the 48-bit address space the record head word can hold";

pub(crate) fn unaddressable() -> Error {
    Error::Internal(UNADDRESSABLE.to_string())
}

/// Per-stripe read timestamps of one ordered table: the largest timestamp that scanned a range
/// covering the stripe. An insert into a key whose previous committed state is absent must not
/// slip under a scan by a later transaction (see `crate::commit`).
pub(crate) type StripeTimestamps = Box<[CachePadded<AtomicU64>]>;

/// MVTO extended with the non-visible write rule (`txlab_nwr`, `crate::nwr`; engine name
/// `mvto-nwr`).
pub type MvtoNwr<Rec = NoRecorder> = Mvto<Rec, Nwr>;

/// MVTO with the non-visible write rule for *single-write omitters* (`txlab_nwr::NwrSingleWrite`,
/// engine name `mvto-nwr-single`): a transaction whose one write is blind is placed, by
/// timestamp, just below a committed version of the item from its epoch whose writer did not
/// read the item, and validates its reads there (`crate::nwr`, "Single-write omitters"). No
/// reader marks anything and records keep plain MVTO's layout.
pub type MvtoNwrSingle<Rec = NoRecorder> = Mvto<Rec, NwrSingleWrite>;

/// An MVTO database: tables of [`MvtoRecord`]s, the clocks, the epoch manager, the
/// configuration.
///
/// `Rec` is the history recorder (the default [`NoRecorder`] compiles recording out); `W` is the
/// write-omission switch: [`NoNwr`] (the default) is plain MVTO, with the record layout and commit
/// path unchanged; [`Nwr`] is MVTO+NWR ([`MvtoNwr`], see `crate::nwr`); [`NwrSingleWrite`] is
/// MVTO+NWR with single-write omitters ([`MvtoNwrSingle`]).
#[derive(Debug)]
pub struct Mvto<Rec: Recorder = NoRecorder, W: WriteOmission = NoNwr> {
    schema: Schema,
    pub(crate) tables: Tables<MvtoRecord>,
    /// MVTO+NWR's pivot objects, one per key beside the records; only omitters touch them
    /// (`crate::nwr`). Empty for every other variant.
    pub(crate) pivots: Companions<PivotCell>,
    value_sizes: Box<[usize]>,
    pub(crate) stripe_rts: Box<[Option<StripeTimestamps>]>,
    /// Per hash table: the retire floors, its absent floor (`crate::retire`; ordered tables use
    /// `stripe_rts`, dense and custom tables never unlink).
    retire_floors: Box<[Option<RetireFloors>]>,
    /// Tags of retired tombstones, for histories (used only when recording; `crate::retire`).
    pub(crate) retired_tags: RetiredTags,
    pub(crate) epochs: EpochManager,
    pub(crate) clocks: Clocks,
    pub(crate) config: MvtoConfig,
    pub(crate) recorder: Arc<Rec>,
    next_worker: AtomicU32,
    /// Source of the recorded order of omitted writes (only used when recording; `crate::nwr`).
    pub(crate) omit_stamp: AtomicU64,
    _omission: PhantomData<W>,
}

impl Mvto<NoRecorder, NoNwr> {
    /// A database with one built-in index per table of `schema`.
    pub fn new(schema: &Schema, config: MvtoConfig) -> Result<Self, Error> {
        Self::with_recorder(schema, config, Arc::new(NoRecorder))
    }
}

impl<Rec: Recorder> Mvto<Rec, NoNwr> {
    /// A database whose transactions are recorded by `recorder`.
    pub fn with_recorder(
        schema: &Schema,
        config: MvtoConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let tables = Tables::new(schema)?;
        Self::with_tables(schema, tables, config, recorder)
    }
}

impl MvtoNwr<NoRecorder> {
    /// An MVTO+NWR database with one built-in index per table of `schema`. Fails if 128-bit
    /// compare-and-swap is not lock-free on this target. Writes are only omitted with
    /// `AckMode::EpochStable` (the default).
    pub fn new_nwr(schema: &Schema, config: MvtoConfig) -> Result<Self, Error> {
        Self::nwr_with_recorder(schema, config, Arc::new(NoRecorder))
    }
}

impl<Rec: Recorder> MvtoNwr<Rec> {
    /// An MVTO+NWR database whose transactions are recorded by `recorder`.
    pub fn nwr_with_recorder(
        schema: &Schema,
        config: MvtoConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let tables = Tables::new(schema)?;
        Self::with_tables(schema, tables, config, recorder)
    }
}

impl MvtoNwrSingle<NoRecorder> {
    /// An MVTO+NWR database with single-write omitters ([`MvtoNwrSingle`]), one built-in index
    /// per table of `schema`. Writes are only omitted with `AckMode::EpochStable` (the default).
    pub fn new_nwr_single(schema: &Schema, config: MvtoConfig) -> Result<Self, Error> {
        Self::nwr_single_with_recorder(schema, config, Arc::new(NoRecorder))
    }
}

impl<Rec: Recorder> MvtoNwrSingle<Rec> {
    /// An MVTO+NWR database with single-write omitters whose transactions are recorded by
    /// `recorder`.
    pub fn nwr_single_with_recorder(
        schema: &Schema,
        config: MvtoConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let tables = Tables::new(schema)?;
        Self::with_tables(schema, tables, config, recorder)
    }
}

impl<Rec: Recorder, W: WriteOmission> Mvto<Rec, W> {
    /// A database over tables built by the caller (e.g. with a custom index for some tables via
    /// [`Tables::with_custom`]), with or without NWR. With [`Nwr`], fails if 128-bit
    /// compare-and-swap is not lock-free on this target (single-write omitters use none).
    pub fn with_tables(
        schema: &Schema,
        tables: Tables<MvtoRecord>,
        config: MvtoConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        config.validate()?;
        tables.check_schema(schema)?;
        let pivots = if W::ENABLED && !W::SINGLE_WRITE_OMITTERS {
            txlab_nwr::require_lock_free_pivot()?;
            Companions::beside(&tables)?
        } else {
            Companions::none()
        };
        let value_sizes = schema.tables().iter().map(|t| t.value_size).collect();
        let stripe_rts = tables
            .iter()
            .map(|(_, index)| {
                index.phantom_stripes().map(|_| {
                    (0..PhantomStripes::STRIPES)
                        .map(|_| CachePadded::new(AtomicU64::new(0)))
                        .collect()
                })
            })
            .collect();
        let retire_floors = tables
            .iter()
            .map(|(_, index)| {
                (index.unlinks_deleted_records() && index.phantom_stripes().is_none())
                    .then(|| RetireFloors::new(false))
            })
            .collect();
        Ok(Self {
            schema: schema.clone(),
            tables,
            pivots,
            value_sizes,
            stripe_rts,
            retire_floors,
            retired_tags: RetiredTags::default(),
            epochs: EpochManager::new(config.epoch),
            clocks: Clocks::new(),
            config,
            recorder,
            next_worker: AtomicU32::new(0),
            omit_stamp: AtomicU64::new(0),
            _omission: PhantomData,
        })
    }

    /// The epoch manager (tests advance epochs by hand through it).
    pub fn epochs(&self) -> &EpochManager {
        &self.epochs
    }

    /// The recorder.
    pub fn recorder(&self) -> &Arc<Rec> {
        &self.recorder
    }

    /// The configuration.
    pub fn config(&self) -> &MvtoConfig {
        &self.config
    }

    /// The garbage-collection horizon: no active or future transaction has a smaller timestamp.
    pub fn gc_horizon(&self) -> u64 {
        self.clocks.horizon()
    }

    /// How many versions `key` of `table` currently holds, and how many of those are aborted
    /// (diagnostics and memory tests; 0 for a key without a record).
    pub fn version_count(&self, table: TableId, key: u64) -> Result<(usize, usize), Error> {
        let guard = crossbeam_epoch::pin();
        Ok(self
            .tables
            .get(table)?
            .get(key, &guard)?
            .map_or((0, 0), |r| r.count(&guard)))
    }

    /// The absent floor of `(table, key)`: the largest timestamp at which a transaction saw the
    /// key absent without a version to raise, because it scanned past a key with no record
    /// (ordered tables: the stripe scan timestamp) or read a tombstone since retired
    /// (`crate::retire`). A write whose version has nothing but absent versions below it must
    /// have a larger timestamp (`crate::commit`, Phase 1). A `SeqCst` load; 0 for tables that
    /// neither scan nor unlink.
    #[inline]
    pub(crate) fn absent_floor(&self, table: TableId, key: u64) -> u64 {
        let t = table.0 as usize;
        if let Some(rts) = self.stripe_rts.get(t).and_then(|r| r.as_deref()) {
            let Some(stripes) = self
                .tables
                .get(table)
                .ok()
                .and_then(|i| i.phantom_stripes())
            else {
                return 0;
            };
            return rts[stripes.stripe_of(key) as usize].load(Ordering::SeqCst);
        }
        match self.retire_floors.get(t) {
            Some(Some(f)) => f.of_key(key, None),
            _ => 0,
        }
    }

    /// What `crate::retire::process` needs of `table` (`None` if its records are never
    /// unlinked).
    pub(crate) fn table_retire(&self, table: TableId) -> Option<TableRetire<'_>> {
        let index = self.tables.get(table).ok()?;
        if !index.unlinks_deleted_records() {
            return None;
        }
        let t = table.0 as usize;
        let floor = match (self.stripe_rts.get(t), self.retire_floors.get(t)) {
            (Some(Some(rts)), _) => AbsentFloor::Stripes(rts),
            (_, Some(Some(f))) => AbsentFloor::Hash(f),
            _ => return None,
        };
        Some(TableRetire {
            index,
            floor,
            pivots: &self.pivots,
        })
    }

    /// Whether `table`'s index maps `key` to a record (present, absent or tombstone). Tests use
    /// it to see retired tombstones leave the index.
    #[doc(hidden)]
    pub fn is_mapped(&self, table: TableId, key: u64) -> Result<bool, Error> {
        self.tables.is_mapped(table, key)
    }

    /// `(table, key)`'s pivot object as it stands (MVTO+NWR only; `None` for the other variants,
    /// which keep none, and for a key outside a dense table's capacity). For a keyed table the
    /// lookup publishes an empty object if the key had none, as an omitter's would. Tests use it
    /// to see which key's object an omission updated.
    #[doc(hidden)]
    pub fn pivot_word(&self, table: TableId, key: u64) -> Option<txlab_nwr::PivotWord> {
        let guard = crossbeam_epoch::pin();
        self.pivots.cell(table, key, &guard).map(|c| c.load())
    }

    /// `(table, key)`'s read-and-omit marks as `(read epoch, omit epoch)`, 0 for no mark and
    /// `u32::MAX` for a saturated one (MVTO+NWR only; `None` for the other variants and for an
    /// unmapped key). Tests use it to see marks and claims.
    #[doc(hidden)]
    pub fn read_omit_epochs(&self, table: TableId, key: u64) -> Option<(u32, u32)> {
        if !crate::nwr::marks_in_head::<W>() {
            return None;
        }
        let guard = crossbeam_epoch::pin();
        let record = self.tables.get(table).ok()?.get(key, &guard).ok()??;
        let (read, omit) = record.head.load(Ordering::Acquire).marks(&guard);
        let plain = |m: crate::head::Mark| match m {
            crate::head::Mark::None => 0,
            crate::head::Mark::At(e) => e as u32,
            crate::head::Mark::Saturated => u32::MAX,
        };
        Some((plain(read), plain(omit)))
    }

    /// A table's fixed value size, or `Error::UnknownTable`.
    #[inline]
    pub(crate) fn value_size(&self, table: TableId) -> Result<usize, Error> {
        self.value_sizes
            .get(table.0 as usize)
            .copied()
            .ok_or(Error::UnknownTable {
                id: table.0,
                count: self.value_sizes.len(),
            })
    }

    #[inline]
    pub(crate) fn check_value(&self, table: TableId, value: &[u8]) -> Result<usize, Error> {
        let vs = self.value_size(table)?;
        if value.len() != vs {
            return Err(Error::ValueSize {
                table: table.0,
                expected: vs,
                got: value.len(),
            });
        }
        Ok(vs)
    }
}

impl<Rec: Recorder, W: WriteOmission> Engine for Mvto<Rec, W> {
    type Worker<'e>
        = MvtoWorker<'e, Rec, W>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        if W::SINGLE_WRITE_OMITTERS {
            "mvto-nwr-single"
        } else {
            W::engine_name("mvto", "mvto-nwr")
        }
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn worker(&self) -> Result<MvtoWorker<'_, Rec, W>, Error> {
        let id = self.next_worker.fetch_add(1, Ordering::Relaxed);
        if u64::from(id) >= MAX_WORKERS {
            return Err(Error::invalid(
                "workers",
                u64::from(id) + 1,
                format!("at most {MAX_WORKERS} workers per engine (worker ids are 16 bits)"),
            ));
        }
        Ok(MvtoWorker {
            engine: self,
            epoch: self.epochs.register(),
            clock: self.clocks.register(id),
            handle: crossbeam_epoch::default_collector().register(),
            state: WorkerState::new(id),
            nwr: NwrStats::default(),
            old_reader_aborts: 0,
            retire: RetireQueue::default(),
        })
    }

    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        self.check_value(table, value)?;
        let guard = crossbeam_epoch::pin();
        let entry = self.tables.get(table)?.get_or_insert(key, &guard)?;
        entry
            .record
            .load_initial(value, &guard)
            .map_err(|_| unaddressable())
    }

    fn stable_epoch(&self) -> u64 {
        match self.config.ack {
            AckMode::AtCommit => u64::MAX,
            AckMode::EpochStable => self.epochs.stable(),
        }
    }

    fn ack_mode(&self) -> AckMode {
        self.config.ack
    }
}

/// An MVTO worker: owns the read, write and node sets its transactions use, its clock, its
/// local epoch, and its crossbeam-epoch handle (so several workers can live on one thread).
#[derive(Debug)]
pub struct MvtoWorker<'e, Rec: Recorder = NoRecorder, W: WriteOmission = NoNwr> {
    pub(crate) engine: &'e Mvto<Rec, W>,
    pub(crate) epoch: EpochHandle,
    pub(crate) clock: LocalClock,
    pub(crate) handle: crossbeam_epoch::LocalHandle,
    pub(crate) state: WorkerState,
    /// NWR counters (stay zero without NWR).
    pub(crate) nwr: NwrStats,
    /// Commits aborted by MVTO+NWR's old-version-reader check (`crate::nwr`).
    pub(crate) old_reader_aborts: u64,
    /// Committed deletes waiting to be unlinked ([`crate::retire`]).
    pub(crate) retire: RetireQueue,
}

impl<Rec: Recorder, W: WriteOmission> MvtoWorker<'_, Rec, W> {
    /// Committed deletes of this worker not yet unlinked ([`crate::retire`]). Tests use it to
    /// drive and observe retirement.
    #[doc(hidden)]
    pub fn retire_backlog(&self) -> usize {
        self.retire.len()
    }

    /// Tombstones this worker has unlinked ([`crate::retire`]).
    #[doc(hidden)]
    pub fn retired_count(&self) -> u64 {
        self.retire.retired()
    }
}

impl<'e, Rec: Recorder, W: WriteOmission> Worker for MvtoWorker<'e, Rec, W> {
    type Txn<'w>
        = MvtoTxn<'w, 'e, Rec, W>
    where
        Self: 'w;

    fn begin(&mut self) -> MvtoTxn<'_, 'e, Rec, W> {
        MvtoTxn::begin(self)
    }

    fn id(&self) -> u32 {
        self.state.id
    }

    /// MVTO+NWR reports the `txlab_nwr::NwrStats` counters and `nwr_old_reader_aborts` (commits
    /// aborted because they read a version an omitted write of their epoch is ordered after;
    /// always 0 with single-write omitters, which have no such check); every MVTO engine
    /// reports `retired_tombstones` (deleted records unlinked since the last drain,
    /// `crate::retire`).
    fn drain_counters(&mut self, sink: &mut dyn FnMut(&'static str, u64)) {
        if W::ENABLED {
            self.nwr.drain(sink);
            sink("nwr_old_reader_aborts", self.old_reader_aborts);
            self.old_reader_aborts = 0;
        }
        self.retire.drain_retired(sink);
    }
}

impl<Rec: Recorder, W: WriteOmission> Drop for MvtoWorker<'_, Rec, W> {
    fn drop(&mut self) {
        self.clock.deregister(&self.engine.clocks);
    }
}
