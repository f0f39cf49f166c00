//! The Silo engine (shared by all threads) and its per-thread worker.

use crate::config::SiloConfig;
use crate::record::SiloRecord;
use crate::retire::RetireQueue;
use crate::txn::SiloTxn;
use crate::worker_state::WorkerState;
use std::marker::PhantomData;
use txlab_core::epoch::{EpochHandle, EpochManager};
use txlab_core::history::RetiredTags;
use txlab_core::history::{NoRecorder, Recorder};
use txlab_core::storage::Index;
use txlab_core::sync::{Arc, AtomicU32, AtomicU64, Ordering};
use txlab_core::{AckMode, Engine, Error, Schema, TableId, Worker};
use txlab_nwr::PivotCell;
use txlab_nwr::{NoNwr, Nwr, NwrSingleWrite, NwrStats, WriteOmission};
use txlab_storage::{Companions, Tables};

/// Silo extended with the non-visible write rule (`txlab_nwr`; engine name `silo-nwr`).
pub type SiloNwr<Rec = NoRecorder> = Silo<Rec, Nwr>;

/// Silo+NWR with single-write omitters and fewer read marks (`txlab_nwr::NwrSingleWrite`; engine
/// name `silo-nwr-single`; `docs/protocols/nwr.md`, "A rule with fewer read marks").
pub type SiloNwrSingle<Rec = NoRecorder> = Silo<Rec, NwrSingleWrite>;

/// A Silo database: tables of [`SiloRecord`]s, the epoch manager, and the configuration.
///
/// `Rec` is the history recorder; the default [`NoRecorder`] compiles recording out. `W` is the
/// write-omission switch: [`NoNwr`] (the default) is plain Silo, with the record layout and
/// commit path unchanged; [`Nwr`] is Silo+NWR ([`SiloNwr`], see [`crate::commit`]);
/// [`NwrSingleWrite`] is Silo+NWR with single-write omitters ([`SiloNwrSingle`]).
#[derive(Debug)]
pub struct Silo<Rec: Recorder = NoRecorder, W: WriteOmission = NoNwr> {
    schema: Schema,
    pub(crate) tables: Tables<SiloRecord>,
    /// Silo+NWR's pivot version objects, one per key, kept beside the records (cold: only a
    /// would-be omitter reads one, `crate::commit`); empty for the other variants.
    pub(crate) pivots: Companions<PivotCell>,
    value_sizes: Box<[usize]>,
    pub(crate) epochs: EpochManager,
    pub(crate) config: SiloConfig,
    pub(crate) recorder: Arc<Rec>,
    next_worker: AtomicU32,
    /// Orders omitted writes among themselves in recorded histories (used only when recording).
    pub(crate) omit_stamp: AtomicU64,
    /// Tags of retired tombstones, for histories (used only when recording; [`crate::retire`]).
    pub(crate) retired_tags: RetiredTags,
    _omission: PhantomData<W>,
}

impl Silo<NoRecorder> {
    /// A database with one built-in index per table of `schema`.
    pub fn new(schema: &Schema, config: SiloConfig) -> Result<Self, Error> {
        Self::with_recorder(schema, config, Arc::new(NoRecorder))
    }
}

impl<Rec: Recorder> Silo<Rec> {
    /// A database whose transactions are recorded by `recorder`.
    pub fn with_recorder(
        schema: &Schema,
        config: SiloConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let tables = Tables::new(schema)?;
        Self::with_tables(schema, tables, config, recorder)
    }

    /// A database over tables built by the caller (e.g. with a custom index for some tables via
    /// [`Tables::with_custom`]).
    pub fn with_tables(
        schema: &Schema,
        tables: Tables<SiloRecord>,
        config: SiloConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        Self::build(schema, tables, config, recorder)
    }
}

impl SiloNwr<NoRecorder> {
    /// A Silo+NWR database with one built-in index per table of `schema`. Fails if 128-bit
    /// compare-and-swap is not lock-free on this target.
    pub fn new_nwr(schema: &Schema, config: SiloConfig) -> Result<Self, Error> {
        Self::nwr_with_recorder(schema, config, Arc::new(NoRecorder))
    }
}

impl<Rec: Recorder> SiloNwr<Rec> {
    /// A Silo+NWR database whose transactions are recorded by `recorder`.
    pub fn nwr_with_recorder(
        schema: &Schema,
        config: SiloConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        Self::with_omission(schema, config, recorder)
    }
}

impl<W: WriteOmission> Silo<NoRecorder, W> {
    /// A database with write-omission policy `W` (e.g. [`SiloNwrSingle::new_with_omission`])
    /// and one built-in index per table of `schema`.
    pub fn new_with_omission(schema: &Schema, config: SiloConfig) -> Result<Self, Error> {
        Self::with_omission(schema, config, Arc::new(NoRecorder))
    }
}

impl<Rec: Recorder, W: WriteOmission> Silo<Rec, W> {
    /// A database with write-omission policy `W` ([`NoNwr`], [`Nwr`], [`NwrSingleWrite`]) whose
    /// transactions are recorded by `recorder`, one built-in index per table of `schema`. With an
    /// enabled policy it fails unless 128-bit compare-and-swap is lock-free on this target.
    pub fn with_omission(
        schema: &Schema,
        config: SiloConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let tables = Tables::new(schema)?;
        Self::build(schema, tables, config, recorder)
    }

    fn build(
        schema: &Schema,
        tables: Tables<SiloRecord>,
        config: SiloConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let pivots = if W::ENABLED && !W::SINGLE_WRITE_OMITTERS {
            // Single-write omitters use no 128-bit atomics (their mark is a TID bit).
            txlab_nwr::require_lock_free_pivot()?;
            Companions::beside(&tables)?
        } else {
            Companions::none()
        };
        tables.check_schema(schema)?;
        let value_sizes = schema.tables().iter().map(|t| t.value_size).collect();
        Ok(Self {
            schema: schema.clone(),
            tables,
            pivots,
            value_sizes,
            epochs: EpochManager::new(config.epoch),
            config,
            recorder,
            next_worker: AtomicU32::new(0),
            omit_stamp: AtomicU64::new(0),
            retired_tags: RetiredTags::default(),
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
    pub fn config(&self) -> &SiloConfig {
        &self.config
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

    /// The pivot object of `(table, key)` as it stands (Silo+NWR only; `None` for the other
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

impl<Rec: Recorder, W: WriteOmission> Engine for Silo<Rec, W> {
    type Worker<'e>
        = SiloWorker<'e, Rec, W>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        if W::SINGLE_WRITE_OMITTERS {
            "silo-nwr-single"
        } else {
            W::engine_name("silo", "silo-nwr")
        }
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn worker(&self) -> Result<SiloWorker<'_, Rec, W>, Error> {
        let id = self.next_worker.fetch_add(1, Ordering::Relaxed);
        if id >= (1 << 23) {
            return Err(Error::invalid(
                "workers",
                id,
                "at most 2^23 workers per engine",
            ));
        }
        Ok(SiloWorker {
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

/// A Silo worker: owns the read set, write set, node set and value buffers its transactions use,
/// its local epoch, and its crossbeam-epoch handle (so several workers can live on one thread).
#[derive(Debug)]
pub struct SiloWorker<'e, Rec: Recorder = NoRecorder, W: WriteOmission = NoNwr> {
    pub(crate) engine: &'e Silo<Rec, W>,
    pub(crate) epoch: EpochHandle,
    pub(crate) handle: crossbeam_epoch::LocalHandle,
    pub(crate) state: WorkerState,
    /// Committed deletes waiting to be unlinked ([`crate::retire`]).
    pub(crate) retire: RetireQueue,
    /// NWR counters (stay zero without NWR).
    pub(crate) nwr: NwrStats,
}

impl<Rec: Recorder, W: WriteOmission> SiloWorker<'_, Rec, W> {
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

impl<'e, Rec: Recorder, W: WriteOmission> Worker for SiloWorker<'e, Rec, W> {
    type Txn<'w>
        = SiloTxn<'w, 'e, Rec, W>
    where
        Self: 'w;

    fn begin(&mut self) -> SiloTxn<'_, 'e, Rec, W> {
        SiloTxn::begin(self)
    }

    fn id(&self) -> u32 {
        self.state.id
    }

    /// Silo+NWR reports the `txlab_nwr::NwrStats` counters; every Silo engine reports
    /// `retired_tombstones` (deleted records unlinked since the last drain, `crate::retire`).
    fn drain_counters(&mut self, sink: &mut dyn FnMut(&'static str, u64)) {
        if W::ENABLED {
            self.nwr.drain(sink);
        }
        self.retire.drain_retired(sink);
    }
}
