//! The node API: identifiers, the message bound and the sans-IO [`Node`] trait.
//!
//! The trait maps one-to-one onto a model checker's actor (stateright's `Actor`: `on_start`,
//! `on_msg`, `on_timeout`), so small configurations can later be checked exhaustively.

use std::fmt;

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::ctx::Ctx;

/// A node's identity in a cluster (`id` in `cluster.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeId(pub u16);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// The most nodes a cluster may have.
pub const MAX_NODES: usize = 1024;

/// A timer's name, chosen by the node. Setting a timer whose id is pending re-arms it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TimerId(pub u64);

/// What a protocol sends: anything that can cross a real network.
///
/// `Serialize + DeserializeOwned` because the `tcp` and `sim` drivers (and `inproc` with
/// `encode: true`) put every message through [`crate::wire`].
pub trait Message: Serialize + DeserializeOwned + Send + fmt::Debug + 'static {}

impl<T: Serialize + DeserializeOwned + Send + fmt::Debug + 'static> Message for T {}

/// A distributed protocol's participant, written as a state machine.
///
/// Handlers run one at a time per node (never concurrently with each other), take the event
/// and the node's [`Ctx`], and return when the reaction is complete; sends and timers issued
/// through the context take effect when the handler returns. Handlers must not block: a driver
/// runs several nodes on one thread (`step`, `sim`, `inproc` with fewer threads than nodes).
pub trait Node: Send + 'static {
    /// The protocol's message type.
    type Msg: Message;

    /// Called once when the node starts, and again on the fresh node a driver builds after a
    /// crash (which reads what it persisted from [`Ctx::durable`]).
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self::Msg>) {
        let _ = ctx;
    }

    /// A message from `from` (possibly the node itself).
    fn on_message(&mut self, from: NodeId, msg: Self::Msg, ctx: &mut Ctx<'_, Self::Msg>);

    /// A timer set with [`Ctx::set_timer`] expired.
    fn on_timer(&mut self, timer: TimerId, ctx: &mut Ctx<'_, Self::Msg>) {
        let _ = (timer, ctx);
    }

    /// The link to `peer` came up (`up == true`) or went down.
    fn on_peer(&mut self, peer: NodeId, up: bool, ctx: &mut Ctx<'_, Self::Msg>) {
        let _ = (peer, up, ctx);
    }
}
