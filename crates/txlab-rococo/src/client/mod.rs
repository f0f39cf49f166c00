//! A client node: closed-loop clients ("slots"), each with at most one transaction outstanding,
//! whose coordinators run in this node (§3.2: "clients delegate the responsibility of
//! coordinating their transactions to separate coordinator processes").
//!
//! - **Issuing.** Either a quota per slot (`step`/`sim` runs: the node issues by itself), or
//!   [`Issue::External`]: a client thread sends `Msg::Issue { slot }` through a `Transport`
//!   and receives a [`Completion`] on a channel when the transaction ends; the harness's meter
//!   lives on that thread.
//! - **Ids.** Transaction `seq` of slot `index` is `history::txn_id(index, seq)`; slot indices
//!   are unique in the cluster.
//! - **Coordinators** per protocol: `rococo` (the start and commit phases, and the 2-round
//!   read-only path for read-only types) and `twopc` (2PL and OCC with 2PC, retried with
//!   `txlab_core::retry::Backoff` turned into a timer).
//! - **Retransmission.** Every request is sent again on the retransmission timer until
//!   answered; servers deduplicate.
//! - **Coordinator failure** (§3.5). With `log_requests`, a coordinator writes each
//!   transaction to its `Durable` store before starting it and removes it when it ends. A
//!   restarted node (`on_start` with a non-empty log) restores its slots and sends every logged
//!   transaction's requests again: ROCOCO servers answer repeated start requests with the same
//!   outputs and dependencies, so the transaction completes as if nothing happened.
//! - **Histories.** When recording, servers return what they recorded with their final replies;
//!   the coordinator merges the parts of one transaction with its begin and end instants (the
//!   driver's clock, `Ctx::now`) into one `TxnRecord`.

mod dispatch;
mod rococo;
mod twopc;

use crate::config::{Protocol, Recording, Shared};
use crate::counters::Counters;
use crate::msg::{HistoryPart, Msg};
use crate::workload::PiecedWorkload;
use dispatch::Dispatch;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use txlab_core::ConflictCause;
use txlab_core::pieces::Pieced;
use txlab_core::protocol::history::{Outcome, TxnId, TxnRecord, txn_id};
use txlab_net::{Ctx, NodeId, TimerId};
use txlab_workload::{Generator, Workload};

type Program<W> = <W as Workload>::Program;

/// The client's retransmission timer.
const RETRANSMIT_TIMER: TimerId = TimerId(2);
/// Timer ids with this bit are a transaction's retry backoff (the rest is its id).
const BACKOFF_BIT: u64 = 1 << 63;

/// How a slot gets its next transaction (module docs).
#[derive(Debug, Clone)]
pub enum Issue {
    /// Each slot issues this many transactions by itself.
    Quota(u64),
    /// A client thread issues; completions go to it.
    External(Sender<Completion>),
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// Committed.
    Committed,
    /// Rolled back by its program.
    UserAborted,
    /// A read-only transaction whose rounds never agreed within the limit.
    Abandoned,
}

/// A finished transaction, as reported to a client thread.
#[derive(Debug, Clone)]
pub struct Completion {
    /// The slot's index (unique in the cluster).
    pub slot: u32,
    /// The transaction type.
    pub kind: &'static str,
    /// How it ended.
    pub finish: Finish,
    /// Its aborted attempts (baselines), by cause.
    pub aborts: Vec<ConflictCause>,
    /// Read-only rounds that disagreed.
    pub ro_retries: u32,
}

/// One closed-loop client.
#[derive(Debug)]
struct Slot<G> {
    index: u32,
    generator: G,
    seq: u64,
    issued: u64,
    busy: bool,
}

/// What the durable log keeps of a transaction (§3.5).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Logged<P> {
    slot: usize,
    program: P,
    begin_ns: u64,
    epoch: u64,
    priority: u64,
    attempt: u32,
    decided_commit: bool,
}

/// Protocol state of an active transaction.
#[derive(Debug)]
enum Work {
    Rococo(rococo::ReadWrite),
    ReadOnly(rococo::ReadOnly),
    TwoPc(twopc::TwoPc),
}

/// An active transaction.
#[derive(Debug)]
pub(crate) struct Active<P> {
    slot: usize,
    program: P,
    profile: usize,
    begin_ns: u64,
    epoch: u64,
    dispatch: Dispatch,
    history: HistoryPart,
    work: Work,
}

/// A client node (module docs).
pub struct Client<W: PiecedWorkload, R: Recording> {
    shared: Arc<Shared<W>>,
    recording: Arc<R>,
    slots: Vec<Slot<W::Generator>>,
    txns: BTreeMap<TxnId, Active<Program<W>>>,
    issue: Issue,
    known_epoch: u64,
    counters: Counters,
    fatal: Option<String>,
    started: bool,
    /// Aborts of ended baseline attempts not yet acknowledged, by server.
    cleanup: BTreeMap<(TxnId, u32), std::collections::BTreeSet<u16>>,
    /// Rows received after a multi-process run, by (server, chunk): the chunk count and rows.
    dumps: BTreeMap<(u16, u32), (u32, Rows)>,
    /// Servers that acknowledged `Release`.
    released: std::collections::BTreeSet<u16>,
    /// Peers whose link is down (`tcp`: a server process that exited).
    lost: std::collections::BTreeSet<u16>,
    /// Peers whose link is up.
    up: std::collections::BTreeSet<u16>,
    /// Servers that answered `AwaitReady`.
    ready: std::collections::BTreeSet<u16>,
}

/// `(table, key, value)` rows of a server's shard.
pub type Rows = Vec<(txlab_core::TableId, u64, Vec<u8>)>;

impl<W: PiecedWorkload, R: Recording> std::fmt::Debug for Client<W, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("slots", &self.slots.len())
            .field("active", &self.txns.len())
            .finish_non_exhaustive()
    }
}

impl<W: PiecedWorkload, R: Recording> Client<W, R> {
    /// A client node with one slot per index in `slots` (unique in the cluster; slot `i`'s
    /// generator is the workload's generator of thread `i`).
    pub fn new(shared: Arc<Shared<W>>, recording: Arc<R>, slots: &[u32], issue: Issue) -> Self {
        let seed = shared.params.seed;
        let slots = slots
            .iter()
            .map(|&index| Slot {
                index,
                generator: shared.workload.generator(index as usize, seed),
                seq: 0,
                issued: 0,
                busy: false,
            })
            .collect();
        Self {
            shared,
            recording,
            slots,
            txns: BTreeMap::new(),
            issue,
            known_epoch: 1,
            counters: Counters::default(),
            fatal: None,
            started: false,
            cleanup: BTreeMap::new(),
            dumps: BTreeMap::new(),
            released: std::collections::BTreeSet::new(),
            lost: std::collections::BTreeSet::new(),
            up: std::collections::BTreeSet::new(),
            ready: std::collections::BTreeSet::new(),
        }
    }

    /// Whether chunk `chunk` of server `server`'s rows has arrived; `Some(chunks)` if so.
    pub fn has_rows(&self, server: u16, chunk: u32) -> Option<u32> {
        self.dumps.get(&(server, chunk)).map(|d| d.0)
    }

    /// Takes every chunk of rows received from `server`.
    pub fn take_rows(&mut self, server: u16) -> Rows {
        let keys: Vec<(u16, u32)> = self
            .dumps
            .range((server, 0)..=(server, u32::MAX))
            .map(|(k, _)| *k)
            .collect();
        keys.into_iter()
            .filter_map(|k| self.dumps.remove(&k))
            .flat_map(|(_, rows)| rows)
            .collect()
    }

    /// Whether `server` acknowledged `Release`, or its link went down (a released server's
    /// process exits, and its acknowledgement may go down with it).
    pub fn released_by(&self, server: u16) -> bool {
        self.released.contains(&server) || self.lost.contains(&server)
    }

    /// Whether `server` answered `AwaitReady` (its shard is loaded and its link to every node
    /// is up; `server::ready`).
    pub fn ready_from(&self, server: u16) -> bool {
        self.ready.contains(&server)
    }

    /// Whether this node's link to `peer` is up.
    pub fn link_up(&self, peer: u16) -> bool {
        self.up.contains(&peer)
    }

    pub(crate) fn on_peer(&mut self, peer: NodeId, up: bool) {
        if up {
            self.lost.remove(&peer.0);
            self.up.insert(peer.0);
        } else {
            self.lost.insert(peer.0);
            self.up.remove(&peer.0);
        }
    }

    /// Whether every slot has issued its quota and every transaction ended (always false with
    /// external issuing while transactions are active).
    pub fn done(&self) -> bool {
        let quota_done = match self.issue {
            Issue::Quota(q) => self.slots.iter().all(|s| s.issued >= q),
            Issue::External(_) => true,
        };
        self.started && quota_done && self.txns.is_empty()
    }

    /// Transactions in flight.
    pub fn active(&self) -> usize {
        self.txns.len()
    }

    /// The coordinators' counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The first error that stopped a transaction (a piece error, a misuse).
    pub fn fatal(&self) -> Option<&str> {
        self.fatal.as_deref()
    }

    /// Transactions issued so far, over all slots.
    pub fn issued(&self) -> u64 {
        self.slots.iter().map(|s| s.issued).sum()
    }

    fn fail(&mut self, message: String) {
        if self.fatal.is_none() {
            self.fatal = Some(message);
        }
    }

    fn send(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>, to: u16, msg: Msg<Program<W>>) {
        if let Err(e) = ctx.send(NodeId(to), msg) {
            self.fail(format!("send to server {to}: {e}"));
        }
    }

    /// Sends each `(server, message)`; `resent` counts them as retransmissions.
    fn send_all(
        &mut self,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
        sends: Vec<(u16, Msg<Program<W>>)>,
        resent: bool,
    ) {
        if resent {
            self.counters.retransmits += sends.len() as u64;
        }
        for (s, m) in sends {
            self.send(ctx, s, m);
        }
    }

    pub(crate) fn on_start(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        self.started = true;
        ctx.set_timer(self.shared.params.retransmit, RETRANSMIT_TIMER);
        if self.shared.params.log_requests {
            self.recover(ctx);
        }
        if let Issue::Quota(_) = self.issue {
            for s in 0..self.slots.len() {
                if !self.slots[s].busy {
                    self.issue_next(s, ctx);
                }
            }
        }
    }

    pub(crate) fn on_message(
        &mut self,
        from: NodeId,
        msg: Msg<Program<W>>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        match msg {
            Msg::Issue { slot } => {
                if let Some(s) = self.slots.iter().position(|s| s.index == slot)
                    && !self.slots[s].busy
                {
                    self.issue_next(s, ctx);
                }
            }
            Msg::StartReply(r) => self.start_reply(from, *r, ctx),
            Msg::CommitReply(r) => self.commit_reply(from, *r, ctx),
            Msg::RoReply(r) => self.ro_reply(*r, ctx),
            Msg::RoBlocked { txn, writers } => self.ro_blocked(txn, writers, ctx),
            Msg::ExecReply(r) => self.exec_reply(from, *r, ctx),
            Msg::Vote { txn, attempt, vote } => self.vote(from, txn, attempt, vote, ctx),
            Msg::Decided {
                txn,
                attempt,
                history,
            } => self.decided(from, txn, attempt, history, ctx),
            Msg::Wounded { txn, attempt } => self.wounded(txn, attempt, ctx),
            Msg::Gossip { epoch, .. } => {
                self.known_epoch = self.known_epoch.max(epoch);
                let low = self
                    .txns
                    .values()
                    .map(|t| t.epoch)
                    .min()
                    .unwrap_or(u64::MAX);
                let reply = Msg::Gossip {
                    epoch: self.known_epoch,
                    low,
                };
                if let Err(e) = ctx.send(from, reply) {
                    self.fail(format!("gossip to {from}: {e}"));
                }
            }
            Msg::Rows {
                chunk,
                chunks,
                rows,
            } => {
                self.dumps.insert((from.0, chunk), (chunks, rows));
            }
            Msg::Released => {
                self.released.insert(from.0);
            }
            Msg::Ready => {
                self.ready.insert(from.0);
            }
            // Requests are for servers.
            Msg::AwaitReady
            | Msg::Dump { .. }
            | Msg::Release
            | Msg::Start(_)
            | Msg::Commit(_)
            | Msg::Status(_)
            | Msg::StatusReply(_)
            | Msg::Collected { .. }
            | Msg::RoRead(_)
            | Msg::RoRelease { .. }
            | Msg::RoExempt { .. }
            | Msg::Exec(_)
            | Msg::Prepare { .. }
            | Msg::Decide { .. } => {}
        }
    }

    pub(crate) fn on_timer(&mut self, timer: TimerId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        if timer == RETRANSMIT_TIMER {
            let ids: Vec<TxnId> = self.txns.keys().copied().collect();
            for id in ids {
                self.resend(id, ctx);
            }
            self.resend_cleanup(ctx);
            ctx.set_timer(self.shared.params.retransmit, RETRANSMIT_TIMER);
        } else if timer.0 & BACKOFF_BIT != 0 {
            self.retry(timer.0 & !BACKOFF_BIT, ctx);
        }
    }

    /// Starts slot `s`'s next transaction.
    fn issue_next(&mut self, s: usize, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        if let Issue::Quota(q) = self.issue
            && self.slots[s].issued >= q
        {
            return;
        }
        let slot = &mut self.slots[s];
        let program = slot.generator.next().clone();
        let id = txn_id(slot.index, slot.seq);
        slot.seq += 1;
        slot.issued += 1;
        slot.busy = true;
        let begin_ns = ctx.now().as_nanos() as u64;
        let logged = Logged {
            slot: s,
            program,
            begin_ns,
            epoch: self.known_epoch,
            priority: begin_ns,
            attempt: 0,
            decided_commit: false,
        };
        self.log(ctx, id, Some(&logged));
        self.begin(id, logged, false, ctx);
    }

    /// Builds the transaction's state and sends its first requests (`recovered`: from the log
    /// after a restart).
    fn begin(
        &mut self,
        id: TxnId,
        l: Logged<Program<W>>,
        recovered: bool,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let profile = l.program.profile();
        let Some(p) = self.shared.profiles.get(profile) else {
            let kind = txlab_core::Program::kind(&l.program);
            self.fail(
                txlab_core::Error::invalid(
                    "transaction type",
                    kind,
                    "a type the workload defines pieces for (a profile in profiles())",
                )
                .to_string(),
            );
            return;
        };
        let read_only = p.read_only;
        let dispatch = match Dispatch::new(&l.program, p) {
            Ok(d) => d,
            Err(e) => {
                self.fail(e.to_string());
                return;
            }
        };
        let work = match self.shared.protocol {
            Protocol::Rococo if read_only => Work::ReadOnly(rococo::ReadOnly::default()),
            Protocol::Rococo => Work::Rococo(rococo::ReadWrite::default()),
            Protocol::TwoPl | Protocol::Occ => Work::TwoPc(twopc::TwoPc::new(
                l.priority,
                l.attempt,
                l.decided_commit,
                recovered,
                &self.shared.params,
                id,
            )),
        };
        self.txns.insert(
            id,
            Active {
                slot: l.slot,
                program: l.program,
                profile,
                begin_ns: l.begin_ns,
                epoch: l.epoch,
                dispatch,
                history: HistoryPart::default(),
                work,
            },
        );
        self.proceed(id, ctx);
    }

    /// Sends whatever the transaction can send now (its protocol's next step).
    fn proceed(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(t) = self.txns.get(&id) else { return };
        match t.work {
            Work::Rococo(_) => self.rococo_proceed(id, ctx),
            Work::ReadOnly(_) => self.ro_proceed(id, ctx),
            Work::TwoPc(_) => self.twopc_proceed(id, ctx),
        }
    }

    /// Sends the transaction's unanswered requests again.
    fn resend(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let Some(t) = self.txns.get(&id) else { return };
        match t.work {
            Work::Rococo(_) => self.rococo_resend(id, ctx),
            Work::ReadOnly(_) => self.ro_resend(id, ctx),
            Work::TwoPc(_) => self.twopc_resend(id, ctx),
        }
    }

    /// The transaction ended: record it, report it, free its slot.
    fn finish(
        &mut self,
        id: TxnId,
        finish: Finish,
        aborts: Vec<ConflictCause>,
        ro_retries: u32,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let Some(t) = self.txns.remove(&id) else {
            return;
        };
        self.log(ctx, id, None);
        if R::ENABLED {
            let record = TxnRecord {
                id,
                reads: t.history.reads,
                writes: t.history.writes,
                scans: t.history.scans,
                outcome: match finish {
                    Finish::Committed => Outcome::Committed,
                    _ => Outcome::UserAborted,
                },
                begin_ns: t.begin_ns,
                end_ns: (ctx.now().as_nanos() as u64).max(t.begin_ns),
            };
            self.recording.record(record, t.history.order);
        }
        let slot = &mut self.slots[t.slot];
        slot.busy = false;
        let index = slot.index;
        match &self.issue {
            Issue::Quota(_) => self.issue_next(t.slot, ctx),
            Issue::External(done) => {
                let c = Completion {
                    slot: index,
                    kind: txlab_core::Program::kind(&t.program),
                    finish,
                    aborts,
                    ro_retries,
                };
                // The client thread has left: nothing is waiting for the completion.
                let _ = done.send(c);
            }
        }
    }

    /// Writes (or, with `None`, removes) transaction `id` in the durable log.
    fn log(&mut self, ctx: &Ctx<'_, Msg<Program<W>>>, id: TxnId, l: Option<&Logged<Program<W>>>) {
        if !self.shared.params.log_requests {
            return;
        }
        let d = ctx.durable();
        let key = format!("txn/{id:020}");
        match l {
            Some(l) => {
                if let Err(e) = d.put_value(key.as_bytes(), l) {
                    self.fail(format!("log transaction: {e}"));
                }
                let s = &self.slots[l.slot];
                let counts = (s.seq, s.issued);
                let slot_key = format!("slot/{:010}", s.index);
                if let Err(e) = d.put_value(slot_key.as_bytes(), &counts) {
                    self.fail(format!("log slot: {e}"));
                }
            }
            None => {
                d.remove(key.as_bytes());
            }
        }
    }

    /// Updates the logged attempt of `id` (baselines) before it is sent.
    fn relog(&mut self, ctx: &Ctx<'_, Msg<Program<W>>>, id: TxnId, attempt: u32, commit: bool) {
        if !self.shared.params.log_requests {
            return;
        }
        let Some(t) = self.txns.get(&id) else { return };
        let Work::TwoPc(w) = &t.work else { return };
        let l = Logged {
            slot: t.slot,
            program: t.program.clone(),
            begin_ns: t.begin_ns,
            epoch: t.epoch,
            priority: w.priority,
            attempt,
            decided_commit: commit,
        };
        self.log(ctx, id, Some(&l));
    }

    /// After a restart: restore the slots' counters and restart every logged transaction.
    fn recover(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let d = ctx.durable().clone();
        for (key, _) in d.scan_prefix(b"slot/") {
            let Ok(Some((seq, issued))) = d.get_value::<(u64, u64)>(&key) else {
                continue;
            };
            let index: Option<u32> = std::str::from_utf8(&key[5..])
                .ok()
                .and_then(|s| s.parse().ok());
            if let Some(s) = index.and_then(|i| self.slots.iter().position(|s| s.index == i)) {
                let slot = &mut self.slots[s];
                for _ in 0..issued {
                    slot.generator.next();
                }
                slot.seq = seq;
                slot.issued = issued;
            }
        }
        for (key, _) in d.scan_prefix(b"txn/") {
            let id: Option<TxnId> = std::str::from_utf8(&key[4..])
                .ok()
                .and_then(|s| s.parse().ok());
            match (id, d.get_value::<Logged<Program<W>>>(&key)) {
                (Some(id), Ok(Some(l))) if l.slot < self.slots.len() => {
                    self.slots[l.slot].busy = true;
                    self.known_epoch = self.known_epoch.max(l.epoch);
                    self.begin(id, l, true, ctx);
                }
                _ => self.fail(format!(
                    "unreadable coordinator log entry {}",
                    String::from_utf8_lossy(&key)
                )),
            }
        }
    }
}
