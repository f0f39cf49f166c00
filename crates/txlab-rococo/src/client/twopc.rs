//! The baselines' coordinator: an execute phase (pieces dispatched as their inputs arrive, as
//! for ROCOCO), then two-phase commit (prepare, decide): three rounds where ROCOCO needs two.
//!
//! An attempt that is wounded (2PL), fails validation or meets a locked key (OCC) is aborted
//! at every server it reached and retried after a backoff: `txlab_core::retry::Backoff`'s next
//! wait, as a timer of `spins × Params::backoff_unit` (a node must not spin). A retry keeps the
//! transaction's wound-wait priority, so it eventually becomes the oldest. Aborts of ended
//! attempts are sent until every server acknowledged them, even after the transaction ended, so
//! no server keeps locks for an attempt nobody will finish.
//!
//! After a coordinator restart (§3.5 for the baselines: the 2PC coordinator log) a logged
//! transaction that had decided to commit sends its commit decision to every server again; one
//! that had not aborts its logged attempt everywhere and retries with the next one.

use super::{Active, BACKOFF_BIT, Client, Dispatch, Finish, Program, Work};
use crate::config::{Params, Recording};
use crate::msg::{Exec, ExecReply, HistoryPart, Msg, PieceFailure, PieceReq, Refusal};
use crate::workload::PiecedWorkload;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use txlab_core::ConflictCause;
use txlab_core::pieces::ConflictKey;
use txlab_core::protocol::history::TxnId;
use txlab_core::retry::Backoff;
use txlab_net::{Ctx, NodeId, TimerId};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// Recovered after a restart: abort the logged attempt, then start the next.
    Recovering,
    Execute,
    Prepare(BTreeSet<u16>),
    Commit(BTreeSet<u16>),
    /// Waiting for the backoff timer before the next attempt.
    Backoff,
}

/// A baseline transaction's coordinator state (module docs).
#[derive(Debug)]
pub(crate) struct TwoPc {
    pub(super) priority: u64,
    attempt: u32,
    phase: Phase,
    versions: BTreeMap<u16, Vec<(ConflictKey, u64)>>,
    aborts: Vec<ConflictCause>,
    backoff: Backoff,
    unit: Duration,
}

impl TwoPc {
    /// A transaction at `attempt` (non-zero, or with `decided_commit`, only after a restart).
    pub(super) fn new(
        priority: u64,
        attempt: u32,
        decided_commit: bool,
        recovered: bool,
        params: &Params,
        id: TxnId,
    ) -> Self {
        let phase = match (recovered, decided_commit) {
            (false, _) => Phase::Execute,
            (true, true) => Phase::Commit(BTreeSet::new()),
            (true, false) => Phase::Recovering,
        };
        Self {
            priority,
            attempt,
            phase,
            versions: BTreeMap::new(),
            aborts: Vec::new(),
            backoff: Backoff::new(params.backoff, id),
            unit: params.backoff_unit,
        }
    }
}

fn tpc(t: &mut Active<impl Sized>) -> Option<&mut TwoPc> {
    match &mut t.work {
        Work::TwoPc(w) => Some(w),
        _ => None,
    }
}

fn cause(r: &Refusal) -> ConflictCause {
    match r {
        Refusal::Wounded | Refusal::Locked => ConflictCause::LockBusy,
        _ => ConflictCause::ReadValidation,
    }
}

impl<W: PiecedWorkload, R: Recording> Client<W, R> {
    /// The transaction's next step.
    pub(super) fn twopc_proceed(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let shared = std::sync::Arc::clone(&self.shared);
        let all: BTreeSet<u16> = (0..shared.servers()).collect();
        let Some(t) = self.txns.get_mut(&id) else {
            return;
        };
        let profile = &shared.profiles[t.profile];
        let kind = txlab_core::Program::kind(&t.program);
        let program = t.program.clone();
        let Active { dispatch, work, .. } = t;
        let Work::TwoPc(w) = work else { return };
        let mut sends = Vec::new();
        match &mut w.phase {
            Phase::Recovering => {
                // Abort the logged attempt everywhere, then run the next one.
                self.cleanup.insert((id, w.attempt), all.clone());
                for &s in &all {
                    sends.push((s, decide(id, w.attempt, false)));
                }
                w.attempt += 1;
                w.phase = Phase::Execute;
            }
            Phase::Commit(pending) if pending.is_empty() => {
                // Recovered with a commit decision: tell every server again.
                *pending = all.clone();
                for &s in &all {
                    sends.push((s, decide(id, w.attempt, true)));
                }
            }
            _ => {}
        }
        if w.phase == Phase::Execute {
            match dispatch.send_ready(kind, profile, &shared.routing) {
                Ok(batches) => {
                    for (s, pieces) in batches {
                        sends.push((s, exec(id, w, program.clone(), pieces)));
                    }
                }
                Err(e) => {
                    self.fail(e.to_string());
                    return;
                }
            }
            if dispatch.complete() {
                let servers: BTreeSet<u16> = dispatch.servers().into_iter().collect();
                for &s in &servers {
                    sends.push((s, prepare(id, w, s)));
                }
                w.phase = Phase::Prepare(servers);
            }
        }
        self.send_all(ctx, sends, false);
    }

    /// An execute reply.
    pub(super) fn exec_reply(
        &mut self,
        from: NodeId,
        r: ExecReply,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let Some(t) = self.txns.get_mut(&r.txn) else {
            return;
        };
        let Active {
            program,
            dispatch,
            work,
            ..
        } = t;
        let Work::TwoPc(w) = work else { return };
        if w.attempt != r.attempt || w.phase != Phase::Execute {
            return;
        }
        match r.result {
            Ok(outputs) => {
                let mut fresh = false;
                for (p, out) in outputs {
                    fresh |= dispatch.answered(program, p, &out);
                }
                if fresh {
                    w.versions.entry(from.0).or_default().extend(r.versions);
                }
                self.twopc_proceed(r.txn, ctx);
            }
            Err(refusal) => self.abort_attempt(r.txn, refusal, ctx),
        }
    }

    /// A prepare vote.
    pub(super) fn vote(
        &mut self,
        from: NodeId,
        txn: TxnId,
        attempt: u32,
        vote: Result<(), Refusal>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let Some(w) = self.txns.get_mut(&txn).and_then(|t| tpc(t)) else {
            return;
        };
        if w.attempt != attempt {
            return;
        }
        let Phase::Prepare(pending) = &mut w.phase else {
            return;
        };
        if let Err(refusal) = vote {
            return self.abort_attempt(txn, refusal, ctx);
        }
        pending.remove(&from.0);
        if !pending.is_empty() {
            return;
        }
        let servers: BTreeSet<u16> = match self.txns.get(&txn) {
            Some(t) => t.dispatch.servers().into_iter().collect(),
            None => return,
        };
        if let Some(w) = self.txns.get_mut(&txn).and_then(|t| tpc(t)) {
            w.phase = Phase::Commit(servers.clone());
        }
        self.relog(ctx, txn, attempt, true);
        for s in servers {
            self.send(ctx, s, decide(txn, attempt, true));
        }
    }

    /// A decision was applied at `from`.
    pub(super) fn decided(
        &mut self,
        from: NodeId,
        txn: TxnId,
        attempt: u32,
        history: Option<Box<HistoryPart>>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        if let Some(pending) = self.cleanup.get_mut(&(txn, attempt)) {
            pending.remove(&from.0);
            if pending.is_empty() {
                self.cleanup.remove(&(txn, attempt));
            }
        }
        let Some(t) = self.txns.get_mut(&txn) else {
            return;
        };
        let Active {
            history: h, work, ..
        } = t;
        let Work::TwoPc(w) = work else { return };
        if w.attempt != attempt {
            return;
        }
        let Phase::Commit(pending) = &mut w.phase else {
            return;
        };
        if !pending.remove(&from.0) {
            return;
        }
        if let Some(part) = history {
            h.extend(*part);
        }
        if pending.is_empty() {
            let aborts = std::mem::take(&mut w.aborts);
            self.finish(txn, Finish::Committed, aborts, 0, ctx);
        }
    }

    /// A server wounded the attempt (2PL).
    pub(super) fn wounded(&mut self, txn: TxnId, attempt: u32, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(w) = self.txns.get_mut(&txn).and_then(|t| tpc(t)) else {
            return;
        };
        if w.attempt == attempt && matches!(w.phase, Phase::Execute | Phase::Prepare(_)) {
            self.abort_attempt(txn, Refusal::Wounded, ctx);
        }
    }

    /// Aborts the current attempt everywhere; retries after the backoff, or ends the
    /// transaction if its program rolled it back.
    fn abort_attempt(&mut self, txn: TxnId, refusal: Refusal, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let shared = std::sync::Arc::clone(&self.shared);
        let Some(t) = self.txns.get_mut(&txn) else {
            return;
        };
        let servers: BTreeSet<u16> = t.dispatch.servers().into_iter().collect();
        let fresh = match Dispatch::new(&t.program, &shared.profiles[t.profile]) {
            Ok(d) => d,
            Err(e) => return self.fail(e.to_string()),
        };
        t.dispatch = fresh;
        let Some(w) = tpc(t) else { return };
        let attempt = w.attempt;
        w.versions.clear();
        let mut end = None;
        match &refusal {
            Refusal::Piece(PieceFailure::Error(e)) => end = Some(Err(e.clone())),
            Refusal::Piece(PieceFailure::UserAbort(_)) => end = Some(Ok(())),
            r => {
                w.aborts.push(cause(r));
                w.attempt += 1;
                w.phase = Phase::Backoff;
                let delay = w.unit * w.backoff.next_spins().max(1);
                ctx.set_timer(delay, TimerId(BACKOFF_BIT | txn));
            }
        }
        match refusal {
            Refusal::Wounded => self.counters.wound_aborts += 1,
            Refusal::Validation => self.counters.validation_aborts += 1,
            Refusal::Locked => self.counters.lock_aborts += 1,
            Refusal::Piece(_) => {}
        }
        if !servers.is_empty() {
            self.cleanup.insert((txn, attempt), servers.clone());
        }
        for s in servers {
            self.send(ctx, s, decide(txn, attempt, false));
        }
        match end {
            Some(Err(e)) => self.fail(e),
            Some(Ok(())) => {
                let aborts = self
                    .txns
                    .get_mut(&txn)
                    .and_then(|t| tpc(t))
                    .map(|w| std::mem::take(&mut w.aborts))
                    .unwrap_or_default();
                self.finish(txn, Finish::UserAborted, aborts, 0, ctx);
            }
            None => self.relog(ctx, txn, attempt + 1, false),
        }
    }

    /// The backoff timer: the next attempt.
    pub(super) fn retry(&mut self, txn: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(w) = self.txns.get_mut(&txn).and_then(|t| tpc(t)) else {
            return;
        };
        if w.phase == Phase::Backoff {
            w.phase = Phase::Execute;
            self.twopc_proceed(txn, ctx);
        }
    }

    /// Sends the unanswered requests of the current phase again.
    pub(super) fn twopc_resend(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let shared = std::sync::Arc::clone(&self.shared);
        let Some(t) = self.txns.get_mut(&id) else {
            return;
        };
        let unanswered = t.dispatch.unanswered(&shared.profiles[t.profile]);
        let program = t.program.clone();
        let Some(w) = tpc(t) else { return };
        let mut sends = Vec::new();
        match &w.phase {
            Phase::Execute => {
                for (s, pieces) in unanswered {
                    sends.push((s, exec(id, w, program.clone(), pieces)));
                }
            }
            Phase::Prepare(pending) => {
                for &s in pending {
                    sends.push((s, prepare(id, w, s)));
                }
            }
            Phase::Commit(pending) => {
                for &s in pending {
                    sends.push((s, decide(id, w.attempt, true)));
                }
            }
            Phase::Recovering | Phase::Backoff => {}
        }
        self.send_all(ctx, sends, true);
    }

    /// Sends the aborts of ended attempts not yet acknowledged again.
    pub(super) fn resend_cleanup(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let pending: Vec<((TxnId, u32), Vec<u16>)> = self
            .cleanup
            .iter()
            .map(|(&k, s)| (k, s.iter().copied().collect()))
            .collect();
        for ((txn, attempt), servers) in pending {
            for s in servers {
                self.counters.retransmits += 1;
                self.send(ctx, s, decide(txn, attempt, false));
            }
        }
    }
}

fn decide<P>(txn: TxnId, attempt: u32, commit: bool) -> Msg<P> {
    Msg::Decide {
        txn,
        attempt,
        commit,
    }
}

/// An execute request of `w`'s current attempt.
fn exec<P>(txn: TxnId, w: &TwoPc, program: P, pieces: Vec<PieceReq>) -> Msg<P> {
    Msg::Exec(Box::new(Exec {
        txn,
        attempt: w.attempt,
        priority: w.priority,
        program,
        pieces,
    }))
}

/// A prepare request of `w`'s current attempt to `server`, with the versions its pieces there
/// read (OCC validates them).
fn prepare<P>(txn: TxnId, w: &TwoPc, server: u16) -> Msg<P> {
    Msg::Prepare {
        txn,
        attempt: w.attempt,
        versions: w.versions.get(&server).cloned().unwrap_or_default(),
    }
}
