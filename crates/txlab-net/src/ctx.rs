//! [`Ctx`]: what a node may do while handling an event.

use std::time::Duration;

use rand::SeedableRng;

use crate::durable::Durable;
use crate::error::NetError;
use crate::node::{Message, NodeId, TimerId};
use crate::timers::Timers;

/// The per-node random number generator. Seeded by the driver from its seed, the node id and
/// the node's incarnation (restarts get fresh streams), so a run replays from its seed.
pub type NodeRng = rand_chacha::ChaCha8Rng;

/// Derives the RNG of `node`'s `incarnation`-th start under driver seed `seed`.
pub(crate) fn node_rng(seed: u64, node: NodeId, incarnation: u32) -> NodeRng {
    let mixed = seed
        ^ (u64::from(node.0) << 32 | u64::from(incarnation)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    NodeRng::seed_from_u64(mixed)
}

/// A message leaving a handler: kept as a value, or already encoded when the driver puts
/// messages on a wire (`tcp`, `sim`, `inproc` with `encode`).
#[derive(Debug)]
pub(crate) enum Payload<M> {
    Value(M),
    Encoded(Vec<u8>),
}

/// The sends a handler issued, in order.
#[derive(Debug)]
pub(crate) struct Outbox<M> {
    /// `Some(limit)`: encode at send time and refuse frames over `limit`.
    pub(crate) encode: Option<usize>,
    pub(crate) sends: Vec<(NodeId, Payload<M>)>,
}

impl<M> Outbox<M> {
    pub(crate) fn new(encode: Option<usize>) -> Self {
        Self {
            encode,
            sends: Vec::new(),
        }
    }
}

/// A node's view of its driver during one handler call.
#[derive(Debug)]
pub struct Ctx<'a, M> {
    pub(crate) me: NodeId,
    pub(crate) now: Duration,
    pub(crate) nodes: &'a [NodeId],
    pub(crate) rng: &'a mut NodeRng,
    pub(crate) durable: &'a Durable,
    pub(crate) timers: &'a mut Timers,
    pub(crate) out: &'a mut Outbox<M>,
}

impl<M: Message> Ctx<'_, M> {
    /// This node's id.
    pub fn me(&self) -> NodeId {
        self.me
    }

    /// The driver's clock: time since the driver started (real in `inproc`/`tcp`, virtual in
    /// `step`/`sim`).
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Every node of the cluster (this one included), in id order.
    pub fn nodes(&self) -> &[NodeId] {
        self.nodes
    }

    /// Sends `msg` to `to` (possibly this node). Delivery is at most once and unordered (see the
    /// crate docs). Errors: `to` is not in the cluster ([`NetError::UnknownNode`]); with an
    /// encoding driver, the message does not encode or exceeds the frame limit.
    pub fn send(&mut self, to: NodeId, msg: M) -> Result<(), NetError> {
        if self.nodes.binary_search(&to).is_err() {
            return Err(NetError::unknown_node(to, self.nodes));
        }
        let payload = match self.out.encode {
            Some(limit) => Payload::Encoded(crate::wire::encode(&msg, limit)?),
            None => Payload::Value(msg),
        };
        self.out.sends.push((to, payload));
        Ok(())
    }

    /// Arms timer `id` to fire `after` from now, replacing a pending timer of the same id.
    pub fn set_timer(&mut self, after: Duration, id: TimerId) {
        self.timers.set(id, self.now + after);
    }

    /// Cancels timer `id` (no effect if it is not pending).
    pub fn cancel_timer(&mut self, id: TimerId) {
        self.timers.cancel(id);
    }

    /// The node's seeded random number generator.
    pub fn rng(&mut self) -> &mut NodeRng {
        self.rng
    }

    /// The node's stable storage (survives crash and restart).
    pub fn durable(&self) -> &Durable {
        self.durable
    }
}
