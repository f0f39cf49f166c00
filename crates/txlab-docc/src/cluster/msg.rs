//! What partition nodes send each other (`docs/protocols/docc.md`, "Multi-partition"), and the
//! cluster's input log.
//!
//! Every message names the transaction by its raw `Seq`, so each handler is idempotent: a
//! duplicate or a retransmission finds the work done and at most repeats its answer.

use crate::seq::Seq;
use serde::{Deserialize, Serialize};

/// A sequenced transaction: the program, the partitions a restart found it needs, and for a
/// re-sequenced one, the `Seq` of the attempt it restarts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Txn<P> {
    /// The program.
    pub program: P,
    /// Partitions added to its participants (by the restarts before it).
    pub hints: Vec<u16>,
    /// The raw `Seq` of the attempt this entry re-sequences.
    pub restart_of: Option<u64>,
}

impl<P> Txn<P> {
    /// A first attempt.
    pub fn new(program: P) -> Self {
        Self {
            program,
            hints: Vec::new(),
            restart_of: None,
        }
    }
}

/// A row as one partition saw it at the transaction's position: its value (`None`: absent)
/// and version (a raw `Seq`, 0 for the loaded state).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// Table id.
    pub table: u16,
    /// Key.
    pub key: u64,
    /// Value, if present.
    pub value: Option<Vec<u8>>,
    /// Version.
    pub version: u64,
}

/// A range of an ordered table as one partition saw it: every present row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanRows {
    /// Table id.
    pub table: u16,
    /// Lower bound (inclusive).
    pub lo: u64,
    /// Upper bound (inclusive).
    pub hi: u64,
    /// `(key, value, version)` in key order.
    pub rows: Vec<(u64, Vec<u8>, u64)>,
}

/// An on-demand read the leader asks a participant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Read {
    /// One key.
    Key {
        /// Table id.
        table: u16,
        /// Key.
        key: u64,
    },
    /// Every present key in `lo..=hi`.
    Scan {
        /// Table id.
        table: u16,
        /// Lower bound.
        lo: u64,
        /// Upper bound.
        hi: u64,
    },
}

/// One write a participant installs with version `Seq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteOp {
    /// Set a present (or blindly written) key.
    Put(u16, u64, Vec<u8>),
    /// Insert a key that was absent.
    Insert(u16, u64, Vec<u8>),
    /// Delete a present key.
    Delete(u16, u64),
}

impl WriteOp {
    /// The table and key it writes.
    pub fn key(&self) -> (u16, u64) {
        match self {
            WriteOp::Put(t, k, _) | WriteOp::Insert(t, k, _) | WriteOp::Delete(t, k) => (*t, *k),
        }
    }
}

/// How a multi-partition transaction ended, as its leader tells each participant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// It ran: install these writes (possibly none: a read-only part, a user abort).
    Commit(Vec<WriteOp>),
    /// It touched a partition that is not a participant: nothing is installed anywhere, and it
    /// is re-sequenced with that partition hinted.
    Restart,
}

/// A partition node's message.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Msg<P> {
    /// The sender's sequencer batch of `epoch` (every sequencer sends one per epoch).
    Batch {
        /// The epoch.
        epoch: u32,
        /// Its transactions in order.
        txns: Vec<Txn<P>>,
        /// The sequencer takes no new transactions from this epoch on (its clients' share of
        /// the run is over; later batches hold only restarts).
        last: bool,
    },
    /// "Send me your batch of `epoch` again" (the transport is at-most-once).
    Pull {
        /// The epoch.
        epoch: u32,
    },
    /// A participant's declared rows, sent to the leader once every earlier local transaction
    /// has committed.
    ReadSet {
        /// The transaction.
        seq: u64,
        /// The rows.
        rows: Vec<Row>,
    },
    /// The leader's on-demand reads.
    ReadReq {
        /// The transaction.
        seq: u64,
        /// What to read.
        reads: Vec<Read>,
    },
    /// Their answers.
    ReadResp {
        /// The transaction.
        seq: u64,
        /// Point reads.
        rows: Vec<Row>,
        /// Scans.
        scans: Vec<ScanRows>,
    },
    /// The leader's decision for the receiving participant.
    Outcome {
        /// The transaction.
        seq: u64,
        /// What to do.
        outcome: Outcome,
    },
    /// The participant installed the outcome of `seq` (the leader may forget it).
    Applied {
        /// The transaction.
        seq: u64,
    },
    /// The sender's share of the run is over: it needs nothing more from anyone (sent again on
    /// the retry timer until every peer said so too; a process may then exit).
    Done,
}

/// The input log of a cluster run: for each epoch, each sequencer's batch (epoch `e` at index
/// `e - 1`, sequencer `s` at index `s`). Replaying it on freshly loaded nodes reproduces the
/// run: it is deterministic input, restarts included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterLog<P> {
    /// The batches.
    pub epochs: Vec<Vec<Vec<Txn<P>>>>,
}

impl<P> Default for ClusterLog<P> {
    fn default() -> Self {
        Self { epochs: Vec::new() }
    }
}

impl<P> ClusterLog<P> {
    /// Every entry with its `Seq`, in the global order.
    pub fn entries(&self) -> impl Iterator<Item = (Seq, &Txn<P>)> {
        self.epochs.iter().enumerate().flat_map(|(e, batches)| {
            batches.iter().enumerate().flat_map(move |(s, batch)| {
                batch.iter().enumerate().map(move |(i, t)| {
                    let seq = Seq::new(e as u32 + 1, s as u32, i as u32)
                        .expect("a logged position is a valid Seq");
                    (seq, t)
                })
            })
        })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries().count()
    }

    /// Whether the log has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The programs in the global order without the attempts that restarted: the serial
    /// execution the run is equivalent to (the serial-replay oracle executes this).
    pub fn serial_order(&self) -> Vec<&P> {
        let restarted: std::collections::HashSet<u64> =
            self.entries().filter_map(|(_, t)| t.restart_of).collect();
        self.entries()
            .filter(|(seq, _)| !restarted.contains(&seq.raw()))
            .map(|(_, t)| &t.program)
            .collect()
    }

    /// Number of entries that restarted.
    pub fn restarts(&self) -> usize {
        self.entries()
            .filter(|(_, t)| t.restart_of.is_some())
            .count()
    }

    /// The log without trailing empty epochs (nodes may seal a few empty epochs after the end).
    pub fn trimmed(mut self) -> Self {
        while self
            .epochs
            .last()
            .is_some_and(|b| b.iter().all(Vec::is_empty))
        {
            self.epochs.pop();
        }
        self
    }
}
