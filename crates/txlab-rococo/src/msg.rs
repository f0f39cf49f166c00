//! Every message of the cluster: one enum for ROCOCO, its read-only path, GC gossip and the 2PC
//! baselines, because every driver runs one node type.
//!
//! | message | from → to | §/role |
//! |---|---|---|
//! | `Issue` | a client thread → its client node (through a `Transport`) | start the next transaction of a slot |
//! | `Start` / `StartReply` | coordinator ↔ server | §3.2 start phase: pieces, outputs, undecided ancestors |
//! | `Commit` / `CommitReply` | coordinator ↔ server | §3.2 commit phase: the aggregated graph; outputs |
//! | `Status` / `StatusReply`, `Collected` | server ↔ server | §3.2: a transaction's graph once it is committing (or decided) there; that it was collected (§3.4) |
//! | `RoRead` / `RoReply` | coordinator ↔ server | §4.1, Figure 10: one round of a read-only transaction |
//! | `RoRelease` | coordinator → server | the read-only transaction ended: its holds (`server::readonly`) go |
//! | `RoBlocked` / `RoExempt` | server → coordinator → servers | a held read waits for writers: its other holds let them through |
//! | `Gossip` | server → every node, client → server | §3.4 epochs: own epoch and oldest unfinished tag |
//! | `Exec`, `Prepare`, `Decide` and replies, `Wounded` | coordinator ↔ server | 2PL/OCC with 2PC |
//! | `AwaitReady` / `Ready` | client process → server → client process | start of a multi-process run (`remote`): answered once the server's link to every node is up (its process starts its node only after loading its shard) |
//! | `Dump` / `Rows`, `Release` / `Released` | client process → server | end of a multi-process run (`remote`): the server's rows for the checks; the server may exit |
//!
//! Requests are retransmitted by their sender until answered, so every handler is idempotent
//! (deduplicated by transaction id, piece and attempt).

use crate::graph::{Deps, Status};
use serde::{Deserialize, Serialize};
use txlab_core::pieces::{ConflictKey, PieceRef, PieceValues};
use txlab_core::protocol::history::{ReadEvent, ScanEvent, TxnId, WriteEvent};
use txlab_core::{Access, TableId, TxError};

/// One piece instance to run, with the outputs of the pieces it takes inputs from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PieceReq {
    /// The instance.
    pub piece: PieceRef,
    /// Its inputs.
    pub inputs: PieceValues,
}

/// Why a piece did not produce outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PieceFailure {
    /// The program rolled the transaction back (`TxError::UserAbort`).
    UserAbort(String),
    /// A real error (an invariant, a misrouted piece, a bad input), fatal to the run.
    Error(String),
}

impl From<TxError> for PieceFailure {
    fn from(e: TxError) -> Self {
        match e {
            TxError::UserAbort(why) => PieceFailure::UserAbort(why.to_string()),
            other => PieceFailure::Error(other.to_string()),
        }
    }
}

/// A piece's result: its outputs (empty for a deferred piece at start), or its failure.
pub type PieceResult = Result<PieceValues, PieceFailure>;

/// One piece execution in a server's execution order, for the one-order check: the server, its
/// position there, and the conflict keys the piece declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderEntry {
    /// The server.
    pub server: u16,
    /// Position in that server's execution order.
    pub seq: u64,
    /// The piece's declared conflict keys and accesses.
    pub keys: Vec<(ConflictKey, Access)>,
}

/// What one server recorded of one transaction (sent only when recording).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryPart {
    /// Reads, per column group (`pieces::history_table`).
    pub reads: Vec<ReadEvent>,
    /// Installed writes, per column group.
    pub writes: Vec<WriteEvent>,
    /// Scans, as predicate reads.
    pub scans: Vec<ScanEvent>,
    /// The transaction's piece executions at the server.
    pub order: Vec<OrderEntry>,
}

impl HistoryPart {
    /// Appends `other`.
    pub fn extend(&mut self, other: HistoryPart) {
        self.reads.extend(other.reads);
        self.writes.extend(other.writes);
        self.scans.extend(other.scans);
        self.order.extend(other.order);
    }
}

/// ROCOCO's start request: pieces of `txn` for one server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Start<P> {
    /// The transaction.
    pub txn: TxnId,
    /// Its epoch tag (§3.4).
    pub epoch: u64,
    /// The program (the pieces' logic and inputs).
    pub program: P,
    /// The pieces, in plan order.
    pub pieces: Vec<PieceReq>,
}

/// A server's answer to a [`Start`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StartReply {
    /// The transaction.
    pub txn: TxnId,
    /// Per piece: the immediate ones' outputs, empty values for the deferred ones.
    pub results: Vec<(PieceRef, PieceResult)>,
    /// The transaction and its undecided ancestors at the server.
    pub deps: Deps,
}

/// ROCOCO's commit request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Commit {
    /// The transaction.
    pub txn: TxnId,
    /// The aggregated graph of its start replies, the transaction itself `COMMITTING`.
    pub deps: Deps,
    /// The transaction was rolled back by its program before any writing piece was
    /// dispatched: the server resolves it without running its deferred pieces.
    pub rolled_back: bool,
}

/// A server's answer to a [`Commit`], once the transaction finished there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommitReply {
    /// The transaction.
    pub txn: TxnId,
    /// The outputs of its deferred pieces at the server.
    pub outputs: Vec<(PieceRef, PieceValues)>,
    /// What the server recorded (when recording).
    pub history: Option<HistoryPart>,
}

/// A status request (§3.2): answer once `txn` is at least `want` here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusReq {
    /// The transaction.
    pub txn: TxnId,
    /// The status to wait for.
    pub want: Status,
    /// Its epoch tag as the asker knows it (tells a collected transaction from an unknown one).
    pub epoch: u64,
}

/// One round of a read-only transaction at one server (§4.1).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoRead<P> {
    /// The transaction.
    pub txn: TxnId,
    /// Which round (rounds of a restarted transaction keep counting).
    pub round: u32,
    /// The program.
    pub program: P,
    /// The pieces, in plan order.
    pub pieces: Vec<PieceReq>,
    /// Hold the pieces' conflict keys from this read's arrival until the transaction ends:
    /// start requests of new writers of them wait meanwhile (`server::readonly`).
    pub hold: bool,
}

/// One piece of a read-only round: its result and what it observed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoPiece {
    /// The piece.
    pub piece: PieceRef,
    /// Its outputs.
    pub result: PieceResult,
    /// The versions it observed, per column group (what the two rounds compare).
    pub reads: Vec<ReadEvent>,
    /// Its scans, as predicate reads.
    pub scans: Vec<ScanEvent>,
}

/// A server's answer to a [`RoRead`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoReply {
    /// The transaction.
    pub txn: TxnId,
    /// The round.
    pub round: u32,
    /// The pieces.
    pub pieces: Vec<RoPiece>,
}

/// The execute phase of 2PL and OCC: pieces of one attempt for one server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Exec<P> {
    /// The transaction.
    pub txn: TxnId,
    /// The attempt (from 0).
    pub attempt: u32,
    /// Wound-wait priority: smaller is older and wins (kept across retries).
    pub priority: u64,
    /// The program.
    pub program: P,
    /// The pieces.
    pub pieces: Vec<PieceReq>,
}

/// Why an attempt of a baseline transaction failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Refusal {
    /// 2PL: wounded by an older transaction.
    Wounded,
    /// OCC: a read's version changed before prepare.
    Validation,
    /// OCC: a key it writes or read is locked by another preparing transaction.
    Locked,
    /// The program rolled the transaction back, or a real error.
    Piece(PieceFailure),
}

/// A server's answer to an [`Exec`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExecReply {
    /// The transaction.
    pub txn: TxnId,
    /// The attempt.
    pub attempt: u32,
    /// The pieces' outputs, or why the attempt fails.
    pub result: Result<Vec<(PieceRef, PieceValues)>, Refusal>,
    /// OCC: the version of every conflict key the pieces read.
    pub versions: Vec<(ConflictKey, u64)>,
}

/// Every message (module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Msg<P> {
    /// Start the next transaction of client slot `slot` (from a client thread).
    Issue {
        /// The slot.
        slot: u32,
    },
    /// ROCOCO start request.
    Start(Box<Start<P>>),
    /// ROCOCO start reply.
    StartReply(Box<StartReply>),
    /// ROCOCO commit request.
    Commit(Box<Commit>),
    /// ROCOCO commit reply.
    CommitReply(Box<CommitReply>),
    /// Status request.
    Status(StatusReq),
    /// Status reply: the transaction (and, unless decided, its undecided ancestors).
    StatusReply(Box<Deps>),
    /// Status reply for a transaction the answering server collected (§3.4): harmless for a
    /// late duplicate of a request already answered, an internal error if the asker still
    /// waits on it.
    Collected {
        /// The transaction.
        txn: TxnId,
    },
    /// Read-only round request.
    RoRead(Box<RoRead<P>>),
    /// Read-only round reply.
    RoReply(Box<RoReply>),
    /// The read-only transaction ended: the server drops its holds.
    RoRelease {
        /// The transaction.
        txn: TxnId,
    },
    /// A held read of `txn` waits for `writers` to finish (to its coordinator).
    RoBlocked {
        /// The read-only transaction.
        txn: TxnId,
        /// The writers it waits for.
        writers: Vec<TxnId>,
    },
    /// `txn`'s holds let `writers` through (to the servers holding keys for `txn`).
    RoExempt {
        /// The read-only transaction.
        txn: TxnId,
        /// The writers its holds no longer keep waiting.
        writers: Vec<TxnId>,
    },
    /// Epoch gossip: the sender's epoch and the oldest epoch tag it has unfinished
    /// (`u64::MAX` if none).
    Gossip {
        /// The sender's epoch.
        epoch: u64,
        /// Its oldest unfinished tag.
        low: u64,
    },
    /// 2PL/OCC execute request.
    Exec(Box<Exec<P>>),
    /// 2PL/OCC execute reply.
    ExecReply(Box<ExecReply>),
    /// 2PC prepare, with OCC's read versions at this server.
    Prepare {
        /// The transaction.
        txn: TxnId,
        /// The attempt.
        attempt: u32,
        /// OCC: versions to validate.
        versions: Vec<(ConflictKey, u64)>,
    },
    /// 2PC vote.
    Vote {
        /// The transaction.
        txn: TxnId,
        /// The attempt.
        attempt: u32,
        /// `Ok` to commit, or why not.
        vote: Result<(), Refusal>,
    },
    /// 2PC decision.
    Decide {
        /// The transaction.
        txn: TxnId,
        /// The attempt.
        attempt: u32,
        /// Commit (or abort).
        commit: bool,
    },
    /// 2PC decision applied.
    Decided {
        /// The transaction.
        txn: TxnId,
        /// The attempt.
        attempt: u32,
        /// What the server recorded (commits, when recording).
        history: Option<Box<HistoryPart>>,
    },
    /// 2PL: the attempt was wounded by an older transaction and rolled back at the sender.
    Wounded {
        /// The transaction.
        txn: TxnId,
        /// The attempt.
        attempt: u32,
    },
    /// Before a multi-process run: answer [`Msg::Ready`] once this server's link to every node
    /// of the cluster is up.
    AwaitReady,
    /// The server's shard is loaded and its link to every node is up.
    Ready,
    /// After a multi-process run: send chunk `chunk` of the rows this server reports.
    Dump {
        /// The chunk, from 0.
        chunk: u32,
    },
    /// Chunk `chunk` of the `chunks` chunks of a server's rows.
    Rows {
        /// The chunk.
        chunk: u32,
        /// How many chunks there are.
        chunks: u32,
        /// `(table, key, value)` of rows the server reports (`Routing::reports`).
        rows: Vec<(TableId, u64, Vec<u8>)>,
    },
    /// After a multi-process run: the server may stop.
    Release,
    /// The server will stop.
    Released,
}
