//! The `tcp` driver (feature `tcp`): one node per [`TcpNode`], talking to its peers through
//! tarpc over tokio TCP.
//!
//! - One tarpc service, [`service::Peer`]: `hello` (the handshake: protocol, wire version, git
//!   revision, cluster digest; any mismatch refused with both values named, and fatal for the
//!   run), then `deliver(from, frames)` batches of encoded messages.
//! - The node's handlers run on their own thread, fed by a channel, so a CPU-bound node never
//!   stalls the I/O runtime (a current-thread tokio runtime on a second thread).
//! - Per-destination batching: a handler's sends to one peer leave as one chunk when it returns,
//!   and the link coalesces queued chunks into one `deliver` call up to `max_batch_bytes`
//!   (`batching: false` sends one message per call). Up to `window` calls are in flight per link.
//! - Reconnect with capped exponential backoff; `on_peer(p, false/true)` around it; what was in
//!   flight on the broken connection is lost (at most once).
//! - The frame limit is enforced on both sides: a send over it is refused (`Ctx::send` or
//!   [`Transport::send`] returns [`NetError::FrameTooLarge`]), and the receiver refuses frames
//!   (and tarpc messages) over its own limit, counting them.
//! - tarpc deadlines are set a year out: protocol timeouts are the node's own timers.

pub(crate) mod core;
pub(crate) mod io;
pub mod service;

use std::net::SocketAddr;
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::unbounded_channel;

use self::core::NodeCore;
use self::io::{Inbound, Inbox, IoStats, LinkConfig, Net};
pub use self::service::{HandshakeError, Hello};
use crate::durable::Durable;
use crate::error::NetError;
use crate::host::{Control, Host, run_on_node, sorted_ids};
use crate::metrics::NetMetrics;
use crate::node::{Node, NodeId};
use crate::transport::{Route, Transport};
use crate::wire::{DEFAULT_MAX_FRAME, Frame, WIRE_VERSION};

/// What every node of one cluster must agree on (checked by the handshake).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The protocol the cluster runs.
    pub protocol: String,
    /// The git revision of the build.
    pub git_revision: String,
    /// A digest of the cluster file.
    pub cluster_digest: String,
}

/// Settings of one `tcp` node.
#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// This node.
    pub me: NodeId,
    /// Every node of the cluster (this one included) and its `host:port`.
    pub peers: Vec<(NodeId, String)>,
    /// The handshake's fields.
    pub identity: Identity,
    /// Seeds the node's RNG.
    pub seed: u64,
    /// Frame limit, both directions.
    pub max_frame: usize,
    /// Coalesce queued messages into one `deliver` call.
    pub batching: bool,
    /// Batch size limit in bytes.
    pub max_batch_bytes: usize,
    /// `deliver` calls in flight per link.
    pub window: usize,
    /// First reconnect delay.
    pub backoff_min: Duration,
    /// Reconnect delay cap.
    pub backoff_max: Duration,
    /// Bytes held per link while it is down; beyond them messages are dropped (counted).
    pub max_queued_bytes: usize,
    /// A connect, handshake or `deliver` call unanswered this long breaks the link (reconnect).
    pub call_timeout: Duration,
}

impl TcpConfig {
    /// Defaults for node `me` of `peers`.
    pub fn new(me: NodeId, peers: Vec<(NodeId, String)>, identity: Identity) -> Self {
        Self {
            me,
            peers,
            identity,
            seed: 0,
            max_frame: DEFAULT_MAX_FRAME,
            batching: true,
            max_batch_bytes: 256 << 10,
            window: 64,
            backoff_min: Duration::from_millis(5),
            backoff_max: Duration::from_millis(500),
            max_queued_bytes: 64 << 20,
            call_timeout: Duration::from_secs(30),
        }
    }

    pub(crate) fn link_config(&self, members: Arc<[NodeId]>) -> Result<LinkConfig, NetError> {
        if self.window == 0 || self.max_batch_bytes == 0 || self.max_frame == 0 {
            return Err(NetError::Config(format!(
                "window {}, max_batch_bytes {} and max_frame {}: accepted: each at least 1",
                self.window, self.max_batch_bytes, self.max_frame
            )));
        }
        if self.call_timeout.is_zero() {
            return Err(NetError::Config(
                "call_timeout 0: accepted: a positive duration".into(),
            ));
        }
        if self.backoff_min.is_zero() || self.backoff_max < self.backoff_min {
            return Err(NetError::Config(format!(
                "reconnect backoff {:?}..{:?}: accepted: 0 < min <= max",
                self.backoff_min, self.backoff_max
            )));
        }
        Ok(LinkConfig {
            hello: Hello {
                node: self.me,
                protocol: self.identity.protocol.clone(),
                wire_version: WIRE_VERSION,
                git_revision: self.identity.git_revision.clone(),
                cluster_digest: self.identity.cluster_digest.clone(),
            },
            max_frame: self.max_frame,
            batching: self.batching,
            max_batch_bytes: self.max_batch_bytes,
            backoff_min: self.backoff_min,
            backoff_max: self.backoff_max,
            max_queued_bytes: self.max_queued_bytes,
            window: self.window,
            call_timeout: self.call_timeout,
            members,
        })
    }

    /// The sorted member ids, checked: distinct, 1..=1024, `me` among them.
    pub(crate) fn members(&self) -> Result<Arc<[NodeId]>, NetError> {
        let ids: Vec<NodeId> = self.peers.iter().map(|p| p.0).collect();
        let members = sorted_ids(&ids)?;
        if members.binary_search(&self.me).is_err() {
            return Err(NetError::unknown_node(self.me, &members));
        }
        Ok(members)
    }
}

struct Tokio;

impl Net for Tokio {
    type Stream = tokio::net::TcpStream;
    type Listener = tokio::net::TcpListener;

    async fn connect(addr: String) -> std::io::Result<Self::Stream> {
        let s = tokio::net::TcpStream::connect(addr).await?;
        s.set_nodelay(true)?;
        Ok(s)
    }

    async fn accept(l: &Self::Listener) -> std::io::Result<Self::Stream> {
        let (s, _) = l.accept().await?;
        s.set_nodelay(true)?;
        Ok(s)
    }
}

/// A predicate and the channel told when it first holds.
type Watch<N> = (Box<dyn Fn(&N) -> bool + Send>, mpsc::Sender<()>);

enum Cmd<N: Node> {
    In(Inbound),
    Control(Control<N>),
    Watch(Watch<N>),
    Stop,
}

struct ThreadInbox<N: Node>(mpsc::Sender<Cmd<N>>);

impl<N: Node> Clone for ThreadInbox<N> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<N: Node> Inbox for ThreadInbox<N> {
    fn push(&self, ev: Inbound) {
        let _ = self.0.send(Cmd::In(ev));
    }
}

struct TcpRoute<N: Node> {
    me: NodeId,
    members: Arc<[NodeId]>,
    links: Vec<Option<tokio::sync::mpsc::UnboundedSender<Vec<Frame>>>>,
    inbox: ThreadInbox<N>,
    max_frame: usize,
}

impl<N: Node> Route<N::Msg> for TcpRoute<N> {
    fn route(&self, from: NodeId, to: NodeId, msg: N::Msg) -> Result<(), NetError> {
        let i = self
            .members
            .binary_search(&to)
            .map_err(|_| NetError::unknown_node(to, &self.members))?;
        let frame = Frame(crate::wire::encode(&msg, self.max_frame)?);
        let stopped = || NetError::Stopped(format!("tcp node {} has stopped", self.me));
        match &self.links[i] {
            None => self
                .inbox
                .0
                .send(Cmd::In(Inbound::Frames(from, vec![frame])))
                .map_err(|_| stopped()),
            Some(tx) => tx.send(vec![frame]).map_err(|_| stopped()),
        }
    }
}

/// A running `tcp` node.
pub struct TcpNode<N: Node> {
    me: NodeId,
    local_addr: SocketAddr,
    cmd: mpsc::Sender<Cmd<N>>,
    node_thread: Option<thread::JoinHandle<NodeCore<N>>>,
    io_thread: Option<thread::JoinHandle<()>>,
    io_stop: Option<tokio::sync::oneshot::Sender<()>>,
    stats: Arc<IoStats>,
    route: Arc<TcpRoute<N>>,
    fatal: Arc<std::sync::Mutex<Option<String>>>,
}

impl<N: Node> std::fmt::Debug for TcpNode<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpNode")
            .field("me", &self.me)
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

/// What [`TcpNode::stop`] returns.
#[derive(Debug)]
pub struct TcpStopped<N> {
    /// The node.
    pub node: N,
    /// Its counters (links from this node, its handler time, malformed input, round trips).
    pub metrics: NetMetrics,
    /// The fatal error that stopped its links, if any (a refused handshake).
    pub fatal: Option<NetError>,
}

impl<N: Node> TcpNode<N> {
    /// Binds this node's address from `config.peers` and starts it.
    pub fn start(config: TcpConfig, node: N) -> Result<Self, NetError> {
        let addr = config
            .peers
            .iter()
            .find(|p| p.0 == config.me)
            .map(|p| p.1.clone())
            .ok_or_else(|| NetError::unknown_node(config.me, &[]))?;
        let listener = std::net::TcpListener::bind(&addr)
            .map_err(|e| NetError::io(format!("bind {addr} for node {}", config.me), e))?;
        Self::start_on(config, listener, node)
    }

    /// Starts on an already bound listener (tests bind port 0 first, then learn the ports).
    pub fn start_on(
        config: TcpConfig,
        listener: std::net::TcpListener,
        node: N,
    ) -> Result<Self, NetError> {
        let members = config.members()?;
        let link_config = config.link_config(Arc::clone(&members))?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| NetError::io("listener address", e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| NetError::io("set listener non-blocking", e))?;
        let (cmd_tx, cmd_rx) = mpsc::channel::<Cmd<N>>();
        let inbox = ThreadInbox(cmd_tx.clone());
        let stats = Arc::new(IoStats::default());

        let mut links = Vec::new();
        let mut link_rxs = Vec::new();
        for &(id, ref addr) in sorted_peers(&config.peers).iter() {
            if id == config.me {
                links.push(None);
            } else {
                let (tx, rx) = unbounded_channel();
                links.push(Some(tx));
                link_rxs.push((id, addr.clone(), rx));
            }
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| NetError::io("build the tokio runtime", e))?;
        let (io_stop, io_stopped) = tokio::sync::oneshot::channel::<()>();
        let io_thread = {
            let (inbox, stats, me) = (inbox.clone(), Arc::clone(&stats), config.me);
            thread::Builder::new()
                .name(format!("txlab-net-io-{}", config.me.0))
                .spawn(move || {
                    runtime.block_on(async move {
                        let listener = match tokio::net::TcpListener::from_std(listener) {
                            Ok(l) => l,
                            Err(e) => {
                                inbox.push(Inbound::Fatal(NetError::io("register listener", e)));
                                return;
                            }
                        };
                        tokio::spawn(io::serve::<Tokio, _>(
                            listener,
                            link_config.clone(),
                            inbox.clone(),
                            Arc::clone(&stats),
                        ));
                        for (to, addr, rx) in link_rxs {
                            tokio::spawn(io::link::<Tokio, _>(
                                me,
                                to,
                                addr,
                                link_config.clone(),
                                rx,
                                inbox.clone(),
                                Arc::clone(&stats),
                            ));
                        }
                        let _ = io_stopped.await;
                    });
                    runtime.shutdown_background();
                })
                .map_err(|e| NetError::io("spawn the I/O thread", e))?
        };
        let route = Arc::new(TcpRoute {
            me: config.me,
            members: Arc::clone(&members),
            links: links.clone(),
            inbox: inbox.clone(),
            max_frame: config.max_frame,
        });
        let host = Host::new(
            config.me,
            node,
            members,
            config.seed,
            0,
            Durable::new(),
            Some(config.max_frame),
        );
        let core = NodeCore::new(host, links, config.batching, config.max_frame, None);
        let fatal = Arc::default();
        let node_fatal = Arc::clone(&fatal);
        let node_thread = thread::Builder::new()
            .name(format!("txlab-net-node-{}", config.me.0))
            .spawn(move || node_loop(core, cmd_rx, node_fatal))
            .map_err(|e| NetError::io("spawn the node thread", e))?;
        Ok(Self {
            me: config.me,
            local_addr,
            cmd: cmd_tx,
            node_thread: Some(node_thread),
            io_thread: Some(io_thread),
            io_stop: Some(io_stop),
            stats,
            route,
            fatal,
        })
    }

    /// The address the node listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// A handle for sending as this node from any thread.
    pub fn transport(&self) -> Transport<N::Msg> {
        Transport::new(self.me, Arc::clone(&self.route) as Arc<dyn Route<N::Msg>>)
    }

    /// Runs `f` on the node between two handlers.
    pub fn inspect<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut N) -> R + Send + 'static,
    ) -> Result<R, NetError> {
        run_on_node(|c| self.cmd.send(Cmd::Control(c)).is_ok(), f)
            .ok_or_else(|| NetError::Stopped(format!("tcp node {} has stopped", self.me)))
    }

    /// Blocks until `pred` holds on the node (checked after each event), or `timeout`; a fatal
    /// error (a refused handshake) ends the wait early and is returned.
    pub fn wait_until(
        &self,
        timeout: Duration,
        pred: impl Fn(&N) -> bool + Send + 'static,
    ) -> Result<(), NetError> {
        let (tx, rx) = mpsc::channel();
        self.cmd
            .send(Cmd::Watch((Box::new(pred), tx)))
            .map_err(|_| NetError::Stopped(format!("tcp node {} has stopped", self.me)))?;
        match rx.recv_timeout(timeout) {
            Ok(()) => Ok(()),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(self.fatal_or_stopped()),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(NetError::Timeout(
                timeout,
                format!("waiting for tcp node {}", self.me),
            )),
        }
    }

    fn fatal_or_stopped(&self) -> NetError {
        match self.fatal.lock().unwrap().clone() {
            Some(e) => NetError::Stopped(e),
            None => NetError::Stopped(format!("tcp node {} stopped", self.me)),
        }
    }

    /// The I/O side's counters so far (links, malformed input, round trips).
    pub fn io_metrics(&self) -> NetMetrics {
        self.stats.snapshot()
    }

    /// Stops the node and its I/O, returning the node, its counters and any fatal error.
    pub fn stop(mut self) -> Result<TcpStopped<N>, NetError> {
        let _ = self.cmd.send(Cmd::Stop);
        let core = self
            .node_thread
            .take()
            .expect("joined once")
            .join()
            .map_err(|_| NetError::Stopped(format!("tcp node {} panicked", self.me)))?;
        self.shutdown_io();
        let mut metrics = self.stats.snapshot();
        let mut handler = NetMetrics::default();
        core.host.report(&mut handler);
        // Link counters come from the I/O side (what went on the wire); keep only handler time.
        metrics.nodes = handler.nodes;
        metrics.decode_errors += core.decode_errors;
        metrics.frame_too_large += core.frame_too_large;
        Ok(TcpStopped {
            node: core.host.node,
            metrics,
            fatal: core.fatal,
        })
    }

    fn shutdown_io(&mut self) {
        if let Some(s) = self.io_stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.io_thread.take() {
            let _ = t.join();
        }
    }
}

impl<N: Node> Drop for TcpNode<N> {
    fn drop(&mut self) {
        if let Some(t) = self.node_thread.take() {
            let _ = self.cmd.send(Cmd::Stop);
            let _ = t.join();
        }
        self.shutdown_io();
    }
}

fn sorted_peers(peers: &[(NodeId, String)]) -> Vec<(NodeId, String)> {
    let mut v = peers.to_vec();
    v.sort_by_key(|p| p.0);
    v
}

/// The node thread: events from the channel, timers on the wall clock since start.
fn node_loop<N: Node>(
    mut core: NodeCore<N>,
    rx: mpsc::Receiver<Cmd<N>>,
    fatal: Arc<std::sync::Mutex<Option<String>>>,
) -> NodeCore<N> {
    let start = Instant::now();
    let now = || start.elapsed();
    let mut watch: Option<Watch<N>> = None;
    core.start(now());
    loop {
        core.timers(now());
        if let Some((pred, tx)) = &watch
            && pred(&core.host.node)
        {
            let _ = tx.send(());
            watch = None;
        }
        if let Some(e) = &core.fatal {
            // A refused handshake stops the node: drop any waiter so it learns at once.
            fatal.lock().unwrap().get_or_insert_with(|| e.to_string());
            watch = None;
        }
        let cmd = match core.next_deadline() {
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            Some(at) => rx.recv_timeout(at.saturating_sub(now())),
        };
        match cmd {
            Ok(Cmd::In(ev)) => core.inbound(ev, now()),
            Ok(Cmd::Control(f)) => {
                if core.fatal.is_some() {
                    // Dropping `f` drops its reply channel: the caller sees the node stopped.
                    drop(f);
                    continue;
                }
                f(&mut core.host.node);
                core.flush(now());
            }
            Ok(Cmd::Watch(w)) => watch = Some(w),
            Ok(Cmd::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => return core,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}
