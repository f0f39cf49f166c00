//! [`RococoCluster`]: a cluster as an [`Engine`] to load (rows routed to their owners' shards),
//! its runs (`inproc` threads, closed-loop clients reporting to a meter), and its merged state
//! after a run ([`RococoCluster::snapshot`], for `Workload::check` and `StateDigest`).
//!
//! `Engine::worker` is a misuse: a cluster runs pieces through its coordinators, never an
//! interactive transaction. Node ids: servers `0..servers`, then the client nodes; client slot
//! `i` (unique in the cluster) runs the workload's generator of thread `i`.
//!
//! This is a driver module: it starts threads and reads the wall clock (the crate's
//! `clippy.toml` allows it only here).
#![allow(clippy::disallowed_methods)]

use crate::client::{Client, Completion, Finish, Issue};
use crate::config::{NoRecording, Params, Protocol, Recording, Shared};
use crate::counters::Counters;
use crate::msg::Msg;
use crate::node::RococoNode;
use crate::server::Server;
use crate::store::Shard;
use crate::workload::PiecedWorkload;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use txlab_check::serial::SerialEngine;
use txlab_core::protocol::meter::{Meter, Probe, Ticket};
use txlab_core::{
    CommitInfo, ConflictCause, Engine, Error, RunLimit, Schema, TableId, Transaction, TxOps,
    TxResult, Worker,
};
use txlab_net::inproc::{InprocCluster, InprocConfig};
use txlab_net::metrics::NetMetrics;
use txlab_net::{MAX_NODES, NodeId, Transport};

pub use txlab_net::inproc::LinkModel;

/// The most closed-loop clients per server.
pub const MAX_CLIENTS_PER_SERVER: u32 = 10_000;

/// How a run is laid out and driven.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Closed-loop clients per server (each one transaction outstanding), `1..=10_000`.
    pub clients_per_server: u32,
    /// Client nodes (threads) the clients are spread over, at least 1 and at most the clients.
    pub client_threads: u16,
    /// Emulated link latency between nodes.
    pub link: Option<LinkModel>,
    /// Round-trip every message through the wire codec.
    pub encode: bool,
    /// How long outstanding transactions may take to finish once issuing stops.
    pub drain: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            clients_per_server: 10,
            client_threads: 1,
            link: None,
            encode: false,
            drain: Duration::from_secs(60),
        }
    }
}

/// What a run reports besides what went to its meter.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    /// Every node's counters, merged.
    pub counters: Counters,
    /// The transport's counters.
    pub net: NetMetrics,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
    /// The dependency graph held (vertices) by the server holding the most, sampled at the
    /// start and then every [`SAMPLE_PERIOD`] (`inproc` runs; empty in a multi-process run,
    /// whose servers report their own `graph_vertices_max`).
    pub graph_held: Vec<u64>,
}

/// A cluster (module docs).
pub struct RococoCluster<W: PiecedWorkload> {
    shared: Arc<Shared<W>>,
    schema: Schema,
    shards: Mutex<Vec<Option<Shard>>>,
    /// `Engine::load` fills only this server's shard (a multi-process run's server).
    load_only: Option<u16>,
}

impl<W: PiecedWorkload> std::fmt::Debug for RococoCluster<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RococoCluster")
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

impl<W: PiecedWorkload> RococoCluster<W> {
    /// A cluster of `servers` servers running `protocol` on `workload`, with empty shards
    /// (load them through [`Engine::load`], e.g. `workload.load(&cluster)`). Refused: a
    /// workload that cannot run as pieces, profiles the offline checker rejects (for ROCOCO),
    /// a server count outside `1..=512` or beyond what the workload can be placed on.
    pub fn new(
        workload: W,
        protocol: Protocol,
        servers: u16,
        params: Params,
    ) -> Result<Self, Error> {
        let schema = workload.schema();
        let shared = Shared::new(workload, protocol, servers, params)?;
        let shards = (0..servers)
            .map(|_| Shard::new(&schema, shared.layouts.clone()).map(Some))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            shared,
            schema,
            shards: Mutex::new(shards),
            load_only: None,
        })
    }

    /// The same cluster, whose [`Engine::load`] fills server `server`'s shard only (the other
    /// servers' rows are skipped): the process of one server of a multi-process run.
    pub fn loading_only(mut self, server: u16) -> Self {
        self.load_only = Some(server);
        self
    }

    /// What the nodes share.
    pub fn shared(&self) -> &Arc<Shared<W>> {
        &self.shared
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<Shard>>> {
        self.shards.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the shards out to build server nodes; an error while a run holds them.
    pub fn take_shards(&self) -> Result<Vec<Shard>, Error> {
        let mut guard = self.lock();
        if guard.iter().any(Option::is_none) {
            return Err(Error::Misuse(
                "the cluster's shards are in use by a running cluster",
            ));
        }
        Ok(guard
            .iter_mut()
            .map(|s| s.take().expect("checked"))
            .collect())
    }

    /// Puts server nodes' shards back after a run.
    pub fn restore_shards(&self, shards: impl IntoIterator<Item = (u16, Shard)>) {
        let mut guard = self.lock();
        for (s, shard) in shards {
            if let Some(slot) = guard.get_mut(usize::from(s)) {
                *slot = Some(shard);
            }
        }
    }

    /// Loads rows into server `server`'s shard only (a multi-process run's client rebuilds the
    /// servers' shards from what they report, for [`snapshot`](Self::snapshot)).
    pub fn load_rows(
        &self,
        server: u16,
        rows: impl IntoIterator<Item = (TableId, u64, Vec<u8>)>,
    ) -> Result<(), Error> {
        let guard = self.lock();
        let shard = guard
            .get(usize::from(server))
            .and_then(Option::as_ref)
            .ok_or(Error::Misuse(
                "the cluster's shards are in use by a running cluster",
            ))?;
        for (table, key, value) in rows {
            shard.load(table, key, &value)?;
        }
        Ok(())
    }

    /// The shards merged into one serial engine (module docs): partitioned rows from their
    /// owners, replicated tables from server 0, rows that follow their inserter from every
    /// server.
    pub fn snapshot(&self) -> Result<SerialEngine, Error> {
        let guard = self.lock();
        let shards = guard
            .iter()
            .enumerate()
            .map(|(s, shard)| {
                shard.as_ref().map(|sh| (s as u16, sh)).ok_or(Error::Misuse(
                    "the cluster's shards are in use by a running cluster",
                ))
            })
            .collect::<Result<Vec<_>, _>>()?;
        merge_shards(&self.shared, &self.schema, shards)
    }

    /// The client slots of each client node: `clients_per_server × servers` slots dealt
    /// round-robin over `client_threads` nodes. Errors name the flag and its range.
    pub fn layout(
        &self,
        clients_per_server: u32,
        client_threads: u16,
    ) -> Result<Vec<Vec<u32>>, Error> {
        if !(1..=MAX_CLIENTS_PER_SERVER).contains(&clients_per_server) {
            return Err(Error::invalid(
                "--clients-per-server",
                clients_per_server,
                format!("1..={MAX_CLIENTS_PER_SERVER}"),
            ));
        }
        let total = clients_per_server * u32::from(self.shared.servers());
        let nodes = usize::from(self.shared.servers()) + usize::from(client_threads);
        if client_threads == 0 || u32::from(client_threads) > total || nodes > MAX_NODES {
            return Err(Error::invalid(
                "--client-threads",
                client_threads,
                format!(
                    "1..={} (at most one per client, and at most {MAX_NODES} nodes with the servers)",
                    total.min((MAX_NODES - usize::from(self.shared.servers())) as u32)
                ),
            ));
        }
        let mut layout = vec![Vec::new(); usize::from(client_threads)];
        for slot in 0..total {
            layout[slot as usize % usize::from(client_threads)].push(slot);
        }
        Ok(layout)
    }

    /// Runs closed-loop clients on `inproc` threads until `meter` stops issuing, reporting every
    /// transaction to it, recording into `recording`. The shards must be loaded.
    pub fn run_metered<R: Recording, M: Meter>(
        &self,
        opts: &RunOptions,
        recording: Arc<R>,
        meter: &M,
    ) -> Result<RunReport, Error> {
        let layout = self.layout(opts.clients_per_server, opts.client_threads)?;
        let servers = self.shared.servers();
        let shards = self.take_shards()?;
        let (done_tx, done_rx) = mpsc::channel::<Completion>();
        let ids: Vec<NodeId> = (0..servers + opts.client_threads).map(NodeId).collect();
        let config = InprocConfig {
            link: opts.link,
            encode: opts.encode,
            seed: self.shared.params.seed,
            ..InprocConfig::default()
        };
        let factory = node_factory(
            Arc::clone(&self.shared),
            shards,
            layout.clone(),
            Issue::External(done_tx),
            recording,
        );
        let started = Instant::now();
        let cluster = InprocCluster::start(&ids, config, factory).map_err(net)?;
        let mut graph_held = Vec::new();
        let driven = owners(&cluster, &layout, servers).and_then(|owner| {
            let nodes = servers + layout.len() as u16;
            let sample = || graph_held.push(largest_graph(&cluster, servers));
            drive(
                owner,
                opts.drain,
                done_rx,
                meter,
                || fatal(&cluster, nodes),
                sample,
            )
        });
        let stopped = cluster.stop().map_err(net)?;
        let elapsed = started.elapsed();
        let mut counters = Counters::default();
        let mut fatal = driven.err();
        let mut back = Vec::new();
        for (id, node) in stopped.nodes {
            match node {
                RococoNode::Server(s) => {
                    counters.merge(&s.counters());
                    if let Some(f) = s.fatal() {
                        fatal.get_or_insert_with(|| Error::Internal(f.to_string()));
                    }
                    back.push((id.0, s.into_shard()));
                }
                RococoNode::Client(c) => {
                    counters.merge(c.counters());
                    if let Some(f) = c.fatal() {
                        fatal.get_or_insert_with(|| client_error(f));
                    }
                }
            }
        }
        self.restore_shards(back);
        match fatal {
            Some(e) => Err(e),
            None => Ok(RunReport {
                counters,
                net: stopped.metrics,
                elapsed,
                graph_held,
            }),
        }
    }

    /// Runs `clients_per_server` closed-loop clients per server on one client thread until
    /// `limit`, and returns what happened ([`RunStats`]).
    pub fn run(&self, limit: RunLimit, clients_per_server: u32) -> Result<RunStats, Error> {
        let opts = RunOptions {
            clients_per_server,
            ..RunOptions::default()
        };
        self.run_recorded(limit, &opts, Arc::new(NoRecording))
    }

    /// Runs as laid out by `opts` until `limit`, recording into `recording`, and returns what
    /// happened ([`RunStats`]).
    pub fn run_recorded<R: Recording>(
        &self,
        limit: RunLimit,
        opts: &RunOptions,
        recording: Arc<R>,
    ) -> Result<RunStats, Error> {
        let meter = Tally::new(limit)?;
        let report = self.run_metered(opts, recording, &meter)?;
        Ok(meter.stats(report))
    }
}

/// A client's error as the run's error: a misuse keeps its kind.
pub(crate) fn client_error(f: &str) -> Error {
    if f.contains("misuse: ") {
        Error::Misuse(Box::leak(f.to_string().into_boxed_str()))
    } else {
        Error::Internal(f.to_string())
    }
}

pub(crate) fn net(e: txlab_net::NetError) -> Error {
    Error::Internal(format!("transport: {e}"))
}

/// Per client slot (in slot order), its client node and a transport sending as that node.
type Owners<P> = Vec<(NodeId, Transport<Msg<P>>)>;

/// The owners of the slots of an `inproc` cluster laid out as `layout`.
fn owners<W: PiecedWorkload, R: Recording>(
    cluster: &InprocCluster<RococoNode<W, R>>,
    layout: &[Vec<u32>],
    servers: u16,
) -> Result<Owners<W::Program>, Error> {
    let mut owner = Vec::new();
    for (n, slots) in layout.iter().enumerate() {
        let node = NodeId(servers + n as u16);
        let t = cluster.transport(node).map_err(net)?;
        for &slot in slots {
            owner.push((slot, node, t.clone()));
        }
    }
    owner.sort_by_key(|o| o.0);
    Ok(owner.into_iter().map(|(_, n, t)| (n, t)).collect())
}

/// How often a run samples the servers' graphs ([`RunReport::graph_held`]).
pub const SAMPLE_PERIOD: Duration = Duration::from_secs(1);

/// Issues through `meter` and collects completions until every issued transaction finished
/// (module docs of `txlab_core::protocol::meter`); `fatal` reports a node's fatal error;
/// `sample` runs at the start and then about every [`SAMPLE_PERIOD`].
pub(crate) fn drive<P, M: Meter>(
    owner: Owners<P>,
    drain: Duration,
    done: mpsc::Receiver<Completion>,
    meter: &M,
    fatal: impl Fn() -> Option<Error>,
    mut sample: impl FnMut(),
) -> Result<(), Error>
where
    Msg<P>: txlab_net::Message,
{
    let mut next_sample = Instant::now();
    let mut probe = meter.probe(0);
    let mut tickets: Vec<Option<Ticket>> = vec![None; owner.len()];
    let mut issuing = true;
    let issue = |probe: &mut M::Probe<'_>,
                 slot: u32,
                 tickets: &mut Vec<Option<Ticket>>|
     -> Result<bool, Error> {
        let Some(ticket) = probe.issue() else {
            return Ok(false);
        };
        let (node, t) = &owner[slot as usize];
        t.send(*node, Msg::Issue { slot }).map_err(net)?;
        tickets[slot as usize] = Some(ticket);
        Ok(true)
    };
    for slot in 0..owner.len() as u32 {
        if !issue(&mut probe, slot, &mut tickets)? {
            issuing = false;
            break;
        }
    }
    let mut stopped_issuing = (!issuing).then(Instant::now);
    while tickets.iter().any(Option::is_some) {
        if Instant::now() >= next_sample {
            sample();
            next_sample += SAMPLE_PERIOD;
        }
        match done.recv_timeout(Duration::from_millis(200)) {
            Ok(c) => {
                let Some(ticket) = tickets.get_mut(c.slot as usize).and_then(Option::take) else {
                    continue;
                };
                report(&mut probe, &ticket, &c);
                if issuing && !issue(&mut probe, c.slot, &mut tickets)? {
                    issuing = false;
                    stopped_issuing = Some(Instant::now());
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Some(f) = fatal() {
                    return Err(f);
                }
                if stopped_issuing.is_some_and(|t| t.elapsed() > drain) {
                    let left = tickets.iter().filter(|t| t.is_some()).count();
                    return Err(Error::Internal(format!(
                        "{left} transactions did not finish within the drain of {drain:?}"
                    )));
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::Internal("every client node stopped".into()));
            }
        }
    }
    Ok(())
}

/// The most vertices any server's dependency graph holds now.
fn largest_graph<W: PiecedWorkload, R: Recording>(
    cluster: &InprocCluster<RococoNode<W, R>>,
    servers: u16,
) -> u64 {
    (0..servers)
        .filter_map(|s| {
            cluster
                .inspect(NodeId(s), |n: &mut RococoNode<W, R>| {
                    n.server().map(Server::graph_len)
                })
                .ok()
                .flatten()
        })
        .max()
        .unwrap_or(0) as u64
}

/// The first fatal error a node recorded.
fn fatal<W: PiecedWorkload, R: Recording>(
    cluster: &InprocCluster<RococoNode<W, R>>,
    nodes: u16,
) -> Option<Error> {
    (0..nodes).find_map(|n| {
        let f = cluster
            .inspect(NodeId(n), |node: &mut RococoNode<W, R>| match node {
                RococoNode::Server(s) => s.fatal().map(str::to_string),
                RococoNode::Client(c) => c.fatal().map(str::to_string),
            })
            .ok()
            .flatten()?;
        Some(client_error(&f))
    })
}

fn report<P: Probe>(probe: &mut P, ticket: &Ticket, c: &Completion) {
    for cause in &c.aborts {
        probe.conflict(ticket, cause);
    }
    match c.finish {
        Finish::Committed => probe.committed(ticket, c.kind),
        Finish::UserAborted => probe.user_aborted(ticket),
        Finish::Abandoned => {
            probe.count("ro_abandoned", 1);
            probe.user_aborted(ticket);
        }
    }
}

/// Builds node `id`: servers take their shard (a second build of a server, after a crash,
/// gets an empty one: server recovery is out of scope), client nodes their slots.
pub fn node_factory<W: PiecedWorkload, R: Recording>(
    shared: Arc<Shared<W>>,
    shards: Vec<Shard>,
    clients: Vec<Vec<u32>>,
    issue: Issue,
    recording: Arc<R>,
) -> impl FnMut(NodeId) -> RococoNode<W, R> + Send + 'static {
    let servers = shared.servers();
    let mut shards: Vec<Option<Shard>> = shards.into_iter().map(Some).collect();
    move |id: NodeId| {
        if id.0 < servers {
            let shard = shards[usize::from(id.0)].take().unwrap_or_else(|| {
                let schema = shared.workload.schema();
                Shard::new(&schema, shared.layouts.clone()).expect("the schema built once")
            });
            RococoNode::Server(Box::new(Server::new(Arc::clone(&shared), id.0, shard)))
        } else {
            let slots = &clients[usize::from(id.0 - servers)];
            RococoNode::Client(Box::new(Client::new(
                Arc::clone(&shared),
                Arc::clone(&recording),
                slots,
                issue.clone(),
            )))
        }
    }
}

/// Merges shards into one serial engine (see [`RococoCluster::snapshot`]).
pub fn merge_shards<'a, W: PiecedWorkload>(
    shared: &Shared<W>,
    schema: &Schema,
    shards: impl IntoIterator<Item = (u16, &'a Shard)>,
) -> Result<SerialEngine, Error> {
    let engine = SerialEngine::new(schema.clone());
    for (s, shard) in shards {
        for t in 0..schema.len() {
            let table = TableId(t as u16);
            for (key, value) in shard.rows(table)? {
                if shared.routing.reports(s, table, key) {
                    engine.insert_raw(table, key, &value)?;
                }
            }
        }
    }
    Ok(engine)
}

impl<W: PiecedWorkload> Engine for RococoCluster<W> {
    type Worker<'e> = NoWorker;

    fn name(&self) -> &'static str {
        self.shared.protocol.name()
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn worker(&self) -> Result<NoWorker, Error> {
        Err(Error::Misuse(
            "ROCOCO runs pieces through its coordinators: a cluster has no interactive workers",
        ))
    }

    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        let holders = self.shared.routing.holders(table, key)?;
        let guard = self.lock();
        for s in holders {
            if self.load_only.is_some_and(|only| only != s) {
                continue;
            }
            let shard = guard[usize::from(s)].as_ref().ok_or(Error::Misuse(
                "the cluster's shards are in use by a running cluster",
            ))?;
            shard.load(table, key, value)?;
        }
        Ok(())
    }
}

/// The worker type of [`RococoCluster`], which has none ([`Engine::worker`] is a misuse).
#[derive(Debug)]
pub enum NoWorker {}

/// The transaction type of [`NoWorker`].
#[derive(Debug)]
pub enum NoTxn {}

impl Worker for NoWorker {
    type Txn<'w> = NoTxn;

    fn begin(&mut self) -> NoTxn {
        match *self {}
    }

    fn id(&self) -> u32 {
        match *self {}
    }
}

impl TxOps for NoTxn {
    fn read(&mut self, _: TableId, _: u64) -> TxResult<Option<&[u8]>> {
        match *self {}
    }
    fn write(&mut self, _: TableId, _: u64, _: &[u8]) -> TxResult<()> {
        match *self {}
    }
    fn update(&mut self, _: TableId, _: u64, _: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        match *self {}
    }
    fn insert(&mut self, _: TableId, _: u64, _: &[u8]) -> TxResult<bool> {
        match *self {}
    }
    fn delete(&mut self, _: TableId, _: u64) -> TxResult<bool> {
        match *self {}
    }
    fn scan(
        &mut self,
        _: TableId,
        _: u64,
        _: u64,
        _: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        match *self {}
    }
}

impl Transaction for NoTxn {
    fn commit(self) -> TxResult<CommitInfo> {
        match self {}
    }
    fn abort(self) {
        match self {}
    }
}

/// What a stand-alone [`RococoCluster::run`] counted.
#[derive(Debug, Clone)]
pub struct RunStats {
    /// Committed transactions.
    pub committed: u64,
    /// Transactions their program rolled back (or read-only ones abandoned).
    pub user_aborts: u64,
    /// Aborted attempts (baselines).
    pub aborts: u64,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// Latency percentiles of committed transactions, in microseconds: p50, p90, p99.
    pub latency_us: [u64; 3],
    /// The nodes' counters.
    pub counters: Counters,
}

impl RunStats {
    /// Commits per attempt (the paper's Figure 14c).
    pub fn commit_rate(&self) -> f64 {
        self.committed as f64 / (self.committed + self.aborts).max(1) as f64
    }
}

/// The stand-alone meter of [`RococoCluster::run`]: every transaction issued before the limit
/// counts; latencies are kept to compute percentiles.
#[derive(Debug)]
struct Tally {
    limit: RunLimit,
    started: Instant,
    state: Mutex<(u64, u64, u64, u64, Vec<u64>)>,
}

impl Tally {
    fn new(limit: RunLimit) -> Result<Self, Error> {
        Ok(Self {
            limit: limit.validate()?,
            started: Instant::now(),
            state: Mutex::new((0, 0, 0, 0, Vec::new())),
        })
    }

    fn stats(&self, report: RunReport) -> RunStats {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut lat = s.4.clone();
        lat.sort_unstable();
        let at = |q: f64| {
            lat.get(((lat.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(0)
        };
        RunStats {
            committed: s.1,
            user_aborts: s.2,
            aborts: s.3,
            elapsed: report.elapsed,
            latency_us: [at(0.5), at(0.9), at(0.99)],
            counters: report.counters,
        }
    }
}

/// [`Tally`]'s probe.
#[derive(Debug)]
struct TallyProbe<'m>(&'m Tally);

impl Meter for Tally {
    type Probe<'m> = TallyProbe<'m>;

    fn probe(&self, _thread: usize) -> TallyProbe<'_> {
        TallyProbe(self)
    }
}

impl Probe for TallyProbe<'_> {
    fn issue(&mut self) -> Option<Ticket> {
        let mut s = self.0.state.lock().unwrap_or_else(|p| p.into_inner());
        let go = match self.0.limit {
            RunLimit::Transactions(n) => s.0 < n,
            RunLimit::Duration(d) => self.0.started.elapsed() < d,
        };
        s.0 += u64::from(go);
        go.then(|| Ticket::new(Instant::now(), true))
    }

    fn committed(&mut self, ticket: &Ticket, _kind: &'static str) {
        let mut s = self.0.state.lock().unwrap_or_else(|p| p.into_inner());
        s.1 += 1;
        s.4.push(ticket.issued().elapsed().as_micros() as u64);
    }

    fn user_aborted(&mut self, _ticket: &Ticket) {
        self.0.state.lock().unwrap_or_else(|p| p.into_inner()).2 += 1;
    }

    fn conflict(&mut self, _ticket: &Ticket, _cause: &ConflictCause) {
        self.0.state.lock().unwrap_or_else(|p| p.into_inner()).3 += 1;
    }

    fn retried(&mut self, _ticket: &Ticket, attempts: u64) {
        self.0.state.lock().unwrap_or_else(|p| p.into_inner()).3 += attempts;
    }

    fn count(&mut self, _name: &'static str, _n: u64) {}
}
