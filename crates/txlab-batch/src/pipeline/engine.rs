//! The pipeline engine: the storage and validator threads, and the interactive entry point
//! ([`txlab_core::Engine`]) next to the multiplexing one ([`Pipeline::run`], in `driver`).
//!
//! # Why both entry points
//!
//! The paper's processors multiplex hundreds of live transactions without blocking; that is
//! [`Pipeline::run`], which owns the clients and processors and drives a whole workload (the
//! harness's entry point for measurements). The interactive [`Engine`] implementation is the same
//! pipeline seen from one synchronous client: a [`PipelineWorker`] executes its transaction
//! against the versioned storage like a processor does, and `commit` submits the read and write
//! sets to the same validator and waits for its decision. It exists so workloads can load and
//! check the database (`Workload::load` and `Workload::check` take an `Engine`), so the semantics
//! tests can replay schedules step by step, and so the engine composes with anything written
//! against `Engine`. Both paths share the storage, the validator and its commit timestamps, so
//! their transactions serialize with each other.
//!
//! The interactive path installs a committed transaction's writes into the storage before
//! `commit` returns (so a worker reads its own committed writes); processors ship them to a
//! storage worker's queue, as in the paper.
//!
//! Shutdown: dropping the engine closes the queues; every stage drains what it holds and exits,
//! and the drop joins the threads.

use super::config::{PipelineConfig, StorageRouting, ValidatorBatching};
use super::execution::{Execution, Shapes, TxnBuffer};
use super::messages::{Decision, Key, ReplyTo, StorageRequest, ValidationRequest, Value};
use super::storage::{StorageCounters, VersionedStorage, storage_worker};
use super::validator::{
    ReorderSettings, ValidationFaults, ValidatorCache, ValidatorCounters, ValidatorInput,
    batch_preparation, reordering_worker, single_thread_validator, validation_worker,
};
use std::thread::JoinHandle;
use txlab_core::protocol::assemble::{Assemble, Builder};
use txlab_core::protocol::history::{
    NoRecorder, Outcome, ReadEvent, Recorder, TxnRecord, WriteEvent, WriteKind, txn_id,
};
use txlab_core::protocol::sync::mpsc::{Receiver, Sender, channel};
use txlab_core::protocol::sync::{Arc, AtomicU32, AtomicUsize, Ordering};
use txlab_core::{
    CommitInfo, Conflict, Engine, Error, Schema, TableId, Transaction, TxError, TxOps, TxResult,
    Worker,
};

/// State shared with the pipeline's threads.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) storage: VersionedStorage,
    pub(crate) cache: ValidatorCache,
    pub(crate) counters: ValidatorCounters,
}

/// The validator's entry queue: the batch preparation stage, or the validation worker itself
/// when the validator does not batch.
#[derive(Debug)]
enum Entry {
    Batching(Sender<ValidationRequest>),
    Direct(Sender<ValidatorInput>),
}

/// The centralized-validator pipeline engine (module docs; the protocol is in `validator`).
pub struct Pipeline<Rec: Recorder = NoRecorder> {
    schema: Schema,
    pub(crate) shapes: Shapes,
    pub(crate) config: PipelineConfig,
    pub(crate) shared: Arc<Shared>,
    pub(crate) recorder: Arc<Rec>,
    storage_queues: Vec<Sender<StorageRequest>>,
    entry: Option<Entry>,
    threads: Vec<JoinHandle<()>>,
    storage_threads: Vec<JoinHandle<StorageCounters>>,
    next_worker: AtomicU32,
    next_storage: AtomicUsize,
}

impl<Rec: Recorder> std::fmt::Debug for Pipeline<Rec> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("config", &self.config)
            .field("tables", &self.schema.len())
            .finish_non_exhaustive()
    }
}

impl Pipeline<NoRecorder> {
    /// The one way to build a pipeline: `.config(..)`, `.recorder(..)` to record histories, then
    /// `.build(&schema)`, which starts its threads.
    pub fn builder() -> Builder<Self> {
        Builder::new()
    }
}

impl Assemble for Pipeline<NoRecorder> {
    type Config = PipelineConfig;
    type Tables = std::convert::Infallible;
    type Engine<Rec: Recorder> = Pipeline<Rec>;

    fn assemble<Rec: Recorder>(
        schema: &Schema,
        tables: Option<std::convert::Infallible>,
        config: PipelineConfig,
        recorder: Arc<Rec>,
    ) -> Result<Pipeline<Rec>, Error> {
        if let Some(never) = tables {
            match never {}
        }
        Pipeline::with_recorder(schema, config, recorder)
    }
}

fn spawn<T: Send + 'static>(
    name: String,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<JoinHandle<T>, Error> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .map_err(|e| Error::Internal(format!("cannot start a pipeline thread: {e}")))
}

impl<Rec: Recorder> Pipeline<Rec> {
    /// A pipeline whose transactions are recorded by `recorder`.
    fn with_recorder(
        schema: &Schema,
        config: PipelineConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        config.validate()?;
        for t in schema.tables() {
            t.validate()?;
        }
        let shared = Arc::new(Shared::default());
        let mut threads = Vec::new();
        let mut storage_threads = Vec::new();
        let mut storage_queues = Vec::new();
        for i in 0..config.storage_workers {
            let (tx, rx) = channel();
            storage_queues.push(tx);
            let shared = shared.clone();
            let (batching, size) = (config.mode.storage(), config.batch_size);
            storage_threads.push(spawn(format!("batch-storage-{i}"), move || {
                storage_worker(&shared.storage, &shared.cache, rx, batching, size)
            })?);
        }
        #[cfg(feature = "mutation")]
        let faults = ValidationFaults {
            skip_read_check: matches!(
                config.mutation,
                Some(super::config::Mutation::SkipFinalValidation)
            ),
        };
        #[cfg(not(feature = "mutation"))]
        let faults = ValidationFaults::default();
        let batching = config.mode.validator();
        let settings = |i: usize| ReorderSettings {
            algorithm: config.algorithm,
            policy: config.policy,
            refinement: config.refinement,
            seed: config.seed.wrapping_add(i as u64),
        };
        let entry = if batching != ValidatorBatching::Off && config.reorder_workers == 0 {
            // The single-thread layout: one thread forms, reorders and validates each batch.
            let (prep_tx, prep_rx) = channel();
            let shared = shared.clone();
            let (size, settings) = (config.batch_size, settings(0));
            threads.push(spawn("batch-validation".into(), move || {
                single_thread_validator(
                    prep_rx,
                    batching,
                    size,
                    settings,
                    &shared.cache,
                    &shared.counters,
                    faults,
                )
            })?);
            Entry::Batching(prep_tx)
        } else {
            let (validation_tx, validation_rx) = channel::<ValidatorInput>();
            {
                let shared = shared.clone();
                threads.push(spawn("batch-validation".into(), move || {
                    validation_worker(validation_rx, &shared.cache, &shared.counters, faults)
                })?);
            }
            if batching == ValidatorBatching::Off {
                Entry::Direct(validation_tx)
            } else {
                let mut reorderers = Vec::new();
                if batching == ValidatorBatching::Reorder {
                    for i in 0..config.reorder_workers {
                        let (tx, rx) = channel();
                        reorderers.push(tx);
                        let shared = shared.clone();
                        let validation = validation_tx.clone();
                        let settings = settings(i);
                        threads.push(spawn(format!("batch-reorder-{i}"), move || {
                            reordering_worker(
                                rx,
                                &shared.cache,
                                settings,
                                validation,
                                &shared.counters,
                            )
                        })?);
                    }
                }
                let (prep_tx, prep_rx) = channel();
                let shared = shared.clone();
                let size = config.batch_size;
                threads.push(spawn("batch-preparation".into(), move || {
                    batch_preparation(
                        prep_rx,
                        batching,
                        size,
                        reorderers,
                        validation_tx,
                        &shared.counters,
                    )
                })?);
                Entry::Batching(prep_tx)
            }
        };
        Ok(Self {
            schema: schema.clone(),
            shapes: Shapes::of(schema),
            config,
            shared,
            recorder,
            storage_queues,
            entry: Some(entry),
            threads,
            storage_threads,
            next_worker: AtomicU32::new(0),
            next_storage: AtomicUsize::new(0),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// The recorder.
    pub fn recorder(&self) -> &Arc<Rec> {
        &self.recorder
    }

    /// The validator's counters since the engine started.
    pub fn validator_counters(&self) -> super::validator::ValidatorSnapshot {
        self.shared.counters.snapshot()
    }

    /// The versioned storage (read access for tests and tools).
    pub fn storage(&self) -> &VersionedStorage {
        &self.shared.storage
    }

    pub(crate) fn allocate_worker_id(&self) -> Result<u32, Error> {
        let id = self.next_worker.fetch_add(1, Ordering::Relaxed);
        if id >= (1 << 23) {
            return Err(Error::invalid(
                "workers",
                id,
                "at most 2^23 workers and processors per engine",
            ));
        }
        Ok(id)
    }

    /// Hands a validation request to the validator.
    pub(crate) fn submit(&self, request: ValidationRequest) -> Result<(), Error> {
        let sent = match &self.entry {
            Some(Entry::Batching(tx)) => tx.send(request).is_ok(),
            Some(Entry::Direct(tx)) => tx.send(ValidatorInput::Single(request)).is_ok(),
            None => false,
        };
        if sent {
            Ok(())
        } else {
            Err(Error::Internal("the validator has stopped".into()))
        }
    }

    fn send_to_storage(&self, worker: usize, request: StorageRequest) -> Result<(), Error> {
        self.storage_queues[worker]
            .send(request)
            .map_err(|_| Error::Internal("a storage worker has stopped".into()))
    }

    /// The storage worker owning `key` under [`StorageRouting::ByKey`].
    fn partition(&self, key: Key) -> usize {
        let h = (key.1 ^ (u64::from(key.0) << 48)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 32) % self.storage_queues.len() as u64) as usize
    }

    /// Asks the storage for `keys` on behalf of `slot` (routing: [`PipelineConfig`]'s
    /// `storage_routing`). Returns how many [`ReadReply`](super::messages::ReadReply) parts
    /// will answer; `parts` is scratch space.
    pub(crate) fn read_from_storage(
        &self,
        slot: u32,
        keys: &[Key],
        reply: &ReplyTo<super::messages::ReadReply>,
        parts: &mut Vec<Vec<Key>>,
    ) -> Result<u32, Error> {
        let n = self.storage_queues.len();
        if n == 1 || self.config.storage_routing == StorageRouting::RoundRobin {
            let i = self.next_storage.fetch_add(1, Ordering::Relaxed) % n;
            let request = StorageRequest::Read {
                slot,
                keys: keys.to_vec(),
                reply: reply.clone(),
            };
            self.send_to_storage(i, request)?;
            return Ok(1);
        }
        parts.resize_with(n, Vec::new);
        for &key in keys {
            parts[self.partition(key)].push(key);
        }
        let mut sent = 0;
        for (i, part) in parts.iter_mut().enumerate() {
            if part.is_empty() {
                continue;
            }
            let request = StorageRequest::Read {
                slot,
                keys: std::mem::take(part),
                reply: reply.clone(),
            };
            self.send_to_storage(i, request)?;
            sent += 1;
        }
        Ok(sent)
    }

    /// Ships a committed transaction's writes, version `ts`, to the storage (same routing as
    /// [`read_from_storage`](Self::read_from_storage)).
    pub(crate) fn write_to_storage(&self, ts: u64, writes: Vec<(Key, Value)>) -> Result<(), Error> {
        let n = self.storage_queues.len();
        if n == 1 || self.config.storage_routing == StorageRouting::RoundRobin {
            let i = self.next_storage.fetch_add(1, Ordering::Relaxed) % n;
            return self.send_to_storage(i, StorageRequest::Write { ts, writes });
        }
        let mut parts: Vec<Vec<(Key, Value)>> = (0..n).map(|_| Vec::new()).collect();
        for (key, value) in writes {
            parts[self.partition(key)].push((key, value));
        }
        for (i, part) in parts.into_iter().enumerate() {
            if !part.is_empty() {
                self.send_to_storage(i, StorageRequest::Write { ts, writes: part })?;
            }
        }
        Ok(())
    }
}

impl<Rec: Recorder> Drop for Pipeline<Rec> {
    fn drop(&mut self) {
        self.entry = None;
        self.storage_queues.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        for t in self.storage_threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Builds the history record of a finished attempt.
pub(crate) fn record_attempt<Rec: Recorder>(
    recorder: &Rec,
    id: u64,
    buffer: &TxnBuffer,
    writes: &[(super::messages::Key, super::messages::Value)],
    outcome: Outcome,
    commit_ts: u64,
    begin_ns: u64,
) {
    let reads = buffer
        .reads()
        .map(|((table, key), version, present)| ReadEvent {
            table: TableId(table),
            key,
            version,
            present,
        })
        .collect();
    let writes = if outcome == Outcome::Committed {
        writes
            .iter()
            .map(|&((table, key), ref value)| WriteEvent {
                table: TableId(table),
                key,
                version: commit_ts,
                order: commit_ts,
                kind: if value.is_some() {
                    WriteKind::Put
                } else {
                    WriteKind::Delete
                },
                visible: true,
            })
            .collect()
    } else {
        Vec::new()
    };
    recorder.record(TxnRecord {
        id,
        reads,
        writes,
        scans: Vec::new(),
        outcome,
        begin_ns,
        end_ns: recorder.now_ns(),
    });
}

impl<Rec: Recorder> Engine for Pipeline<Rec> {
    type Worker<'e>
        = PipelineWorker<'e, Rec>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        match self.config.mode {
            super::config::Mode::Base => "batch-base",
            super::config::Mode::Batch => "batch-batch",
            super::config::Mode::Sr => "batch-sr",
            super::config::Mode::Vc => "batch-vc",
            super::config::Mode::Srvc => "batch-srvc",
        }
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn worker(&self) -> Result<PipelineWorker<'_, Rec>, Error> {
        let id = self.allocate_worker_id()?;
        let (tx, rx) = channel();
        Ok(PipelineWorker {
            engine: self,
            id,
            seq: 0,
            buffer: TxnBuffer::default(),
            reply: Arc::new(tx),
            decisions: rx,
        })
    }

    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        self.shapes.check_value(table, key, value)?;
        self.shared.storage.load((table.0, key), value);
        Ok(())
    }
}

/// A synchronous client of the pipeline (module docs).
pub struct PipelineWorker<'e, Rec: Recorder = NoRecorder> {
    engine: &'e Pipeline<Rec>,
    id: u32,
    seq: u64,
    buffer: TxnBuffer,
    reply: ReplyTo<Decision>,
    decisions: Receiver<Decision>,
}

impl<Rec: Recorder> std::fmt::Debug for PipelineWorker<'_, Rec> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineWorker")
            .field("id", &self.id)
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

impl<'e, Rec: Recorder> Worker for PipelineWorker<'e, Rec> {
    type Txn<'w>
        = PipelineTxn<'w, 'e, Rec>
    where
        Self: 'w;

    fn begin(&mut self) -> PipelineTxn<'_, 'e, Rec> {
        self.buffer.clear();
        self.seq += 1;
        let begin_ns = if Rec::ENABLED {
            self.engine.recorder.now_ns()
        } else {
            0
        };
        PipelineTxn {
            worker: self,
            begin_ns,
            finished: false,
        }
    }

    fn id(&self) -> u32 {
        self.id
    }
}

/// An open interactive transaction of the pipeline.
pub struct PipelineTxn<'w, 'e, Rec: Recorder = NoRecorder> {
    worker: &'w mut PipelineWorker<'e, Rec>,
    begin_ns: u64,
    finished: bool,
}

impl<Rec: Recorder> std::fmt::Debug for PipelineTxn<'_, '_, Rec> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineTxn")
            .field("worker", &self.worker.id)
            .field("seq", &self.worker.seq)
            .finish_non_exhaustive()
    }
}

impl<Rec: Recorder> PipelineTxn<'_, '_, Rec> {
    fn ops(&mut self) -> Execution<'_> {
        Execution {
            storage: &self.worker.engine.shared.storage,
            shapes: &self.worker.engine.shapes,
            buffer: &mut self.worker.buffer,
        }
    }

    fn record(&self, outcome: Outcome, ts: u64) {
        if Rec::ENABLED {
            let w = &*self.worker;
            record_attempt(
                &*w.engine.recorder,
                txn_id(w.id, w.seq),
                &w.buffer,
                w.buffer.writes(),
                outcome,
                ts,
                self.begin_ns,
            );
        }
    }
}

impl<Rec: Recorder> TxOps for PipelineTxn<'_, '_, Rec> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        let w = &mut *self.worker;
        w.buffer
            .read(&w.engine.shared.storage, &w.engine.shapes, table, key)
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.ops().write(table, key, value)
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.ops().update(table, key, f)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.ops().insert(table, key, value)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.ops().delete(table, key)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        self.ops().scan(table, lo, hi, visit)
    }
}

impl<Rec: Recorder> Transaction for PipelineTxn<'_, '_, Rec> {
    fn commit(mut self) -> TxResult<CommitInfo> {
        self.finished = true;
        let w = &mut *self.worker;
        let request = ValidationRequest {
            slot: 0,
            reads: w.buffer.reads().map(|(k, v, _)| (k, v)).collect(),
            writes: w.buffer.writes().iter().map(|(k, _)| *k).collect(),
            restarts: 0,
            snapshot_ts: 0,
            reply: w.reply.clone(),
        };
        let read_only = request.writes.is_empty();
        w.engine.submit(request)?;
        let decision = w
            .decisions
            .recv()
            .map_err(|_| Error::Internal("the validator has stopped".into()))?;
        match decision.outcome {
            Ok(ts) => {
                for (key, value) in w.buffer.writes() {
                    w.engine.shared.storage.put(*key, ts, value.clone());
                }
                self.record(Outcome::Committed, ts);
                Ok(CommitInfo {
                    epoch: 0,
                    acknowledged: true,
                    read_only,
                })
            }
            Err(cause) => {
                self.record(Outcome::Aborted(cause), 0);
                Err(TxError::Conflict(Conflict::new(cause)))
            }
        }
    }

    fn abort(mut self) {
        self.finished = true;
        self.record(Outcome::UserAborted, 0);
    }
}

impl<Rec: Recorder> Drop for PipelineTxn<'_, '_, Rec> {
    fn drop(&mut self) {
        if !self.finished {
            self.record(Outcome::UserAborted, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::{Mode, StorageRouting};
    use super::*;
    use std::sync::mpsc::channel;
    use txlab_core::TableSpec;

    /// A commit's writes shipped by a processor and a read of the same keys queued right after
    /// reach the same storage worker in that order, so the read sees the write, whichever of the
    /// two storage workers owns each key.
    #[test]
    fn a_read_queued_after_a_write_sees_it_with_routing_by_key() {
        let mut schema = Schema::new();
        schema.add(TableSpec::dense("t", 8, 1 << 20)).unwrap();
        let config = PipelineConfig::default()
            .with_mode(Mode::Base)
            .with_threads(1, 1, 2, 1)
            .with_storage_routing(StorageRouting::ByKey);
        let engine = Pipeline::builder().config(config).build(&schema).unwrap();
        let (tx, rx) = channel();
        let reply: ReplyTo<super::super::messages::ReadReply> = Arc::new(tx);
        let mut parts = Vec::new();
        let mut expected_parts = 0;
        for round in 0..200u64 {
            let keys: Vec<Key> = (0..10).map(|i| (0, round * 10 + i)).collect();
            let writes = keys
                .iter()
                .map(|&k| (k, Some(vec![1u8; 8].into())))
                .collect();
            engine.write_to_storage(round + 1, writes).unwrap();
            expected_parts += engine
                .read_from_storage(round as u32, &keys, &reply, &mut parts)
                .unwrap();
        }
        drop(reply);
        let mut seen_keys = 0;
        let mut replies = 0;
        for r in rx.iter().take(expected_parts as usize) {
            replies += 1;
            for (key, version, _) in r.values {
                seen_keys += 1;
                assert_eq!(version, u64::from(r.slot) + 1, "key {key:?} read stale");
            }
        }
        assert_eq!(replies, expected_parts);
        assert_eq!(seen_keys, 2000);
        assert!(expected_parts > 200, "keys are spread over both workers");
    }
}
