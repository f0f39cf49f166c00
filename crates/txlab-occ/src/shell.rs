//! The engine shell: what every interactive engine holds besides its protocol's own state (the
//! schema and its tables, the value sizes, the epoch manager, the configuration, the recorder,
//! worker ids and the tags of retired tombstones), and what it does with them (checking values,
//! loading, handing out workers, group commit's stable epoch).

use crate::protocol::{ConfigOf, Protocol};

use txlab_core::protocol::epoch::EpochManager;
use txlab_core::protocol::history::RetiredTags;
use txlab_core::protocol::storage::Index;
use txlab_core::protocol::sync::{Arc, AtomicU32, Ordering};
use txlab_core::{AckMode, Error, Schema, TableId};
use txlab_storage::Tables;

/// The shared parts of an engine (module docs).
#[derive(Debug)]
pub struct Shell<P: Protocol> {
    schema: Schema,
    /// One index per table.
    pub tables: Tables<P::Record>,
    value_sizes: Box<[usize]>,
    /// The global epoch and the workers' local epochs.
    pub epochs: EpochManager,
    /// The configuration.
    pub config: ConfigOf<P>,
    /// The history recorder.
    pub recorder: Arc<P::Recorder>,
    next_worker: AtomicU32,
    /// Tags of retired tombstones, for histories (used only when recording).
    pub retired_tags: RetiredTags,
}

impl<P: Protocol> Shell<P> {
    /// A shell over `tables` (built for `schema`), after checking the configuration and that the
    /// tables match the schema.
    pub fn new(
        schema: &Schema,
        tables: Tables<P::Record>,
        config: ConfigOf<P>,
        recorder: Arc<P::Recorder>,
    ) -> Result<Self, Error> {
        config.validate()?;
        tables.check_schema(schema)?;
        Ok(Self {
            schema: schema.clone(),
            tables,
            value_sizes: schema.tables().iter().map(|t| t.value_size).collect(),
            epochs: EpochManager::new(config.epoch),
            config,
            recorder,
            next_worker: AtomicU32::new(0),
            retired_tags: RetiredTags::default(),
        })
    }

    /// The schema.
    #[inline]
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// A table's fixed value size, or `Error::UnknownTable`.
    #[inline]
    pub fn value_size(&self, table: TableId) -> Result<usize, Error> {
        self.value_sizes
            .get(table.0 as usize)
            .copied()
            .ok_or(Error::UnknownTable {
                id: table.0,
                count: self.value_sizes.len(),
            })
    }

    /// The table's value size, if `value` has it; `Error::ValueSize` otherwise.
    #[inline]
    pub fn check_value(&self, table: TableId, value: &[u8]) -> Result<usize, Error> {
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

    /// The next worker id, or an error past `P::MAX_WORKERS`.
    pub fn next_worker_id(&self) -> Result<u32, Error> {
        let id = self.next_worker.fetch_add(1, Ordering::Relaxed);
        if id >= P::MAX_WORKERS {
            return Err(Error::invalid(
                "workers",
                u64::from(id) + 1,
                format!("at most {} workers per engine", P::MAX_WORKERS),
            ));
        }
        Ok(id)
    }

    /// Loads `value` as `(table, key)`'s initial committed version (`Engine::load`).
    pub fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        self.check_value(table, value)?;
        let guard = crossbeam_epoch::pin();
        let entry = self.tables.get(table)?.get_or_insert(key, &guard)?;
        P::load_record(entry.record, value, &guard)
    }

    /// The largest epoch whose commits are acknowledged (`Engine::stable_epoch`).
    #[inline]
    pub fn stable_epoch(&self) -> u64 {
        match self.config.ack {
            AckMode::AtCommit => u64::MAX,
            AckMode::EpochStable => self.epochs.stable(),
        }
    }

    /// Whether commits are acknowledged at commit (no group commit).
    #[inline]
    pub fn acks_at_commit(&self) -> bool {
        self.config.ack == AckMode::AtCommit
    }

    /// Number of keys `table`'s index maps (approximate under concurrency; a dense index reports
    /// its capacity).
    pub fn mapped_keys(&self, table: TableId) -> Result<usize, Error> {
        Ok(self.tables.get(table)?.len())
    }
}
