//! The `inproc` driver: nodes on OS threads in one process, messages over channels
//! (`txlab_core::protocol::sync::mpsc`, so the driver builds under shuttle like the rest of txlab).
//!
//! - One thread per node by default; [`InprocConfig::threads`] packs several nodes per thread
//!   (node `i` of the sorted ids runs on thread `i % threads`).
//! - Messages are moved, not serialized, unless [`InprocConfig::encode`] round-trips each one
//!   through [`crate::wire`] (catches state that would not survive a real network and measures
//!   the codec's cost).
//! - [`LinkModel`] delays every message between two different nodes by `latency` plus a uniform
//!   draw from `0..=jitter`, through a delay queue on the receiving thread (seeded per thread, so
//!   the delays repeat; the clock is still the wall clock). The last 200 µs of a wait spin, so a
//!   100 µs link is not stretched by the kernel's timer slack.
//! - Timers use the same wait. [`Ctx::now`](crate::Ctx::now) is the time since the cluster
//!   started.
//! - Every node sees `on_peer(p, true)` for every other node right after its `on_start`; nodes
//!   never crash here, so no down events follow.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use txlab_core::protocol::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use txlab_core::protocol::sync::{Arc, AtomicU64, Ordering, thread};

use crate::ctx::Payload;
use crate::durable::Durable;
use crate::error::NetError;
use crate::host::{Control, Event, Host, run_on_node, sorted_ids};
use crate::metrics::NetMetrics;
use crate::node::{Node, NodeId};
use crate::transport::{Route, Transport};
use crate::wire::DEFAULT_MAX_FRAME;

/// Emulated link delay: `latency + uniform(0..=jitter)` per message, seeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkModel {
    /// One-way latency.
    pub latency: Duration,
    /// Upper bound of the uniform extra delay.
    pub jitter: Duration,
    /// Seed of the delay draws.
    pub seed: u64,
}

/// `inproc` settings.
#[derive(Clone, Debug)]
pub struct InprocConfig {
    /// Threads to run the nodes on; 0 means one per node.
    pub threads: usize,
    /// Link delay emulation (none by default).
    pub link: Option<LinkModel>,
    /// Round-trip every message through the wire codec.
    pub encode: bool,
    /// Seeds the node RNGs.
    pub seed: u64,
    /// Frame limit when encoding.
    pub max_frame: usize,
}

impl Default for InprocConfig {
    fn default() -> Self {
        Self {
            threads: 0,
            link: None,
            encode: false,
            seed: 0,
            max_frame: DEFAULT_MAX_FRAME,
        }
    }
}

type Predicate<N> = Arc<dyn Fn(&N) -> bool + Send + Sync>;

enum Envelope<N: Node> {
    Msg {
        from: NodeId,
        to: NodeId,
        payload: Payload<N::Msg>,
        sent: Duration,
    },
    Control(NodeId, Control<N>),
    Watch(Predicate<N>),
    Stop,
}

struct Router<N: Node> {
    ids: Arc<[NodeId]>,
    threads: usize,
    senders: Vec<Sender<Envelope<N>>>,
    encode: Option<usize>,
    start: Instant,
    /// Messages and encoded bytes sent through [`Transport`] handles, per `(from, to)` index
    /// pair (`from * nodes + to`); handler sends are counted by their host.
    external: Vec<[AtomicU64; 2]>,
}

impl<N: Node> Router<N> {
    fn thread_of(&self, to: NodeId) -> Option<usize> {
        self.ids.binary_search(&to).ok().map(|i| i % self.threads)
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }
}

impl<N: Node> Route<N::Msg> for Router<N> {
    fn route(&self, from: NodeId, to: NodeId, msg: N::Msg) -> Result<(), NetError> {
        let t = self
            .thread_of(to)
            .ok_or_else(|| NetError::unknown_node(to, &self.ids))?;
        let payload = match self.encode {
            Some(limit) => Payload::Encoded(crate::wire::encode(&msg, limit)?),
            None => Payload::Value(msg),
        };
        if let (Ok(f), Ok(t)) = (self.ids.binary_search(&from), self.ids.binary_search(&to)) {
            let [messages, bytes] = &self.external[f * self.ids.len() + t];
            messages.fetch_add(1, Ordering::Relaxed);
            if let Payload::Encoded(b) = &payload {
                bytes.fetch_add(b.len() as u64, Ordering::Relaxed);
            }
        }
        let env = Envelope::Msg {
            from,
            to,
            payload,
            sent: self.now(),
        };
        self.senders[t]
            .send(env)
            .map_err(|_| NetError::Stopped("the inproc cluster has stopped".into()))
    }
}

/// A running `inproc` cluster.
pub struct InprocCluster<N: Node> {
    router: Arc<Router<N>>,
    handles: Vec<thread::JoinHandle<(Vec<Host<N>>, u64)>>,
}

impl<N: Node> fmt::Debug for InprocCluster<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InprocCluster")
            .field("ids", &self.router.ids)
            .field("threads", &self.router.threads)
            .finish()
    }
}

/// What [`InprocCluster::stop`] returns.
#[derive(Debug)]
pub struct Stopped<N> {
    /// The nodes, in id order.
    pub nodes: Vec<(NodeId, N)>,
    /// The run's counters.
    pub metrics: NetMetrics,
}

impl<N: Node> InprocCluster<N> {
    /// Starts nodes `ids` (1 to [`crate::MAX_NODES`], distinct), each built by `factory`.
    pub fn start(
        ids: &[NodeId],
        config: InprocConfig,
        mut factory: impl FnMut(NodeId) -> N,
    ) -> Result<Self, NetError> {
        let ids = sorted_ids(ids)?;
        if let Some(l) = config.link
            && (l.latency > Duration::from_secs(10) || l.jitter > Duration::from_secs(10))
        {
            return Err(NetError::Config(format!(
                "link latency {:?} + jitter {:?} too large; accepted: each at most 10 s",
                l.latency, l.jitter
            )));
        }
        let threads = match config.threads {
            0 => ids.len(),
            t => t.min(ids.len()),
        };
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..threads).map(|_| mpsc::channel()).unzip();
        let encode = config.encode.then_some(config.max_frame);
        let router = Arc::new(Router {
            ids: Arc::clone(&ids),
            threads,
            senders,
            encode,
            start: Instant::now(),
            external: (0..ids.len() * ids.len())
                .map(|_| Default::default())
                .collect(),
        });
        let mut per_thread: Vec<Vec<Host<N>>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, &id) in ids.iter().enumerate() {
            let node = factory(id);
            per_thread[i % threads].push(Host::new(
                id,
                node,
                Arc::clone(&ids),
                config.seed,
                0,
                Durable::new(),
                encode,
            ));
        }
        let handles = per_thread
            .into_iter()
            .zip(receivers)
            .enumerate()
            .map(|(t, (hosts, rx))| {
                let mut worker = Worker {
                    router: Arc::clone(&router),
                    hosts,
                    rx,
                    local: VecDeque::new(),
                    delayed: BinaryHeap::new(),
                    delayed_seq: 0,
                    link: config.link,
                    link_rng: rand_chacha::ChaCha8Rng::seed_from_u64(
                        config.link.map_or(0, |l| l.seed) ^ (t as u64) << 40,
                    ),
                    max_frame: config.max_frame,
                    watch: None,
                    done: Vec::new(),
                    decode_errors: 0,
                };
                thread::Builder::new()
                    .name(format!("txlab-net-{t}"))
                    .spawn(move || worker.run())
                    .map_err(|e| NetError::io("spawn inproc node thread", e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { router, handles })
    }

    /// A handle for sending as `from` from any thread.
    pub fn transport(&self, from: NodeId) -> Result<Transport<N::Msg>, NetError> {
        if self.router.thread_of(from).is_none() {
            return Err(NetError::unknown_node(from, &self.router.ids));
        }
        Ok(Transport::new(
            from,
            Arc::clone(&self.router) as Arc<dyn Route<N::Msg>>,
        ))
    }

    /// Runs `f` on node `id` on its own thread, between two handlers, and returns its result.
    pub fn inspect<R: Send + 'static>(
        &self,
        id: NodeId,
        f: impl FnOnce(&mut N) -> R + Send + 'static,
    ) -> Result<R, NetError> {
        let t = self
            .router
            .thread_of(id)
            .ok_or_else(|| NetError::unknown_node(id, &self.router.ids))?;
        let sender = &self.router.senders[t];
        run_on_node(|c| sender.send(Envelope::Control(id, c)).is_ok(), f)
            .ok_or_else(|| NetError::Stopped("the inproc cluster has stopped".into()))
    }

    /// Blocks until `pred` holds on every node (checked after each of its events), or `timeout`.
    pub fn wait_until(
        &self,
        timeout: Duration,
        pred: impl Fn(&N) -> bool + Send + Sync + 'static,
    ) -> Result<(), NetError> {
        let pred: Predicate<N> = Arc::new(pred);
        let (tx, rx) = mpsc::channel();
        // The done channel travels inside the predicate's closure so each worker reports on it.
        let watch: Predicate<N> = {
            let tx = txlab_core::protocol::sync::Mutex::new(tx);
            let pred = Arc::clone(&pred);
            Arc::new(move |n: &N| {
                let ok = pred(n);
                if ok {
                    let _ = tx.lock().unwrap().send(());
                }
                ok
            })
        };
        for s in &self.router.senders {
            s.send(Envelope::Watch(Arc::clone(&watch)))
                .map_err(|_| NetError::Stopped("the inproc cluster has stopped".into()))?;
        }
        let deadline = Instant::now() + timeout;
        for _ in 0..self.router.ids.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            rx.recv_timeout(left)
                .map_err(|_| NetError::Timeout(timeout, "waiting for every inproc node".into()))?;
        }
        Ok(())
    }

    /// Stops every thread and returns the nodes and counters.
    pub fn stop(self) -> Result<Stopped<N>, NetError> {
        for s in &self.router.senders {
            let _ = s.send(Envelope::Stop);
        }
        let mut metrics = NetMetrics::default();
        let mut nodes = Vec::new();
        for h in self.handles {
            let (hosts, decode_errors) = h
                .join()
                .map_err(|_| NetError::Stopped("an inproc node thread panicked".into()))?;
            metrics.decode_errors += decode_errors;
            for host in hosts {
                host.report(&mut metrics);
                nodes.push((host.id, host.node));
            }
        }
        let n = self.router.ids.len();
        for (i, [messages, bytes]) in self.router.external.iter().enumerate() {
            let (messages, bytes) = (
                messages.load(Ordering::Relaxed),
                bytes.load(Ordering::Relaxed),
            );
            if messages > 0 {
                let l = metrics.link(self.router.ids[i / n], self.router.ids[i % n]);
                l.messages += messages;
                l.bytes += bytes;
            }
        }
        nodes.sort_by_key(|(id, _)| *id);
        Ok(Stopped { nodes, metrics })
    }
}

struct Delayed<M> {
    at: Duration,
    seq: u64,
    from: NodeId,
    to: NodeId,
    payload: Payload<M>,
}

impl<M> PartialEq for Delayed<M> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<M> Eq for Delayed<M> {}
impl<M> PartialOrd for Delayed<M> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<M> Ord for Delayed<M> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// How close to a deadline the wait stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(200);

struct Worker<N: Node> {
    router: Arc<Router<N>>,
    hosts: Vec<Host<N>>,
    rx: Receiver<Envelope<N>>,
    local: VecDeque<(NodeId, NodeId, Payload<N::Msg>)>,
    delayed: BinaryHeap<Reverse<Delayed<N::Msg>>>,
    delayed_seq: u64,
    link: Option<LinkModel>,
    link_rng: rand_chacha::ChaCha8Rng,
    max_frame: usize,
    watch: Option<Predicate<N>>,
    done: Vec<bool>,
    decode_errors: u64,
}

impl<N: Node> Worker<N> {
    fn run(&mut self) -> (Vec<Host<N>>, u64) {
        self.done = vec![false; self.hosts.len()];
        let now = self.router.now();
        for h in 0..self.hosts.len() {
            self.hosts[h].handle(now, Event::Start);
            let (ids, me) = (Arc::clone(&self.router.ids), self.hosts[h].id);
            for &p in ids.iter().filter(|&&p| p != me) {
                self.hosts[h].handle(now, Event::Peer(p, true));
            }
            self.flush(h);
        }
        loop {
            while let Some((from, to, payload)) = self.local.pop_front() {
                self.deliver(from, to, payload);
            }
            let now = self.router.now();
            self.release_delayed(now);
            self.fire_timers(now);
            if !self.local.is_empty() {
                continue;
            }
            let env = match self.next_deadline() {
                None => match self.rx.recv() {
                    Ok(e) => e,
                    Err(_) => break,
                },
                Some(at) => match self.recv_until(at) {
                    Ok(e) => e,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
            };
            if !self.accept(env) {
                break;
            }
        }
        (std::mem::take(&mut self.hosts), self.decode_errors)
    }

    /// Handles one envelope; false on `Stop`.
    fn accept(&mut self, env: Envelope<N>) -> bool {
        match env {
            Envelope::Msg {
                from,
                to,
                payload,
                sent,
            } => match self.link {
                Some(l) if from != to => {
                    let jitter = if l.jitter.is_zero() {
                        Duration::ZERO
                    } else {
                        Duration::from_nanos(
                            self.link_rng.random_range(0..=l.jitter.as_nanos() as u64),
                        )
                    };
                    self.delayed_seq += 1;
                    self.delayed.push(Reverse(Delayed {
                        at: sent + l.latency + jitter,
                        seq: self.delayed_seq,
                        from,
                        to,
                        payload,
                    }));
                }
                _ => self.deliver(from, to, payload),
            },
            Envelope::Control(id, f) => {
                if let Some(h) = self.host_index(id) {
                    f(&mut self.hosts[h].node);
                    self.flush(h);
                }
            }
            Envelope::Watch(p) => {
                self.done.iter_mut().for_each(|d| *d = false);
                self.watch = Some(p);
                for h in 0..self.hosts.len() {
                    self.check_watch(h);
                }
            }
            Envelope::Stop => return false,
        }
        true
    }

    fn host_index(&self, id: NodeId) -> Option<usize> {
        self.hosts.iter().position(|h| h.id == id)
    }

    fn next_deadline(&self) -> Option<Duration> {
        let timers = self.hosts.iter().filter_map(|h| h.timers.next()).min();
        let delayed = self.delayed.peek().map(|d| d.0.at);
        timers.into_iter().chain(delayed).min()
    }

    /// Waits for an envelope until `at` (driver time): sleeps, then spins the last [`SPIN`]
    /// when a link model asks for precision.
    fn recv_until(&self, at: Duration) -> Result<Envelope<N>, RecvTimeoutError> {
        loop {
            let now = self.router.now();
            if now >= at {
                return Err(RecvTimeoutError::Timeout);
            }
            let left = at - now;
            if self.link.is_none() || left > SPIN {
                let sleep = if self.link.is_some() {
                    left - SPIN
                } else {
                    left
                };
                match self.rx.recv_timeout(sleep) {
                    Err(RecvTimeoutError::Timeout) => continue,
                    r => return r,
                }
            }
            match self.rx.try_recv() {
                Ok(e) => return Ok(e),
                Err(mpsc::TryRecvError::Disconnected) => {
                    return Err(RecvTimeoutError::Disconnected);
                }
                Err(mpsc::TryRecvError::Empty) => thread::yield_now(),
            }
        }
    }

    fn release_delayed(&mut self, now: Duration) {
        while self.delayed.peek().is_some_and(|d| d.0.at <= now) {
            let Reverse(d) = self.delayed.pop().expect("peeked");
            self.deliver(d.from, d.to, d.payload);
        }
    }

    fn fire_timers(&mut self, now: Duration) {
        for h in 0..self.hosts.len() {
            if self.hosts[h].fire_due(now) > 0 {
                self.flush(h);
            }
        }
    }

    fn deliver(&mut self, from: NodeId, to: NodeId, payload: Payload<N::Msg>) {
        let Some(h) = self.host_index(to) else {
            return;
        };
        let now = self.router.now();
        match payload {
            Payload::Value(m) => self.hosts[h].handle(now, Event::Message(from, m)),
            Payload::Encoded(b) => {
                if self.hosts[h]
                    .handle_frame(now, from, &b, self.max_frame)
                    .is_err()
                {
                    self.decode_errors += 1;
                }
            }
        }
        self.flush(h);
    }

    /// Routes host `h`'s sends: same-thread ones to the local queue (or the delay queue), the
    /// rest to their thread's channel.
    fn flush(&mut self, h: usize) {
        let from = self.hosts[h].id;
        let sends: Vec<_> = self.hosts[h].take_sends().collect();
        let now = self.router.now();
        for (to, payload) in sends {
            let l = self.hosts[h].link(to);
            l.messages += 1;
            if let Payload::Encoded(b) = &payload {
                l.bytes += b.len() as u64;
            }
            let t = self.router.thread_of(to).expect("ctx checked the id");
            let local = self.hosts.iter().any(|x| x.id == to);
            if local && (self.link.is_none() || to == from) {
                self.local.push_back((from, to, payload));
            } else if local {
                self.accept(Envelope::Msg {
                    from,
                    to,
                    payload,
                    sent: now,
                });
            } else if self.router.senders[t]
                .send(Envelope::Msg {
                    from,
                    to,
                    payload,
                    sent: now,
                })
                .is_err()
            {
                self.hosts[h].link(to).dropped += 1;
            }
        }
        self.check_watch(h);
    }

    fn check_watch(&mut self, h: usize) {
        if let Some(p) = &self.watch
            && !self.done[h]
            && p(&self.hosts[h].node)
        {
            self.done[h] = true;
        }
    }
}
