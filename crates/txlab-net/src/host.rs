//! The driver-independent half of running a node: its state, timers, RNG and durable store, and
//! the one code path every driver calls to run a handler.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::ctx::{Ctx, NodeRng, Outbox, Payload, node_rng};
use crate::durable::Durable;
use crate::error::NetError;
use crate::metrics::{LinkStats, NetMetrics};
use crate::node::{MAX_NODES, Node, NodeId, TimerId};
use crate::timers::Timers;

/// A node with everything its handlers need.
#[derive(Debug)]
pub(crate) struct Host<N: Node> {
    pub(crate) id: NodeId,
    pub(crate) node: N,
    pub(crate) nodes: Arc<[NodeId]>,
    rng: NodeRng,
    pub(crate) durable: Durable,
    pub(crate) timers: Timers,
    pub(crate) out: Outbox<N::Msg>,
    pub(crate) handler_ns: u64,
    pub(crate) handler_calls: u64,
    /// Outgoing link counters, indexed like `nodes`.
    pub(crate) links: Vec<LinkStats>,
}

/// One event for a node.
pub(crate) enum Event<M> {
    Start,
    Message(NodeId, M),
    Timer(TimerId),
    Peer(NodeId, bool),
}

impl<N: Node> Host<N> {
    /// `nodes` must be sorted; `encode` is the frame limit when sends are encoded.
    pub(crate) fn new(
        id: NodeId,
        node: N,
        nodes: Arc<[NodeId]>,
        seed: u64,
        incarnation: u32,
        durable: Durable,
        encode: Option<usize>,
    ) -> Self {
        debug_assert!(nodes.is_sorted());
        Self {
            id,
            node,
            rng: node_rng(seed, id, incarnation),
            durable,
            timers: Timers::default(),
            out: Outbox::new(encode),
            handler_ns: 0,
            handler_calls: 0,
            links: vec![LinkStats::default(); nodes.len()],
            nodes,
        }
    }

    /// Runs one handler at driver time `now`; its sends are left in `self.out.sends`.
    pub(crate) fn handle(&mut self, now: Duration, event: Event<N::Msg>) {
        let t0 = Instant::now();
        let mut ctx = Ctx {
            me: self.id,
            now,
            nodes: &self.nodes,
            rng: &mut self.rng,
            durable: &self.durable,
            timers: &mut self.timers,
            out: &mut self.out,
        };
        match event {
            Event::Start => self.node.on_start(&mut ctx),
            Event::Message(from, msg) => self.node.on_message(from, msg, &mut ctx),
            Event::Timer(t) => self.node.on_timer(t, &mut ctx),
            Event::Peer(p, up) => self.node.on_peer(p, up, &mut ctx),
        }
        self.handler_ns += t0.elapsed().as_nanos() as u64;
        self.handler_calls += 1;
    }

    /// Delivers an encoded frame: decoded under `limit`, then handled.
    pub(crate) fn handle_frame(
        &mut self,
        now: Duration,
        from: NodeId,
        frame: &[u8],
        limit: usize,
    ) -> Result<(), NetError> {
        let msg = crate::wire::decode(frame, limit)?;
        self.handle(now, Event::Message(from, msg));
        Ok(())
    }

    /// Fires every timer due at `now`, in deadline order; returns how many fired.
    pub(crate) fn fire_due(&mut self, now: Duration) -> usize {
        let mut fired = 0;
        while let Some(t) = self.timers.pop_due(now) {
            self.handle(now, Event::Timer(t));
            fired += 1;
        }
        fired
    }

    /// Takes the sends of the handlers run since the last call.
    pub(crate) fn take_sends(&mut self) -> std::vec::Drain<'_, (NodeId, Payload<N::Msg>)> {
        self.out.sends.drain(..)
    }
}

impl<N: Node> Host<N> {
    /// The counters of the link to `to` (a cluster member).
    pub(crate) fn link(&mut self, to: NodeId) -> &mut LinkStats {
        let i = self
            .nodes
            .binary_search(&to)
            .expect("a routed destination is a member");
        &mut self.links[i]
    }

    /// Adds this host's counters into `m`.
    pub(crate) fn report(&self, m: &mut NetMetrics) {
        for (to, l) in self.nodes.iter().zip(&self.links) {
            if *l != LinkStats::default() {
                m.link(self.id, *to).add(l);
            }
        }
        let n = m.nodes.entry(self.id).or_default();
        n.calls += self.handler_calls;
        n.handler_ns += self.handler_ns;
    }
}

/// A sorted, deduplicated id list, or the first duplicate.
pub(crate) fn sorted_ids(ids: &[NodeId]) -> Result<Arc<[NodeId]>, NetError> {
    if ids.is_empty() {
        return Err(NetError::Config(
            "a cluster needs at least 1 node (got 0); accepted: 1..=1024 nodes".into(),
        ));
    }
    if ids.len() > MAX_NODES {
        return Err(NetError::Config(format!(
            "a cluster of {} nodes is too large; accepted: 1..={MAX_NODES} nodes",
            ids.len()
        )));
    }
    let mut v = ids.to_vec();
    v.sort();
    if let Some(w) = v.windows(2).find(|w| w[0] == w[1]) {
        return Err(NetError::Config(format!(
            "node id {} appears twice; each node needs its own id",
            w[0].0
        )));
    }
    Ok(v.into())
}

/// A closure run on a node's own thread, between two handlers.
pub(crate) type Control<N> = Box<dyn FnOnce(&mut N) + Send>;

/// Runs `f` on a node's thread: `post` hands the boxed closure to that thread (false if it is
/// gone), and the result comes back over a channel. `None` when the thread is gone or drops the
/// closure unrun.
pub(crate) fn run_on_node<N, R: Send + 'static>(
    post: impl FnOnce(Control<N>) -> bool,
    f: impl FnOnce(&mut N) -> R + Send + 'static,
) -> Option<R> {
    let (tx, rx) = std::sync::mpsc::channel();
    let posted = post(Box::new(move |n| {
        let _ = tx.send(f(n));
    }));
    if posted { rx.recv().ok() } else { None }
}
