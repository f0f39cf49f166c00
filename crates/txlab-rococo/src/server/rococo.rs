//! ROCOCO's server side of the start and commit phases (§3.2, Figure 7; §3.4).
//!
//! | paper | here |
//! |---|---|
//! | start request: execute immediate pieces, buffer deferrable ones, add dependencies, reply with outputs and `dep` | [`Server::start`], [`Server::start_piece`] (edges from `KeyTable::access`); a start request that writes a key a read-only transaction holds waits first (`readonly`) |
//! | one-hop dependencies, only undecided ancestors in replies (§3.4) | `KeyTable`, `Graph::undecided_ancestors`, `Graph::export` |
//! | commit request: aggregate `dep`, mark `T` COMMITTING | [`Server::commit`] |
//! | wait for every ancestor to be COMMITTING; status request when it does not involve `S` | [`Server::committing_wait`], [`Server::ask`] |
//! | compute `T`'s SCC, mark it DECIDED | `component_of`, `execution_order`, `Graph::decide` in [`Server::evaluate`] |
//! | wait for the SCC's ancestors to be DECIDED, and finished where they involve `S` | [`Server::decided_wait`] |
//! | sort the SCC by `i`-edges, execute the deferred pieces of its members involving `S` | `execution_order`, [`Server::execute`] |
//! | set `finished`, reply | [`Server::execute`], [`Server::reply_commit`] |
//! | status request answered once `T'` is COMMITTING there (its SCC if decided) | [`Server::status`], [`Server::answer_status`] |
//!
//! A commit that must wait registers itself on the vertices it waits for; any change to a
//! vertex (status rising, finishing, appearing, collected) wakes those commits, which are
//! re-evaluated in transaction-id order until nothing changes ([`Server::wake`]).
//!
//! Which ancestors a decided component waits for: every parent of a member outside the
//! component must be decided, and finished if it involves this server. A local parent's own
//! execution waited for its parents in turn, so every earlier conflicting transaction here has
//! finished; non-local parents are decided through status requests as the paper prescribes.

use super::{Accepted, Program, Server};
use crate::config::{Mutant, Recording};
use crate::graph::{Status, component_of, execution_order};
use crate::msg::{
    Commit, CommitReply, HistoryPart, Msg, PieceFailure, PieceResult, Start, StartReply, StatusReq,
};
use crate::store::TxnBuffer;
use crate::workload::PiecedWorkload;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use txlab_core::pieces::{ConflictKey, PieceKind, PieceRef, PieceValues};
use txlab_core::protocol::history::TxnId;
use txlab_net::{Ctx, NodeId};

/// A piece of a transaction at this server, and what it produced.
#[derive(Debug, Clone)]
pub(crate) struct LocalPiece {
    accepted: Accepted,
    result: PieceResult,
}

/// A transaction that involves this server.
#[derive(Debug)]
pub(crate) struct LocalTxn<P> {
    program: P,
    coordinator: NodeId,
    pieces: BTreeMap<PieceRef, LocalPiece>,
    /// Every conflict key its pieces here access.
    keys: Vec<ConflictKey>,
    /// `Some(rolled_back)` once its commit request arrived.
    commit: Option<bool>,
    /// Its deferred pieces ran here.
    pub(crate) finished: bool,
    outputs: Vec<(PieceRef, PieceValues)>,
    history: HistoryPart,
}

impl<P> LocalTxn<P> {
    /// Whether one of its pieces here writes one of `keys`.
    pub(crate) fn writes_any<V>(&self, keys: &BTreeMap<ConflictKey, V>) -> bool {
        self.pieces.values().any(|p| {
            p.accepted
                .keys
                .iter()
                .any(|(k, a)| a.writes() && keys.contains_key(k))
        })
    }
}

/// The waits of the commit phase (module docs).
#[derive(Debug, Default)]
pub(crate) struct Waits {
    /// Commit requests not yet answered.
    pending: BTreeSet<TxnId>,
    /// Vertex → pending commits waiting for it to change.
    waiters: BTreeMap<TxnId, BTreeSet<TxnId>>,
    /// Status requests this server sent: vertex → (status wanted, server asked).
    asked: BTreeMap<TxnId, (Status, u16)>,
    /// Status requests to answer once the vertex reaches the status.
    answers: BTreeMap<TxnId, Vec<(NodeId, Status)>>,
}

impl Waits {
    /// Nothing pending.
    pub(crate) fn idle(&self) -> bool {
        self.pending.is_empty() && self.answers.is_empty()
    }

    fn wait_on(&mut self, vertex: TxnId, commit: TxnId) {
        self.waiters.entry(vertex).or_default().insert(commit);
    }

    /// `id` was collected: forgets requests about it and returns the commits that waited on
    /// it (a collected vertex counts as decided and finished).
    pub(crate) fn forget(&mut self, id: TxnId) -> BTreeSet<TxnId> {
        self.asked.remove(&id);
        self.answers.remove(&id);
        self.waiters.remove(&id).unwrap_or_default()
    }
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    /// A start request (§3.2): runs the new pieces, replies with every requested piece's result
    /// and the transaction's undecided ancestors. Repeated pieces are answered from what they
    /// produced the first time. `parked_since`: when a read-only hold first parked the request
    /// (`readonly`), `None` when it just arrived. Not inlined, so that a profile can name its
    /// cost (`examples/start_cost.rs`).
    #[inline(never)]
    pub(super) fn start(
        &mut self,
        from: NodeId,
        s: Start<Program<W>>,
        parked_since: Option<Duration>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        if self.stale(s.txn, Some(s.epoch)) {
            return;
        }
        let Some(s) = self.unparked(from, s, parked_since, ctx) else {
            return;
        };
        let epoch = s.epoch.max(self.epochs.current);
        self.graph.local(s.txn, self.me, epoch);
        let mut t = self.txns.remove(&s.txn).unwrap_or_else(|| LocalTxn {
            program: s.program,
            coordinator: from,
            pieces: BTreeMap::new(),
            keys: Vec::new(),
            commit: None,
            finished: false,
            outputs: Vec::new(),
            history: HistoryPart::default(),
        });
        t.coordinator = from;
        let mut results = Vec::with_capacity(s.pieces.len());
        for req in s.pieces {
            let piece = req.piece;
            let result = match t.pieces.get(&piece) {
                Some(done) => done.result.clone(),
                None => self.start_piece(s.txn, &mut t, req),
            };
            results.push((piece, result));
        }
        self.txns.insert(s.txn, t);
        let deps = self.graph.export(&self.graph.undecided_ancestors(s.txn));
        self.counters.graph_vertices_max = self
            .counters
            .graph_vertices_max
            .max(self.graph.len() as u64);
        let reply = StartReply {
            txn: s.txn,
            results,
            deps,
        };
        self.send(ctx, from, Msg::StartReply(Box::new(reply)));
        self.wake(ctx, BTreeSet::new());
    }

    /// Whether a request for `txn`, tagged `epoch`, is a late copy of one whose transaction
    /// finished everywhere and was collected here (`server::gc`): nothing of it is left here,
    /// and its tag is at or below the GC floor. Such a request is ignored; acting on it would
    /// run the transaction's pieces a second time or bring back a vertex nobody decides.
    fn stale(&self, txn: TxnId, epoch: Option<u64>) -> bool {
        !self.txns.contains_key(&txn)
            && self.graph.get(txn).is_none()
            && epoch.is_some_and(|e| self.epochs.collected(e))
    }

    /// One new piece: accepted, its conflicts turned into edges, run now if immediate.
    fn start_piece(
        &mut self,
        txn: TxnId,
        t: &mut LocalTxn<Program<W>>,
        req: crate::msg::PieceReq,
    ) -> PieceResult {
        let accepted = match self.accept(&t.program, req) {
            Ok(a) => a,
            Err(e) => {
                self.fail(e.to_string());
                return Err(PieceFailure::Error(e.to_string()));
            }
        };
        let mut edges = Vec::new();
        for &(k, a) in &accepted.keys {
            self.keys.access(k, txn, accepted.kind, a, &mut edges);
            if !t.keys.contains(&k) {
                t.keys.push(k);
            }
        }
        for (parent, label) in edges {
            self.graph.add_edge(parent, txn, label);
        }
        let result = match accepted.kind {
            PieceKind::Immediate => self.execute_piece(t, &accepted),
            PieceKind::Deferrable => Ok(PieceValues::new()),
        };
        t.pieces.insert(
            accepted.piece,
            LocalPiece {
                accepted,
                result: result.clone(),
            },
        );
        result
    }

    /// Runs one piece and installs its writes (a failed piece installs nothing).
    fn execute_piece(&mut self, t: &mut LocalTxn<Program<W>>, a: &Accepted) -> PieceResult {
        let mut buffer = TxnBuffer::default();
        let result = self.run_piece(&t.program, a, &mut buffer, R::ENABLED);
        if let Err(PieceFailure::Error(m)) = &result {
            self.fail(m.clone());
        }
        if result.is_ok() {
            let mut writes = Vec::new();
            if let Err(e) = self.shard.apply(&mut buffer, R::ENABLED, &mut writes) {
                self.fail(e.to_string());
                return Err(PieceFailure::Error(e.to_string()));
            }
            if let Some(entry) = self.log_entry(&a.keys) {
                t.history.reads.append(&mut buffer.reads);
                t.history.scans.append(&mut buffer.scans);
                t.history.writes.append(&mut writes);
                t.history.order.push(entry);
            }
        }
        result
    }

    /// A commit request (§3.2): aggregate its graph, mark the transaction COMMITTING and
    /// evaluate it (module docs).
    pub(super) fn commit(&mut self, from: NodeId, c: Commit, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        if self.stale(c.txn, c.deps.get(c.txn).map(|v| v.epoch)) {
            return;
        }
        let epochs = &self.epochs;
        self.graph.merge_all(&c.deps, |e| epochs.collected(e));
        let Some(t) = self.txns.get_mut(&c.txn) else {
            self.fail(format!(
                "commit request for transaction {} that never started here",
                txlab_check::display_txn(c.txn)
            ));
            return;
        };
        t.coordinator = from;
        t.commit = Some(c.rolled_back);
        if t.finished {
            self.reply_commit(c.txn, ctx);
            return;
        }
        self.graph.raise(c.txn, Status::Committing);
        self.rococo.pending.insert(c.txn);
        self.wake(ctx, BTreeSet::from([c.txn]));
    }

    /// Re-evaluates every pending commit that a change may have unblocked, until nothing
    /// changes; answers status requests and read-only reads the changes unblock.
    pub(super) fn wake(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>, mut ready: BTreeSet<TxnId>) {
        loop {
            for id in self.graph.take_touched() {
                if let Some(w) = self.rococo.waiters.remove(&id) {
                    ready.extend(w);
                }
                self.answer_status(id, ctx);
                self.ro_unblock(id, ctx);
            }
            let Some(t) = ready.pop_first() else {
                break;
            };
            if self.rococo.pending.contains(&t) && self.evaluate(t, ctx) {
                self.rococo.pending.remove(&t);
            }
        }
    }

    /// Figure 7 for `t`; true once `t` has finished and its reply is sent.
    fn evaluate(&mut self, t: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) -> bool {
        let Some((finished, decided, epoch)) = self
            .graph
            .get(t)
            .map(|v| (v.finished, v.decided(), v.epoch))
        else {
            return true;
        };
        if finished {
            self.reply_commit(t, ctx);
            return true;
        }
        if !decided {
            if !self.committing_wait(t, ctx) {
                return false;
            }
            let ancestors = self.graph.undecided_ancestors(t);
            let component = component_of(&self.graph, t, &ancestors);
            let order = if self.shared.params.mutant(Mutant::SortById) {
                component
            } else {
                let (order, cycle) = execution_order(&self.graph, &component);
                self.counters.i_cycles += u64::from(cycle);
                order
            };
            self.counters.scc_sizes.record(order.len() as u64);
            self.graph.decide(&order, epoch);
        }
        let Some(order) = self.graph.get(t).and_then(|v| v.order.clone()) else {
            return false;
        };
        if !self.decided_wait(t, &order, ctx) {
            return false;
        }
        for &m in order.iter() {
            if self.graph.get(m).is_some_and(|v| v.local && !v.finished) {
                self.execute(m, ctx);
            }
        }
        true
    }

    /// Whether every undecided ancestor of `t` is at least COMMITTING; registers the waits and
    /// sends status requests for those not involving this server.
    fn committing_wait(&mut self, t: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) -> bool {
        if self.shared.params.mutant(Mutant::NoCommittingWait) {
            return true;
        }
        let mut ready = true;
        for x in self.graph.undecided_ancestors(t) {
            let Some(v) = self.graph.get(x) else { continue };
            if x == t || v.status >= Status::Committing {
                continue;
            }
            ready = false;
            let local = v.local;
            self.rococo.wait_on(x, t);
            if !local {
                self.ask(x, Status::Committing, ctx);
            }
        }
        ready
    }

    /// Whether every parent outside `order` of its members is decided, and finished if it
    /// involves this server; registers the waits (module docs).
    fn decided_wait(
        &mut self,
        t: TxnId,
        order: &[TxnId],
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) -> bool {
        let mut blockers = Vec::new();
        for &m in order {
            let Some(v) = self.graph.get(m) else { continue };
            for &(p, _) in &v.parents {
                if order.contains(&p) {
                    continue;
                }
                if let Some(vp) = self.graph.get(p)
                    && (!vp.decided() || (vp.local && !vp.finished))
                {
                    blockers.push((p, vp.decided(), vp.local));
                }
            }
        }
        for &(p, decided, local) in &blockers {
            self.rococo.wait_on(p, t);
            if !decided && !local {
                self.ask(p, Status::Decided, ctx);
            }
        }
        blockers.is_empty()
    }

    /// Sends a status request for `x` (at most one outstanding per status wanted).
    fn ask(&mut self, x: TxnId, want: Status, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        if self.rococo.asked.get(&x).is_some_and(|a| a.0 >= want) {
            return;
        }
        let Some(v) = self.graph.get(x) else { return };
        let Some(&target) = v.servers.iter().find(|&&s| s != self.me) else {
            self.counters.status_errors += 1;
            return;
        };
        let req = StatusReq {
            txn: x,
            want,
            epoch: v.epoch,
        };
        self.rococo.asked.insert(x, (want, target));
        self.counters.status_requests += 1;
        self.send(ctx, NodeId(target), Msg::Status(req));
    }

    /// Sends every outstanding status request again (the retransmission timer).
    pub(super) fn resend_status_requests(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let asked = std::mem::take(&mut self.rococo.asked);
        for (x, (want, target)) in asked {
            let Some(v) = self.graph.get(x) else { continue };
            if v.status >= want {
                continue;
            }
            let req = StatusReq {
                txn: x,
                want,
                epoch: v.epoch,
            };
            self.rococo.asked.insert(x, (want, target));
            self.counters.retransmits += 1;
            self.send(ctx, NodeId(target), Msg::Status(req));
        }
    }

    /// Executes `m`'s deferred pieces here, marks it finished and, if its commit request is
    /// in, replies.
    fn execute(&mut self, m: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(mut t) = self.txns.remove(&m) else {
            return;
        };
        if t.commit != Some(true) {
            let deferred: Vec<Accepted> = t
                .pieces
                .values()
                .filter(|p| p.accepted.kind == PieceKind::Deferrable)
                .map(|p| p.accepted.clone())
                .collect();
            for a in deferred {
                match self.execute_piece(&mut t, &a) {
                    Ok(out) => t.outputs.push((a.piece, out)),
                    Err(PieceFailure::UserAbort(why)) => {
                        let name = self.shared.profiles
                            [txlab_core::pieces::Pieced::profile(&t.program)]
                        .pieces[usize::from(a.piece.piece)]
                        .name;
                        self.fail(format!(
                            "misuse: deferred piece {name} of transaction {} rolled back after \
                             dispatch ({why}); ROCOCO allows user aborts only before any writing \
                             piece is dispatched",
                            txlab_check::display_txn(m)
                        ));
                    }
                    Err(PieceFailure::Error(_)) => {}
                }
            }
        }
        t.finished = true;
        let commit_known = t.commit.is_some();
        self.keys.finished(m, t.keys.iter().copied());
        self.txns.insert(m, t);
        self.graph.finish(m);
        if commit_known {
            self.reply_commit(m, ctx);
            self.rococo.pending.remove(&m);
        }
    }

    /// Sends `m`'s commit reply (again, on a repeated commit request).
    fn reply_commit(&mut self, m: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(t) = self.txns.get(&m) else { return };
        let reply = CommitReply {
            txn: m,
            outputs: t.outputs.clone(),
            history: R::ENABLED.then(|| t.history.clone()),
        };
        let to = t.coordinator;
        self.send(ctx, to, Msg::CommitReply(Box::new(reply)));
    }

    /// A status request (§3.2): answered once the transaction is at least `want` here.
    pub(super) fn status(
        &mut self,
        from: NodeId,
        req: StatusReq,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        match self.graph.get(req.txn) {
            Some(v) if v.status >= req.want => self.send_status(from, req.txn, ctx),
            None if self.epochs.collected(req.epoch) => {
                self.send(ctx, from, Msg::Collected { txn: req.txn });
            }
            _ => {
                let a = self.rococo.answers.entry(req.txn).or_default();
                if !a.contains(&(from, req.want)) {
                    a.push((from, req.want));
                }
            }
        }
    }

    /// Answers the waiting status requests for `id` that its status now satisfies.
    fn answer_status(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(status) = self.graph.get(id).map(|v| v.status) else {
            return;
        };
        let Some(waiting) = self.rococo.answers.remove(&id) else {
            return;
        };
        let (now, later): (Vec<_>, Vec<_>) = waiting.into_iter().partition(|w| w.1 <= status);
        if !later.is_empty() {
            self.rococo.answers.insert(id, later);
        }
        for (to, _) in now {
            self.send_status(to, id, ctx);
        }
    }

    /// `x` with its component if decided, else with its undecided ancestors.
    fn send_status(&mut self, to: NodeId, x: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let ids = if self.graph.get(x).is_some_and(|v| v.decided()) {
            vec![x]
        } else {
            self.graph.undecided_ancestors(x)
        };
        let deps = self.graph.export(&ids);
        self.counters.status_replies += 1;
        self.send(ctx, to, Msg::StatusReply(Box::new(deps)));
    }

    /// The asked server collected `txn`. If this server still waits on it, GC dropped a
    /// transaction someone needed: an internal error (`gc_status_errors`); the vertex is then
    /// dropped here too (treated as decided and finished) so the run goes on. A late
    /// duplicate of an answered request changes nothing.
    pub(super) fn collected_reply(&mut self, txn: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let waiting = self.rococo.asked.get(&txn).is_some_and(|&(want, _)| {
            self.graph
                .get(txn)
                .is_some_and(|v| v.status < want && !v.local)
        });
        if !waiting {
            return;
        }
        self.counters.gc_status_errors += 1;
        self.graph.retain(|id, _| id != txn);
        let ready = self.rococo.forget(txn);
        self.wake(ctx, ready);
    }

    /// A status reply: merged; satisfied requests are done.
    pub(super) fn status_reply(
        &mut self,
        deps: &crate::graph::Deps,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let epochs = &self.epochs;
        self.graph.merge_all(deps, |e| epochs.collected(e));
        for v in &deps.vertices {
            if let Some(&(want, _)) = self.rococo.asked.get(&v.id)
                && self.graph.get(v.id).is_some_and(|g| g.status >= want)
            {
                self.rococo.asked.remove(&v.id);
            }
        }
        self.wake(ctx, BTreeSet::new());
    }
}
