//! ROCOCO's coordinator: the start and commit phases of a read-write transaction (§3.2), and
//! the 2-round protocol of a read-only one (§4.1).
//!
//! **Read-write.** Send every piece whose inputs are in ([`Dispatch`](super::Dispatch)); merge
//! each start reply's graph into the aggregate (union, highest status); when every piece has
//! answered, mark the transaction `COMMITTING` in the aggregate and send it in a commit request
//! to every server involved; the transaction has committed when all of them answered. A piece
//! that rolls the transaction back (`TxError::UserAbort`) stops the dispatch; if no writing
//! piece had been sent, the servers are told to resolve it without running its deferred pieces
//! (`Commit::rolled_back`), otherwise the run fails with `Error::Misuse` naming the piece:
//! ROCOCO cannot undo a dispatched write.
//!
//! **Read-only.** A round sends the transaction's pieces (again in dependency order) as
//! read-only reads; two consecutive rounds that observed the same versions commit with what the
//! second one read. When they differ, the transaction goes on with one more round, compared
//! with the last one: the argument of §4.1 needs two consecutive rounds that agree, each
//! having waited for the conflicting writers it found, not two rounds of a fresh start, so a
//! retry costs one round instead of two. At most `Params::ro_max_restarts` disagreements
//! (`ro_retries`), after which it is abandoned (`ro_abandoned`) and the run goes on.
//!
//! **Holds** (a txlab extension beyond the paper, whose read-only transactions never delay
//! writers; `Params::ro_hold_after`, `None` turns them off). From the round after
//! `ro_hold_after` disagreements on, the reads ask their servers to hold their keys
//! (`RoRead::hold`, `server::readonly`); the coordinator remembers which servers it sent held
//! reads to. A server whose held read must wait for unfinished writers names them
//! (`Msg::RoBlocked`), and the coordinator tells every server holding keys for the transaction
//! to let them through (`Msg::RoExempt`). When the transaction ends (committed, abandoned or
//! rolled back) those servers drop its holds (`Msg::RoRelease`, sent once: a lost one is
//! covered by the servers' `Params::ro_hold_timeout`).

use super::{Active, Client, Dispatch, Finish, Program, Work};
use crate::config::{Mutant, Recording};
use crate::graph::{Deps, Status};
use crate::msg::{
    Commit, CommitReply, Msg, PieceFailure, PieceReq, RoRead, RoReply, Start, StartReply,
};
use crate::workload::PiecedWorkload;
use std::collections::BTreeSet;
use txlab_core::pieces::PieceValues;
use txlab_core::protocol::history::{ReadEvent, ScanEvent, TxnId};
use txlab_net::{Ctx, NodeId};

/// A read-write transaction's coordinator state.
#[derive(Debug, Default)]
pub(crate) struct ReadWrite {
    deps: Deps,
    /// The piece that rolled the transaction back, if one did.
    rolled_back: Option<String>,
    /// Servers whose commit reply is missing, once the commit phase began.
    committing: Option<BTreeSet<u16>>,
}

/// A read-only transaction's coordinator state.
#[derive(Debug, Default)]
pub(crate) struct ReadOnly {
    round: u32,
    /// What the previous round observed.
    first: Option<(Vec<ReadEvent>, Vec<ScanEvent>)>,
    reads: Vec<ReadEvent>,
    scans: Vec<ScanEvent>,
    restarts: u32,
    /// Servers that received a held read of the transaction (told when it ends).
    held: BTreeSet<u16>,
}

impl ReadOnly {
    /// Whether the current round holds its keys (`Params::ro_hold_after`).
    fn holds(&self, after: Option<u32>) -> bool {
        after.is_some_and(|k| self.restarts >= k)
    }
}

fn rw(t: &mut Active<impl Sized>) -> Option<&mut ReadWrite> {
    match &mut t.work {
        Work::Rococo(w) => Some(w),
        _ => None,
    }
}

fn ro(t: &mut Active<impl Sized>) -> Option<&mut ReadOnly> {
    match &mut t.work {
        Work::ReadOnly(w) => Some(w),
        _ => None,
    }
}

impl<W: PiecedWorkload, R: Recording> Client<W, R> {
    /// Sends the pieces that are ready; starts the commit phase when all answered.
    pub(super) fn rococo_proceed(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let shared = std::sync::Arc::clone(&self.shared);
        let Some(t) = self.txns.get_mut(&id) else {
            return;
        };
        let profile = &shared.profiles[t.profile];
        let kind = txlab_core::Program::kind(&t.program);
        let Some(w) = rw(t) else { return };
        if w.committing.is_some() {
            return;
        }
        let rolled_back = w.rolled_back.clone();
        let mut sends = Vec::new();
        if rolled_back.is_none() {
            match t.dispatch.send_ready(kind, profile, &shared.routing) {
                Ok(batches) => {
                    for (server, pieces) in batches {
                        sends.push((server, start(id, t.epoch, t.program.clone(), pieces)));
                    }
                }
                Err(e) => {
                    self.fail(e.to_string());
                    return;
                }
            }
        }
        let ready = match &rolled_back {
            None => t.dispatch.complete(),
            Some(_) => t.dispatch.settled(),
        };
        if ready {
            if let Some(piece) = &rolled_back
                && t.dispatch.wrote
            {
                self.fail(format!(
                    "misuse: {kind}: piece {piece} rolled the transaction back after a writing \
                     piece was dispatched; ROCOCO allows user aborts only before that"
                ));
                return;
            }
            let servers: BTreeSet<u16> = t.dispatch.servers().into_iter().collect();
            let Some(w) = rw(t) else { return };
            w.deps.raise(id, Status::Committing);
            w.committing = Some(servers.clone());
            self.counters
                .commit_vertices
                .record(w.deps.vertices.len() as u64);
            if let Ok(bytes) = txlab_net::wire::encode(&w.deps, usize::MAX) {
                self.counters.commit_bytes.record(bytes.len() as u64);
            }
            for s in servers {
                sends.push((s, commit(id, w)));
            }
        }
        self.send_all(ctx, sends, false);
    }

    /// A start reply: outputs, the graph, maybe a rollback.
    pub(super) fn start_reply(
        &mut self,
        _from: NodeId,
        r: StartReply,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let shared = std::sync::Arc::clone(&self.shared);
        let Some(t) = self.txns.get_mut(&r.txn) else {
            return;
        };
        let profile = &shared.profiles[t.profile];
        let mut fatal = None;
        let Active {
            program,
            dispatch,
            work,
            ..
        } = t;
        let Work::Rococo(w) = work else { return };
        if w.committing.is_some() {
            return;
        }
        w.deps.merge(&r.deps);
        for (p, result) in r.results {
            match result {
                Ok(out) => {
                    dispatch.answered(program, p, &out);
                }
                Err(PieceFailure::UserAbort(why)) => {
                    if dispatch.answered(program, p, &PieceValues::new()) {
                        let name = profile.pieces[usize::from(p.piece)].name;
                        w.rolled_back.get_or_insert(format!("{name} ({why})"));
                    }
                }
                Err(PieceFailure::Error(e)) => {
                    dispatch.answered(program, p, &PieceValues::new());
                    fatal = Some(e);
                }
            }
        }
        if let Some(e) = fatal {
            self.fail(e);
            return;
        }
        self.rococo_proceed(r.txn, ctx);
    }

    /// A commit reply: the server finished the transaction.
    pub(super) fn commit_reply(
        &mut self,
        from: NodeId,
        r: CommitReply,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let Some(t) = self.txns.get_mut(&r.txn) else {
            return;
        };
        let Work::Rococo(w) = &mut t.work else { return };
        let Some(pending) = &mut w.committing else {
            return;
        };
        if !pending.remove(&from.0) {
            return;
        }
        let done = pending.is_empty();
        let finish = if w.rolled_back.is_some() {
            Finish::UserAborted
        } else {
            Finish::Committed
        };
        if let Some(h) = r.history {
            t.history.extend(h);
        }
        if done {
            self.finish(r.txn, finish, Vec::new(), 0, ctx);
        }
    }

    /// Sends the unanswered start or commit requests again.
    pub(super) fn rococo_resend(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let shared = std::sync::Arc::clone(&self.shared);
        let Some(t) = self.txns.get_mut(&id) else {
            return;
        };
        let profile = &shared.profiles[t.profile];
        let mut sends = Vec::new();
        let unanswered = t.dispatch.unanswered(profile);
        let (program, epoch) = (t.program.clone(), t.epoch);
        let Some(w) = rw(t) else { return };
        match &w.committing {
            Some(pending) => {
                for &s in pending {
                    sends.push((s, commit(id, w)));
                }
            }
            None => {
                for (s, pieces) in unanswered {
                    sends.push((s, start(id, epoch, program.clone(), pieces)));
                }
            }
        }
        self.send_all(ctx, sends, true);
    }

    /// Sends the current round's ready reads; compares rounds when one completes.
    pub(super) fn ro_proceed(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let shared = std::sync::Arc::clone(&self.shared);
        let Some(t) = self.txns.get_mut(&id) else {
            return;
        };
        let profile = &shared.profiles[t.profile];
        let kind = txlab_core::Program::kind(&t.program);
        let batches = match t.dispatch.send_ready(kind, profile, &shared.routing) {
            Ok(b) => b,
            Err(e) => {
                self.fail(e.to_string());
                return;
            }
        };
        let program = t.program.clone();
        let complete = t.dispatch.complete();
        let Some(w) = ro(t) else { return };
        let round = w.round;
        let hold = w.holds(shared.params.ro_hold_after);
        if hold {
            w.held.extend(batches.keys().copied());
        }
        let sends = batches
            .into_iter()
            .map(|(s, pieces)| (s, ro_read(id, round, program.clone(), pieces, hold)))
            .collect();
        self.send_all(ctx, sends, false);
        if complete {
            self.round_done(id, ctx);
        }
    }

    /// A round completed: commit, start the second round, or restart (module docs).
    fn round_done(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let shared = std::sync::Arc::clone(&self.shared);
        let single_round = shared.params.mutant(Mutant::SingleRoundReadOnly);
        let held_alone = shared.params.mutant(Mutant::HeldRoundAlone);
        let max_restarts = shared.params.ro_max_restarts;
        let Some(t) = self.txns.get_mut(&id) else {
            return;
        };
        let profile = &shared.profiles[t.profile];
        let fresh = match Dispatch::new(&t.program, profile) {
            Ok(d) => d,
            Err(e) => {
                self.fail(e.to_string());
                return;
            }
        };
        let Some(w) = ro(t) else { return };
        let held = w.holds(shared.params.ro_hold_after);
        if held {
            self.counters.ro_held_rounds += 1;
        }
        let mut reads = std::mem::take(&mut w.reads);
        let mut scans = std::mem::take(&mut w.scans);
        reads.sort_by_key(|r| (r.table.0, r.key, r.version, r.present));
        scans.sort_by_key(|s| (s.table.0, s.lo, s.hi));
        let observed = (reads, scans);
        let agreed = match w.first.take() {
            None => single_round,
            Some(previous) => previous == observed,
        } || (held && held_alone);
        let restarts = w.restarts;
        if agreed {
            (t.history.reads, t.history.scans) = observed;
            self.ro_release(id, ctx);
            return self.finish(id, Finish::Committed, Vec::new(), restarts, ctx);
        }
        if w.round > 0 {
            self.counters.ro_retries += 1;
            if restarts >= max_restarts {
                self.counters.ro_abandoned += 1;
                self.ro_release(id, ctx);
                return self.finish(id, Finish::Abandoned, Vec::new(), restarts + 1, ctx);
            }
            w.restarts += 1;
        }
        // The round just read is the first of the next pair.
        w.first = Some(observed);
        w.round += 1;
        t.dispatch = fresh;
        self.ro_proceed(id, ctx);
    }

    /// A read-only round's reply.
    pub(super) fn ro_reply(&mut self, r: RoReply, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(t) = self.txns.get_mut(&r.txn) else {
            return;
        };
        let Active {
            program,
            dispatch,
            work,
            ..
        } = t;
        let Work::ReadOnly(w) = work else { return };
        if w.round != r.round {
            return;
        }
        let mut fatal = None;
        let mut rolled_back = false;
        for p in r.pieces {
            let out = match p.result {
                Ok(out) => out,
                Err(PieceFailure::UserAbort(_)) => {
                    rolled_back = true;
                    PieceValues::new()
                }
                Err(PieceFailure::Error(e)) => {
                    fatal = Some(e);
                    PieceValues::new()
                }
            };
            if dispatch.answered(program, p.piece, &out) {
                w.reads.extend(p.reads);
                w.scans.extend(p.scans);
            }
        }
        if let Some(e) = fatal {
            return self.fail(e);
        }
        if rolled_back {
            self.ro_release(r.txn, ctx);
            return self.finish(r.txn, Finish::UserAborted, Vec::new(), 0, ctx);
        }
        self.ro_proceed(r.txn, ctx);
    }

    /// A held read of `id` waits for `writers`: the servers holding keys for `id` let them
    /// through, since they may be what keeps those writers from finishing
    /// (`server::readonly`).
    pub(super) fn ro_blocked(
        &mut self,
        id: TxnId,
        writers: Vec<TxnId>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let Some(w) = self.txns.get_mut(&id).and_then(ro) else {
            return;
        };
        let sends = w
            .held
            .iter()
            .map(|&s| {
                let writers = writers.clone();
                (s, Msg::RoExempt { txn: id, writers })
            })
            .collect();
        self.send_all(ctx, sends, false);
    }

    /// The read-only transaction `id` ends: the servers holding keys for it drop them.
    fn ro_release(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(w) = self.txns.get_mut(&id).and_then(ro) else {
            return;
        };
        let sends = std::mem::take(&mut w.held)
            .into_iter()
            .map(|s| (s, Msg::RoRelease { txn: id }))
            .collect();
        self.send_all(ctx, sends, false);
    }

    /// Sends the current round's unanswered reads again.
    pub(super) fn ro_resend(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let shared = std::sync::Arc::clone(&self.shared);
        let Some(t) = self.txns.get_mut(&id) else {
            return;
        };
        let unanswered = t.dispatch.unanswered(&shared.profiles[t.profile]);
        let program = t.program.clone();
        let Some(w) = ro(t) else { return };
        let round = w.round;
        let hold = w.holds(shared.params.ro_hold_after);
        let sends = unanswered
            .into_iter()
            .map(|(s, pieces)| (s, ro_read(id, round, program.clone(), pieces, hold)))
            .collect();
        self.send_all(ctx, sends, true);
    }
}

/// A start request.
fn start<P>(txn: TxnId, epoch: u64, program: P, pieces: Vec<PieceReq>) -> Msg<P> {
    Msg::Start(Box::new(Start {
        txn,
        epoch,
        program,
        pieces,
    }))
}

/// A commit request carrying `w`'s dependencies.
fn commit<P>(txn: TxnId, w: &ReadWrite) -> Msg<P> {
    Msg::Commit(Box::new(Commit {
        txn,
        deps: w.deps.clone(),
        rolled_back: w.rolled_back.is_some(),
    }))
}

/// A read-only round's reads.
fn ro_read<P>(txn: TxnId, round: u32, program: P, pieces: Vec<PieceReq>, hold: bool) -> Msg<P> {
    Msg::RoRead(Box::new(RoRead {
        txn,
        round,
        program,
        pieces,
        hold,
    }))
}
