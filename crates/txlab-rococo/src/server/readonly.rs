//! ROCOCO's read-only reads (§4.1, Figure 10): a read runs only after every transaction of this
//! server that declared a write of one of its conflict keys when the read arrived has finished.
//! Writers that arrive later do not hold it back (so a stream of writers cannot starve it).
//!
//! Immediate writers count too, not only deferred ones: waiting for a transaction to finish
//! here is what forces it to have started on every server it involves, which is why two equal
//! rounds are consistent (§4.1); an immediate write seen without that wait could be the only
//! visible half of a transaction whose other half a second round still misses.
//!
//! A read records, per column group, the version it observed; the coordinator compares rounds
//! by these versions.
//!
//! # Holds
//!
//! Under contention two consecutive rounds rarely agree: TPC-C's StockLevel reads its
//! district's `D_NEXT_O_ID`, which every NewOrder of the district writes in its start phase,
//! so a NewOrder starting between the two rounds changes what the second one sees. After
//! `Params::ro_hold_after` disagreements a read-only transaction's reads *hold* their conflict
//! keys ([`RoRead::hold`]): from the read's arrival until the transaction ends
//! ([`Msg::RoRelease`]), a start request that would write a held key waits here, unprocessed,
//! in arrival order (it is *parked*). The read itself still waits for the writers it found, as
//! above, and the coordinator still compares two consecutive rounds. Two held rounds then
//! agree: at a server, the first held read waited for every writer present at its arrival,
//! and no new writer of its keys started there until the second one read them.
//!
//! **Why holds are sound.** A parked start request is processed later, exactly as if the
//! network had delivered it later; the server's handling of every message is unchanged. So
//! every execution with holds is an execution the protocol without holds allows under some
//! message delays, and the §4.1 argument applies to it unchanged: both rounds waited for the
//! conflicting transactions they found, and the coordinator commits only on two consecutive
//! rounds that observed the same versions. Holds change which executions are likely (the
//! second round sees no new writer), never which are possible; they need no argument of
//! their own, and making a held read skip the wait (the tempting "its keys are frozen anyway",
//! mutant `HeldReadNoWait`) is caught by the correctness kit.
//!
//! **Deadlock.** A held read can wait for a writer `W` that is unfinished here while a start
//! request of `W` is parked at another server by the same transaction's hold there (`W` cannot
//! finish before its start phase completes everywhere). Three rules end such waits:
//!
//! - a start request of a transaction that is already an unfinished writer of a held key here
//!   is never parked (a read here may be waiting for it: a NewOrder whose district piece ran
//!   before the hold still sends its order lines);
//! - a held read that must wait tells its coordinator which writers it waits for
//!   ([`Msg::RoBlocked`]), and the coordinator has every server holding keys for the
//!   transaction let those writers through ([`Msg::RoExempt`]); a writer let through may then
//!   change a held key, and the next round disagrees;
//! - what that misses (an ancestor of such a writer parked elsewhere): while a start request
//!   is parked, holds older than `Params::ro_hold_timeout` are dropped (counted in
//!   `ro_hold_expiries`), letting what they kept go on; the transaction's next held round holds
//!   again.

use super::{Accepted, HOLD_TIMER, Program, Server};
use crate::config::{Mutant, Recording};
use crate::msg::{Msg, PieceFailure, RoPiece, RoRead, RoReply, Start};
use crate::store::TxnBuffer;
use crate::workload::PiecedWorkload;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;
use txlab_core::pieces::{ConflictKey, Pieced};
use txlab_core::protocol::history::TxnId;
use txlab_net::{Ctx, NodeId};

/// A read waiting for writers to finish (its pieces moved into `accepted`).
#[derive(Debug)]
struct Waiting<P> {
    from: NodeId,
    read: RoRead<P>,
    accepted: Vec<Accepted>,
    blockers: BTreeSet<TxnId>,
}

/// One read-only transaction's hold here.
#[derive(Debug)]
struct Hold {
    keys: BTreeSet<ConflictKey>,
    /// Writers it lets through (`Msg::RoExempt`).
    exempt: BTreeSet<TxnId>,
    /// When it was installed.
    since: Duration,
}

/// Reads waiting, by `(transaction, round)`, and the holds (module docs).
#[derive(Debug)]
pub(crate) struct Parked<P> {
    reads: BTreeMap<(TxnId, u32), Waiting<P>>,
    /// Holds, by read-only transaction.
    holds: BTreeMap<TxnId, Hold>,
    /// Held key → how many holds name it.
    held: BTreeMap<ConflictKey, u32>,
    /// Writer → how many holds let it through.
    exempt: BTreeMap<TxnId, u32>,
    /// Start requests waiting for holds, in arrival order.
    starts: VecDeque<(NodeId, Start<P>)>,
    /// The transactions of `starts`.
    parked: BTreeSet<TxnId>,
    /// When the hold timer fires, if armed.
    timer: Option<Duration>,
}

impl<P> Default for Parked<P> {
    fn default() -> Self {
        Self {
            reads: BTreeMap::new(),
            holds: BTreeMap::new(),
            held: BTreeMap::new(),
            exempt: BTreeMap::new(),
            starts: VecDeque::new(),
            parked: BTreeSet::new(),
            timer: None,
        }
    }
}

impl<P> Parked<P> {
    /// No read waiting and no start request parked.
    pub(crate) fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.starts.is_empty()
    }

    /// Drops `txn`'s hold.
    fn unhold(&mut self, txn: TxnId) -> bool {
        let Some(h) = self.holds.remove(&txn) else {
            return false;
        };
        for k in h.keys {
            decrement(&mut self.held, k);
        }
        for w in h.exempt {
            decrement(&mut self.exempt, w);
        }
        true
    }
}

/// Takes one off `k`'s count, removing it at zero.
fn decrement<K: Ord>(counts: &mut BTreeMap<K, u32>, k: K) {
    if let Some(n) = counts.get_mut(&k) {
        *n -= 1;
        if *n == 0 {
            counts.remove(&k);
        }
    }
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    /// One round's read request (Figure 10).
    pub(super) fn ro_read(
        &mut self,
        from: NodeId,
        mut read: RoRead<Program<W>>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        if self.ro.reads.contains_key(&(read.txn, read.round)) {
            return;
        }
        let hold = read.hold;
        let mut accepted = Vec::with_capacity(read.pieces.len());
        for req in std::mem::take(&mut read.pieces) {
            let piece = req.piece;
            match self.accept(&read.program, req) {
                Ok(a) => accepted.push(a),
                Err(e) => {
                    self.fail(e.to_string());
                    let pieces = vec![RoPiece {
                        piece,
                        result: Err(PieceFailure::Error(e.to_string())),
                        reads: Vec::new(),
                        scans: Vec::new(),
                    }];
                    let reply = RoReply {
                        txn: read.txn,
                        round: read.round,
                        pieces,
                    };
                    self.send(ctx, from, Msg::RoReply(Box::new(reply)));
                    return;
                }
            }
        }
        if hold {
            self.hold(read.txn, &accepted, ctx.now());
        }
        let mut writers = Vec::new();
        for a in &accepted {
            for (k, _) in &a.keys {
                self.keys.unfinished_writers(k, &mut writers);
            }
        }
        let mut blockers: BTreeSet<TxnId> = writers
            .into_iter()
            .filter(|&w| self.graph.get(w).is_some_and(|v| v.local && !v.finished))
            .collect();
        if hold && self.shared.params.mutant(Mutant::HeldReadNoWait) {
            blockers.clear();
        }
        if blockers.is_empty() {
            self.ro_run(from, &read, &accepted, ctx);
        } else {
            self.counters.ro_waits += 1;
            if hold {
                let writers = blockers.iter().copied().collect();
                let blocked = Msg::RoBlocked {
                    txn: read.txn,
                    writers,
                };
                self.send(ctx, from, blocked);
            }
            self.ro.reads.insert(
                (read.txn, read.round),
                Waiting {
                    from,
                    read,
                    accepted,
                    blockers,
                },
            );
        }
    }

    /// `id` changed: reads it held back whose writers have all finished run now.
    pub(super) fn ro_unblock(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        if self.ro.reads.is_empty() || self.graph.get(id).is_some_and(|v| !v.finished) {
            return;
        }
        let mut ready = Vec::new();
        for (key, w) in &mut self.ro.reads {
            if w.blockers.remove(&id) && w.blockers.is_empty() {
                ready.push(*key);
            }
        }
        for key in ready {
            if let Some(w) = self.ro.reads.remove(&key) {
                self.ro_run(w.from, &w.read, &w.accepted, ctx);
            }
        }
    }

    fn ro_run(
        &mut self,
        from: NodeId,
        read: &RoRead<Program<W>>,
        accepted: &[Accepted],
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let mut pieces = Vec::with_capacity(accepted.len());
        for a in accepted {
            let mut buffer = TxnBuffer::default();
            let result = self.run_piece(&read.program, a, &mut buffer, true);
            if let Err(PieceFailure::Error(m)) = &result {
                self.fail(m.clone());
            }
            pieces.push(RoPiece {
                piece: a.piece,
                result,
                reads: buffer.reads,
                scans: buffer.scans,
            });
        }
        let reply = RoReply {
            txn: read.txn,
            round: read.round,
            pieces,
        };
        self.send(ctx, from, Msg::RoReply(Box::new(reply)));
    }
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    /// Installs (or extends) `txn`'s hold on the keys of `accepted`.
    fn hold(&mut self, txn: TxnId, accepted: &[Accepted], now: Duration) {
        let h = self.ro.holds.entry(txn).or_insert_with(|| Hold {
            keys: BTreeSet::new(),
            exempt: BTreeSet::new(),
            since: now,
        });
        for a in accepted {
            for &(k, _) in &a.keys {
                if h.keys.insert(k) {
                    *self.ro.held.entry(k).or_insert(0) += 1;
                }
            }
        }
    }

    /// A start request, unless a hold parks it (module docs): parked when its transaction
    /// already has a parked request here, or when one of its pieces writes a held key and the
    /// transaction is not already an unfinished writer of a held key here.
    pub(super) fn unparked(
        &mut self,
        from: NodeId,
        s: Start<Program<W>>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) -> Option<Start<Program<W>>> {
        if self.ro.held.is_empty() && self.ro.parked.is_empty() {
            return Some(s);
        }
        let park = !self.ro.exempt.contains_key(&s.txn)
            && (self.ro.parked.contains(&s.txn) || self.writes_held(&s));
        if !park {
            return Some(s);
        }
        self.counters.ro_parked += 1;
        self.ro.parked.insert(s.txn);
        self.ro.starts.push_back((from, s));
        if self.ro.timer.is_none() {
            let at = ctx.now() + self.shared.params.ro_hold_timeout;
            self.ro.timer = Some(at);
            ctx.set_timer(self.shared.params.ro_hold_timeout, HOLD_TIMER);
        }
        None
    }

    /// Whether `s` writes a held key, its transaction not being an unfinished writer of one.
    fn writes_held(&self, s: &Start<Program<W>>) -> bool {
        if self.ro.held.is_empty() {
            return false;
        }
        let mut keys = Vec::new();
        for req in &s.pieces {
            s.program.conflict_keys(req.piece, &req.inputs, &mut keys);
        }
        if !keys
            .iter()
            .any(|(k, a)| a.writes() && self.ro.held.contains_key(k))
        {
            return false;
        }
        !self
            .txns
            .get(&s.txn)
            .is_some_and(|t| !t.finished && t.writes_any(&self.ro.held))
    }

    /// The read-only transaction `txn` ended: its hold goes.
    pub(super) fn ro_release(&mut self, txn: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        if self.ro.unhold(txn) {
            self.replay_parked(ctx);
        }
    }

    /// `txn`'s hold lets `writers` through: those parked go on.
    pub(super) fn ro_exempt(
        &mut self,
        txn: TxnId,
        writers: &[TxnId],
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let Some(h) = self.ro.holds.get_mut(&txn) else {
            return;
        };
        let mut parked = false;
        for &w in writers {
            if h.exempt.insert(w) {
                *self.ro.exempt.entry(w).or_insert(0) += 1;
                parked |= self.ro.parked.contains(&w);
            }
        }
        if parked {
            self.replay_parked(ctx);
        }
    }

    /// The hold timer: holds that have kept start requests parked for the timeout go.
    pub(super) fn hold_tick(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        self.ro.timer = None;
        if self.ro.starts.is_empty() {
            return;
        }
        let timeout = self.shared.params.ro_hold_timeout;
        let now = ctx.now();
        let expired: Vec<TxnId> = self
            .ro
            .holds
            .iter()
            .filter(|(_, h)| h.since + timeout <= now)
            .map(|(&t, _)| t)
            .collect();
        for t in expired {
            self.ro.unhold(t);
            self.counters.ro_hold_expiries += 1;
        }
        self.replay_parked(ctx);
        if !self.ro.starts.is_empty() {
            let next = self
                .ro
                .holds
                .values()
                .map(|h| h.since + timeout)
                .min()
                .unwrap_or(now)
                .max(now + Duration::from_micros(1));
            self.ro.timer = Some(next);
            ctx.set_timer(next - now, HOLD_TIMER);
        }
    }

    /// Processes the parked start requests again, in arrival order (those still held park
    /// again, behind the others).
    fn replay_parked(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let starts = std::mem::take(&mut self.ro.starts);
        self.ro.parked.clear();
        for (from, s) in starts {
            self.start(from, s, ctx);
        }
    }
}
