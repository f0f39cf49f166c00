//! [`PartitionNode`]: one partition of a cluster as a sans-IO state machine (`txlab_net::Node`):
//! a sequencer for its clients, the merge of every sequencer's epoch batches into the global
//! order, and the execution of its share of that order (`docs/protocols/docc.md`,
//! "Multi-partition").
//!
//! ```text
//! sequence  every `epoch` seal a batch for the next epoch e (once this node has processed
//!           epoch e - LAG): the restarts its transactions of epoch e - LAG asked for, then its
//!           clients' new transactions; send it to every node
//! merge     once every sequencer's batch of epoch e arrived (a missing one is pulled on a
//!           timer), take them in sequencer-id order: Seq = (e, sequencer, index), ranks dense
//! execute   in Seq order, its own share:
//!           - single-partition transactions here: a run of consecutive ones through the local
//!             engine (DOCC or Calvin, unchanged), each confined to this partition
//!           - multi-partition T, non-leader: send the leader the declared rows it owns, serve
//!             its on-demand reads, wait for the outcome, install the writes as version Seq
//!           - multi-partition T, leader: once every read set arrived, run the program (local
//!             rows from the committed state, remote ones from the read sets, on-demand reads for
//!             the rest), send each participant its writes, install its own
//!           - an access to a partition that is not a participant: nothing is installed; the
//!             leader re-sequences T with that partition hinted (in its batch of epoch e + LAG)
//!           - while T is in flight here (`NodeConfig::overlap`): the single-partition
//!             transactions after it, up to the next multi-partition one involving this node,
//!             run through the local engine without installing anything, and once T has
//!             installed its writes here, those that read what the serial order says commit
//!             in order; the rest run again at their position (`super::overlap`)
//! ```
//!
//! The node waits only at the ordered position of a multi-partition transaction (what it runs
//! ahead meanwhile installs nothing until that transaction is over here), and every
//! participant reaches that position (they process the same order, and each waits only at
//! positions before it, which finish first): no deadlock. Every handler is idempotent by `Seq`,
//! and everything a lost message would hold up is asked for again on the retry timer (pulls,
//! read sets, on-demand reads; a repeated read set makes the leader resend its outcome).
//!
//! Where a restart goes is part of the order's input, not of the timing: a leader seals the
//! restarts of epoch `e` into its batch of `e + LAG`, and seals that batch only after it has
//! processed epoch `e`. With a scripted feed the whole input log is therefore the same under
//! every transport, schedule and latency; a closed-loop feed makes it depend on timing, and the
//! recorded log replays the run.
//!
//! **The end of a run.** A sequencer takes new transactions from its feed until epoch `epochs`
//! or until the feed has ended ([`Feed::ended`]: a measuring driver's wall-clock end),
//! whichever comes first; from then on it marks every batch it seals `last` and seals only
//! restarts. The run ends for a node once it has merged an epoch in which every sequencer's
//! batch was last, the last `LAG` merged epochs were empty, and its queue is empty: nothing new
//! can be sequenced, and nothing can be re-sequenced later than that. The condition is a
//! property of the merged order, so every node ends at the same epoch. What is left after the
//! feeds end is bounded whatever the epoch length: a sequencer seals at most `LAG` epochs
//! ahead of its node's execution, and a closed loop has at most `concurrency` transactions
//! outstanding per node; the drain is those, their restarts (at most nodes − 1 each: a restart
//! adds the partition it missed to the participants), and `LAG` empty epochs.

use super::local::{PartitionEngine, WindowChain};
use super::msg::{ClusterLog, Msg, Outcome, Read, Row, ScanRows, Txn, WriteOp};
use super::ops::{Apply, Confined, KeySet, Split, View};
use super::overlap::{Overlap, Spec, Speculated, Window};
use super::progress::{Progress, Ran};
use super::route::{Plan, Routing};
use crate::pool::WorkerPool;
use crate::schedule::Positioned;
use crate::seq::Seq;
use hdrhistogram::Histogram;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt::Debug;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::Duration;
use txlab_core::partition::Placement;
use txlab_core::{AccessSet, Error, Program, TableId, TxError, TxResult};
use txlab_net::{Ctx, Node, NodeId, TimerId};

/// How many epochs a sequencer may run ahead of its node's execution, and where restarts go
/// (module docs).
pub const LAG: u32 = 2;

/// The ranks a window's engine run uses (`super::overlap`): above any transaction's, node `n`'s
/// from `WINDOW_RANKS + n * WINDOW_NODE_RANKS` on, so that no two nodes' window records share a
/// rank (`super::merge` joins the records of one rank).
const WINDOW_RANKS: u64 = 1 << 60;
/// How many window ranks each node has.
const WINDOW_NODE_RANKS: u64 = 1 << 44;
/// The most transactions a window holds.
const WINDOW_MAX: usize = 4096;

const EPOCH: TimerId = TimerId(1);
const RETRY: TimerId = TimerId(2);

/// A program a cluster can run: it crosses the network.
pub trait ClusterProgram:
    Program<Output: Send> + Clone + Serialize + DeserializeOwned + Send + Sync + Debug + 'static
{
}

impl<T> ClusterProgram for T where
    T: Program<Output: Send> + Clone + Serialize + DeserializeOwned + Send + Sync + Debug + 'static
{
}

/// Where a sequencer's transactions come from.
pub trait Feed<P>: Send {
    /// The new transactions of `epoch` (at most `free` for a closed loop; scripted feeds may
    /// ignore it).
    fn next(&mut self, epoch: u32, free: usize) -> Vec<Txn<P>>;

    /// Whether the feed's share of the run is over from `epoch` on: the sequencer then seals
    /// its batches of `epoch` and later with restarts only, marked last (module docs). Once
    /// true for an epoch it need not stay true: the sequencer remembers.
    fn ended(&self, epoch: u32) -> bool {
        let _ = epoch;
        false
    }

    /// Whether the feed already holds the re-sequenced entries (a replayed log): then restarts
    /// are not sealed again.
    fn replays(&self) -> bool {
        false
    }
}

/// Replays sequencer `me`'s batches of a recorded log.
#[derive(Debug)]
pub struct LogFeed<P> {
    batches: Vec<Vec<Txn<P>>>,
}

impl<P: Clone> LogFeed<P> {
    /// Sequencer `me`'s batches of `log`.
    pub fn new(log: &ClusterLog<P>, me: u16) -> Self {
        Self {
            batches: log
                .epochs
                .iter()
                .map(|e| e.get(usize::from(me)).cloned().unwrap_or_default())
                .collect(),
        }
    }
}

impl<P: Send> Feed<P> for LogFeed<P> {
    fn next(&mut self, epoch: u32, _free: usize) -> Vec<Txn<P>> {
        self.batches
            .get_mut(epoch as usize - 1)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn ended(&self, epoch: u32) -> bool {
        epoch as usize > self.batches.len()
    }

    fn replays(&self) -> bool {
        true
    }
}

/// Whether a participant that does not lead a multi-partition transaction waits at its position
/// for the outcome (`Off`) or passes it (`On`; `docs/protocols/docc.md`, "Pipeline").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pipeline {
    /// Every participant waits at the transaction's position until it is over there.
    #[default]
    Off,
    /// A first attempt's non-leading participants send their read set at its position and go
    /// on; its declared keys there stay held until the outcome is installed, and later
    /// transactions of the epoch that touch them are re-sequenced (module docs).
    On,
    /// Mutant (tests only): a read set is sent although a passed transaction still holds one
    /// of its keys (the leader reads a stale remote row).
    #[cfg(feature = "mutation")]
    #[doc(hidden)]
    SkipHeld,
    /// Mutant (tests only): single-partition transactions after a passed one are not fenced.
    #[cfg(feature = "mutation")]
    #[doc(hidden)]
    SkipFence,
}

impl Pipeline {
    fn on(self) -> bool {
        self != Pipeline::Off
    }

    fn checks_held(self) -> bool {
        #[cfg(feature = "mutation")]
        if self == Pipeline::SkipHeld {
            return false;
        }
        true
    }

    fn fences(self) -> bool {
        #[cfg(feature = "mutation")]
        if self == Pipeline::SkipFence {
            return false;
        }
        true
    }
}

/// A multi-partition transaction this node passed without leading it: its declared keys here,
/// held until its outcome is installed (`Pipeline::On`).
#[derive(Debug)]
struct Passed<P> {
    entry: Entry<P>,
    keys: Vec<(u16, u64)>,
    /// The read set sent (for retransmission).
    rows: Vec<Row>,
}

/// A node's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeConfig {
    /// How often the sequencer seals a batch.
    pub epoch: Duration,
    /// Epochs that take new transactions from the feed at most (the feed may end earlier:
    /// [`Feed::ended`]).
    pub epochs: u32,
    /// Worker threads of the local engine.
    pub workers: usize,
    /// Retransmission and pull period.
    pub retry: Duration,
    /// Transactions this node's clients keep outstanding (closed-loop feeds).
    pub concurrency: usize,
    /// Keep the merged input log.
    pub keep_log: bool,
    /// Whether single-partition transactions run while a multi-partition one is in flight
    /// (`super::overlap`). Default `Off`: the window runs inside the message handler, so on
    /// few cores it delays the exchange it waits for (`docs/results/docc.md`, "Multi-node").
    pub overlap: Overlap,
    /// Whether non-leading participants pass multi-partition transactions without waiting for
    /// their outcome ([`Pipeline`]). Exclusive with `overlap`.
    pub pipeline: Pipeline,
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            epoch: Duration::from_millis(5),
            epochs: 10,
            workers: 1,
            retry: Duration::from_millis(20),
            concurrency: 64,
            keep_log: true,
            overlap: Overlap::Off,
            pipeline: Pipeline::Off,
        }
    }
}

/// What a node did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Transactions this node ran to commit (single-partition, or multi-partition as leader).
    pub committed: u64,
    /// ... rolled back by their program.
    pub user_aborts: u64,
    /// ... that ended with a real error.
    pub errors: u64,
    /// Attempts that touched a non-participant partition (re-sequenced).
    pub restarts: u64,
    /// Single-partition transactions run here.
    pub single: u64,
    /// Multi-partition transactions led here.
    pub multi_led: u64,
    /// Multi-partition transactions this node took part in without leading.
    pub multi_joined: u64,
    /// Rows sent to leaders in read sets.
    pub read_set_rows: u64,
    /// On-demand reads the leader asked for (keys and scans).
    pub remote_reads: u64,
    /// Messages sent again on the retry timer (read sets, outcomes, on-demand reads).
    pub retransmits: u64,
    /// Batches pulled.
    pub pulls: u64,
    /// Batches sealed.
    pub batches: u64,
    /// Runs of consecutive single-partition transactions through the local engine (each
    /// starts and ends the engine's run on the node's pool).
    pub segments: u64,
    /// Microseconds (driver clock, read once per handler) from the start of the handler in
    /// which this node reached a multi-partition transaction to the handler that finished it:
    /// its read sets, on-demand reads and outcome in flight, during which nothing else runs
    /// here, plus the run of single-partition transactions just before it when the same
    /// handler ran them.
    pub mp_blocked_us: u64,
    /// Transactions this node's clients submitted that finished.
    pub finished: u64,
    /// Single-partition transactions run while a multi-partition one was in flight here and
    /// committed after it (`super::overlap`).
    pub overlapped: u64,
    /// ... that were run that way but had to run again at their position (they read what the
    /// multi-partition transaction wrote, or were stopped).
    pub overlap_reruns: u64,
    /// Engine runs of such windows.
    pub windows: u64,
    /// Multi-partition transactions this node passed without waiting for their outcome
    /// ([`Pipeline::On`]).
    pub passed: u64,
    /// Pipelined multi-partition transactions this node led that needed an on-demand read or
    /// wrote a remote key nobody declared: re-sequenced, to run with every participant waiting.
    pub pipeline_restarts: u64,
    /// Single-partition transactions re-sequenced because they touched a key a passed
    /// transaction earlier in their epoch holds.
    pub fenced: u64,
}

/// A sequencer's batch as received: its transactions, and whether it was marked last.
type Sealed<P> = (Vec<Txn<P>>, bool);

/// A merged entry of the order this node has to process.
#[derive(Debug)]
struct Entry<P> {
    seq: Seq,
    rank: u64,
    txn: Arc<Txn<P>>,
    plan: Plan,
}

/// The multi-partition transaction at the head of the queue.
#[derive(Debug, Default)]
struct Mp {
    seq: u64,
    /// Non-leader: the read set sent (for retransmission).
    rows: Vec<Row>,
    /// Leader: participants whose read set arrived.
    sets: HashSet<u16>,
    view: View,
    /// Leader: on-demand reads asked for.
    requested: BTreeMap<u16, Vec<Read>>,
    /// When it reached the head (`NodeStats::mp_blocked_us`).
    since: Duration,
}

/// One partition of a cluster (module docs).
pub struct PartitionNode<E: PartitionEngine, P: ClusterProgram> {
    me: u16,
    nodes: u16,
    engine: Arc<E>,
    /// The local engine's threads, started once (`crate::pool`).
    pool: WorkerPool,
    routing: Arc<Routing>,
    config: NodeConfig,
    feed: Box<dyn Feed<P>>,
    // Sequencer.
    sealed: Vec<Vec<Txn<P>>>,
    /// The first epoch this sequencer sealed as its last ([`Feed::ended`]).
    last_from: Option<u32>,
    seal_due: bool,
    restarts: BTreeMap<u32, Vec<Txn<P>>>,
    outstanding: usize,
    submitted: HashMap<u64, Duration>,
    // Merge.
    inbox: BTreeMap<u32, Vec<Option<Sealed<P>>>>,
    merged_through: u32,
    /// Every sequencer's batch of the last merged epoch was marked last.
    all_last: bool,
    empty_tail: u32,
    next_rank: u64,
    queue: VecDeque<Entry<P>>,
    log: Option<ClusterLog<P>>,
    scratch: AccessSet,
    // Exchange.
    mp: Option<Mp>,
    /// The transactions after the multi-partition one at the head, run ahead of it.
    window: Option<Window>,
    /// The next rank of a window's engine run (above every transaction's).
    window_rank: u64,
    early: HashMap<u64, Vec<(u16, Vec<Row>)>>,
    /// Multi-partition transactions passed here whose outcome is not installed yet, by `Seq`.
    passed: BTreeMap<u64, Passed<P>>,
    /// Their keys (disjoint: a transaction whose keys a passed one holds waits).
    held: KeySet,
    /// The keys of every transaction passed in epoch `fence_epoch`: the single-partition ones
    /// after it in that epoch may not touch them.
    fence: KeySet,
    fence_epoch: u32,
    outcomes: HashMap<u64, HashMap<u16, Outcome>>,
    last_done: u64,
    /// Peers that said their share of the run is over (`Msg::Done`).
    peers_done: HashSet<u16>,
    announced: bool,
    // Results.
    /// The driver's clock at the current handler.
    now: Duration,
    stats: NodeStats,
    latency_us: Histogram<u64>,
    fatal: Option<String>,
    /// Where [`Progress`] goes (`report_to`).
    progress: Option<Sender<Progress>>,
}

impl<E: PartitionEngine, P: ClusterProgram> Debug for PartitionNode<E, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionNode")
            .field("me", &self.me)
            .field("merged_through", &self.merged_through)
            .field("queue", &self.queue.len())
            .field("stats", &self.stats)
            .field("fatal", &self.fatal)
            .finish_non_exhaustive()
    }
}

impl<E: PartitionEngine, P: ClusterProgram> PartitionNode<E, P> {
    /// Node `me` of a cluster routed by `routing`, running `engine` (loaded with its partition)
    /// and sequencing what `feed` submits.
    pub fn new(
        me: u16,
        engine: Arc<E>,
        routing: Arc<Routing>,
        config: NodeConfig,
        feed: Box<dyn Feed<P>>,
    ) -> Result<Self, Error> {
        if me >= routing.nodes() {
            return Err(Error::invalid(
                "node",
                me,
                format!("0..{} (a node of the cluster)", routing.nodes()),
            ));
        }
        crate::config::check_workers(config.workers)?;
        if config.pipeline.on() && config.overlap != Overlap::Off {
            return Err(Error::invalid(
                "node config",
                format!(
                    "overlap {:?} with pipeline {:?}",
                    config.overlap, config.pipeline
                ),
                "overlap or the pipeline, not both",
            ));
        }
        crate::config::BatchConfig {
            epoch: config.epoch,
            max_txns: 1,
        }
        .validate()?;
        let pool = WorkerPool::new(
            engine.threads_for(config.workers),
            &format!("txlab-node{me}"),
        )?;
        Ok(Self {
            me,
            nodes: routing.nodes(),
            engine,
            pool,
            routing,
            config,
            feed,
            sealed: Vec::new(),
            last_from: None,
            seal_due: false,
            restarts: BTreeMap::new(),
            outstanding: 0,
            submitted: HashMap::new(),
            inbox: BTreeMap::new(),
            merged_through: 0,
            all_last: false,
            empty_tail: 0,
            next_rank: 0,
            queue: VecDeque::new(),
            log: config.keep_log.then(ClusterLog::default),
            scratch: AccessSet::default(),
            mp: None,
            window: None,
            window_rank: WINDOW_RANKS + u64::from(me) * WINDOW_NODE_RANKS,
            early: HashMap::new(),
            passed: BTreeMap::new(),
            held: KeySet::new(),
            fence: KeySet::new(),
            fence_epoch: 0,
            outcomes: HashMap::new(),
            last_done: 0,
            peers_done: HashSet::new(),
            announced: false,
            now: Duration::ZERO,
            stats: NodeStats::default(),
            latency_us: Histogram::new_with_bounds(1, 600_000_000, 3)
                .map_err(|e| Error::Internal(format!("latency histogram: {e}")))?,
            fatal: None,
            progress: None,
        })
    }

    /// Sends this node's [`Progress`] reports to `to` from now on (a measuring driver's
    /// channel; `super::progress`).
    pub fn report_to(&mut self, to: Sender<Progress>) {
        self.progress = Some(to);
    }

    fn report(&self, p: Progress) {
        if let Some(to) = &self.progress {
            // A receiver that stopped listening has what it wanted.
            let _ = to.send(p);
        }
    }

    /// This node's partition.
    pub fn id(&self) -> u16 {
        self.me
    }

    /// The local engine.
    pub fn engine(&self) -> &Arc<E> {
        &self.engine
    }

    /// What it did.
    pub fn stats(&self) -> NodeStats {
        self.stats
    }

    /// Latency of its clients' transactions, from submission to the end of their execution
    /// here, in microseconds (the epoch wait included).
    pub fn latency_us(&self) -> &Histogram<u64> {
        &self.latency_us
    }

    /// The merged input log so far (with `keep_log`).
    pub fn log(&self) -> Option<&ClusterLog<P>> {
        self.log.as_ref()
    }

    /// The first fatal error (the node stops processing).
    pub fn fatal(&self) -> Option<&str> {
        self.fatal.as_deref()
    }

    /// The highest epoch this node has merged.
    pub fn merged_through(&self) -> u32 {
        self.merged_through
    }

    /// Whether this node's share of the run is over (module docs).
    pub fn done(&self) -> bool {
        self.fatal.is_some()
            || (self.all_last
                && self.empty_tail >= LAG
                && self.queue.is_empty()
                && self.passed.is_empty())
    }

    /// Whether the node may stop: its share is over and every peer's is too (or it failed).
    /// A node of a process of its own stops on this, not on [`Self::done`]: a peer still
    /// working may need a batch pulled or an outcome resent.
    pub fn finished(&self) -> bool {
        self.fatal.is_some()
            || (self.done() && self.peers_done.len() + 1 >= usize::from(self.nodes))
    }

    /// Tells every peer this node is done, once on the way there and again on each retry tick
    /// (`again`).
    fn announce(&mut self, ctx: &mut Ctx<'_, Msg<P>>, again: bool) {
        if self.fatal.is_some() || !self.done() || (self.announced && !again) {
            return;
        }
        self.announced = true;
        let me = self.me;
        for n in (0..self.nodes).filter(|&n| n != me) {
            self.send(ctx, n, Msg::Done);
        }
    }

    fn processed_through(&self) -> u32 {
        let head = self
            .queue
            .front()
            .map_or(self.merged_through, |h| h.seq.epoch() - 1);
        self.passed
            .values()
            .next()
            .map_or(head, |p| head.min(p.entry.seq.epoch() - 1))
    }

    fn fail(&mut self, e: impl std::fmt::Display) {
        if self.fatal.is_none() {
            self.fatal = Some(format!("node {}: {e}", self.me));
        }
    }

    fn send(&mut self, ctx: &mut Ctx<'_, Msg<P>>, to: u16, msg: Msg<P>) {
        if let Err(e) = ctx.send(NodeId(to), msg) {
            self.fail(e);
        }
    }

    // Sequencer.

    fn try_seal(&mut self, ctx: &mut Ctx<'_, Msg<P>>) {
        let e = self.sealed.len() as u32 + 1;
        if !self.seal_due || self.fatal.is_some() || e > LAG + self.processed_through() {
            return;
        }
        self.seal_due = false;
        let mut txns = if e > LAG && !self.feed.replays() {
            self.restarts.remove(&(e - LAG)).unwrap_or_default()
        } else {
            Vec::new()
        };
        if self.progress.is_some() {
            for (i, t) in txns.iter().enumerate() {
                if let (Some(from), Ok(to)) =
                    (t.restart_of, Seq::new(e, u32::from(self.me), i as u32))
                {
                    self.report(Progress::Resequenced { from, to: to.raw() });
                }
            }
        }
        if self.last_from.is_none() && (e > self.config.epochs || self.feed.ended(e)) {
            self.last_from = Some(e);
        }
        let last = self.last_from.is_some();
        if !last {
            let free = self.config.concurrency.saturating_sub(self.outstanding);
            let fresh = self.feed.next(e, free);
            for (i, t) in fresh.iter().enumerate() {
                if t.restart_of.is_none() {
                    let at = txns.len() + i;
                    match Seq::new(e, u32::from(self.me), at as u32) {
                        Ok(s) => {
                            self.submitted.insert(s.raw(), ctx.now());
                            self.report(Progress::Submitted { seq: s.raw() });
                        }
                        Err(err) => return self.fail(err),
                    }
                    self.outstanding += 1;
                }
            }
            txns.extend(fresh);
        }
        if txns.len() >= Seq::MAX_BATCH as usize {
            return self.fail(format!("batch of {} transactions", txns.len()));
        }
        self.stats.batches += 1;
        self.report(Progress::Stats {
            node: self.me,
            stats: self.stats,
        });
        self.sealed.push(txns.clone());
        for n in 0..self.nodes {
            if n != self.me {
                let msg = Msg::Batch {
                    epoch: e,
                    txns: txns.clone(),
                    last,
                };
                self.send(ctx, n, msg);
            }
        }
        self.receive_batch(e, self.me, txns, last);
    }

    // Merge.

    fn receive_batch(&mut self, epoch: u32, from: u16, txns: Vec<Txn<P>>, last: bool) {
        if epoch <= self.merged_through || from >= self.nodes {
            return;
        }
        let n = usize::from(self.nodes);
        let slot = &mut self
            .inbox
            .entry(epoch)
            .or_insert_with(|| (0..n).map(|_| None).collect())[usize::from(from)];
        if slot.is_none() {
            *slot = Some((txns, last));
        }
        while let Some(batches) = self.inbox.get(&(self.merged_through + 1)) {
            if batches.iter().any(Option::is_none) {
                break;
            }
            let e = self.merged_through + 1;
            let batches: Vec<_> = self
                .inbox
                .remove(&e)
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect();
            self.all_last = batches.iter().all(|(_, last)| *last);
            self.merge(e, batches.into_iter().map(|(txns, _)| txns).collect());
        }
    }

    fn merge(&mut self, epoch: u32, batches: Vec<Vec<Txn<P>>>) {
        let empty = batches.iter().all(Vec::is_empty);
        self.empty_tail = if empty { self.empty_tail + 1 } else { 0 };
        self.merged_through = epoch;
        for (s, batch) in batches.iter().enumerate() {
            for (i, txn) in batch.iter().enumerate() {
                let rank = self.next_rank;
                self.next_rank += 1;
                let seq = match Seq::new(epoch, s as u32, i as u32) {
                    Ok(s) => s,
                    Err(e) => return self.fail(e),
                };
                let plan =
                    match self
                        .routing
                        .plan(&txn.program, &txn.hints, s as u16, &mut self.scratch)
                    {
                        Ok(p) => p,
                        Err(e) => return self.fail(format!("{}: {e}", txn.program.kind())),
                    };
                if plan.involves(self.me) || s == usize::from(self.me) {
                    self.queue.push_back(Entry {
                        seq,
                        rank,
                        txn: Arc::new(txn.clone()),
                        plan,
                    });
                }
            }
        }
        if let Some(log) = &mut self.log {
            log.epochs.push(batches);
        }
    }

    // Execution.

    fn advance(&mut self, ctx: &mut Ctx<'_, Msg<P>>) {
        while self.fatal.is_none() {
            let Some(head) = self.queue.front() else {
                break;
            };
            if self.config.pipeline.on() && head.seq.epoch() != self.fence_epoch {
                // A new epoch starts once every transaction passed in the last one is over.
                if !self.passed.is_empty() {
                    break;
                }
                self.fence.clear();
                self.fence_epoch = head.seq.epoch();
            }
            if !head.plan.involves(self.me) || head.plan.single() {
                self.run_segment();
            } else if !self.step_mp(ctx) {
                self.speculate();
                break;
            }
        }
        self.try_seal(ctx);
        self.announce(ctx, false);
    }

    /// Runs the longest prefix of the queue that needs no other node.
    fn run_segment(&mut self) {
        let mut run = Vec::new();
        let pipeline = self.config.pipeline.on();
        while let Some(h) = self.queue.front() {
            if h.plan.involves(self.me) && !h.plan.single() {
                break;
            }
            // The fence is the epoch's: a run stops at the epoch's end.
            if pipeline && h.seq.epoch() != self.fence_epoch {
                break;
            }
            run.extend(self.queue.pop_front());
        }
        let fence = self.config.pipeline.fences().then_some(&self.fence);
        let local: Vec<&Entry<P>> = run.iter().filter(|e| e.plan.involves(self.me)).collect();
        let confined: Vec<Confined<'_, P>> = local
            .iter()
            .map(|e| Confined::new(&e.txn.program, &self.routing, self.me, fence))
            .collect();
        let jobs: Vec<Positioned<'_, Confined<'_, P>>> = local
            .iter()
            .zip(&confined)
            .map(|(e, c)| Positioned {
                seq: e.seq,
                rank: e.rank,
                program: c,
            })
            .collect();
        let results = if jobs.is_empty() {
            Ok(Vec::new())
        } else {
            self.stats.segments += 1;
            self.engine.run_at(&jobs, &self.pool, self.config.workers)
        };
        let outside: Vec<(Option<u16>, bool)> =
            confined.iter().map(|c| (c.outside(), c.fenced())).collect();
        drop(jobs);
        drop(confined);
        match results {
            Err(e) => return self.fail(e),
            Ok(results) => {
                for ((entry, r), out) in local.iter().zip(results).zip(outside) {
                    self.stats.single += 1;
                    match out {
                        (Some(p), _) => self.restart(entry, Some(p)),
                        (None, true) => {
                            self.stats.fenced += 1;
                            self.restart(entry, None);
                        }
                        (None, false) => self.tally(entry, &r),
                    }
                }
            }
        }
        for e in &run {
            self.finish(e);
        }
    }

    fn tally<T>(&mut self, entry: &Entry<P>, r: &TxResult<T>) {
        let ran = match r {
            Ok(_) => {
                self.stats.committed += 1;
                Ran::Committed
            }
            Err(TxError::UserAbort(_)) => {
                self.stats.user_aborts += 1;
                Ran::UserAborted
            }
            Err(_) => {
                self.stats.errors += 1;
                Ran::Failed
            }
        };
        self.report_ran(entry, ran);
    }

    fn report_ran(&self, entry: &Entry<P>, ran: Ran) {
        self.report(Progress::Ran {
            seq: entry.seq.raw(),
            kind: entry.txn.program.kind(),
            ran,
        });
    }

    /// Re-sequences `entry`, with partition `p` hinted if any (the leader's job; module docs).
    fn restart(&mut self, entry: &Entry<P>, p: Option<u16>) {
        self.stats.restarts += 1;
        self.report_ran(entry, Ran::Restarted);
        if self.feed.replays() {
            return;
        }
        let mut hints = entry.txn.hints.clone();
        hints.extend(p);
        hints.sort_unstable();
        hints.dedup();
        self.restarts
            .entry(entry.seq.epoch())
            .or_default()
            .push(Txn {
                program: entry.txn.program.clone(),
                hints,
                restart_of: Some(entry.seq.raw()),
            });
    }

    /// The multi-partition transaction at the head is over here, having installed `written`
    /// here: the window after it commits what is valid (`super::overlap`).
    fn end_mp(&mut self, written: &[WriteOp]) {
        if let Some(mp) = self.mp.take() {
            self.stats.mp_blocked_us += self.now.saturating_sub(mp.since).as_micros() as u64;
        }
        self.settle(written);
    }

    /// Runs ahead, through the local engine, the single-partition transactions after the
    /// multi-partition one at the head that are not in its window yet (`super::overlap`).
    fn speculate(&mut self) {
        if self.config.overlap == Overlap::Off || self.fatal.is_some() {
            return;
        }
        let me = self.me;
        let window = self.window.get_or_insert_with(Window::default);
        let from = window.entries.len();
        for e in self.queue.iter().skip(1 + from) {
            if (e.plan.involves(me) && !e.plan.single()) || window.entries.len() >= WINDOW_MAX {
                window.closed = true;
            }
            if window.closed {
                break;
            }
            window.entries.push(Speculated {
                seq: e.seq,
                involved: e.plan.involves(me),
                capture: None,
            });
        }
        let fresh: Vec<(usize, Arc<Txn<P>>)> = self
            .queue
            .iter()
            .skip(1 + from)
            .take(window.entries.len() - from)
            .enumerate()
            .filter(|(_, e)| e.plan.involves(me))
            .map(|(i, e)| (from + i, Arc::clone(&e.txn)))
            .collect();
        if fresh.is_empty() {
            return;
        }
        let Some(window) = self.window.as_mut() else {
            return;
        };
        let specs: Vec<Spec<'_, P>> = fresh
            .iter()
            .map(|(i, txn)| {
                let confined = Confined::new(&txn.program, &self.routing, me, None);
                Spec::new(confined, *i, &window.overlay, self.config.overlap)
            })
            .collect();
        let jobs: Vec<Positioned<'_, Spec<'_, P>>> = fresh
            .iter()
            .zip(&specs)
            .enumerate()
            .map(|(n, ((i, _), program))| Positioned {
                seq: window.entries[*i].seq,
                rank: self.window_rank + n as u64,
                program,
            })
            .collect();
        self.window_rank += jobs.len() as u64;
        self.stats.windows += 1;
        let chain = WindowChain::save(&*self.engine);
        let results = self.engine.run_at(&jobs, &self.pool, self.config.workers);
        chain.restore(&*self.engine);
        drop(jobs);
        let results = match results {
            Ok(r) => r,
            Err(e) => return self.fail(e),
        };
        // What the window read from the committed state, looked up now, before `T` installs
        // anything here (`super::overlap`): the history records that, not what validation
        // assumes.
        let records = super::local::records(&*self.engine);
        let mut noted = Ok(());
        for (((i, _), spec), r) in fresh.iter().zip(specs).zip(results) {
            let mut capture = spec.finish(&r);
            match capture.as_mut() {
                None => window.closed = true,
                Some(cap) if records => {
                    noted = noted.and_then(|()| cap.note_committed(&*self.engine));
                }
                Some(_) => {}
            }
            window.entries[*i].capture = capture;
        }
        if let Err(e) = noted {
            self.fail(e);
        }
    }

    /// Commits the valid prefix of the window after the multi-partition transaction that just
    /// ended here, having installed `written` (`super::overlap`); the rest stays in the queue
    /// and runs again at its position.
    fn settle(&mut self, written: &[WriteOp]) {
        let Some(window) = self.window.take() else {
            return;
        };
        let valid = window.valid_prefix(written, self.config.overlap);
        let involved = |w: &[Speculated]| w.iter().filter(|s| s.involved).count() as u64;
        self.stats.overlapped += involved(&window.entries[..valid]);
        self.stats.overlap_reruns += involved(&window.entries[valid..]);
        let entries: Vec<Entry<P>> = self.queue.drain(..valid).collect();
        if let Err(e) = self.install_window(&window, &entries) {
            return self.fail(e);
        }
        for (entry, s) in entries.iter().zip(&window.entries) {
            if let Some(cap) = s.capture.as_ref().filter(|_| s.involved) {
                self.stats.single += 1;
                match (cap.outside, &cap.result) {
                    (Some(p), _) => self.restart(entry, Some(p)),
                    (None, Some(r)) => self.tally(entry, r),
                    (None, None) => {}
                }
            }
            self.finish(entry);
        }
    }

    /// Installs the writes of the window's valid prefix (`entries`) at their positions, and
    /// records what they read (when the engine records).
    fn install_window(&self, window: &Window, entries: &[Entry<P>]) -> Result<(), Error> {
        if self.config.overlap.commits_early() {
            return Ok(());
        }
        let mut writes = Vec::new();
        for (i, (entry, s)) in entries.iter().zip(&window.entries).enumerate() {
            let Some(cap) = s.capture.as_ref().filter(|_| s.involved) else {
                continue;
            };
            let committed = cap.outside.is_none() && matches!(cap.result, Some(Ok(())));
            if super::local::records(&*self.engine) && cap.outside.is_none() {
                let (reads, scans) = window.read_events(i)?;
                self.engine.record_led(entry.rank, reads, scans, committed);
            }
            if committed {
                writes.push((i, cap.write_ops()));
            }
        }
        let applies: Vec<Apply<'_>> = writes
            .iter()
            .filter(|(_, w)| !w.is_empty())
            .map(|(i, w)| Apply {
                writes: w,
                kind: entries[*i].txn.program.kind(),
            })
            .collect();
        let positions = writes.iter().filter(|(_, w)| !w.is_empty());
        let jobs: Vec<Positioned<'_, Apply<'_>>> = positions
            .zip(&applies)
            .map(|((i, _), program)| Positioned {
                seq: entries[*i].seq,
                rank: entries[*i].rank,
                program,
            })
            .collect();
        if jobs.is_empty() {
            return Ok(());
        }
        let results = self.engine.run_at(&jobs, &self.pool, self.config.workers)?;
        for (job, r) in jobs.iter().zip(results) {
            if let Err(e) = r {
                return Err(Error::Internal(format!("installing {}: {e}", job.seq)));
            }
        }
        Ok(())
    }

    /// `entry`'s processing here is over.
    fn finish(&mut self, entry: &Entry<P>) {
        // A passed transaction finishes after later ones.
        self.last_done = self.last_done.max(entry.seq.raw());
        if entry.seq.sequencer() == u32::from(self.me)
            && let Some(at) = self.submitted.remove(&entry.seq.raw())
        {
            self.outstanding -= 1;
            self.stats.finished += 1;
            let us = self.now.saturating_sub(at).as_micros() as u64;
            let _ = self.latency_us.record(us.max(1));
        }
    }

    /// Whether `entry` (multi-partition) is pipelined: its non-leading participants pass it
    /// ([`Pipeline::On`]; first attempts only: a re-sequenced one may need on-demand reads).
    fn pipelined(&self, entry: &Entry<P>) -> bool {
        self.config.pipeline.on() && entry.txn.restart_of.is_none()
    }

    /// Passes the pipelined multi-partition transaction at the head, which this node does not
    /// lead: sends the read set at its position and holds its declared keys here until the
    /// outcome is installed; whether it passed (it waits while a passed one holds a key).
    fn pass(&mut self, ctx: &mut Ctx<'_, Msg<P>>) -> bool {
        let head = self.queue.front().expect("pass is called with a head");
        let keys = self.declared_here(head);
        if self.config.pipeline.checks_held() && keys.iter().any(|k| self.held.contains(k)) {
            return false;
        }
        let rows = match self.rows(&keys) {
            Ok(rows) => rows,
            Err(e) => {
                self.fail(e);
                return false;
            }
        };
        let entry = self.queue.pop_front().expect("head");
        let seq = entry.seq.raw();
        self.stats.multi_joined += 1;
        self.stats.passed += 1;
        self.stats.read_set_rows += rows.len() as u64;
        let msg = Msg::ReadSet {
            seq,
            rows: rows.clone(),
        };
        self.send(ctx, entry.plan.leader, msg);
        self.held.extend(keys.iter().copied());
        self.fence.extend(keys.iter().copied());
        self.passed.insert(seq, Passed { entry, keys, rows });
        true
    }

    /// The multi-partition transaction at the head; whether it finished here.
    fn step_mp(&mut self, ctx: &mut Ctx<'_, Msg<P>>) -> bool {
        let head = self.queue.front().expect("step_mp is called with a head");
        let (seq, leader) = (head.seq.raw(), head.plan.leader);
        if leader != self.me && self.config.pipeline.on() {
            if self.pipelined(head) {
                return self.pass(ctx);
            }
            // One that waits here reads and serves the state at its position: the passed ones
            // are installed first.
            if !self.passed.is_empty() {
                return false;
            }
        }
        if self.mp.as_ref().map(|m| m.seq) != Some(seq) {
            let mut mp = Mp {
                seq,
                since: self.now,
                ..Mp::default()
            };
            if leader == self.me {
                self.stats.multi_led += 1;
                for (from, rows) in self.early.remove(&seq).unwrap_or_default() {
                    mp.sets.insert(from);
                    mp.view.add_rows(rows);
                }
            } else {
                self.stats.multi_joined += 1;
                match self.read_set(head) {
                    Ok(rows) => mp.rows = rows,
                    Err(e) => {
                        self.fail(e);
                        return false;
                    }
                }
                self.stats.read_set_rows += mp.rows.len() as u64;
                let msg = Msg::ReadSet {
                    seq,
                    rows: mp.rows.clone(),
                };
                self.send(ctx, leader, msg);
            }
            self.mp = Some(mp);
        }
        if leader != self.me {
            return false;
        }
        self.lead(ctx)
    }

    /// The declared rows of the head transaction this node owns.
    fn read_set(&self, head: &Entry<P>) -> Result<Vec<Row>, Error> {
        self.rows(&self.declared_here(head))
    }

    /// The declared keys of `entry` this node owns, sorted.
    fn declared_here(&self, entry: &Entry<P>) -> Vec<(u16, u64)> {
        let mut set = AccessSet::default();
        entry.txn.program.declare(&mut set);
        let mut keys: Vec<(u16, u64)> = set
            .accesses
            .iter()
            .filter(|(t, k, _)| {
                self.routing.placement(*t) == Placement::Partitioned
                    && self.routing.owner(*t, *k).is_ok_and(|p| p == self.me)
            })
            .map(|(t, k, _)| (t.0, *k))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The committed rows of `keys`.
    fn rows(&self, keys: &[(u16, u64)]) -> Result<Vec<Row>, Error> {
        keys.iter()
            .map(|&(table, key)| {
                let got = self.engine.committed(TableId(table), key)?;
                Ok(Row {
                    table,
                    key,
                    version: got.as_ref().map_or(0, |g| g.1),
                    value: got.map(|g| g.0),
                })
            })
            .collect()
    }

    /// The leader's part: run once every read set is here (module docs).
    fn lead(&mut self, ctx: &mut Ctx<'_, Msg<P>>) -> bool {
        let head = self.queue.front().expect("lead is called with a head");
        let mp = self.mp.as_ref().expect("lead is called with the exchange");
        let others = head.plan.participants.iter().filter(|&&p| p != self.me);
        if others.clone().any(|p| !mp.sets.contains(p)) {
            return false;
        }
        let pipelined = self.pipelined(head);
        let mut split = Split::new(
            &*self.engine,
            &self.routing,
            self.me,
            &head.plan.participants,
            &mp.view,
        );
        if self.config.pipeline.on() {
            split.held = Some(&self.held);
        }
        let result = head.txn.program.run(&mut split);
        if split.blocked.held {
            // A passed transaction's outcome is due here first; the run repeats after it.
            return false;
        }
        if let Some(p) = split.blocked.outside {
            let entry = self.queue.pop_front().expect("head");
            self.decide(ctx, &entry, |_| Outcome::Restart);
            self.restart(&entry, Some(p));
            self.finish(&entry);
            self.end_mp(&[]);
            return true;
        }
        // A pipelined transaction's other participants have passed it: it may read and write
        // there only what they sent (their declared keys), else it runs again, re-sequenced,
        // with every participant waiting at its position.
        let beyond = pipelined
            && (split.is_blocked()
                || (result.is_ok()
                    && split.writes_by_node().is_ok_and(|w| {
                        w.iter()
                            .filter(|(n, _)| **n != self.me)
                            .flat_map(|(_, ops)| ops)
                            .any(|op| !mp.view.rows.contains_key(&op.key()))
                    })));
        if beyond {
            drop(split);
            let entry = self.queue.pop_front().expect("head");
            self.stats.pipeline_restarts += 1;
            self.decide(ctx, &entry, |_| Outcome::Restart);
            self.restart(&entry, None);
            self.finish(&entry);
            self.end_mp(&[]);
            return true;
        }
        if split.is_blocked() {
            let reads = std::mem::take(&mut split.blocked.reads);
            drop(split);
            for (&node, list) in &reads {
                self.stats.remote_reads += list.len() as u64;
                let msg = Msg::ReadReq {
                    seq: self.mp.as_ref().map_or(0, |m| m.seq),
                    reads: list.clone(),
                };
                self.send(ctx, node, msg);
            }
            if let Some(mp) = &mut self.mp {
                mp.requested = reads;
            }
            return false;
        }
        let writes = match &result {
            Ok(_) => split.writes_by_node(),
            Err(_) => Ok(BTreeMap::new()),
        };
        let (reads, scans) = (split.reads, split.scans);
        let entry = self.queue.pop_front().expect("head");
        let mut committed = result.is_ok();
        let mut writes = match writes {
            Ok(w) => {
                self.tally(&entry, &result);
                w
            }
            Err(e) => {
                committed = false;
                self.tally::<()>(&entry, &Err(e));
                BTreeMap::new()
            }
        };
        self.engine.record_led(entry.rank, reads, scans, committed);
        let own = writes.remove(&self.me).unwrap_or_default();
        self.decide(ctx, &entry, |p| {
            Outcome::Commit(writes.remove(&p).unwrap_or_default())
        });
        self.apply(&entry, &own);
        self.finish(&entry);
        self.end_mp(&own);
        true
    }

    /// Sends every other participant its outcome and keeps it until acknowledged.
    fn decide(
        &mut self,
        ctx: &mut Ctx<'_, Msg<P>>,
        entry: &Entry<P>,
        mut outcome: impl FnMut(u16) -> Outcome,
    ) {
        let seq = entry.seq.raw();
        let mut kept = HashMap::new();
        let me = self.me;
        for &p in entry.plan.participants.iter().filter(|&&p| p != me) {
            let o = outcome(p);
            kept.insert(p, o.clone());
            self.send(ctx, p, Msg::Outcome { seq, outcome: o });
        }
        self.outcomes.insert(seq, kept);
    }

    /// Installs this partition's writes of `entry` as version `Seq`.
    fn apply(&mut self, entry: &Entry<P>, writes: &[WriteOp]) {
        if writes.is_empty() {
            return;
        }
        let apply = Apply {
            writes,
            kind: entry.txn.program.kind(),
        };
        let job = [Positioned {
            seq: entry.seq,
            rank: entry.rank,
            program: &apply,
        }];
        match self.engine.run_at(&job, &self.pool, 1) {
            Ok(r) => {
                if let Some(Err(e)) = r.into_iter().next() {
                    self.fail(format!("installing {}: {e}", entry.seq));
                }
            }
            Err(e) => self.fail(e),
        }
    }

    fn on_outcome(&mut self, ctx: &mut Ctx<'_, Msg<P>>, from: u16, seq: u64, outcome: Outcome) {
        let passed = self
            .passed
            .get(&seq)
            .is_some_and(|p| p.entry.plan.leader == from);
        if let Some(passed) = passed.then(|| self.passed.remove(&seq)).flatten() {
            let written: &[WriteOp] = match &outcome {
                Outcome::Commit(w) => w,
                Outcome::Restart => &[],
            };
            // The leader writes here only keys this node sent (`lead`).
            if let Some(w) = written
                .iter()
                .find(|w| passed.keys.binary_search(&w.key()).is_err())
            {
                return self.fail(format!(
                    "{}: the leader of {} wrote {:?}, not in its read set here",
                    passed.entry.txn.program.kind(),
                    passed.entry.seq,
                    w.key()
                ));
            }
            self.apply(&passed.entry, written);
            for k in &passed.keys {
                self.held.remove(k);
            }
            self.finish(&passed.entry);
            self.send(ctx, from, Msg::Applied { seq });
            self.advance(ctx);
            return;
        }
        let at_head = self
            .queue
            .front()
            .is_some_and(|h| h.seq.raw() == seq && h.plan.leader == from && from != self.me);
        if at_head {
            let entry = self.queue.pop_front().expect("head");
            let written: &[WriteOp] = match &outcome {
                Outcome::Commit(w) => w,
                Outcome::Restart => &[],
            };
            self.apply(&entry, written);
            self.finish(&entry);
            self.end_mp(written);
            self.send(ctx, from, Msg::Applied { seq });
            self.advance(ctx);
        } else if seq <= self.last_done {
            self.send(ctx, from, Msg::Applied { seq });
        }
    }

    fn on_read_set(&mut self, ctx: &mut Ctx<'_, Msg<P>>, from: u16, seq: u64, rows: Vec<Row>) {
        match &mut self.mp {
            Some(mp) if mp.seq == seq => {
                mp.sets.insert(from);
                mp.view.add_rows(rows);
                self.advance(ctx);
            }
            _ if seq <= self.last_done => {
                // The participant did not get the outcome: send it again.
                if let Some(o) = self.outcomes.get(&seq).and_then(|m| m.get(&from)).cloned() {
                    self.stats.retransmits += 1;
                    self.send(ctx, from, Msg::Outcome { seq, outcome: o });
                }
            }
            _ => {
                let list = self.early.entry(seq).or_default();
                if !list.iter().any(|(f, _)| *f == from) {
                    list.push((from, rows));
                }
            }
        }
    }

    fn on_read_req(&mut self, ctx: &mut Ctx<'_, Msg<P>>, from: u16, seq: u64, reads: Vec<Read>) {
        let serving = self.mp.as_ref().is_some_and(|m| m.seq == seq)
            && self
                .queue
                .front()
                .is_some_and(|h| h.plan.leader == from && from != self.me);
        if !serving {
            return;
        }
        let (mut rows, mut scans) = (Vec::new(), Vec::new());
        for r in reads {
            let got = match r {
                Read::Key { table, key } => self.engine.committed(TableId(table), key).map(|got| {
                    rows.push(Row {
                        table,
                        key,
                        version: got.as_ref().map_or(0, |g| g.1),
                        value: got.map(|g| g.0),
                    })
                }),
                Read::Scan { table, lo, hi } => {
                    let mut out = Vec::new();
                    self.engine
                        .committed_range(TableId(table), lo, hi, &mut out)
                        .map(|()| {
                            scans.push(ScanRows {
                                table,
                                lo,
                                hi,
                                rows: out,
                            })
                        })
                }
            };
            if let Err(e) = got {
                return self.fail(e);
            }
        }
        self.send(ctx, from, Msg::ReadResp { seq, rows, scans });
    }

    fn on_retry(&mut self, ctx: &mut Ctx<'_, Msg<P>>) {
        self.announce(ctx, true);
        // A missing batch of the next epoch to merge.
        let next = self.merged_through + 1;
        if (next as usize) <= self.sealed.len() {
            let missing: Vec<u16> = match self.inbox.get(&next) {
                Some(b) => (0..self.nodes)
                    .filter(|&s| b[usize::from(s)].is_none())
                    .collect(),
                None => (0..self.nodes).filter(|&s| s != self.me).collect(),
            };
            for s in missing {
                self.stats.pulls += 1;
                self.send(ctx, s, Msg::Pull { epoch: next });
            }
        }
        // Passed transactions whose outcome did not come (their read set may be lost).
        let resend: Vec<(u16, Msg<P>)> = self
            .passed
            .iter()
            .map(|(&seq, p)| {
                let rows = p.rows.clone();
                (p.entry.plan.leader, Msg::ReadSet { seq, rows })
            })
            .collect();
        for (to, m) in resend {
            self.stats.retransmits += 1;
            self.send(ctx, to, m);
        }
        // The exchange at the head.
        let Some(mp) = &self.mp else { return };
        let Some(head) = self.queue.front() else {
            return;
        };
        let seq = mp.seq;
        let leader = head.plan.leader;
        let msgs: Vec<(u16, Msg<P>)> = if leader == self.me {
            mp.requested
                .iter()
                .map(|(&n, reads)| {
                    (
                        n,
                        Msg::ReadReq {
                            seq,
                            reads: reads.clone(),
                        },
                    )
                })
                .collect()
        } else {
            vec![(
                leader,
                Msg::ReadSet {
                    seq,
                    rows: mp.rows.clone(),
                },
            )]
        };
        for (to, m) in msgs {
            self.stats.retransmits += 1;
            self.send(ctx, to, m);
        }
    }
}

impl<E: PartitionEngine, P: ClusterProgram> Node for PartitionNode<E, P> {
    type Msg = Msg<P>;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Msg<P>>) {
        self.now = ctx.now();
        ctx.set_timer(self.config.epoch, EPOCH);
        ctx.set_timer(self.config.retry, RETRY);
    }

    fn on_message(&mut self, from: NodeId, msg: Msg<P>, ctx: &mut Ctx<'_, Msg<P>>) {
        self.now = ctx.now();
        let from = from.0;
        match msg {
            Msg::Batch { epoch, txns, last } => {
                self.receive_batch(epoch, from, txns, last);
                self.advance(ctx);
            }
            Msg::Pull { epoch } => {
                if epoch > 0
                    && let Some(txns) = self.sealed.get(epoch as usize - 1).cloned()
                {
                    let last = self.last_from.is_some_and(|l| epoch >= l);
                    self.send(ctx, from, Msg::Batch { epoch, txns, last });
                }
            }
            Msg::ReadSet { seq, rows } => self.on_read_set(ctx, from, seq, rows),
            Msg::ReadReq { seq, reads } => self.on_read_req(ctx, from, seq, reads),
            Msg::ReadResp { seq, rows, scans } => {
                if let Some(mp) = &mut self.mp
                    && mp.seq == seq
                {
                    mp.view.add_rows(rows);
                    mp.view.add_scans(scans);
                    self.advance(ctx);
                }
            }
            Msg::Outcome { seq, outcome } => self.on_outcome(ctx, from, seq, outcome),
            Msg::Done => {
                self.peers_done.insert(from);
            }
            Msg::Applied { seq } => {
                if let Some(m) = self.outcomes.get_mut(&seq) {
                    m.remove(&from);
                    if m.is_empty() {
                        self.outcomes.remove(&seq);
                    }
                }
            }
        }
    }

    fn on_timer(&mut self, timer: TimerId, ctx: &mut Ctx<'_, Msg<P>>) {
        self.now = ctx.now();
        match timer {
            EPOCH => {
                self.seal_due = true;
                self.advance(ctx);
                ctx.set_timer(self.config.epoch, EPOCH);
            }
            RETRY => {
                self.on_retry(ctx);
                ctx.set_timer(self.config.retry, RETRY);
            }
            _ => {}
        }
    }

    fn on_peer(&mut self, peer: NodeId, up: bool, _: &mut Ctx<'_, Msg<P>>) {
        // A peer gone after this node is done either finished or failed (its process reports
        // that); it needs nothing more from this node, and waiting for its word would hang.
        if !up && self.done() {
            self.peers_done.insert(peer.0);
        }
    }
}
