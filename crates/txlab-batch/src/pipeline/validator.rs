//! The centralized validator (Ding, Kot, Gehrke, VLDB 2018, §2, §3.2, §5.1 and appendix A).
//!
//! Backward validation against a cache of committed writes: the [`ValidatorCache`] maps every
//! key written by a committed transaction to the commit timestamp of its latest writer. A read of
//! `key` at version `v` is *current* when the cache holds `v` for `key` (or nothing and `v = 0`,
//! the loaded version). A transaction passes when all its reads are current; it then gets the
//! next commit timestamp `ts` and the cache records `ts` for each key it writes. The storage
//! installs its writes as version `ts` (see [`super::storage`]).
//!
//! **Why this is serializable.** Commit timestamps are assigned by one validation worker, one
//! transaction at a time, in increasing order, and the cache is updated before the next one is
//! validated. A committed `T` with timestamp `ts` read, for every key, the version written by the
//! latest transaction with a smaller timestamp (that is what "current" means at the moment `T` is
//! validated), and its writes are the versions with number `ts`. So the history is equivalent
//! to the serial history in timestamp order. Storage lag (writes of committed transactions not
//! yet installed) only makes reads stale, which validation then rejects.
//!
//! Stages, each on its own thread(s), connected by queues:
//!
//! 1. **Batch preparation** (one thread): takes the first waiting request, then whatever else is
//!    already queued, up to the batch size (it never waits for a batch to fill, so an idle system
//!    validates a lone transaction at once), and hands the batch to a reordering worker
//!    (round-robin) or, without reordering, straight to the validation worker.
//! 2. **Reordering workers** (several, in parallel; appendix A): *pre-validate* every transaction
//!    against the current cache (a stale read cannot commit, so it is aborted before the graph is
//!    built), build the dependency graph of the viable ones ([`GraphBuilder`]), abort a feedback
//!    vertex set and order the rest topologically ([`reorder()`](crate::reorder())). Batches may
//!    leave the reordering stage in any order.
//! 3. **Validation worker** (one thread): validates every batch, in the order reordering
//!    produced, against the cache as it is *now* (other batches may have committed since
//!    pre-validation, appendix A's "stale snapshot S vs S'"), assigns commit timestamps and
//!    updates the cache.
//!
//! Without validator batching ([`ValidatorBatching::Off`], modes `base` and `sr`) requests go
//! straight to the validation worker.
//!
//! **Single-thread layout** (`reorder_workers = 0`, `single_thread_validator`): one thread runs
//! stages 1 to 3 back to back on each batch. Nothing in the protocol changes: the batch is
//! pre-validated, reordered and validated as above; only the queues between the stages are gone.
//! Pre-validation then sees the cache exactly as the final validation starts with it, and the
//! order puts every reader before the batch's writers of what it read, so the final validation
//! aborts nothing unless the reordering failed and the batch fell back to arrival order. On a
//! machine with fewer cores than the staged layout has threads, the stages would only take
//! turns on the same cores, paying two thread wake-ups per batch.

use super::config::{ReorderPolicy, ValidatorBatching};
use super::messages::{Decision, Key, OrderedBatch, ValidationRequest};
use crate::fvs::{Algorithm, Policy, Refinement};
use crate::graph::GraphBuilder;
use crate::reorder::{ReorderScratch, reorder_refined};
use foldhash::HashMap;
use std::time::Instant;
use txlab_core::ConflictCause;
use txlab_core::protocol::sync::mpsc::{Receiver, Sender};
use txlab_core::protocol::sync::{AtomicU64, Ordering};
use txlab_core::protocol::sync::{IgnorePoison, RwLock};

const SHARDS: usize = 64;

/// Latest committed version of every key written since the start (module docs).
///
/// Written only by the validation worker; read concurrently by reordering workers.
#[derive(Debug)]
pub struct ValidatorCache {
    shards: Box<[RwLock<HashMap<Key, u64>>]>,
    /// The highest commit timestamp assigned so far (published after the cache records the
    /// transaction's writes).
    last_commit: AtomicU64,
}

impl Default for ValidatorCache {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn shard_of(key: Key) -> usize {
    let h = (key.1 ^ ((key.0 as u64) << 48)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 58) as usize % SHARDS
}

impl ValidatorCache {
    /// An empty cache (every key at its loaded version 0).
    pub fn new() -> Self {
        Self {
            shards: (0..SHARDS)
                .map(|_| RwLock::new(HashMap::default()))
                .collect(),
            last_commit: AtomicU64::new(0),
        }
    }

    /// The highest commit timestamp assigned so far (0 before the first commit). Every write of
    /// a transaction with a timestamp up to this value is already in the cache.
    pub fn last_commit(&self) -> u64 {
        self.last_commit.load(Ordering::Acquire)
    }

    /// Why `reads` fail validation: `None` if every read is current; otherwise whether some
    /// stale read was already stale when the storage served it (its key's latest committed
    /// version is at most `snapshot_ts`: storage lag) or all were overwritten afterwards.
    pub fn staleness(&self, reads: &[(Key, u64)], snapshot_ts: u64) -> Option<Staleness> {
        let mut found = None;
        for &(key, version) in reads {
            let latest = self.latest(key);
            if latest != version {
                if latest <= snapshot_ts {
                    return Some(Staleness::StaleWhenRead);
                }
                found = Some(Staleness::OverwrittenAfterRead);
            }
        }
        found
    }

    /// The latest committed version of `key`.
    pub fn latest(&self, key: Key) -> u64 {
        self.shards[shard_of(key)]
            .read()
            .ignore_poison()
            .get(&key)
            .copied()
            .unwrap_or(0)
    }

    /// Whether every read is of the latest committed version.
    pub fn all_current(&self, reads: &[(Key, u64)]) -> bool {
        reads
            .iter()
            .all(|&(key, version)| self.latest(key) == version)
    }

    fn record(&self, key: Key, ts: u64) {
        self.shards[shard_of(key)]
            .write()
            .ignore_poison()
            .insert(key, ts);
    }

    fn publish(&self, ts: u64) {
        self.last_commit.store(ts, Ordering::Release);
    }
}

/// Why a transaction's reads were not current (diagnostics, see [`ValidatorCache::staleness`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staleness {
    /// Some read returned a version older than a write committed before the read was served: the
    /// write had not reached the storage yet (storage lag, an inter-batch abort the pipeline
    /// itself caused).
    StaleWhenRead,
    /// Every stale read was current when served and overwritten by a later commit (a real
    /// conflict with a concurrent transaction).
    OverwrittenAfterRead,
}

/// Counters of the validator stages, shared by their threads (monotonic; a run reports the
/// difference between two snapshots).
#[derive(Debug, Default)]
pub struct ValidatorCounters {
    /// Batches the batch preparation stage formed.
    pub batches: AtomicU64,
    /// Transactions that went through reordering (a reordering worker, or the single-thread
    /// validator).
    pub reordered_txns: AtomicU64,
    /// Nanoseconds spent on pre-validation, graph building and reordering (wall clock).
    pub reorder_ns: AtomicU64,
    /// Batches whose reordering failed and were validated in arrival order instead.
    pub reorder_failures: AtomicU64,
    /// Transactions aborted by pre-validation.
    pub prevalidation_aborts: AtomicU64,
    /// Transactions aborted to break dependency cycles (the feedback vertex sets).
    pub reordering_aborts: AtomicU64,
    /// Transactions aborted by the final validation.
    pub validation_aborts: AtomicU64,
    /// Transactions committed.
    pub commits: AtomicU64,
    /// Transactions aborted (by pre-validation or the final validation) with a read that was
    /// already stale when the storage served it ([`Staleness::StaleWhenRead`]).
    pub stale_when_read_aborts: AtomicU64,
}

/// A snapshot of [`ValidatorCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValidatorSnapshot {
    /// See [`ValidatorCounters::batches`].
    pub batches: u64,
    /// See [`ValidatorCounters::reordered_txns`].
    pub reordered_txns: u64,
    /// See [`ValidatorCounters::reorder_ns`].
    pub reorder_ns: u64,
    /// See [`ValidatorCounters::reorder_failures`].
    pub reorder_failures: u64,
    /// See [`ValidatorCounters::prevalidation_aborts`].
    pub prevalidation_aborts: u64,
    /// See [`ValidatorCounters::reordering_aborts`].
    pub reordering_aborts: u64,
    /// See [`ValidatorCounters::validation_aborts`].
    pub validation_aborts: u64,
    /// See [`ValidatorCounters::commits`].
    pub commits: u64,
    /// See [`ValidatorCounters::stale_when_read_aborts`].
    pub stale_when_read_aborts: u64,
}

impl ValidatorCounters {
    /// The current values.
    pub fn snapshot(&self) -> ValidatorSnapshot {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ValidatorSnapshot {
            batches: l(&self.batches),
            reordered_txns: l(&self.reordered_txns),
            reorder_ns: l(&self.reorder_ns),
            reorder_failures: l(&self.reorder_failures),
            prevalidation_aborts: l(&self.prevalidation_aborts),
            reordering_aborts: l(&self.reordering_aborts),
            validation_aborts: l(&self.validation_aborts),
            commits: l(&self.commits),
            stale_when_read_aborts: l(&self.stale_when_read_aborts),
        }
    }
}

impl ValidatorSnapshot {
    /// `self - earlier`, field by field.
    pub fn since(&self, earlier: &ValidatorSnapshot) -> ValidatorSnapshot {
        ValidatorSnapshot {
            batches: self.batches - earlier.batches,
            reordered_txns: self.reordered_txns - earlier.reordered_txns,
            reorder_ns: self.reorder_ns - earlier.reorder_ns,
            reorder_failures: self.reorder_failures - earlier.reorder_failures,
            prevalidation_aborts: self.prevalidation_aborts - earlier.prevalidation_aborts,
            reordering_aborts: self.reordering_aborts - earlier.reordering_aborts,
            validation_aborts: self.validation_aborts - earlier.validation_aborts,
            commits: self.commits - earlier.commits,
            stale_when_read_aborts: self.stale_when_read_aborts - earlier.stale_when_read_aborts,
        }
    }
}

/// What the validation worker receives.
#[derive(Debug)]
pub(crate) enum ValidatorInput {
    /// One request, validated on its own (no validator batching).
    Single(ValidationRequest),
    /// A batch in validation order.
    Ordered(OrderedBatch),
}

/// Takes `first` and whatever else is already queued, up to `batch_size` requests (never
/// waits for a batch to fill).
fn gather(
    first: ValidationRequest,
    queue: &Receiver<ValidationRequest>,
    batch_size: usize,
) -> Vec<ValidationRequest> {
    let mut batch = Vec::with_capacity(batch_size);
    batch.push(first);
    while batch.len() < batch_size {
        match queue.try_recv() {
            Ok(r) => batch.push(r),
            Err(_) => break,
        }
    }
    batch
}

/// A batch to validate in arrival order (mode `batch`).
fn arrival_order(batch: Vec<ValidationRequest>) -> OrderedBatch {
    OrderedBatch {
        txns: batch.into_iter().map(|r| (r, None)).collect(),
    }
}

/// Stage 1: forms batches (module docs). With reordering, `reorderers` is not empty.
pub(crate) fn batch_preparation(
    queue: Receiver<ValidationRequest>,
    batching: ValidatorBatching,
    batch_size: usize,
    reorderers: Vec<Sender<Vec<ValidationRequest>>>,
    validation: Sender<ValidatorInput>,
    counters: &ValidatorCounters,
) {
    let mut next = 0usize;
    while let Ok(first) = queue.recv() {
        let batch = gather(first, &queue, batch_size);
        counters.batches.fetch_add(1, Ordering::Relaxed);
        let sent = if batching == ValidatorBatching::Reorder && !reorderers.is_empty() {
            next = (next + 1) % reorderers.len();
            reorderers[next].send(batch).is_ok()
        } else {
            validation
                .send(ValidatorInput::Ordered(arrival_order(batch)))
                .is_ok()
        };
        if !sent {
            return;
        }
    }
}

/// What a reordering worker runs on each batch (from the pipeline's configuration).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReorderSettings {
    pub algorithm: Algorithm,
    pub policy: ReorderPolicy,
    pub refinement: Refinement,
    /// Seeds the random policies.
    pub seed: u64,
}

/// Stage 2's work on one batch: pre-validation, the dependency graph, the feedback vertex set
/// and the validation order (module docs). Keeps its buffers across batches.
pub(crate) struct BatchReorderer {
    settings: ReorderSettings,
    restarts: Vec<u32>,
    builder: GraphBuilder<Key>,
    scratch: ReorderScratch,
    read_keys: Vec<Key>,
    viable: Vec<usize>,
    verdicts: Vec<Option<ConflictCause>>,
    order: Vec<usize>,
}

impl BatchReorderer {
    pub(crate) fn new(settings: ReorderSettings) -> Self {
        Self {
            settings,
            restarts: Vec::new(),
            builder: GraphBuilder::new(),
            scratch: ReorderScratch::new(settings.seed),
            read_keys: Vec::new(),
            viable: Vec::new(),
            verdicts: Vec::new(),
            order: Vec::new(),
        }
    }

    /// Pre-validates `batch` against `cache`, aborts a feedback vertex set of the viable
    /// transactions' dependency graph and returns the batch in validation order, each
    /// transaction with its verdict (`Some` for the aborted, which come last).
    pub(crate) fn order(
        &mut self,
        batch: Vec<ValidationRequest>,
        cache: &ValidatorCache,
        counters: &ValidatorCounters,
    ) -> OrderedBatch {
        let started = Instant::now();
        let Self {
            settings,
            restarts,
            builder,
            scratch,
            read_keys,
            viable,
            verdicts,
            order,
        } = self;
        builder.reset();
        viable.clear();
        restarts.clear();
        verdicts.clear();
        verdicts.resize(batch.len(), None);
        order.clear();
        let (mut prevalidation_aborts, mut stale_when_read) = (0, 0);
        for (i, request) in batch.iter().enumerate() {
            if let Some(staleness) = cache.staleness(&request.reads, request.snapshot_ts) {
                verdicts[i] = Some(ConflictCause::ReadValidation);
                prevalidation_aborts += 1;
                stale_when_read += u64::from(staleness == Staleness::StaleWhenRead);
                continue;
            }
            read_keys.clear();
            read_keys.extend(request.reads.iter().map(|&(k, _)| k));
            // Cannot fail: a batch is far below the builder's limits (checked config).
            if builder.push(read_keys, &request.writes).is_err() {
                verdicts[i] = Some(ConflictCause::Reordering);
                continue;
            }
            viable.push(i);
            restarts.push(request.restarts);
        }
        let graph = builder.build();
        let mut reordering_aborts = 0;
        let policy = match settings.policy {
            ReorderPolicy::ProdDegree => Policy::ProdDegree,
            ReorderPolicy::Rct => Policy::Rct { restarts },
            ReorderPolicy::Rdeg => Policy::Rdeg { restarts },
        };
        match reorder_refined(
            graph,
            settings.algorithm,
            policy,
            settings.refinement,
            scratch,
        ) {
            Ok(result) => {
                for &node in &result.abort {
                    verdicts[viable[node]] = Some(ConflictCause::Reordering);
                    reordering_aborts += 1;
                }
                order.extend(result.order.iter().map(|&node| viable[node]));
            }
            Err(_) => {
                // Validate in arrival order; the final validation keeps this correct.
                counters.reorder_failures.fetch_add(1, Ordering::Relaxed);
                order.extend(viable.iter().copied());
            }
        }
        // The aborted ones follow the ordered ones (their position does not matter).
        order.extend((0..batch.len()).filter(|&i| verdicts[i].is_some()));
        counters
            .reorder_ns
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        counters
            .reordered_txns
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        counters
            .prevalidation_aborts
            .fetch_add(prevalidation_aborts, Ordering::Relaxed);
        counters
            .stale_when_read_aborts
            .fetch_add(stale_when_read, Ordering::Relaxed);
        counters
            .reordering_aborts
            .fetch_add(reordering_aborts, Ordering::Relaxed);
        let mut slots: Vec<Option<ValidationRequest>> = batch.into_iter().map(Some).collect();
        let txns = order
            .iter()
            .filter_map(|&i| slots[i].take().map(|r| (r, verdicts[i])))
            .collect();
        OrderedBatch { txns }
    }
}

/// Stage 2: pre-validation and reordering of one batch at a time (module docs).
pub(crate) fn reordering_worker(
    queue: Receiver<Vec<ValidationRequest>>,
    cache: &ValidatorCache,
    settings: ReorderSettings,
    validation: Sender<ValidatorInput>,
    counters: &ValidatorCounters,
) {
    let mut reorderer = BatchReorderer::new(settings);
    while let Ok(batch) = queue.recv() {
        let ordered = reorderer.order(batch, cache, counters);
        if validation.send(ValidatorInput::Ordered(ordered)).is_err() {
            return;
        }
    }
}

/// What the validation worker may be told to break (tests only).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ValidationFaults {
    pub(crate) skip_read_check: bool,
}

/// Stage 3's work: validates transactions one at a time in the order given, assigns commit
/// timestamps and records committed writes in the cache (module docs).
struct InOrderValidator<'a> {
    next_ts: u64,
    cache: &'a ValidatorCache,
    counters: &'a ValidatorCounters,
    faults: ValidationFaults,
}

impl<'a> InOrderValidator<'a> {
    fn new(
        cache: &'a ValidatorCache,
        counters: &'a ValidatorCounters,
        faults: ValidationFaults,
    ) -> Self {
        Self {
            next_ts: 1,
            cache,
            counters,
            faults,
        }
    }

    /// Decides `request` (aborted outright if `verdict` is `Some`) and delivers the decision.
    fn decide(&mut self, request: ValidationRequest, verdict: Option<ConflictCause>) {
        let (cache, counters) = (self.cache, self.counters);
        let staleness = match verdict {
            Some(_) => None,
            None if self.faults.skip_read_check => None,
            None => cache.staleness(&request.reads, request.snapshot_ts),
        };
        let outcome = match (verdict, staleness) {
            (Some(cause), _) => Err(cause),
            (None, None) => {
                let ts = self.next_ts;
                self.next_ts += 1;
                for &key in &request.writes {
                    cache.record(key, ts);
                }
                cache.publish(ts);
                counters.commits.fetch_add(1, Ordering::Relaxed);
                Ok(ts)
            }
            (None, Some(staleness)) => {
                counters.validation_aborts.fetch_add(1, Ordering::Relaxed);
                if staleness == Staleness::StaleWhenRead {
                    counters
                        .stale_when_read_aborts
                        .fetch_add(1, Ordering::Relaxed);
                }
                Err(ConflictCause::ReadValidation)
            }
        };
        request.reply.deliver(Decision {
            slot: request.slot,
            outcome,
        });
    }

    fn validate(&mut self, input: ValidatorInput) {
        match input {
            ValidatorInput::Single(request) => self.decide(request, None),
            ValidatorInput::Ordered(batch) => {
                for (request, verdict) in batch.txns {
                    self.decide(request, verdict);
                }
            }
        }
    }
}

/// Stage 3: in-order validation and commit timestamps (module docs).
pub(crate) fn validation_worker(
    queue: Receiver<ValidatorInput>,
    cache: &ValidatorCache,
    counters: &ValidatorCounters,
    faults: ValidationFaults,
) {
    let mut validator = InOrderValidator::new(cache, counters, faults);
    while let Ok(input) = queue.recv() {
        validator.validate(input);
    }
}

/// The single-thread layout (no reordering workers, `PipelineConfig::reorder_workers == 0`):
/// one thread forms each batch, reorders it (with [`ValidatorBatching::Reorder`]) and validates
/// it, stages 1 to 3 in a row. The protocol is the same; there are no thread hops between the
/// stages, and pre-validation sees the cache exactly as the final validation will.
pub(crate) fn single_thread_validator(
    queue: Receiver<ValidationRequest>,
    batching: ValidatorBatching,
    batch_size: usize,
    settings: ReorderSettings,
    cache: &ValidatorCache,
    counters: &ValidatorCounters,
    faults: ValidationFaults,
) {
    let mut reorderer =
        (batching == ValidatorBatching::Reorder).then(|| BatchReorderer::new(settings));
    let mut validator = InOrderValidator::new(cache, counters, faults);
    while let Ok(first) = queue.recv() {
        let batch = gather(first, &queue, batch_size);
        counters.batches.fetch_add(1, Ordering::Relaxed);
        let ordered = match &mut reorderer {
            Some(r) => r.order(batch, cache, counters),
            None => arrival_order(batch),
        };
        validator.validate(ValidatorInput::Ordered(ordered));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::messages::ReplyTo;
    use std::sync::Arc;
    use std::sync::mpsc::channel;

    /// The reordering settings the tests use (no refinement, seed 1).
    fn settings(algorithm: Algorithm, policy: ReorderPolicy) -> ReorderSettings {
        ReorderSettings {
            algorithm,
            policy,
            refinement: Refinement::None,
            seed: 1,
        }
    }

    fn request(
        slot: u32,
        reads: &[u64],
        writes: &[u64],
        reply: &ReplyTo<Decision>,
    ) -> ValidationRequest {
        ValidationRequest {
            slot,
            reads: reads.iter().map(|&k| ((0, k), 0)).collect(),
            writes: writes.iter().map(|&k| (0, k)).collect(),
            restarts: 0,
            snapshot_ts: 0,
            reply: reply.clone(),
        }
    }

    /// The batch `t0: r1 w2`, `t1: r2 w3`, `t2: r9 w9` (stale read of 9), validated through
    /// the stages with or without reordering. Returns the decisions by slot.
    fn decide(reorder_batch: bool) -> (Vec<Result<u64, ConflictCause>>, ValidatorSnapshot) {
        let cache = ValidatorCache::new();
        cache.record((0, 9), 5); // key 9 was committed at ts 5 after t2 read version 0
        let counters = ValidatorCounters::default();
        let (reply_tx, reply_rx) = channel();
        let reply: ReplyTo<Decision> = Arc::new(reply_tx);
        let batch = vec![
            request(0, &[1], &[2], &reply),
            request(1, &[2], &[3], &reply),
            request(2, &[9], &[9], &reply),
        ];
        let (val_tx, val_rx) = channel();
        if reorder_batch {
            let (tx, rx) = channel();
            tx.send(batch).unwrap();
            drop(tx);
            reordering_worker(
                rx,
                &cache,
                settings(Algorithm::SccGreedy, ReorderPolicy::ProdDegree),
                val_tx,
                &counters,
            );
        } else {
            let txns = batch.into_iter().map(|r| (r, None)).collect();
            val_tx
                .send(ValidatorInput::Ordered(OrderedBatch { txns }))
                .unwrap();
            drop(val_tx);
        }
        validation_worker(val_rx, &cache, &counters, ValidationFaults::default());
        drop(reply);
        let mut out = vec![Err(ConflictCause::LockBusy); 3];
        for d in reply_rx.iter() {
            out[d.slot as usize] = d.outcome;
        }
        (out, counters.snapshot())
    }

    #[test]
    fn reordering_commits_the_reader_that_arrival_order_aborts() {
        // Arrival order: t0 commits and writes 2, which t1 read: t1 fails; t2 read a stale 9.
        let (arrival, _) = decide(false);
        assert!(arrival[0].is_ok());
        assert_eq!(arrival[1], Err(ConflictCause::ReadValidation));
        assert_eq!(arrival[2], Err(ConflictCause::ReadValidation));
        // Reordered: t2 is dropped by pre-validation, t1 goes before t0, both commit, and the
        // commit timestamps follow the validation order.
        let (reordered, counters) = decide(true);
        assert_eq!(reordered[2], Err(ConflictCause::ReadValidation));
        let (t0, t1) = (reordered[0].unwrap(), reordered[1].unwrap());
        assert!(
            t1 < t0,
            "t1 (reader of 2) is serialized before t0 (writer of 2)"
        );
        assert_eq!(counters.prevalidation_aborts, 1);
        assert_eq!(counters.reordered_txns, 3);
        assert_eq!(counters.commits, 2);
    }

    /// A decision as delivered: the request's slot and its outcome.
    type SlotDecision = (u32, Result<u64, ConflictCause>);

    /// Queues `requests` (all at once, so they form one batch), runs the single-thread
    /// validator until the queue closes, and returns the decisions in delivery order with the
    /// counters.
    fn single_thread(
        batching: ValidatorBatching,
        cache: &ValidatorCache,
        requests: Vec<ValidationRequest>,
        reply: ReplyTo<Decision>,
        replies: std::sync::mpsc::Receiver<Decision>,
    ) -> (Vec<SlotDecision>, ValidatorSnapshot) {
        let counters = ValidatorCounters::default();
        let (tx, rx) = channel();
        for r in requests {
            tx.send(r).unwrap();
        }
        drop(tx);
        single_thread_validator(
            rx,
            batching,
            40,
            settings(
                Algorithm::SortGreedy { multi: 2 },
                ReorderPolicy::ProdDegree,
            ),
            cache,
            &counters,
            ValidationFaults::default(),
        );
        drop(reply);
        let decisions = replies.iter().map(|d| (d.slot, d.outcome)).collect();
        (decisions, counters.snapshot())
    }

    #[test]
    fn the_single_thread_layout_decides_like_the_stages() {
        let cache = ValidatorCache::new();
        cache.record((0, 9), 5);
        let (reply_tx, reply_rx) = channel();
        let reply: ReplyTo<Decision> = Arc::new(reply_tx);
        // The batch of `decide` plus t3: r3 w1. A reader must be validated before the writer
        // of what it read: t1 before t0 (key 2), t3 before t1 (key 3), t0 before t3 (key 1).
        // That is a cycle of three, so one of them goes; t2's stale read is dropped first.
        let (decisions, c) = single_thread(
            ValidatorBatching::Reorder,
            &cache,
            vec![
                request(0, &[1], &[2], &reply),
                request(1, &[2], &[3], &reply),
                request(2, &[9], &[9], &reply),
                request(3, &[3], &[1], &reply),
            ],
            reply,
            reply_rx,
        );
        let mut out = vec![Err(ConflictCause::LockBusy); 4];
        for (slot, outcome) in decisions {
            out[slot as usize] = outcome;
        }
        assert_eq!(c.batches, 1, "all four were queued, so one batch");
        assert_eq!(out[2], Err(ConflictCause::ReadValidation));
        assert_eq!(c.prevalidation_aborts, 1);
        assert_eq!(c.reordering_aborts, 1, "{out:?}");
        assert_eq!(c.commits, 2, "{out:?}");
        // Pre-validation saw the cache the final validation started from, and the order
        // accounts for the batch's own writes: the final validation aborts nothing.
        assert_eq!(c.validation_aborts, 0);
        assert_eq!(c.reordered_txns, 4);
    }

    #[test]
    fn the_single_thread_layout_without_reordering_validates_in_arrival_order() {
        let (reply_tx, reply_rx) = channel();
        let reply: ReplyTo<Decision> = Arc::new(reply_tx);
        let (outcomes, c) = single_thread(
            ValidatorBatching::ArrivalOrder,
            &ValidatorCache::new(),
            vec![
                request(0, &[1], &[2], &reply),
                request(1, &[2], &[3], &reply),
            ],
            reply,
            reply_rx,
        );
        assert_eq!(
            outcomes,
            vec![(0, Ok(1)), (1, Err(ConflictCause::ReadValidation))]
        );
        assert_eq!(c.reordered_txns, 0);
    }

    #[test]
    fn a_cycle_loses_one_transaction_to_the_feedback_vertex_set() {
        let cache = ValidatorCache::new();
        let counters = ValidatorCounters::default();
        let (reply_tx, reply_rx) = channel();
        let reply: ReplyTo<Decision> = Arc::new(reply_tx);
        // t0 reads 1 writes 2, t1 reads 2 writes 1: a 2-cycle.
        let (tx, rx) = channel();
        tx.send(vec![
            request(0, &[1], &[2], &reply),
            request(1, &[2], &[1], &reply),
        ])
        .unwrap();
        drop(tx);
        let (val_tx, val_rx) = channel();
        reordering_worker(
            rx,
            &cache,
            settings(
                Algorithm::SortGreedy { multi: 2 },
                ReorderPolicy::ProdDegree,
            ),
            val_tx,
            &counters,
        );
        validation_worker(val_rx, &cache, &counters, ValidationFaults::default());
        drop(reply);
        let outcomes: Vec<_> = reply_rx.iter().map(|d| d.outcome).collect();
        assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 1);
        assert!(outcomes.contains(&Err(ConflictCause::Reordering)));
        assert_eq!(counters.snapshot().reordering_aborts, 1);
    }

    /// The 2-cycle `t0: r1 w2` (restarted 5 times), `t1: r2 w1` (never restarted): one of them
    /// must go. Returns the slot the given policy aborts.
    fn aborted_under(policy: ReorderPolicy) -> u32 {
        let cache = ValidatorCache::new();
        let counters = ValidatorCounters::default();
        let (reply_tx, reply_rx) = channel();
        let reply: ReplyTo<Decision> = Arc::new(reply_tx);
        let mut t0 = request(0, &[1], &[2], &reply);
        t0.restarts = 5;
        let t1 = request(1, &[2], &[1], &reply);
        let (tx, rx) = channel();
        tx.send(vec![t0, t1]).unwrap();
        drop(tx);
        let (val_tx, val_rx) = channel();
        reordering_worker(
            rx,
            &cache,
            settings(Algorithm::SortGreedy { multi: 2 }, policy),
            val_tx,
            &counters,
        );
        validation_worker(val_rx, &cache, &counters, ValidationFaults::default());
        drop(reply);
        let aborted: Vec<u32> = reply_rx
            .iter()
            .filter(|d| d.outcome == Err(ConflictCause::Reordering))
            .map(|d| d.slot)
            .collect();
        assert_eq!(aborted.len(), 1, "{policy:?}: {aborted:?}");
        aborted[0]
    }

    #[test]
    fn the_configured_policy_sees_the_restart_counts() {
        // Prod-degree ties (both 1 × 1) go to the lowest node: the often-restarted t0 loses.
        assert_eq!(aborted_under(ReorderPolicy::ProdDegree), 0);
        // rct protects the restarted transaction; rdeg halves its weight five times.
        assert_eq!(aborted_under(ReorderPolicy::Rct), 1);
        assert_eq!(aborted_under(ReorderPolicy::Rdeg), 1);
    }

    #[test]
    fn staleness_separates_storage_lag_from_later_overwrites() {
        let cache = ValidatorCache::new();
        cache.record((0, 1), 3);
        cache.record((0, 2), 8);
        cache.publish(8);
        // Key 1 read at version 0 although ts 3 had committed before the read (snapshot 5).
        assert_eq!(
            cache.staleness(&[((0, 1), 0), ((0, 2), 8)], 5),
            Some(Staleness::StaleWhenRead)
        );
        // Key 2 read at version 0 with snapshot 5: ts 8 committed after the read.
        assert_eq!(
            cache.staleness(&[((0, 1), 3), ((0, 2), 0)], 5),
            Some(Staleness::OverwrittenAfterRead)
        );
        assert_eq!(cache.staleness(&[((0, 1), 3), ((0, 2), 8)], 5), None);
        assert_eq!(cache.last_commit(), 8);
    }
}
