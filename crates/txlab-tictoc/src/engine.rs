//! The TicToc engine (shared by all threads) and its per-thread worker.

use crate::config::TicTocConfig;
use crate::nwr_hook::{NoNwr, WriteOmission};
use crate::record::TicTocRecord;
use crate::retire::{RetireQueue, TableRetire};
use crate::stripe_clock::StripeClocks;
use crate::txn::TicTocTxn;
use crate::worker_state::WorkerState;
use txlab_core::epoch::{EpochHandle, EpochManager};
use txlab_core::history::{NoRecorder, Recorder, RetiredTags};
use txlab_core::retire_floor::RetireFloors;
use txlab_core::storage::{Index, PhantomStripes};
use txlab_core::sync::{Arc, AtomicU32, AtomicU64, Ordering};
use txlab_core::{AckMode, Engine, Error, Schema, TableId, Worker};
use txlab_nwr::{Nwr, NwrSingleWrite, NwrStats, PivotCell};
use txlab_storage::{Companions, Tables};

/// TicToc extended with the non-visible write rule (`txlab_nwr`; engine name `tictoc-nwr`; see
/// [`crate::commit`] and `docs/protocols/tictoc.md`, section "NWR").
pub type TicTocNwr<Rec = NoRecorder> = TicToc<Rec, Nwr>;

/// TicToc+NWR with single-write omitters and no read marks (`txlab_nwr::NwrSingleWrite`;
/// engine name `tictoc-nwr-single`; [`crate::commit`] and `docs/protocols/tictoc.md`, "Single-write
/// omitters").
pub type TicTocNwrSingle<Rec = NoRecorder> = TicToc<Rec, NwrSingleWrite>;

/// Largest number of workers one engine hands out (history ids keep 24 bits of worker number).
pub const MAX_WORKERS: u32 = 1 << 23;

/// A TicToc database: tables of [`TicTocRecord`]s, the epoch manager (for group commit), and the
/// configuration.
///
/// `Rec` is the history recorder; the default [`NoRecorder`] compiles recording out. `Omit` is the
/// write-omission policy; the default [`NoNwr`] is plain TicToc, with the record layout and
/// commit path unchanged; [`Nwr`] is TicToc+NWR ([`TicTocNwr`]).
#[derive(Debug)]
pub struct TicToc<Rec: Recorder = NoRecorder, Omit: WriteOmission = NoNwr> {
    schema: Schema,
    pub(crate) tables: Tables<TicTocRecord>,
    /// TicToc+NWR's pivot version objects, one per key, kept beside the records (cold: only a
    /// would-be omitter reads one, `crate::commit`); empty for the other variants.
    pub(crate) pivots: Companions<PivotCell>,
    /// Per table: TicToc's timestamps of its phantom stripes (`None` for tables without scans;
    /// `crate::stripe_clock`).
    stripe_clocks: Box<[Option<StripeClocks>]>,
    /// Per table: the retire floors (`None` for tables whose records are never unlinked;
    /// `crate::retire`).
    retire_floors: Box<[Option<RetireFloors>]>,
    /// Tags of retired tombstones, for histories (used only when recording; `crate::retire`).
    pub(crate) retired_tags: RetiredTags,
    value_sizes: Box<[usize]>,
    pub(crate) epochs: EpochManager,
    pub(crate) config: TicTocConfig,
    pub(crate) recorder: Arc<Rec>,
    pub(crate) omission: Omit,
    next_worker: AtomicU32,
    /// Orders omitted writes among themselves in recorded histories (used only when recording).
    pub(crate) omit_stamp: AtomicU64,
}

impl TicToc<NoRecorder, NoNwr> {
    /// A database with one built-in index per table of `schema`.
    pub fn new(schema: &Schema, config: TicTocConfig) -> Result<Self, Error> {
        Self::with_recorder(schema, config, Arc::new(NoRecorder))
    }
}

impl<Rec: Recorder> TicToc<Rec, NoNwr> {
    /// A database whose transactions are recorded by `recorder`.
    pub fn with_recorder(
        schema: &Schema,
        config: TicTocConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let tables = Tables::new(schema)?;
        Self::with_tables(schema, tables, config, recorder, NoNwr)
    }
}

impl TicTocNwr<NoRecorder> {
    /// A TicToc+NWR database with one built-in index per table of `schema`. Fails if 128-bit
    /// compare-and-swap is not lock-free on this target.
    pub fn new_nwr(schema: &Schema, config: TicTocConfig) -> Result<Self, Error> {
        Self::nwr_with_recorder(schema, config, Arc::new(NoRecorder))
    }
}

impl<Rec: Recorder> TicTocNwr<Rec> {
    /// A TicToc+NWR database whose transactions are recorded by `recorder`.
    pub fn nwr_with_recorder(
        schema: &Schema,
        config: TicTocConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let tables = Tables::new(schema)?;
        Self::with_tables(schema, tables, config, recorder, Nwr)
    }
}

impl TicTocNwrSingle<NoRecorder> {
    /// A TicToc+NWR database with single-write omitters ([`TicTocNwrSingle`]), one built-in
    /// index per table of `schema`.
    pub fn new_nwr_single(schema: &Schema, config: TicTocConfig) -> Result<Self, Error> {
        Self::nwr_single_with_recorder(schema, config, Arc::new(NoRecorder))
    }
}

impl<Rec: Recorder> TicTocNwrSingle<Rec> {
    /// A [`TicTocNwrSingle`] database whose transactions are recorded by `recorder`.
    pub fn nwr_single_with_recorder(
        schema: &Schema,
        config: TicTocConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let tables = Tables::new(schema)?;
        Self::with_tables(schema, tables, config, recorder, NwrSingleWrite)
    }
}

impl<Rec: Recorder, Omit: WriteOmission> TicToc<Rec, Omit> {
    /// A database over tables built by the caller (e.g. with a custom index for some tables via
    /// [`Tables::with_custom`]) and with an explicit write-omission policy. With [`Nwr`] it fails
    /// unless 128-bit compare-and-swap is lock-free on this target ([`NwrSingleWrite`] uses no
    /// 128-bit atomics: its mark is a bit of the history tag).
    pub fn with_tables(
        schema: &Schema,
        tables: Tables<TicTocRecord>,
        config: TicTocConfig,
        recorder: Arc<Rec>,
        omission: Omit,
    ) -> Result<Self, Error> {
        let pivots = if Omit::ENABLED && !Omit::SINGLE_WRITE_OMITTERS {
            txlab_nwr::require_lock_free_pivot()?;
            Companions::beside(&tables)?
        } else {
            Companions::none()
        };
        tables.check_schema(schema)?;
        let value_sizes = schema.tables().iter().map(|t| t.value_size).collect();
        let stripe_clocks = tables
            .iter()
            .map(|(_, index)| index.phantom_stripes().map(|_| StripeClocks::new()))
            .collect();
        let retire_floors = tables
            .iter()
            .map(|(_, index)| {
                index
                    .unlinks_deleted_records()
                    .then(|| RetireFloors::new(index.phantom_stripes().is_some()))
            })
            .collect();
        Ok(Self {
            schema: schema.clone(),
            tables,
            pivots,
            stripe_clocks,
            retire_floors,
            retired_tags: RetiredTags::default(),
            value_sizes,
            epochs: EpochManager::new(config.epoch),
            config,
            recorder,
            omission,
            next_worker: AtomicU32::new(0),
            omit_stamp: AtomicU64::new(0),
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
    pub fn config(&self) -> &TicTocConfig {
        &self.config
    }

    /// The write-omission policy.
    pub fn omission(&self) -> &Omit {
        &self.omission
    }

    /// A table's phantom stripes (which stripe a key or range is on) and TicToc's clocks for them;
    /// `None` for tables without range scans.
    #[inline]
    pub(crate) fn stripes(&self, table: TableId) -> Option<(&PhantomStripes, &StripeClocks)> {
        let clocks = self.stripe_clocks.get(table.0 as usize)?.as_ref()?;
        let stripes = self.tables.get(table).ok()?.phantom_stripes()?;
        Some((stripes, clocks))
    }

    /// The retire floor of `(table, key)` (`crate::retire`): a transaction that reads a
    /// never-written absent record of the key commits at or above it, one that writes it first
    /// commits above it. 0 for tables whose records are never unlinked.
    #[inline]
    pub(crate) fn retire_floor(&self, table: TableId, key: u64) -> u64 {
        match self.retire_floors.get(table.0 as usize) {
            Some(Some(floors)) => {
                floors.of_key(key, self.stripes(table).map(|(stripes, _)| stripes))
            }
            _ => 0,
        }
    }

    /// The retire floor of phantom stripe `stripe` of an ordered table (`crate::retire`): a scan
    /// of the stripe commits at or above it.
    #[inline]
    pub(crate) fn stripe_retire_floor(&self, table: TableId, stripe: u32) -> u64 {
        match self.retire_floors.get(table.0 as usize) {
            Some(Some(floors)) => floors.of_stripe(stripe),
            _ => 0,
        }
    }

    /// What `crate::retire::process` needs of `table` (`None` if its records are never
    /// unlinked).
    pub(crate) fn table_retire(&self, table: TableId) -> Option<TableRetire<'_>> {
        let floors = self.retire_floors.get(table.0 as usize)?.as_ref()?;
        Some(TableRetire {
            index: self.tables.get(table).ok()?,
            pivots: &self.pivots,
            floors,
            stripes: self.stripes(table),
        })
    }

    /// Number of keys `table`'s index maps (approximate under concurrency; a dense index reports
    /// its capacity). Tests use it to see retired tombstones leave the index.
    #[doc(hidden)]
    pub fn mapped_keys(&self, table: TableId) -> Result<usize, Error> {
        Ok(self.tables.get(table)?.len())
    }

    /// Whether `table`'s index maps `key` to a record (present, absent or tombstone). Tests use
    /// it to see retired tombstones leave the index.
    #[doc(hidden)]
    pub fn is_mapped(&self, table: TableId, key: u64) -> Result<bool, Error> {
        self.tables.is_mapped(table, key)
    }

    /// The pivot object of `(table, key)` as it stands (TicToc+NWR only; `None` for the other
    /// variants, which keep none). Tests use it to see which key's object an omission updated.
    /// Publishes an empty object for a keyed table's key that has none yet.
    #[doc(hidden)]
    pub fn pivot_word(&self, table: TableId, key: u64) -> Option<txlab_nwr::PivotWord> {
        let guard = crossbeam_epoch::pin();
        self.pivots.cell(table, key, &guard).map(|c| c.load())
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

impl<Rec: Recorder, Omit: WriteOmission> Engine for TicToc<Rec, Omit> {
    type Worker<'e>
        = TicTocWorker<'e, Rec, Omit>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        if Omit::SINGLE_WRITE_OMITTERS {
            "tictoc-nwr-single"
        } else {
            Omit::engine_name("tictoc", "tictoc-nwr")
        }
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn worker(&self) -> Result<TicTocWorker<'_, Rec, Omit>, Error> {
        let id = self.next_worker.fetch_add(1, Ordering::Relaxed);
        if id >= MAX_WORKERS {
            return Err(Error::invalid(
                "workers",
                id,
                format!("at most {MAX_WORKERS} workers per engine"),
            ));
        }
        Ok(TicTocWorker {
            engine: self,
            epoch: self.epochs.register(),
            handle: crossbeam_epoch::default_collector().register(),
            state: WorkerState::new(id),
            retire: RetireQueue::default(),
            nwr: NwrStats::default(),
        })
    }

    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        self.check_value(table, value)?;
        let guard = crossbeam_epoch::pin();
        let entry = self.tables.get(table)?.get_or_insert(key, &guard)?;
        entry.record.load_initial(value);
        Ok(())
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

/// A TicToc worker: owns the read set, write set, stripe set and value buffers its transactions
/// use, its local epoch, and its crossbeam-epoch handle (so several workers can live on one
/// thread).
#[derive(Debug)]
pub struct TicTocWorker<'e, Rec: Recorder = NoRecorder, Omit: WriteOmission = NoNwr> {
    pub(crate) engine: &'e TicToc<Rec, Omit>,
    pub(crate) epoch: EpochHandle,
    pub(crate) handle: crossbeam_epoch::LocalHandle,
    pub(crate) state: WorkerState,
    /// Committed deletes waiting to be unlinked ([`crate::retire`]).
    pub(crate) retire: RetireQueue,
    /// TicToc+NWR's counters (untouched in plain TicToc).
    pub(crate) nwr: NwrStats,
}

impl<Rec: Recorder, Omit: WriteOmission> TicTocWorker<'_, Rec, Omit> {
    /// Number of committed deletes this worker has queued and not yet unlinked. Tests use it to
    /// drive and observe retirement.
    #[doc(hidden)]
    pub fn retire_backlog(&self) -> usize {
        self.retire.len()
    }

    /// Number of deleted records this worker has unlinked from their index.
    #[doc(hidden)]
    pub fn retired_count(&self) -> u64 {
        self.retire.retired()
    }
}

impl<'e, Rec: Recorder, Omit: WriteOmission> Worker for TicTocWorker<'e, Rec, Omit> {
    type Txn<'w>
        = TicTocTxn<'w, 'e, Rec, Omit>
    where
        Self: 'w;

    fn begin(&mut self) -> TicTocTxn<'_, 'e, Rec, Omit> {
        TicTocTxn::begin(self)
    }

    fn id(&self) -> u32 {
        self.state.id
    }

    /// TicToc+NWR reports the `txlab_nwr::NwrStats` counters; every TicToc engine reports
    /// `retired_tombstones` (deleted records unlinked since the last drain, `crate::retire`).
    fn drain_counters(&mut self, sink: &mut dyn FnMut(&'static str, u64)) {
        if Omit::ENABLED {
            self.nwr.drain(sink);
        }
        self.retire.drain_retired(sink);
    }
}
