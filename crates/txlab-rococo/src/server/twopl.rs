//! The 2PL baseline's server (§5.1 of the paper: "servers acquire locks during the execute
//! phase ... We use the wound-wait strategy, also used in Spanner").
//!
//! - **Locks** are per conflict key (shared for reads, exclusive for writes), taken when a piece
//!   executes and held until the 2PC decision. A piece runs only when it holds every lock it
//!   declared; its writes go to the attempt's buffer and are installed at commit.
//! - **Wound-wait.** Priorities are `(priority, txn)`, smaller is older; a transaction keeps
//!   its priority across retries, so it eventually becomes the oldest and wins. A requester
//!   older than a conflicting holder wounds it (the holder's attempt is rolled back here, its
//!   locks released, and its coordinator told with `Wounded`), unless the holder is prepared;
//!   a younger requester waits. Waits only go from younger to older transactions, or to
//!   prepared ones, which never wait for locks: no deadlock.
//! - **Attempts.** Each retry is a new attempt; a message of an older attempt is ignored, and
//!   a newer attempt of a transaction rolls its older one back here.
//! - Waiting pieces are retried after every release, oldest transaction first.

use super::{Accepted, Finished, Program, Server};
use crate::config::{Mutant, Recording};
use crate::msg::{Exec, ExecReply, HistoryPart, Msg, PieceFailure, PieceReq, Refusal};
use crate::store::TxnBuffer;
use crate::workload::PiecedWorkload;
use foldhash::HashMap;
use std::collections::BTreeMap;
use txlab_core::pieces::{ConflictKey, PieceRef, PieceValues};
use txlab_core::protocol::history::TxnId;
use txlab_net::{Ctx, NodeId};

/// One key's lock: its holders, each `(txn, exclusive)`.
#[derive(Debug, Default)]
struct Lock {
    holders: Vec<(TxnId, bool)>,
}

/// A live attempt of a transaction at this server.
#[derive(Debug)]
struct Attempt<P> {
    attempt: u32,
    priority: (u64, TxnId),
    coordinator: NodeId,
    program: P,
    /// Pieces received and not yet run (waiting for locks), in arrival order.
    queue: Vec<PieceReq>,
    /// Pieces run, with their outputs.
    done: BTreeMap<PieceRef, PieceValues>,
    held: Vec<ConflictKey>,
    buffer: TxnBuffer,
    history: HistoryPart,
    prepared: bool,
}

/// The lock table and live attempts (module docs).
#[derive(Debug)]
pub(crate) struct Locks<P> {
    keys: HashMap<ConflictKey, Lock>,
    attempts: BTreeMap<TxnId, Attempt<P>>,
    pub(crate) finished: Finished,
}

impl<P> Default for Locks<P> {
    fn default() -> Self {
        Self {
            keys: HashMap::default(),
            attempts: BTreeMap::new(),
            finished: Finished::default(),
        }
    }
}

impl<P> Locks<P> {
    pub(crate) fn is_empty(&self) -> bool {
        self.attempts.is_empty()
    }

    /// Releases every lock `txn` holds.
    fn release(&mut self, txn: TxnId, held: &[ConflictKey]) {
        for k in held {
            if let Some(l) = self.keys.get_mut(k) {
                l.holders.retain(|h| h.0 != txn);
                if l.holders.is_empty() {
                    self.keys.remove(k);
                }
            }
        }
    }
}

/// What a lock request found.
enum Grant {
    Granted,
    /// Held by these transactions, which the requester must wait for or wound.
    Conflict(Vec<TxnId>),
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    pub(super) fn twopl_exec(
        &mut self,
        from: NodeId,
        e: Exec<Program<W>>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        if let Some(why) = self.twopl.finished.ended(e.txn, e.attempt) {
            return self.refuse_again(from, e.txn, e.attempt, why, ctx);
        }
        let now = ctx.now();
        match self.twopl.attempts.get(&e.txn) {
            Some(a) if a.attempt > e.attempt => return,
            Some(a) if a.attempt < e.attempt => self.twopl_rollback(e.txn, now, None),
            _ => {}
        }
        let a = self.twopl.attempts.entry(e.txn).or_insert_with(|| Attempt {
            attempt: e.attempt,
            priority: (e.priority, e.txn),
            coordinator: from,
            program: e.program,
            queue: Vec::new(),
            done: BTreeMap::new(),
            held: Vec::new(),
            buffer: TxnBuffer::default(),
            history: HistoryPart::default(),
            prepared: false,
        });
        a.coordinator = from;
        let mut repeated = Vec::new();
        for req in e.pieces {
            if let Some(out) = a.done.get(&req.piece) {
                repeated.push((req.piece, out.clone()));
            } else if !a.queue.iter().any(|q| q.piece == req.piece) {
                a.queue.push(req);
            }
        }
        if !repeated.is_empty() {
            let reply = ExecReply {
                txn: e.txn,
                attempt: e.attempt,
                result: Ok(repeated),
                versions: Vec::new(),
            };
            self.send(ctx, from, Msg::ExecReply(Box::new(reply)));
        }
        self.twopl_progress(ctx);
    }

    /// Runs every queued piece whose locks can be had, oldest transaction first, until nothing
    /// changes.
    fn twopl_progress(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        loop {
            let mut order: Vec<((u64, TxnId), TxnId)> = self
                .twopl
                .attempts
                .iter()
                .filter(|(_, a)| !a.queue.is_empty())
                .map(|(&t, a)| (a.priority, t))
                .collect();
            order.sort_unstable();
            let mut changed = false;
            for (_, txn) in order {
                changed |= self.twopl_run_queue(txn, ctx);
            }
            if !changed {
                return;
            }
        }
    }

    /// Runs `txn`'s queued pieces while their locks can be taken; true if anything changed.
    fn twopl_run_queue(&mut self, txn: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) -> bool {
        let mut outputs = Vec::new();
        let mut changed = false;
        loop {
            let Some(a) = self.twopl.attempts.get(&txn) else {
                return true;
            };
            let Some(req) = a.queue.first().cloned() else {
                break;
            };
            let piece = req.piece;
            let (attempt, priority, coordinator) = (a.attempt, a.priority, a.coordinator);
            let accepted = match self.accept(&a.program, req) {
                Ok(acc) => acc,
                Err(e) => {
                    self.fail(e.to_string());
                    self.twopl_refuse(txn, Refusal::Piece(PieceFailure::Error(e.to_string())), ctx);
                    return true;
                }
            };
            if !self.twopl_lock(txn, priority, &accepted, ctx) {
                break;
            }
            changed = true;
            let a = self.twopl.attempts.get_mut(&txn).expect("live");
            a.queue.remove(0);
            let mut buffer = std::mem::take(&mut a.buffer);
            let program = a.program.clone();
            let result = self.run_piece(&program, &accepted, &mut buffer, R::ENABLED);
            let entry = self.log_entry(&accepted.keys);
            let a = self.twopl.attempts.get_mut(&txn).expect("live");
            a.buffer = buffer;
            match result {
                Ok(out) => {
                    a.history.order.extend(entry);
                    a.done.insert(piece, out.clone());
                    outputs.push((piece, out));
                }
                Err(f) => {
                    if let PieceFailure::Error(m) = &f {
                        self.fail(m.clone());
                    }
                    let _ = (attempt, coordinator);
                    self.twopl_refuse(txn, Refusal::Piece(f), ctx);
                    return true;
                }
            }
        }
        if !outputs.is_empty()
            && let Some(a) = self.twopl.attempts.get(&txn)
        {
            let reply = ExecReply {
                txn,
                attempt: a.attempt,
                result: Ok(outputs),
                versions: Vec::new(),
            };
            let to = a.coordinator;
            if self.shared.params.mutant(Mutant::TwoPlEarlyRelease) && a.queue.is_empty() {
                let held =
                    std::mem::take(&mut self.twopl.attempts.get_mut(&txn).expect("live").held);
                self.twopl.release(txn, &held);
            }
            self.send(ctx, to, Msg::ExecReply(Box::new(reply)));
        }
        changed
    }

    /// Takes every lock `piece` needs, wounding younger unprepared holders; false if it must
    /// wait.
    fn twopl_lock(
        &mut self,
        txn: TxnId,
        priority: (u64, TxnId),
        piece: &Accepted,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) -> bool {
        let mut wait = false;
        for &(k, a) in &piece.keys {
            let exclusive = a.writes();
            let grant = {
                let l = self.twopl.keys.entry(k).or_default();
                let others: Vec<TxnId> = l
                    .holders
                    .iter()
                    .filter(|h| h.0 != txn && (exclusive || h.1))
                    .map(|h| h.0)
                    .collect();
                if others.is_empty() {
                    match l.holders.iter_mut().find(|h| h.0 == txn) {
                        Some(h) => h.1 |= exclusive,
                        None => l.holders.push((txn, exclusive)),
                    }
                    Grant::Granted
                } else {
                    Grant::Conflict(others)
                }
            };
            match grant {
                Grant::Granted => {
                    let a = self.twopl.attempts.get_mut(&txn).expect("live");
                    if !a.held.contains(&k) {
                        a.held.push(k);
                    }
                }
                Grant::Conflict(holders) => {
                    for h in holders {
                        let Some(ha) = self.twopl.attempts.get(&h) else {
                            continue;
                        };
                        if priority < ha.priority && !ha.prepared {
                            self.counters.wounds += 1;
                            let (attempt, to) = (ha.attempt, ha.coordinator);
                            self.twopl_rollback(h, ctx.now(), None);
                            self.send(ctx, to, Msg::Wounded { txn: h, attempt });
                        } else {
                            wait = true;
                        }
                    }
                    if wait {
                        return false;
                    }
                    // Every conflicting holder was wounded: take the lock now.
                    let l = self.twopl.keys.entry(k).or_default();
                    match l.holders.iter_mut().find(|h| h.0 == txn) {
                        Some(h) => h.1 |= exclusive,
                        None => l.holders.push((txn, exclusive)),
                    }
                    let a = self.twopl.attempts.get_mut(&txn).expect("live");
                    if !a.held.contains(&k) {
                        a.held.push(k);
                    }
                }
            }
        }
        true
    }

    /// Rolls `txn`'s live attempt back here: locks released, buffer dropped, the attempt
    /// remembered as finished (its late messages are ignored).
    fn twopl_rollback(&mut self, txn: TxnId, now: std::time::Duration, why: Option<Refusal>) {
        if let Some(a) = self.twopl.attempts.remove(&txn) {
            self.twopl.release(txn, &a.held);
            self.twopl
                .finished
                .refuse(txn, a.attempt, now, why.unwrap_or(Refusal::Wounded));
        }
    }

    /// The attempt fails here (a piece failed): rolled back, the coordinator told.
    fn twopl_refuse(&mut self, txn: TxnId, why: Refusal, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(a) = self.twopl.attempts.get(&txn) else {
            return;
        };
        let reply = ExecReply {
            txn,
            attempt: a.attempt,
            result: Err(why.clone()),
            versions: Vec::new(),
        };
        let to = a.coordinator;
        self.twopl_rollback(txn, ctx.now(), Some(why));
        self.send(ctx, to, Msg::ExecReply(Box::new(reply)));
    }

    pub(super) fn twopl_prepare(
        &mut self,
        from: NodeId,
        txn: TxnId,
        attempt: u32,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let vote = match self.twopl.attempts.get_mut(&txn) {
            Some(a) if a.attempt == attempt && a.queue.is_empty() => {
                a.prepared = true;
                Ok(())
            }
            _ if self.twopl.finished.committed(txn, attempt) => Ok(()),
            _ => Err(Refusal::Wounded),
        };
        self.send(ctx, from, Msg::Vote { txn, attempt, vote });
    }

    pub(super) fn twopl_decide(
        &mut self,
        from: NodeId,
        txn: TxnId,
        attempt: u32,
        commit: bool,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let live = self
            .twopl
            .attempts
            .get(&txn)
            .is_some_and(|a| a.attempt == attempt);
        if live {
            let mut a = self.twopl.attempts.remove(&txn).expect("live");
            let history = if commit {
                Some(self.install(&mut a.buffer, std::mem::take(&mut a.history)))
            } else {
                None
            };
            self.twopl.finished.insert(txn, attempt, ctx.now(), history);
            self.twopl.release(txn, &a.held);
            self.twopl_progress(ctx);
        }
        let reply = self
            .twopl
            .finished
            .decided(txn, attempt, commit, live, ctx.now());
        self.send(ctx, from, reply);
    }
}
