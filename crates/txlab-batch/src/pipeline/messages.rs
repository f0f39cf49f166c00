//! The messages on the pipeline's consumer-producer queues (std `mpsc` channels).
//!
//! Replies travel through a [`Sink`] carried in the request, so the storage and the validator
//! answer processors (whose queue also carries transaction requests of their workload's program
//! type) and interactive workers (which wait on a queue of their own) without knowing which.

use txlab_core::ConflictCause;
use txlab_core::protocol::sync::Arc;
use txlab_core::protocol::sync::mpsc::Sender;

/// A key: `(table id, key)`.
pub type Key = (u16, u64);

/// A value as stored and shipped: `None` for an absent (deleted or never created) key.
pub type Value = Option<Box<[u8]>>;

/// Where a reply goes.
pub trait Sink<T>: Send + Sync {
    /// Delivers a reply. A closed destination drops it (the requester has gone away).
    fn deliver(&self, msg: T);
}

impl<T: Send> Sink<T> for Sender<T> {
    fn deliver(&self, msg: T) {
        let _ = self.send(msg);
    }
}

impl<T> std::fmt::Debug for dyn Sink<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sink")
    }
}

/// A shared reply destination.
pub type ReplyTo<T> = Arc<dyn Sink<T>>;

/// A request to a storage worker.
#[derive(Debug)]
pub enum StorageRequest {
    /// Read `keys` and reply with their versions and values.
    Read {
        /// The requester's handle for the transaction.
        slot: u32,
        /// The keys, distinct.
        keys: Vec<Key>,
        /// Where the [`ReadReply`] goes.
        reply: ReplyTo<ReadReply>,
    },
    /// Install a committed transaction's writes with version `ts` (the write phase).
    Write {
        /// The commit timestamp, the new versions' number.
        ts: u64,
        /// The written keys and values.
        writes: Vec<(Key, Value)>,
    },
}

/// The answer to [`StorageRequest::Read`].
#[derive(Debug)]
pub struct ReadReply {
    /// The requester's handle.
    pub slot: u32,
    /// `(key, version, value)` for every requested key.
    pub values: Vec<(Key, u64, Value)>,
    /// The highest commit timestamp the validator had assigned before the storage served this
    /// read (diagnostics: a key read at a version older than a write committed by then was
    /// already stale when served, because that write had not reached the storage yet).
    pub snapshot_ts: u64,
}

/// A validation request: the keys and versions a transaction read and the keys it wrote.
#[derive(Debug)]
pub struct ValidationRequest {
    /// The requester's handle for the transaction.
    pub slot: u32,
    /// `(key, version read)`, distinct keys.
    pub reads: Vec<(Key, u64)>,
    /// Written keys, distinct.
    pub writes: Vec<Key>,
    /// How often the transaction has been restarted already (for the validator's policy).
    pub restarts: u32,
    /// The lowest [`ReadReply::snapshot_ts`] of the transaction's prefetched reads, 0 if
    /// unknown (diagnostics only: classifies stale reads, never decides a validation).
    pub snapshot_ts: u64,
    /// Where the [`Decision`] goes.
    pub reply: ReplyTo<Decision>,
}

/// The validator's verdict on one transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The requester's handle.
    pub slot: u32,
    /// `Ok(commit timestamp)` or the cause of the abort.
    pub outcome: Result<u64, ConflictCause>,
}

/// A validation request after the reordering stage: in validation order, with the verdict of
/// pre-validation or of the feedback vertex set when it already aborted the transaction.
#[derive(Debug)]
pub struct OrderedBatch {
    /// In validation order; aborted ones anywhere.
    pub txns: Vec<(ValidationRequest, Option<ConflictCause>)>,
}
