//! The MVTO engine (shared by all threads) and its per-thread worker.

use crate::config::MvtoConfig;
use crate::record::MvtoRecord;
use crate::rule::{NoNwr, WriteRule};
use crate::timestamp::{Clocks, LocalClock, MAX_WORKERS};
use crate::txn::MvtoTxn;
use crate::worker_state::WorkerState;
use crossbeam_utils::CachePadded;
use std::marker::PhantomData;
use txlab_core::epoch::{EpochHandle, EpochManager};
use txlab_core::history::{NoRecorder, Recorder};
use txlab_core::storage::{Index, PhantomStripes};
use txlab_core::sync::{Arc, AtomicU32, AtomicU64, Ordering};
use txlab_core::{AckMode, Engine, Error, Schema, TableId, Worker};
use txlab_storage::Tables;

/// Per-stripe read timestamps of one ordered table: the largest timestamp that scanned a range
/// covering the stripe. An insert into a key whose previous committed state is absent must not
/// slip under a scan by a later transaction (see `crate::commit`).
pub(crate) type StripeTimestamps = Box<[CachePadded<AtomicU64>]>;

/// An MVTO database: tables of [`MvtoRecord`]s, the clocks, the epoch manager, the
/// configuration.
///
/// `Rec` is the history recorder (the default [`NoRecorder`] compiles recording out); `Rule` is
/// the NWR hook (`crate::rule`; only [`NoNwr`] exists).
#[derive(Debug)]
pub struct Mvto<Rec: Recorder = NoRecorder, Rule: WriteRule = NoNwr> {
    schema: Schema,
    pub(crate) tables: Tables<MvtoRecord>,
    value_sizes: Box<[usize]>,
    pub(crate) stripe_rts: Box<[Option<StripeTimestamps>]>,
    pub(crate) epochs: EpochManager,
    pub(crate) clocks: Clocks,
    pub(crate) config: MvtoConfig,
    pub(crate) recorder: Arc<Rec>,
    next_worker: AtomicU32,
    _rule: PhantomData<Rule>,
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

impl<Rec: Recorder, Rule: WriteRule> Mvto<Rec, Rule> {
    /// A database over tables built by the caller (e.g. with a custom index for some tables via
    /// [`Tables::with_custom`]), under any write rule.
    pub fn with_tables(
        schema: &Schema,
        tables: Tables<MvtoRecord>,
        config: MvtoConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        config.validate()?;
        if tables.len() != schema.len() {
            return Err(Error::invalid(
                "tables",
                tables.len(),
                format!("one index per table of the schema ({})", schema.len()),
            ));
        }
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
        Ok(Self {
            schema: schema.clone(),
            tables,
            value_sizes,
            stripe_rts,
            epochs: EpochManager::new(config.epoch),
            clocks: Clocks::new(),
            config,
            recorder,
            next_worker: AtomicU32::new(0),
            _rule: PhantomData,
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

impl<Rec: Recorder, Rule: WriteRule> Engine for Mvto<Rec, Rule> {
    type Worker<'e>
        = MvtoWorker<'e, Rec, Rule>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        Rule::ENGINE_NAME
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn worker(&self) -> Result<MvtoWorker<'_, Rec, Rule>, Error> {
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
        })
    }

    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        self.check_value(table, value)?;
        let guard = crossbeam_epoch::pin();
        let entry = self.tables.get(table)?.get_or_insert(key, &guard)?;
        entry.record.load_initial(value, &guard);
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

/// An MVTO worker: owns the read, write and node sets its transactions use, its clock, its
/// local epoch, and its crossbeam-epoch handle (so several workers can live on one thread).
#[derive(Debug)]
pub struct MvtoWorker<'e, Rec: Recorder = NoRecorder, Rule: WriteRule = NoNwr> {
    pub(crate) engine: &'e Mvto<Rec, Rule>,
    pub(crate) epoch: EpochHandle,
    pub(crate) clock: LocalClock,
    pub(crate) handle: crossbeam_epoch::LocalHandle,
    pub(crate) state: WorkerState,
}

impl<'e, Rec: Recorder, Rule: WriteRule> Worker for MvtoWorker<'e, Rec, Rule> {
    type Txn<'w>
        = MvtoTxn<'w, 'e, Rec, Rule>
    where
        Self: 'w;

    fn begin(&mut self) -> MvtoTxn<'_, 'e, Rec, Rule> {
        MvtoTxn::begin(self)
    }

    fn id(&self) -> u32 {
        self.state.id
    }
}

impl<Rec: Recorder, Rule: WriteRule> Drop for MvtoWorker<'_, Rec, Rule> {
    fn drop(&mut self) {
        self.clock.deregister(&self.engine.clocks);
    }
}
