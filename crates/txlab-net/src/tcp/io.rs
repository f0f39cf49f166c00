//! The asynchronous half shared by the `tcp` and `sim` drivers: the listener serving [`Peer`],
//! and one link task per destination (connect, handshake, batch, reconnect with capped
//! exponential backoff). Generic over [`Net`], so `sim` runs this same code over turmoil's
//! streams.
//!
//! Delivery semantics (the crate's contract): frames queued for a peer while it is unreachable
//! wait (up to [`LinkConfig::max_queued_bytes`], beyond which they are dropped and counted); a
//! batch whose `deliver` call fails is lost and counted; nothing is retried.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tarpc::server::{BaseChannel, Channel};
use tarpc::tokio_serde::formats::Bincode;
use tarpc::tokio_util::codec::LengthDelimitedCodec;
use tarpc::{client, context};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc::{UnboundedReceiver, error::TryRecvError};

use super::service::{HandshakeError, Hello, Peer, PeerClient};
use crate::error::NetError;
use crate::metrics::{LinkStats, NetMetrics};
use crate::node::NodeId;
use crate::wire::Frame;

/// Connecting and accepting streams: tokio's TCP, or turmoil's simulated TCP.
pub(crate) trait Net: Send + Sync + 'static {
    type Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static;
    type Listener: Send + Sync + 'static;
    fn connect(addr: String) -> impl Future<Output = io::Result<Self::Stream>> + Send;
    fn accept(l: &Self::Listener) -> impl Future<Output = io::Result<Self::Stream>> + Send;
}

/// What the network hands the node side.
#[derive(Debug)]
pub(crate) enum Inbound {
    Frames(NodeId, Vec<Frame>),
    Peer(NodeId, bool),
    /// A refused handshake (either side): the run cannot be correct, so it stops.
    Fatal(NetError),
}

/// Where inbound events go (the `tcp` node thread's channel, or the `sim` host's).
pub(crate) trait Inbox: Clone + Send + Sync + 'static {
    fn push(&self, ev: Inbound);
}

/// Settings of every link of one node.
#[derive(Clone, Debug)]
pub(crate) struct LinkConfig {
    pub hello: Hello,
    pub max_frame: usize,
    pub batching: bool,
    pub max_batch_bytes: usize,
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    pub max_queued_bytes: usize,
    /// `deliver` calls in flight per link.
    pub window: usize,
    /// A connect, handshake or `deliver` call not answered within this is a broken link
    /// (turmoil's partitions drop segments silently; a real network can too).
    pub call_timeout: Duration,
    pub members: Arc<[NodeId]>,
}

impl LinkConfig {
    /// The tarpc message limit: a full batch plus one frame plus envelope overhead.
    fn max_rpc_bytes(&self) -> usize {
        self.max_batch_bytes
            .saturating_add(self.max_frame)
            .saturating_add(64 << 10)
    }
}

/// Counters the I/O side keeps (per destination link, plus malformed input).
#[derive(Debug, Default)]
pub(crate) struct IoStats {
    pub links: Mutex<NetMetrics>,
    rtt: Mutex<Option<hdrhistogram::Histogram<u64>>>,
}

impl IoStats {
    fn link(&self, from: NodeId, to: NodeId, f: impl FnOnce(&mut LinkStats)) {
        f(self.links.lock().unwrap().link(from, to));
    }

    fn decode_error(&self) {
        self.links.lock().unwrap().decode_errors += 1;
    }

    fn rtt(&self, d: Duration) {
        let mut h = self.rtt.lock().unwrap();
        let h = h.get_or_insert_with(|| {
            // 1 ns to 100 s at 3 significant figures; longer round trips saturate.
            hdrhistogram::Histogram::new_with_bounds(1, 100_000_000_000, 3)
                .expect("valid bounds and precision")
        });
        h.saturating_record(d.as_nanos() as u64);
    }

    /// The counters, with the round-trip percentiles.
    pub(crate) fn snapshot(&self) -> NetMetrics {
        let mut m = self.links.lock().unwrap().clone();
        if let Some(h) = self.rtt.lock().unwrap().as_ref() {
            m.rtt_ns = Some((h.value_at_quantile(0.5), h.value_at_quantile(0.99), h.len()));
        }
        m
    }
}

fn codec(max: usize) -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .max_frame_length(max)
        .new_codec()
}

/// A context whose deadline no test reaches: protocol timeouts are the nodes' own timers
/// (tarpc deadlines read `std::time::Instant`, which turmoil does not virtualize).
fn far_context() -> context::Context {
    let mut ctx = context::current();
    ctx.deadline = std::time::Instant::now() + Duration::from_secs(365 * 24 * 3600);
    ctx
}

#[derive(Clone)]
struct PeerServer<I> {
    ours: Hello,
    members: Arc<[NodeId]>,
    greeted: Arc<Mutex<Option<NodeId>>>,
    inbox: I,
    stats: Arc<IoStats>,
}

impl<I: Inbox> Peer for PeerServer<I> {
    async fn hello(self, _: context::Context, h: Hello) -> Result<Hello, HandshakeError> {
        let refusal = if self.members.binary_search(&h.node).is_err() {
            Some(HandshakeError {
                field: "node id (a member of this cluster)".into(),
                ours: format!("{:?}", self.members.iter().map(|m| m.0).collect::<Vec<_>>()),
                theirs: h.node.0.to_string(),
            })
        } else {
            self.ours.mismatch(&h)
        };
        if let Some(e) = refusal {
            self.inbox.push(Inbound::Fatal(e.clone().into()));
            return Err(e);
        }
        *self.greeted.lock().unwrap() = Some(h.node);
        Ok(self.ours.clone())
    }

    async fn deliver(self, _: context::Context, from: NodeId, frames: Vec<Frame>) {
        // Frames before a handshake, or from another id than the handshake's, are refused.
        if *self.greeted.lock().unwrap() != Some(from) {
            self.stats.decode_error();
            return;
        }
        self.inbox.push(Inbound::Frames(from, frames));
    }
}

/// Accepts connections forever, serving [`Peer`] on each.
pub(crate) async fn serve<N: Net, I: Inbox>(
    listener: N::Listener,
    config: LinkConfig,
    inbox: I,
    stats: Arc<IoStats>,
) {
    loop {
        let Ok(stream) = N::accept(&listener).await else {
            continue;
        };
        let framed = tarpc::tokio_util::codec::Framed::new(stream, codec(config.max_rpc_bytes()));
        let counted = Arc::clone(&stats);
        let transport = tarpc::serde_transport::new(framed, Bincode::default()).map(move |r| {
            if let Err(e) = &r
                && malformed(e)
            {
                // Malformed bytes or an oversize message: the channel ends, the connection drops.
                counted.decode_error();
            }
            r
        });
        let server = PeerServer {
            ours: config.hello.clone(),
            members: Arc::clone(&config.members),
            greeted: Arc::default(),
            inbox: inbox.clone(),
            stats: Arc::clone(&stats),
        };
        tokio::spawn(
            BaseChannel::with_defaults(transport)
                .execute(server.serve())
                .for_each(|response| async move {
                    tokio::spawn(response);
                }),
        );
    }
}

/// Whether a transport error is bad input (undecodable or oversize), not a closed connection.
fn malformed(e: &io::Error) -> bool {
    let inner = e.get_ref();
    let io_kind = inner
        .and_then(|i| i.downcast_ref::<io::Error>())
        .map(io::Error::kind)
        .or_else(
            || match inner.and_then(|i| i.downcast_ref::<bincode::Error>()) {
                Some(b) => match &**b {
                    bincode::ErrorKind::Io(ioe) => Some(ioe.kind()),
                    _ => None,
                },
                None => None,
            },
        );
    match io_kind {
        None => true,
        Some(k) => k == io::ErrorKind::InvalidData,
    }
}

/// Connects to `addr` and shakes hands; a refusal is final.
async fn connect<N: Net>(
    addr: &str,
    config: &LinkConfig,
) -> Result<Result<PeerClient, NetError>, io::Error> {
    let stream = N::connect(addr.to_string()).await?;
    let framed = tarpc::tokio_util::codec::Framed::new(stream, codec(config.max_rpc_bytes()));
    let transport = tarpc::serde_transport::new(framed, Bincode::default());
    let client = PeerClient::new(client::Config::default(), transport).spawn();
    match client.hello(far_context(), config.hello.clone()).await {
        Err(e) => Err(io::Error::other(e)),
        Ok(Err(refused)) => Ok(Err(refused.into())),
        Ok(Ok(theirs)) => Ok(match config.hello.mismatch(&theirs) {
            Some(e) => Err(e.into()),
            None => Ok(client),
        }),
    }
}

/// One destination's link: connect (with capped exponential backoff), report the peer up, send
/// batches with at most `window` calls in flight, and on a failed call report it down and
/// reconnect.
pub(crate) async fn link<N: Net, I: Inbox>(
    me: NodeId,
    to: NodeId,
    addr: String,
    config: LinkConfig,
    mut rx: UnboundedReceiver<Vec<Frame>>,
    inbox: I,
    stats: Arc<IoStats>,
) {
    let mut queue: VecDeque<Vec<Frame>> = VecDeque::new();
    let mut queued_bytes = 0usize;
    let mut backoff = config.backoff_min;
    let mut ever_up = false;
    loop {
        let attempt = async {
            let c = match tokio::time::timeout(config.call_timeout, connect::<N>(&addr, &config))
                .await
            {
                Ok(c) => c,
                Err(_) => Err(io::Error::from(io::ErrorKind::TimedOut)),
            };
            if c.is_err() {
                tokio::time::sleep(backoff).await;
            }
            c
        };
        let client = tokio::select! {
            biased;
            c = attempt => c,
            _ = hold(&mut rx, &mut queue, &mut queued_bytes, &config, &stats, me, to) => return,
        };
        let client = match client {
            Ok(Ok(c)) => c,
            Ok(Err(refused)) => {
                inbox.push(Inbound::Fatal(refused));
                return;
            }
            Err(_) => {
                backoff = (backoff * 2).min(config.backoff_max);
                continue;
            }
        };
        backoff = config.backoff_min;
        if ever_up {
            stats.link(me, to, |l| l.reconnects += 1);
        }
        ever_up = true;
        inbox.push(Inbound::Peer(to, true));
        let closed = pump(
            me,
            to,
            &client,
            &config,
            &mut rx,
            &mut queue,
            &mut queued_bytes,
            &stats,
        )
        .await;
        inbox.push(Inbound::Peer(to, false));
        if closed {
            return;
        }
    }
}

/// Holds frames while disconnected (bounded); returns when the node side is gone.
async fn hold(
    rx: &mut UnboundedReceiver<Vec<Frame>>,
    queue: &mut VecDeque<Vec<Frame>>,
    queued_bytes: &mut usize,
    config: &LinkConfig,
    stats: &IoStats,
    me: NodeId,
    to: NodeId,
) {
    while let Some(chunk) = rx.recv().await {
        let bytes: usize = chunk.iter().map(|f| f.0.len()).sum();
        if *queued_bytes + bytes > config.max_queued_bytes {
            stats.link(me, to, |l| l.dropped += chunk.len() as u64);
            continue;
        }
        *queued_bytes += bytes;
        queue.push_back(chunk);
    }
}

/// Sends until a call fails (returns false) or the node side is gone (returns true).
#[allow(clippy::too_many_arguments)]
async fn pump(
    me: NodeId,
    to: NodeId,
    client: &PeerClient,
    config: &LinkConfig,
    rx: &mut UnboundedReceiver<Vec<Frame>>,
    queue: &mut VecDeque<Vec<Frame>>,
    queued_bytes: &mut usize,
    stats: &IoStats,
) -> bool {
    let mut inflight = FuturesUnordered::new();
    let mut closed = false;
    loop {
        // Fill the window from the held queue, then from the channel without waiting.
        while inflight.len() < config.window {
            let Some(first) = queue.pop_front().or_else(|| match rx.try_recv() {
                Ok(c) => Some(c),
                Err(TryRecvError::Disconnected) => {
                    closed = true;
                    None
                }
                Err(TryRecvError::Empty) => None,
            }) else {
                break;
            };
            let batch = gather(first, config, queue, rx);
            *queued_bytes = queue.iter().flatten().map(|f| f.0.len()).sum();
            let (n, bytes) = (
                batch.len() as u64,
                batch.iter().map(|f| f.0.len() as u64).sum::<u64>(),
            );
            stats.link(me, to, |l| {
                l.messages += n;
                l.bytes += bytes;
                l.batches += 1;
            });
            let call = tokio::time::timeout(
                config.call_timeout,
                client.deliver(far_context(), me, batch),
            );
            inflight.push(async move {
                let t0 = tokio::time::Instant::now();
                let ok = matches!(call.await, Ok(Ok(())));
                (ok, n, t0.elapsed())
            });
        }
        if closed && inflight.is_empty() {
            return true;
        }
        tokio::select! {
            biased;
            Some((ok, n, rtt)) = inflight.next(), if !inflight.is_empty() => match ok {
                true => stats.rtt(rtt),
                false => {
                    stats.link(me, to, |l| l.dropped += n);
                    while let Some((ok, n, _)) = inflight.next().await {
                        if !ok {
                            stats.link(me, to, |l| l.dropped += n);
                        }
                    }
                    return false;
                }
            },
            chunk = rx.recv(), if inflight.len() < config.window && !closed => match chunk {
                Some(c) => {
                    *queued_bytes += c.iter().map(|f| f.0.len()).sum::<usize>();
                    queue.push_back(c);
                }
                None => closed = true,
            },
        }
    }
}

/// One call's frames: from `first` and (with batching) the queued chunks, at most
/// `max_batch_bytes` (but always at least one frame); the rest of a split chunk goes back to the
/// front of the queue. A handler may emit one chunk far larger than a batch.
fn gather(
    first: Vec<Frame>,
    config: &LinkConfig,
    queue: &mut VecDeque<Vec<Frame>>,
    rx: &mut UnboundedReceiver<Vec<Frame>>,
) -> Vec<Frame> {
    let limit = config.max_batch_bytes;
    let mut batch: Vec<Frame> = Vec::new();
    let mut bytes = 0usize;
    let mut next = Some(first);
    while let Some(mut chunk) = next.take() {
        let mut taken = 0;
        for f in &chunk {
            if (taken > 0 || !batch.is_empty()) && bytes + f.0.len() > limit {
                break;
            }
            bytes += f.0.len();
            taken += 1;
        }
        let rest = chunk.split_off(taken);
        batch.extend(chunk);
        if !rest.is_empty() {
            queue.push_front(rest);
            break;
        }
        if !config.batching || bytes >= limit {
            break;
        }
        next = queue.pop_front().or_else(|| rx.try_recv().ok());
    }
    batch
}
