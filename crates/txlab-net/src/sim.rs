//! The `sim` driver (feature `sim`): every node a turmoil host running the same node loop and
//! the same tarpc `Peer` service as the `tcp` driver ([`crate::tcp`]'s link and listener code,
//! generic over the stream type), over `turmoil::net` instead of tokio's TCP.
//!
//! [`SimConfig`] maps onto turmoil: `seed` → `Builder::rng_seed`, `min/max_latency` →
//! `min/max_message_latency`, `fail_rate`/`repair_rate` → the same, `partitions` →
//! `Sim::partition`/`repair` at their virtual times, `crashes` → `Sim::crash`/`bounce`. A node's
//! [`Durable`] store lives outside its host and survives `bounce`.
//!
//! Invariants:
//! - **Virtual time.** The node's clock is `turmoil::sim_elapsed()`; timers are tokio sleeps on
//!   turmoil's paused runtimes. Nothing in the loop reads the wall clock (tarpc's deadlines do,
//!   so they are set a year out and never fire).
//! - **Determinism.** No `tokio::select!` without `biased`; one seed gives one delivered-message
//!   trace ([`SimReport::trace_hash`]: virtual time, sender, receiver and bytes of every message
//!   delivered). Different seeds give different latencies and so different traces.
//! - turmoil draws a latency as `min + (max - min in whole milliseconds) × Exp(5)`, truncated to
//!   whole milliseconds: a range under 1 ms gives every message `min_latency`, and only seeds'
//!   other effects (failures, node RNGs) differ. Use a range of a few milliseconds for traces
//!   that differ by seed.
//! - Turmoil drops segments silently on a partition, so a link whose call is unanswered within
//!   `call_timeout` (virtual) counts as broken and reconnects; its peer sees `on_peer(false)`.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::durable::Durable;
use crate::error::NetError;
use crate::host::{Host, sorted_ids};
use crate::metrics::NetMetrics;
use crate::node::{Node, NodeId};
use crate::tcp::Hello;
use crate::tcp::core::{NodeCore, Trace};
use crate::tcp::io::{self, Inbound, Inbox, IoStats, LinkConfig, Net};
use crate::wire::{DEFAULT_MAX_FRAME, WIRE_VERSION};

/// A partition between two sides, from `at` for `duration` (virtual time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// When it starts.
    pub at: Duration,
    /// How long it lasts.
    pub duration: Duration,
    /// One side.
    pub side_a: Vec<NodeId>,
    /// The other side.
    pub side_b: Vec<NodeId>,
}

/// A crash of `node` at `at`, restarted (`bounce`) `restart_after` later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crash {
    /// When it crashes.
    pub at: Duration,
    /// The node.
    pub node: NodeId,
    /// Downtime before the restart.
    pub restart_after: Duration,
}

/// Simulation settings.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// turmoil's RNG seed (latencies, failures) and the node RNGs' seed.
    pub seed: u64,
    /// Minimum one-way message latency.
    pub min_latency: Duration,
    /// Maximum one-way message latency.
    pub max_latency: Duration,
    /// Probability that a link breaks at a message (turmoil's `fail_rate`), in `0..=1`.
    pub fail_rate: f64,
    /// Probability that a broken link repairs at a message, in `0..=1`.
    pub repair_rate: f64,
    /// Scheduled partitions.
    pub partitions: Vec<Partition>,
    /// Scheduled crashes.
    pub crashes: Vec<Crash>,
    /// Simulated time after which an unfinished run is an error.
    pub duration: Duration,
    /// turmoil's tick.
    pub tick: Duration,
    /// Frame limit.
    pub max_frame: usize,
    /// Batch messages per link (as `tcp`).
    pub batching: bool,
    /// A call unanswered this long (virtual) breaks the link.
    pub call_timeout: Duration,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            min_latency: Duration::from_micros(100),
            max_latency: Duration::from_millis(5),
            fail_rate: 0.0,
            repair_rate: 0.0,
            partitions: Vec::new(),
            crashes: Vec::new(),
            duration: Duration::from_secs(60),
            tick: Duration::from_micros(100),
            max_frame: DEFAULT_MAX_FRAME,
            batching: true,
            call_timeout: Duration::from_millis(200),
        }
    }
}

/// `TXLAB_SIM_SEED` when set (to replay one seed), else `default`.
pub fn seeds(default: std::ops::Range<u64>) -> Result<Vec<u64>, NetError> {
    match std::env::var("TXLAB_SIM_SEED") {
        Err(_) => Ok(default.collect()),
        Ok(s) => s.trim().parse().map(|x| vec![x]).map_err(|_| {
            NetError::Config(format!(
                "TXLAB_SIM_SEED={s:?}: accepted: an unsigned 64-bit integer"
            ))
        }),
    }
}

impl SimConfig {
    /// Checks every value before turmoil sees it (turmoil panics on `max < min` latency).
    pub fn validate(&self, ids: &[NodeId]) -> Result<(), NetError> {
        let bad = |s: String| Err(NetError::Config(s));
        if self.max_latency < self.min_latency {
            return bad(format!(
                "max_latency {:?} < min_latency {:?}: accepted: min_latency <= max_latency",
                self.max_latency, self.min_latency
            ));
        }
        for (name, r) in [
            ("fail_rate", self.fail_rate),
            ("repair_rate", self.repair_rate),
        ] {
            if !(0.0..=1.0).contains(&r) {
                return bad(format!("{name} {r}: accepted: 0..=1"));
            }
        }
        if self.tick.is_zero() || self.duration.is_zero() || self.call_timeout.is_zero() {
            return bad(format!(
                "tick {:?}, duration {:?}, call_timeout {:?}: accepted: each positive",
                self.tick, self.duration, self.call_timeout
            ));
        }
        let known = |n: &NodeId, what: &str| -> Result<(), NetError> {
            if ids.contains(n) {
                Ok(())
            } else {
                Err(NetError::Config(format!(
                    "{what} names unknown node {}: accepted: {:?}",
                    n.0,
                    ids.iter().map(|i| i.0).collect::<Vec<_>>()
                )))
            }
        };
        for p in &self.partitions {
            for n in p.side_a.iter().chain(&p.side_b) {
                known(n, "a partition")?;
            }
            let a: BTreeSet<_> = p.side_a.iter().collect();
            if p.side_a.is_empty() || p.side_b.is_empty() || p.side_b.iter().any(|n| a.contains(n))
            {
                return bad(format!(
                    "partition sides {:?} and {:?}: accepted: two non-empty disjoint sets",
                    p.side_a, p.side_b
                ));
            }
        }
        for c in &self.crashes {
            known(&c.node, "a crash")?;
        }
        Ok(())
    }

    fn link_config(&self, me: NodeId, members: Arc<[NodeId]>) -> LinkConfig {
        LinkConfig {
            hello: Hello {
                node: me,
                protocol: "sim".into(),
                wire_version: WIRE_VERSION,
                git_revision: String::new(),
                cluster_digest: String::new(),
            },
            max_frame: self.max_frame,
            batching: self.batching,
            max_batch_bytes: 256 << 10,
            backoff_min: Duration::from_millis(5),
            backoff_max: Duration::from_millis(100),
            max_queued_bytes: 64 << 20,
            window: 64,
            call_timeout: self.call_timeout,
            members,
        }
    }
}

const PORT: u16 = 7000;

fn host_name(id: NodeId) -> String {
    format!("n{}", id.0)
}

struct Turmoil;

impl Net for Turmoil {
    type Stream = turmoil::net::TcpStream;
    type Listener = turmoil::net::TcpListener;

    async fn connect(addr: String) -> std::io::Result<Self::Stream> {
        turmoil::net::TcpStream::connect(addr).await
    }

    async fn accept(l: &Self::Listener) -> std::io::Result<Self::Stream> {
        l.accept().await.map(|(s, _)| s)
    }
}

#[derive(Clone)]
struct TaskInbox(UnboundedSender<Inbound>);

impl Inbox for TaskInbox {
    fn push(&self, ev: Inbound) {
        let _ = self.0.send(ev);
    }
}

type Slot<N> = Rc<RefCell<Option<NodeCore<N>>>>;

/// What a finished simulation reports.
#[derive(Clone, Debug)]
pub struct SimReport {
    /// Hash of the delivered-message trace.
    pub trace_hash: u64,
    /// Messages delivered.
    pub messages: u64,
    /// Simulated time at the end.
    pub elapsed: Duration,
}

/// A simulated cluster.
pub struct SimCluster<N: Node> {
    sim: turmoil::Sim<'static>,
    ids: Arc<[NodeId]>,
    slots: Vec<Slot<N>>,
    stats: Vec<Arc<IoStats>>,
    trace: Arc<Mutex<Trace>>,
    events: Vec<(Duration, SimEvent)>,
    next_event: usize,
    duration: Duration,
    retired: NetMetrics,
}

impl<N: Node> std::fmt::Debug for SimCluster<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimCluster")
            .field("ids", &self.ids)
            .field("elapsed", &self.sim.elapsed())
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Debug)]
enum SimEvent {
    Partition(Vec<NodeId>, Vec<NodeId>),
    Repair(Vec<NodeId>, Vec<NodeId>),
    Crash(NodeId),
    Bounce(NodeId),
}

impl<N: Node> SimCluster<N> {
    /// Validates `config` and builds the simulation; `factory` builds each node at start and
    /// after every bounce.
    pub fn new(
        ids: &[NodeId],
        config: SimConfig,
        factory: impl Fn(NodeId) -> N + 'static,
    ) -> Result<Self, NetError> {
        let ids = sorted_ids(ids)?;
        config.validate(&ids)?;
        let mut sim = turmoil::Builder::new()
            .rng_seed(config.seed)
            .min_message_latency(config.min_latency)
            .max_message_latency(config.max_latency)
            .fail_rate(config.fail_rate)
            .repair_rate(config.repair_rate)
            .tick_duration(config.tick)
            .simulation_duration(config.duration + Duration::from_secs(1))
            .build();
        let trace = Arc::new(Mutex::new(Trace::default()));
        let factory = Rc::new(factory);
        let mut slots = Vec::new();
        let mut stats = Vec::new();
        for &id in ids.iter() {
            let slot: Slot<N> = Rc::default();
            let io_stats = Arc::new(IoStats::default());
            let software = HostSoftware {
                id,
                ids: Arc::clone(&ids),
                link: config.link_config(id, Arc::clone(&ids)),
                seed: config.seed,
                batching: config.batching,
                max_frame: config.max_frame,
                durable: Durable::new(),
                incarnation: Rc::default(),
                slot: Rc::clone(&slot),
                stats: Arc::clone(&io_stats),
                trace: Arc::clone(&trace),
                factory: Rc::clone(&factory) as Rc<dyn Fn(NodeId) -> N>,
            };
            sim.host(host_name(id), move || software.clone().run());
            slots.push(slot);
            stats.push(io_stats);
        }
        let mut events = Vec::new();
        for p in &config.partitions {
            let (a, b) = (p.side_a.clone(), p.side_b.clone());
            events.push((p.at, SimEvent::Partition(a.clone(), b.clone())));
            events.push((p.at + p.duration, SimEvent::Repair(a, b)));
        }
        for c in &config.crashes {
            events.push((c.at, SimEvent::Crash(c.node)));
            events.push((c.at + c.restart_after, SimEvent::Bounce(c.node)));
        }
        events.sort_by_key(|e| e.0);
        Ok(Self {
            sim,
            ids,
            slots,
            stats,
            trace,
            events,
            next_event: 0,
            duration: config.duration,
            retired: NetMetrics::default(),
        })
    }

    /// Runs `f` over every node (`None` while crashed), in id order.
    pub fn view<R>(&self, f: impl FnOnce(&[(NodeId, Option<&N>)]) -> R) -> R {
        let guards: Vec<_> = self.slots.iter().map(|s| s.borrow()).collect();
        let nodes: Vec<_> = self
            .ids
            .iter()
            .zip(&guards)
            .map(|(&id, g)| (id, g.as_ref().map(|c| &c.host.node)))
            .collect();
        f(&nodes)
    }

    /// Steps the simulation until `stop` holds over the nodes (checked after every tick), a
    /// node hits a fatal error, or the configured duration passes (an error).
    pub fn run_until(
        &mut self,
        mut stop: impl FnMut(&[(NodeId, Option<&N>)]) -> bool,
    ) -> Result<SimReport, NetError> {
        loop {
            self.apply_events();
            if self.view(&mut stop) {
                let t = self.trace.lock().unwrap();
                return Ok(SimReport {
                    trace_hash: t.hash(),
                    messages: t.messages,
                    elapsed: self.sim.elapsed(),
                });
            }
            for s in &self.slots {
                if let Some(e) = s.borrow_mut().as_mut().and_then(|c| c.fatal.take()) {
                    return Err(e);
                }
            }
            if self.sim.elapsed() > self.duration {
                return Err(NetError::Timeout(
                    self.duration,
                    "simulated run did not reach its stop condition".into(),
                ));
            }
            self.sim
                .step()
                .map_err(|e| NetError::Stopped(format!("simulation failed: {e}")))?;
        }
    }

    /// The counters of every node (crashed incarnations included).
    pub fn metrics(&self) -> NetMetrics {
        let mut m = self.retired.clone();
        for (slot, stats) in self.slots.iter().zip(&self.stats) {
            if let Some(c) = slot.borrow().as_ref() {
                c.report(&mut m);
            }
            let io = stats.snapshot();
            m.merge(&NetMetrics {
                nodes: Default::default(),
                ..io
            });
        }
        m
    }

    fn apply_events(&mut self) {
        while let Some((at, ev)) = self.events.get(self.next_event).cloned() {
            if at > self.sim.elapsed() {
                return;
            }
            self.next_event += 1;
            let names = |v: &[NodeId]| v.iter().map(|&n| host_name(n)).collect::<Vec<_>>();
            match ev {
                SimEvent::Partition(a, b) | SimEvent::Repair(a, b) => {
                    let heal = matches!(self.events[self.next_event - 1].1, SimEvent::Repair(..));
                    for x in names(&a) {
                        for y in names(&b) {
                            if heal {
                                self.sim.repair(x.as_str(), y.as_str());
                            } else {
                                self.sim.partition(x.as_str(), y.as_str());
                            }
                        }
                    }
                }
                SimEvent::Crash(n) => {
                    let i = self.ids.binary_search(&n).expect("validated");
                    if let Some(c) = self.slots[i].borrow_mut().take() {
                        c.report(&mut self.retired);
                    }
                    self.sim.crash(host_name(n).as_str());
                }
                SimEvent::Bounce(n) => self.sim.bounce(host_name(n).as_str()),
            }
        }
    }
}

/// Everything a host needs to (re)start its node.
struct HostSoftware<N: Node> {
    id: NodeId,
    ids: Arc<[NodeId]>,
    link: LinkConfig,
    seed: u64,
    batching: bool,
    max_frame: usize,
    durable: Durable,
    incarnation: Rc<RefCell<u32>>,
    slot: Slot<N>,
    stats: Arc<IoStats>,
    trace: Arc<Mutex<Trace>>,
    factory: Rc<dyn Fn(NodeId) -> N>,
}

impl<N: Node> Clone for HostSoftware<N> {
    fn clone(&self) -> Self {
        Self {
            id: self.id,
            ids: Arc::clone(&self.ids),
            link: self.link.clone(),
            seed: self.seed,
            batching: self.batching,
            max_frame: self.max_frame,
            durable: self.durable.clone(),
            incarnation: Rc::clone(&self.incarnation),
            slot: Rc::clone(&self.slot),
            stats: Arc::clone(&self.stats),
            trace: Arc::clone(&self.trace),
            factory: Rc::clone(&self.factory),
        }
    }
}

fn now() -> Duration {
    turmoil::sim_elapsed().unwrap_or_default()
}

impl<N: Node> HostSoftware<N> {
    async fn run(self) -> turmoil::Result {
        let listener = turmoil::net::TcpListener::bind(("0.0.0.0", PORT)).await?;
        let (tx, mut rx) = unbounded_channel();
        let inbox = TaskInbox(tx);
        tokio::spawn(io::serve::<Turmoil, _>(
            listener,
            self.link.clone(),
            inbox.clone(),
            Arc::clone(&self.stats),
        ));
        let mut links = Vec::new();
        for &to in self.ids.iter() {
            if to == self.id {
                links.push(None);
                continue;
            }
            let (ltx, lrx) = unbounded_channel();
            links.push(Some(ltx));
            tokio::spawn(io::link::<Turmoil, _>(
                self.id,
                to,
                format!("{}:{PORT}", host_name(to)),
                self.link.clone(),
                lrx,
                inbox.clone(),
                Arc::clone(&self.stats),
            ));
        }
        let incarnation = {
            let mut i = self.incarnation.borrow_mut();
            *i += 1;
            *i - 1
        };
        let host = Host::new(
            self.id,
            (self.factory)(self.id),
            Arc::clone(&self.ids),
            self.seed,
            incarnation,
            self.durable.clone(),
            Some(self.max_frame),
        );
        let mut core = NodeCore::new(
            host,
            links,
            self.batching,
            self.max_frame,
            Some(Arc::clone(&self.trace)),
        );
        core.start(now());
        *self.slot.borrow_mut() = Some(core);
        loop {
            let deadline = self.slot.borrow().as_ref().and_then(|c| c.next_deadline());
            let ev = match deadline {
                None => rx.recv().await,
                Some(at) => {
                    let sleep = tokio::time::sleep(at.saturating_sub(now()));
                    tokio::select! {
                        biased;
                        ev = rx.recv() => ev,
                        _ = sleep => None,
                    }
                }
            };
            let mut slot = self.slot.borrow_mut();
            let Some(core) = slot.as_mut() else {
                return Ok(());
            };
            let t = now();
            if let Some(ev) = ev {
                core.inbound(ev, t);
            }
            core.timers(t);
        }
    }
}
