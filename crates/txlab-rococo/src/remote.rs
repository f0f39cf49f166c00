//! Multi-process runs (feature `tcp`): one cluster node per process over `txlab-net`'s `tcp`
//! driver, as `txlab cluster --local N -- run --protocol rococo ...` starts them.
//!
//! **Roles.** The cluster file's nodes have the ids `0..N`: nodes `0..N-1` are the servers
//! (server `s` is node `s`, as in every other driver), node `N-1` is the one client node, whose
//! process runs the closed-loop clients and measures. `N` is at least 2.
//!
//! **A server process** loads its own shard only ([`RococoCluster::loading_only`]) and serves
//! until the client process releases it ([`RococoCluster::serve`]).
//!
//! **The client process** starts its client node and first waits until every server is ready
//! (`Msg::AwaitReady` / `Msg::Ready`): a server process starts its node only after loading its
//! shard, and answers once its link to every node is up. Only then does it tell the caller
//! (`on_ready` of [`RococoCluster::run_client`]: the harness starts the warm-up there), so a
//! run's warm-up and measured interval never include loading or connecting. A server that is not
//! ready within [`Remote::timeout`] fails the run with an error naming it and the timeout.
//! Then it drives its client node through the node's `Transport` with the same
//! issuing loop as an `inproc` run, so the meter sees the same events. When every transaction
//! has ended it asks each server for the rows it reports (`Dump`/`Rows`, chunked) if the run is
//! checked, loads them into its own empty shards (so [`RococoCluster::snapshot`] merges them as
//! after an `inproc` run), and releases every server ([`RococoCluster::run_client`]). The
//! client's coordinators record the whole history, so the history and one-order checks need
//! nothing from the servers.
//!
//! This is a driver module: it starts threads and reads the wall clock.
#![allow(clippy::disallowed_methods)]

use crate::client::{Client, Completion, Issue};
use crate::cluster::{RococoCluster, RunOptions, RunReport, client_error, drive, net};
use crate::config::Recording;
use crate::counters::Counters;
use crate::msg::Msg;
use crate::node::RococoNode;
use crate::server::Server;
use crate::workload::PiecedWorkload;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use txlab_core::Error;
use txlab_core::protocol::meter::Meter;
use txlab_net::NodeId;
use txlab_net::cluster::ClusterFile;
use txlab_net::metrics::NetMetrics;
use txlab_net::tcp::TcpNode;

/// How long the client process waits for one answer at the end of a run before asking again.
const ASK_EVERY: Duration = Duration::from_millis(500);
/// How many times it asks.
const ASKS: u32 = 40;
/// How much longer than [`Remote::timeout`] a server process serves before stopping on its own.
/// The client process gives up on readiness after [`Remote::timeout`]; a server outlasting it
/// leaves the report of a server that never came up to the client, which names that server,
/// instead of to a ready server timing out on its link to it. It stays below the launcher's own
/// margin (`txlab cluster` stops every process after `--timeout-s` + 10 s).
const SERVER_OUTLASTS: Duration = Duration::from_secs(5);

/// This process's node of a cluster file (module docs).
#[derive(Debug, Clone)]
pub struct Remote {
    /// The cluster file.
    pub cluster: ClusterFile,
    /// This process's node.
    pub id: NodeId,
    /// The build's git revision (checked by the handshake).
    pub git_revision: String,
    /// The client process waits at most this long for every server to be ready; a server stops
    /// after this long (and a margin, `SERVER_OUTLASTS`) even if it was never released.
    pub timeout: Duration,
}

impl Remote {
    /// The number of servers: the cluster's nodes less the client node. An error if the ids
    /// are not `0..N` with `N >= 2`.
    pub fn servers(&self) -> Result<u16, Error> {
        let mut ids: Vec<u16> = self.cluster.nodes.iter().map(|n| n.id.0).collect();
        ids.sort_unstable();
        let n = ids.len();
        if n < 2 || ids.iter().enumerate().any(|(i, &id)| usize::from(id) != i) {
            return Err(Error::invalid(
                "cluster nodes",
                format!("{ids:?}"),
                "ids 0..N with N >= 2 (nodes 0..N-1 are the servers, node N-1 the client)",
            ));
        }
        Ok(n as u16 - 1)
    }

    /// Whether this process runs the client node.
    pub fn is_client(&self) -> Result<bool, Error> {
        Ok(self.id.0 == self.servers()?)
    }
}

/// What a server process returns.
#[derive(Debug, Clone)]
pub struct Served {
    /// The server's counters.
    pub counters: Counters,
    /// Its transport's counters.
    pub net: NetMetrics,
}

impl<W: PiecedWorkload> RococoCluster<W> {
    /// Serves this process's server (`remote.id`, its shard loaded) until the client process
    /// releases it. `R` must be the recording type of the client (servers capture what they
    /// read and write only when recording is enabled).
    pub fn serve<R: Recording>(&self, remote: &Remote) -> Result<Served, Error> {
        let me = remote.id.0;
        if remote.is_client()? {
            return Err(Error::Misuse("serve: this process runs the client node"));
        }
        let shard = self
            .take_shards()?
            .into_iter()
            .nth(usize::from(me))
            .ok_or(Error::Misuse("serve: no shard for this server"))?;
        let server: Server<W, R> = Server::new(Arc::clone(self.shared()), me, shard);
        let (node, metrics) = txlab_net::cluster::run_node(
            &remote.cluster,
            remote.id,
            &remote.git_revision,
            RococoNode::Server(Box::new(server)),
            |n: &RococoNode<W, R>| n.server().is_some_and(Server::released),
            remote.timeout + SERVER_OUTLASTS,
        )
        .map_err(net)?;
        let RococoNode::Server(server) = node else {
            unreachable!("a server node stays a server");
        };
        if let Some(f) = server.fatal() {
            return Err(Error::Internal(f.to_string()));
        }
        let counters = server.counters();
        self.restore_shards([(me, server.into_shard())]);
        Ok(Served {
            counters,
            net: metrics,
        })
    }

    /// Runs this process's client node (module docs): waits until every server is ready, calls
    /// `on_ready`, and runs until `meter` stops issuing and every transaction has ended; with
    /// `collect`, loads every server's rows into this cluster's (empty) shards; then releases
    /// the servers. Reports the client node's counters. Nothing is issued (and `on_ready` is
    /// not called) before every server is ready; a server not ready within
    /// [`Remote::timeout`] is an error naming it.
    pub fn run_client<R: Recording, M: Meter>(
        &self,
        remote: &Remote,
        opts: &RunOptions,
        recording: Arc<R>,
        meter: &M,
        collect: bool,
        on_ready: impl FnOnce(),
    ) -> Result<RunReport, Error> {
        if !remote.is_client()? {
            return Err(Error::Misuse("run_client: this process runs a server"));
        }
        let servers = remote.servers()?;
        let slots = self
            .layout(opts.clients_per_server, 1)?
            .pop()
            .expect("one client node");
        let (done_tx, done_rx) = mpsc::channel::<Completion>();
        let client = Client::new(
            Arc::clone(self.shared()),
            recording,
            &slots,
            Issue::External(done_tx),
        );
        let started = Instant::now();
        let node = txlab_net::cluster::start_node(
            &remote.cluster,
            remote.id,
            &remote.git_revision,
            RococoNode::<W, R>::Client(Box::new(client)),
        )
        .map_err(net)?;
        let t = node.transport();
        let owner = slots.iter().map(|_| (remote.id, t.clone())).collect();
        let fatal = || {
            node.inspect(|n: &mut RococoNode<W, R>| {
                n.client().and_then(|c| c.fatal().map(str::to_string))
            })
            .ok()
            .flatten()
            .map(|f| client_error(&f))
        };
        let ready = await_ready(&node, remote);
        let all_ready = ready.is_ok();
        let mut result = ready.map(|()| on_ready());
        if result.is_ok() {
            result = drive(owner, opts.drain, done_rx, meter, fatal, || {});
        }
        if result.is_ok() && collect {
            result = (0..servers).try_for_each(|s| self.collect(&node, s));
        }
        // After a failed start only the servers this node reaches can be released; the others
        // stop at their own timeout (or with the launcher).
        let reached = node
            .inspect(move |n: &mut RococoNode<W, R>| {
                let c = n.client().expect("the client node");
                (0..servers)
                    .filter(|&s| all_ready || c.link_up(s))
                    .collect::<Vec<_>>()
            })
            .map_err(net);
        let released = reached.and_then(|r| r.into_iter().try_for_each(|s| release(&node, s)));
        let stopped = node.stop().map_err(net)?;
        let elapsed = started.elapsed();
        result?;
        released?;
        let RococoNode::Client(client) = stopped.node else {
            unreachable!("a client node stays a client");
        };
        if let Some(f) = client.fatal() {
            return Err(client_error(f));
        }
        Ok(RunReport {
            counters: client.counters().clone(),
            net: stopped.metrics,
            elapsed,
            graph_held: Vec::new(),
        })
    }

    /// Fetches server `s`'s rows chunk by chunk and loads them into shard `s`.
    fn collect<R: Recording>(&self, node: &TcpNode<RococoNode<W, R>>, s: u16) -> Result<(), Error> {
        let mut chunk = 0;
        loop {
            ask(
                node,
                s,
                || Msg::Dump { chunk },
                move |c| c.has_rows(s, chunk).is_some(),
            )
            .map_err(|e| Error::Internal(format!("rows of server {s}, chunk {chunk}: {e}")))?;
            let chunks = chunks_of(node, s, chunk)?;
            chunk += 1;
            if chunk >= chunks {
                break;
            }
        }
        let rows = node
            .inspect(move |n: &mut RococoNode<W, R>| match n {
                RococoNode::Client(c) => c.take_rows(s),
                RococoNode::Server(_) => Vec::new(),
            })
            .map_err(net)?;
        self.load_rows(s, rows)
    }
}

/// The chunk count server `s` announced with chunk `chunk`.
fn chunks_of<W: PiecedWorkload, R: Recording>(
    node: &TcpNode<RococoNode<W, R>>,
    s: u16,
    chunk: u32,
) -> Result<u32, Error> {
    node.inspect(move |n: &mut RococoNode<W, R>| n.client().and_then(|c| c.has_rows(s, chunk)))
        .map_err(net)?
        .ok_or_else(|| Error::Internal(format!("server {s} sent no chunk {chunk}")))
}

/// Waits until every server answered `AwaitReady` (module docs), asking again every
/// [`ASK_EVERY`] (a request sent while a link is down waits in it; one lost with a broken
/// connection is sent again), for at most `remote.timeout`.
fn await_ready<W: PiecedWorkload, R: Recording>(
    node: &TcpNode<RococoNode<W, R>>,
    remote: &Remote,
) -> Result<(), Error> {
    let servers = remote.servers()?;
    let t = node.transport();
    let deadline = Instant::now() + remote.timeout;
    let pending = |node: &TcpNode<RococoNode<W, R>>| {
        node.inspect(move |n: &mut RococoNode<W, R>| {
            let c = n.client().expect("the client node");
            (0..servers)
                .filter(|&s| !c.ready_from(s))
                .map(|s| (s, c.link_up(s)))
                .collect::<Vec<_>>()
        })
        .map_err(net)
    };
    loop {
        let waiting = pending(node)?;
        if waiting.is_empty() {
            return Ok(());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(not_ready(remote, &waiting));
        }
        for &(s, _) in &waiting {
            t.send(NodeId(s), Msg::AwaitReady).map_err(net)?;
        }
        let all = move |n: &RococoNode<W, R>| {
            n.client()
                .is_some_and(|c| (0..servers).all(|s| c.ready_from(s)))
        };
        match node.wait_until(left.min(ASK_EVERY), all) {
            Ok(()) | Err(txlab_net::NetError::Timeout(..)) => {}
            Err(e) => return Err(net(e)),
        }
    }
}

/// The error for servers not ready in time: each with its address and whether the client's
/// link to it is up (down: its process is still loading its shard, or unreachable; up: one of
/// its own links is not).
fn not_ready(remote: &Remote, waiting: &[(u16, bool)]) -> Error {
    let each: Vec<String> = waiting
        .iter()
        .map(|&(s, up)| {
            let addr = remote
                .cluster
                .node(NodeId(s))
                .map_or_else(|_| "?".to_string(), |n| n.address.clone());
            let why = if up {
                "connected, but not all of its links to the other nodes are up"
            } else {
                "not connected (still loading its shard, or unreachable)"
            };
            format!("server {s} at {addr}: {why}")
        })
        .collect();
    Error::Internal(format!(
        "servers not ready within {:?} (--timeout-s), so the run did not start: {}",
        remote.timeout,
        each.join("; ")
    ))
}

/// Releases server `s` (its process exits).
fn release<W: PiecedWorkload, R: Recording>(
    node: &TcpNode<RococoNode<W, R>>,
    s: u16,
) -> Result<(), Error> {
    ask(node, s, || Msg::Release, move |c| c.released_by(s))
        .map_err(|e| Error::Internal(format!("release server {s}: {e}")))
}

/// Sends `msg()` to server `s` as the client node until `answered` holds on the client node
/// (every [`ASK_EVERY`], [`ASKS`] times).
fn ask<W: PiecedWorkload, R: Recording>(
    node: &TcpNode<RococoNode<W, R>>,
    s: u16,
    msg: impl Fn() -> Msg<W::Program>,
    answered: impl Fn(&Client<W, R>) -> bool + Send + Clone + 'static,
) -> Result<(), String> {
    let t = node.transport();
    for _ in 0..ASKS {
        t.send(NodeId(s), msg()).map_err(|e| e.to_string())?;
        let answered = answered.clone();
        match node.wait_until(ASK_EVERY, move |n| n.client().is_some_and(&answered)) {
            Ok(()) => return Ok(()),
            Err(txlab_net::NetError::Timeout(..)) => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!(
        "no answer after {ASKS} requests, {ASK_EVERY:?} apart"
    ))
}
