//! The Silo engine (shared by all threads) and its per-thread worker.

use crate::config::SiloConfig;
use crate::record::SiloRecord;
use crate::txn::SiloTxn;
use crate::worker_state::WorkerState;
use txlab_core::epoch::{EpochHandle, EpochManager};
use txlab_core::history::{NoRecorder, Recorder};
use txlab_core::storage::Index;
use txlab_core::sync::{Arc, AtomicU32, Ordering};
use txlab_core::{AckMode, Engine, Error, Schema, TableId, Worker};
use txlab_storage::Tables;

/// A Silo database: tables of [`SiloRecord`]s, the epoch manager, and the configuration.
///
/// `Rec` is the history recorder; the default [`NoRecorder`] compiles recording out.
#[derive(Debug)]
pub struct Silo<Rec: Recorder = NoRecorder> {
    schema: Schema,
    pub(crate) tables: Tables<SiloRecord>,
    value_sizes: Box<[usize]>,
    pub(crate) epochs: EpochManager,
    pub(crate) config: SiloConfig,
    pub(crate) recorder: Arc<Rec>,
    next_worker: AtomicU32,
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
        if tables.len() != schema.len() {
            return Err(Error::invalid(
                "tables",
                tables.len(),
                format!("one index per table of the schema ({})", schema.len()),
            ));
        }
        let value_sizes = schema.tables().iter().map(|t| t.value_size).collect();
        Ok(Self {
            schema: schema.clone(),
            tables,
            value_sizes,
            epochs: EpochManager::new(config.epoch),
            config,
            recorder,
            next_worker: AtomicU32::new(0),
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

impl<Rec: Recorder> Engine for Silo<Rec> {
    type Worker<'e>
        = SiloWorker<'e, Rec>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        "silo"
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn worker(&self) -> Result<SiloWorker<'_, Rec>, Error> {
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
pub struct SiloWorker<'e, Rec: Recorder = NoRecorder> {
    pub(crate) engine: &'e Silo<Rec>,
    pub(crate) epoch: EpochHandle,
    pub(crate) handle: crossbeam_epoch::LocalHandle,
    pub(crate) state: WorkerState,
}

impl<'e, Rec: Recorder> Worker for SiloWorker<'e, Rec> {
    type Txn<'w>
        = SiloTxn<'w, 'e, Rec>
    where
        Self: 'w;

    fn begin(&mut self) -> SiloTxn<'_, 'e, Rec> {
        SiloTxn::begin(self)
    }

    fn id(&self) -> u32 {
        self.state.id
    }
}
