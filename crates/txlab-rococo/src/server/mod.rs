//! A server: single-threaded (the H-Store model the paper's prototype uses, §5.1), its shard in
//! [`Shard`], and one concurrency-control state machine: ROCOCO's (`rococo`, `readonly`,
//! `gc`) or a baseline's (`twopl`, `occ`).
//!
//! What all three share lives here: accepting a piece (its profile and routing checked, its
//! conflict keys computed and checked against its profile), running a piece against the shard
//! (through `CheckedOps` when the run is checked), the execution-order log and the fatal-error
//! path. A piece that fails with a real error (not a user abort) makes the run fail: the error
//! goes back to the coordinator, which stops the run with it.

mod dump;
mod gc;
mod occ;
mod readonly;
mod ready;
mod rococo;
mod twopl;

use crate::config::{Protocol, Recording, Shared};
use crate::counters::Counters;
use crate::graph::Graph;
use crate::keys::KeyTable;
use crate::msg::{HistoryPart, Msg, OrderEntry, PieceFailure, PieceReq, Refusal};
use crate::store::{Shard, TxnBuffer};
use crate::workload::PiecedWorkload;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;
use txlab_core::pieces::{
    CheckedOps, ConflictKey, PieceKind, PieceRef, PieceValues, Pieced, permits,
};
use txlab_core::protocol::history::TxnId;
use txlab_core::{Access, Error, Program as _};
use txlab_net::{Ctx, NodeId, TimerId};

pub(crate) use rococo::LocalTxn;

/// The server's GC timer.
const GC_TIMER: TimerId = TimerId(1);
/// The server's retransmission timer.
const RETRANSMIT_TIMER: TimerId = TimerId(2);
/// The read-only holds' timer (`readonly`).
const HOLD_TIMER: TimerId = TimerId(3);

type Program<W> = <W as txlab_workload::Workload>::Program;

/// Finished baseline attempts are remembered this many retransmission periods (late duplicates
/// of their messages are ignored meanwhile).
const FINISHED_KEPT: u32 = 64;

/// A baseline attempt that ended here, and when.
#[derive(Debug)]
struct FinishedAttempt {
    attempt: u32,
    at: Duration,
    /// `Some(what it recorded)` if it committed.
    committed: Option<Option<Box<HistoryPart>>>,
    /// Why it ended here, if this server ended it (a wound, a failed piece): sent again to a
    /// late or retransmitted request of the attempt, whose first answer may have been lost.
    refusal: Option<Refusal>,
}

/// The baselines' ended attempts: a message of an attempt at or below a transaction's last
/// ended one is late and ignored; a repeated commit decision is answered with what the commit
/// recorded.
#[derive(Debug, Default)]
pub(crate) struct Finished {
    map: BTreeMap<TxnId, FinishedAttempt>,
}

impl Finished {
    /// Whether `attempt` of `txn` (or a later one) ended here.
    fn contains(&self, txn: TxnId, attempt: u32) -> bool {
        self.map.get(&txn).is_some_and(|f| attempt <= f.attempt)
    }

    /// Whether `attempt` of `txn` committed here.
    fn committed(&self, txn: TxnId, attempt: u32) -> bool {
        self.map
            .get(&txn)
            .is_some_and(|f| f.attempt == attempt && f.committed.is_some())
    }

    /// What the commit of `attempt` of `txn` recorded here.
    fn history(&self, txn: TxnId, attempt: u32) -> Option<Box<HistoryPart>> {
        self.map
            .get(&txn)
            .filter(|f| f.attempt == attempt)
            .and_then(|f| f.committed.clone().flatten())
    }

    fn insert(
        &mut self,
        txn: TxnId,
        attempt: u32,
        at: Duration,
        committed: Option<Option<Box<HistoryPart>>>,
    ) {
        self.map.insert(
            txn,
            FinishedAttempt {
                attempt,
                at,
                committed,
                refusal: None,
            },
        );
    }

    /// `attempt` of `txn` ended here for `why`.
    fn refuse(&mut self, txn: TxnId, attempt: u32, at: Duration, why: Refusal) {
        self.insert(txn, attempt, at, None);
        if let Some(f) = self.map.get_mut(&txn) {
            f.refusal = Some(why);
        }
    }

    /// A decision to abort `attempt` of `txn`, which has no live state here: remembered, so a
    /// request of the attempt still in flight is ignored instead of starting it again.
    fn aborted_elsewhere(&mut self, txn: TxnId, attempt: u32, at: Duration) {
        if !self.contains(txn, attempt) {
            self.insert(txn, attempt, at, None);
        }
    }

    /// `Some` if `attempt` of `txn` (or a later one) ended here, with the refusal to repeat if
    /// this server ended that attempt.
    fn ended(&self, txn: TxnId, attempt: u32) -> Option<Option<Refusal>> {
        let f = self.map.get(&txn).filter(|f| attempt <= f.attempt)?;
        Some(f.refusal.clone().filter(|_| f.attempt == attempt))
    }

    /// The answer to a coordinator's decision on `attempt` of `txn`, once the attempt's live
    /// state here (`live`) has ended: a decision that found none is remembered as an abort, and
    /// a commit is answered with what it recorded here (again, for a repeated decision).
    fn decided<P>(
        &mut self,
        txn: TxnId,
        attempt: u32,
        commit: bool,
        live: bool,
        now: Duration,
    ) -> Msg<P> {
        if !live && !commit {
            self.aborted_elsewhere(txn, attempt, now);
        }
        let history = commit.then(|| self.history(txn, attempt)).flatten();
        Msg::Decided {
            txn,
            attempt,
            history,
        }
    }

    /// Forgets attempts that ended more than `keep` before `now`.
    fn purge(&mut self, now: Duration, keep: Duration) {
        self.map.retain(|_, f| f.at + keep >= now);
    }
}

/// A piece accepted at this server: its kind, inputs and declared conflict keys.
#[derive(Debug, Clone)]
pub(crate) struct Accepted {
    pub(crate) piece: PieceRef,
    pub(crate) kind: PieceKind,
    pub(crate) inputs: PieceValues,
    pub(crate) keys: Vec<(ConflictKey, Access)>,
}

/// A server node (module docs).
pub struct Server<W: PiecedWorkload, R: Recording> {
    shared: Arc<Shared<W>>,
    me: u16,
    shard: Shard,
    /// The execution-order log position of the next piece execution.
    seq: u64,
    counters: Counters,
    /// The first real error a piece hit here.
    fatal: Option<String>,
    // ROCOCO
    graph: Graph,
    keys: KeyTable,
    txns: BTreeMap<TxnId, LocalTxn<Program<W>>>,
    rococo: rococo::Waits,
    ro: readonly::Parked<Program<W>>,
    epochs: gc::Epochs,
    // Baselines
    twopl: twopl::Locks<Program<W>>,
    occ: occ::Versions<Program<W>>,
    // Start and end of a multi-process run
    ready: ready::Readiness,
    dump: dump::Dump,
    _recording: PhantomData<R>,
}

impl<W: PiecedWorkload, R: Recording> std::fmt::Debug for Server<W, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("me", &self.me)
            .field("protocol", &self.shared.protocol)
            .field("graph", &self.graph.len())
            .field("txns", &self.txns.len())
            .finish_non_exhaustive()
    }
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    /// Server `me` of the cluster, with its loaded shard.
    pub fn new(shared: Arc<Shared<W>>, me: u16, shard: Shard) -> Self {
        let mut keys = KeyTable::default();
        keys.last_reader_only = shared.params.mutant(crate::config::Mutant::LastReaderOnly);
        Self {
            shared,
            me,
            shard,
            seq: 0,
            counters: Counters::default(),
            fatal: None,
            graph: Graph::default(),
            keys,
            txns: BTreeMap::new(),
            rococo: rococo::Waits::default(),
            ro: readonly::Parked::default(),
            epochs: gc::Epochs::default(),
            twopl: twopl::Locks::default(),
            occ: occ::Versions::default(),
            ready: ready::Readiness::default(),
            dump: dump::Dump::default(),
            _recording: PhantomData,
        }
    }

    /// The server's index.
    pub fn id(&self) -> u16 {
        self.me
    }

    /// The shard.
    pub fn shard(&self) -> &Shard {
        &self.shard
    }

    /// Takes the shard back (after a run).
    pub fn into_shard(self) -> Shard {
        self.shard
    }

    /// The server's counters (the graph's internal-error counts included).
    pub fn counters(&self) -> Counters {
        let mut c = self.counters.clone();
        c.scc_mismatches += self.graph.scc_mismatches;
        c.mixed_edges += self.keys.mixed_edges;
        c.graph_vertices = self.graph.len() as u64;
        c.graph_vertices_max = c.graph_vertices_max.max(c.graph_vertices);
        c
    }

    /// The first real error a piece hit here.
    pub fn fatal(&self) -> Option<&str> {
        self.fatal.as_deref()
    }

    /// Vertices in the dependency graph now.
    pub fn graph_len(&self) -> usize {
        self.graph.len()
    }

    /// Transactions whose state this server holds (ROCOCO).
    pub fn txns_held(&self) -> usize {
        self.txns.len()
    }

    /// Read-only transactions whose reads hold keys here now (ROCOCO, `Params::ro_hold_after`).
    pub fn ro_holds(&self) -> usize {
        self.ro.holds()
    }

    /// Whether nothing is left waiting here: no commit, status request, read-only read or
    /// parked start request pending, no read-only hold kept, and every transaction of this
    /// server finished (ROCOCO), no lock or prepared attempt held (baselines).
    pub fn quiescent(&self) -> bool {
        self.rococo.idle()
            && self.ro.is_empty()
            && self.txns.values().all(|t| t.finished)
            && self.twopl.is_empty()
            && self.occ.is_empty()
    }

    pub(crate) fn on_start(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        if self.shared.protocol == Protocol::Rococo
            && let Some(period) = self.shared.params.gc_epoch
        {
            ctx.set_timer(period, GC_TIMER);
        }
        ctx.set_timer(self.shared.params.retransmit, RETRANSMIT_TIMER);
    }

    pub(crate) fn on_message(
        &mut self,
        from: NodeId,
        msg: Msg<Program<W>>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        match msg {
            Msg::Start(s) => self.start(from, *s, None, ctx),
            Msg::Commit(c) => self.commit(from, *c, ctx),
            Msg::Status(s) => self.status(from, s, ctx),
            Msg::StatusReply(d) => self.status_reply(&d, ctx),
            Msg::Collected { txn } => self.collected_reply(txn, ctx),
            Msg::RoRead(r) => self.ro_read(from, *r, ctx),
            Msg::RoRelease { txn } => self.ro_release(txn, ctx),
            Msg::RoExempt { txn, writers } => self.ro_exempt(txn, &writers, ctx),
            Msg::Gossip { epoch, low } => self.gossip(from, epoch, low),
            Msg::Exec(e) => match self.shared.protocol {
                Protocol::Occ => self.occ_exec(from, *e, ctx),
                _ => self.twopl_exec(from, *e, ctx),
            },
            Msg::Prepare {
                txn,
                attempt,
                versions,
            } => match self.shared.protocol {
                Protocol::Occ => self.occ_prepare(from, txn, attempt, &versions, ctx),
                _ => self.twopl_prepare(from, txn, attempt, ctx),
            },
            Msg::Decide {
                txn,
                attempt,
                commit,
            } => match self.shared.protocol {
                Protocol::Occ => self.occ_decide(from, txn, attempt, commit, ctx),
                _ => self.twopl_decide(from, txn, attempt, commit, ctx),
            },
            Msg::AwaitReady => self.await_ready(from, ctx),
            Msg::Dump { chunk } => self.dump_chunk(from, chunk, ctx),
            Msg::Release => self.release(from, ctx),
            // Replies and issue requests are for client nodes.
            Msg::Issue { .. }
            | Msg::Ready
            | Msg::Rows { .. }
            | Msg::Released
            | Msg::StartReply(_)
            | Msg::CommitReply(_)
            | Msg::RoReply(_)
            | Msg::RoBlocked { .. }
            | Msg::ExecReply(_)
            | Msg::Vote { .. }
            | Msg::Decided { .. }
            | Msg::Wounded { .. } => {}
        }
    }

    pub(crate) fn on_timer(&mut self, timer: TimerId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        match timer {
            GC_TIMER => {
                self.gc_tick(ctx);
                if let Some(period) = self.shared.params.gc_epoch {
                    ctx.set_timer(period, GC_TIMER);
                }
            }
            RETRANSMIT_TIMER => {
                self.resend_status_requests(ctx);
                let keep = self.shared.params.retransmit * FINISHED_KEPT;
                self.twopl.finished.purge(ctx.now(), keep);
                self.occ.finished.purge(ctx.now(), keep);
                ctx.set_timer(self.shared.params.retransmit, RETRANSMIT_TIMER);
            }
            HOLD_TIMER => self.hold_tick(ctx),
            _ => {}
        }
    }

    /// Records the first real error.
    fn fail(&mut self, message: String) {
        if self.fatal.is_none() {
            self.fatal = Some(format!("server {}: {message}", self.me));
        }
    }

    /// Accepts piece `req` of `program`: its type has a profile, it has the piece, the piece is
    /// routed here, and every conflict key it declares is in its profile. The error names the
    /// piece and the rule.
    fn accept(&self, program: &Program<W>, req: PieceReq) -> Result<Accepted, Error> {
        let kind = program.kind();
        let profile = self.shared.profiles.get(program.profile()).ok_or_else(|| {
            Error::invalid(
                "transaction type",
                kind,
                "a type with pieces (a profile in the workload's profiles())",
            )
        })?;
        let p = req.piece;
        let piece = profile.pieces.get(usize::from(p.piece)).ok_or_else(|| {
            Error::invalid(
                "piece",
                format!("{kind} piece {}", p.piece),
                format!("a piece index in 0..{}", profile.pieces.len()),
            )
        })?;
        let owner = self.shared.routing.server_of(kind, p)?;
        if owner != self.me {
            return Err(Error::Internal(format!(
                "{kind}.{} was sent to server {} but its routing key belongs to server {owner}",
                piece.name, self.me
            )));
        }
        let mut keys = Vec::new();
        program.conflict_keys(p, &req.inputs, &mut keys);
        for &(k, a) in &keys {
            let covered = piece
                .accesses
                .iter()
                .any(|&(t, g, pa)| t == k.table && g == k.group && permits(pa, a));
            if !covered {
                return Err(Error::Invariant(format!(
                    "piece {kind}.{} declares conflict key {k} ({a:?}), which its profile does \
                     not list",
                    piece.name
                )));
            }
        }
        Ok(Accepted {
            piece: p,
            kind: piece.kind,
            inputs: req.inputs,
            keys,
        })
    }

    /// Runs `piece` of `program` against the shard into `buffer` (not applied), recording what
    /// it reads when `capture`; through `CheckedOps` when the run is checked.
    fn run_piece(
        &self,
        program: &Program<W>,
        piece: &Accepted,
        buffer: &mut TxnBuffer,
        capture: bool,
    ) -> Result<PieceValues, PieceFailure> {
        self.run_piece_tx(program, piece, buffer, capture)
            .map_err(PieceFailure::from)
    }

    /// [`Self::run_piece`] with the piece's own error (OCC tells conflicts apart).
    fn run_piece_tx(
        &self,
        program: &Program<W>,
        piece: &Accepted,
        buffer: &mut TxnBuffer,
        capture: bool,
    ) -> txlab_core::TxResult<PieceValues> {
        let mut out = PieceValues::new();
        let mut tx = self.shard.tx(buffer, &piece.keys, capture);
        let ran = if self.shared.params.checked {
            let profile = &self.shared.profiles[program.profile()];
            let name = profile.pieces[usize::from(piece.piece.piece)].name;
            let mut checked = CheckedOps::new(&mut tx, name, &piece.keys, &self.shared.layout_list);
            program.run_piece(piece.piece, &piece.inputs, &mut checked, &mut out)
        } else {
            program.run_piece(piece.piece, &piece.inputs, &mut tx, &mut out)
        };
        ran.map(|()| out)
    }

    /// The next execution-order log entry for a piece with `keys` (only when recording).
    fn log_entry(&mut self, keys: &[(ConflictKey, Access)]) -> Option<OrderEntry> {
        let seq = self.seq;
        self.seq += 1;
        R::ENABLED.then(|| OrderEntry {
            server: self.me,
            seq,
            keys: keys.to_vec(),
        })
    }

    /// Answers a baseline request of an attempt that already ended here with its refusal
    /// again (nothing if it committed or ended by a decision from its coordinator).
    fn refuse_again(
        &mut self,
        to: NodeId,
        txn: TxnId,
        attempt: u32,
        why: Option<Refusal>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        if let Some(why) = why {
            let reply = crate::msg::ExecReply {
                txn,
                attempt,
                result: Err(why),
                versions: Vec::new(),
            };
            self.send(ctx, to, Msg::ExecReply(Box::new(reply)));
        }
    }

    /// Installs a baseline attempt's buffered writes at commit; with recording, returns what
    /// the attempt recorded here (its reads, scans, writes and piece executions).
    fn install(
        &mut self,
        buffer: &mut TxnBuffer,
        mut history: HistoryPart,
    ) -> Option<Box<HistoryPart>> {
        let mut writes = Vec::new();
        if let Err(e) = self.shard.apply(buffer, R::ENABLED, &mut writes) {
            self.fail(e.to_string());
        }
        R::ENABLED.then(|| {
            history.reads = std::mem::take(&mut buffer.reads);
            history.scans = std::mem::take(&mut buffer.scans);
            history.writes = writes;
            Box::new(history)
        })
    }

    /// Sends `msg` to `to`; a send error is a bug in node ids, recorded as fatal.
    fn send(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>, to: NodeId, msg: Msg<Program<W>>) {
        if let Err(e) = ctx.send(to, msg) {
            self.fail(format!("send to {to}: {e}"));
        }
    }
}
