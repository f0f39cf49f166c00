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
//! Holds are a txlab extension beyond the paper: its read-only transactions never delay
//! writers. `Params::ro_hold_after = None` turns them off (the paper's protocol).
//!
//! Under contention two consecutive rounds rarely agree: TPC-C's StockLevel reads its
//! district's `D_NEXT_O_ID`, which every NewOrder of the district writes in its start phase,
//! so a NewOrder starting between the two rounds changes what the second one sees. After
//! `Params::ro_hold_after` disagreements a read-only transaction's reads *hold* their conflict
//! keys ([`RoRead::hold`]): from the read's arrival until the transaction ends
//! ([`Msg::RoRelease`]), a start request that would write a held key waits here, unprocessed,
//! in arrival order (it is *parked*). The read itself still waits for the writers it found, as
//! above, and the coordinator still compares two consecutive rounds. Two held rounds then
//! agree unless a writer was let through (below): at a server, the first held read waited for
//! every writer present at its arrival, and no new writer of its keys started there until the
//! second one read them.
//!
//! **Why holds are sound.** A parked start request is processed later, exactly as if the
//! network had delivered it later; the server's handling of every message is unchanged. So
//! every execution with holds is an execution the protocol without holds allows under some
//! message delays, and the §4.1 argument applies to it unchanged: both rounds waited for the
//! conflicting transactions they found, and the coordinator commits only on two consecutive
//! rounds that observed the same versions. Holds change which executions are likely (the
//! second round sees no new writer), never which are possible; they need no argument of
//! their own (letting a parked request through early, as the rules below do, is a shorter
//! delay). Replacing either step of §4.1 by the hold is caught by the correctness kit: a held
//! read that skips the wait (the tempting "its keys are frozen anyway", mutant
//! `HeldReadNoWait`), and a held round that commits without a second one agreeing (mutant
//! `HeldRoundAlone`).
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
//!   change a held key, and the next round disagrees. An `RoExempt` that reaches a server
//!   before the transaction's held read there (messages reordered) finds no hold and is
//!   ignored: a writer it names that the hold then parks waits for the timeout below;
//! - what that misses (an ancestor of such a writer parked elsewhere) ends by the timeout.
//!
//! **Timeout.** `Params::ro_hold_timeout` bounds both sides, on the hold timer (armed while
//! any hold or parked start request exists):
//!
//! - a start request that has been parked for the timeout goes on at the next timer, held keys
//!   or not (counted in `ro_park_timeouts`): however many young holds overlap on its keys, no
//!   writer waits much longer than the timeout (`ro_parked_wait_us_max`);
//! - a hold is dropped when it is the timeout old (counted in `ro_hold_expiries`), whether or
//!   not anything is parked: a hold whose [`Msg::RoRelease`] was lost, whose coordinator
//!   crashed, or that a duplicate read re-installed after the release, does not outlive it;
//!   the transaction's next held round, if any, holds again.

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

/// A start request a hold keeps waiting.
#[derive(Debug)]
struct ParkedStart<P> {
    from: NodeId,
    start: Start<P>,
    /// When a hold first parked it (kept when it parks again on a replay).
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
    starts: VecDeque<ParkedStart<P>>,
    /// The transactions of `starts`.
    parked: BTreeSet<TxnId>,
    /// Whether the hold timer is armed (it then fires no later than the first deadline of a
    /// hold or parked start request).
    timer: bool,
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
            timer: false,
        }
    }
}

impl<P> Parked<P> {
    /// No read waiting, no start request parked and no hold kept.
    pub(crate) fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.starts.is_empty() && self.holds.is_empty()
    }

    /// How many read-only transactions hold keys here.
    pub(crate) fn holds(&self) -> usize {
        self.holds.len()
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
            self.hold(read.txn, &accepted, ctx);
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
    fn hold(&mut self, txn: TxnId, accepted: &[Accepted], ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let now = ctx.now();
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
        if !self.ro.timer {
            self.arm_hold_timer(ctx);
        }
    }

    /// A start request, unless a hold parks it (module docs): parked when its transaction
    /// already has a parked request here, or when one of its pieces writes a held key and the
    /// transaction is not already an unfinished writer of a held key here; never once it has
    /// been parked for `Params::ro_hold_timeout`. `parked_since`: when a hold first parked it
    /// (`None` for a request that arrived now).
    pub(super) fn unparked(
        &mut self,
        from: NodeId,
        s: Start<Program<W>>,
        parked_since: Option<Duration>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) -> Option<Start<Program<W>>> {
        if self.ro.held.is_empty() && self.ro.parked.is_empty() {
            self.waited(parked_since, ctx.now());
            return Some(s);
        }
        let park = !self.ro.exempt.contains_key(&s.txn)
            && (self.ro.parked.contains(&s.txn) || self.writes_held(&s));
        if !park {
            self.waited(parked_since, ctx.now());
            return Some(s);
        }
        let now = ctx.now();
        let since = parked_since.unwrap_or(now);
        if now.saturating_sub(since) >= self.shared.params.ro_hold_timeout {
            self.counters.ro_park_timeouts += 1;
            self.waited(parked_since, now);
            return Some(s);
        }
        self.counters.ro_parked += 1;
        self.ro.parked.insert(s.txn);
        self.ro.starts.push_back(ParkedStart {
            from,
            start: s,
            since,
        });
        if !self.ro.timer {
            self.arm_hold_timer(ctx);
        }
        None
    }

    /// A start request parked since `parked_since` (if it was) goes on at `now`.
    fn waited(&mut self, parked_since: Option<Duration>, now: Duration) {
        if let Some(since) = parked_since {
            let us = u64::try_from(now.saturating_sub(since).as_micros()).unwrap_or(u64::MAX);
            let max = &mut self.counters.ro_parked_wait_us_max;
            *max = (*max).max(us);
        }
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

    /// `txn`'s hold lets `writers` through: those parked go on. Ignored when `txn` holds
    /// nothing here (module docs).
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

    /// The hold timer (module docs): holds `Params::ro_hold_timeout` old go, and start requests
    /// parked that long go on.
    pub(super) fn hold_tick(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        self.ro.timer = false;
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
        if !self.ro.starts.is_empty() {
            self.replay_parked(ctx);
        }
        self.arm_hold_timer(ctx);
    }

    /// Arms the hold timer for the first deadline (a hold's or a parked start request's
    /// `since` plus `Params::ro_hold_timeout`), if anything has one.
    fn arm_hold_timer(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let first = self
            .ro
            .holds
            .values()
            .map(|h| h.since)
            .chain(self.ro.starts.iter().map(|p| p.since))
            .min();
        let Some(first) = first else {
            return;
        };
        let now = ctx.now();
        let at = (first + self.shared.params.ro_hold_timeout).max(now + Duration::from_micros(1));
        self.ro.timer = true;
        ctx.set_timer(at - now, HOLD_TIMER);
    }

    /// Processes the parked start requests again, in arrival order (those still held park
    /// again, behind the others, keeping when they were first parked).
    fn replay_parked(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let starts = std::mem::take(&mut self.ro.starts);
        self.ro.parked.clear();
        for p in starts {
            self.start(p.from, p.start, Some(p.since), ctx);
        }
    }
}
