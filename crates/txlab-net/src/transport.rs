//! [`Transport`]: a cloneable send handle for threads that are not a node's handler (DOCC's
//! worker threads send from their own threads; a client thread injects requests).

use std::fmt;
use std::sync::Arc;

use crate::error::NetError;
use crate::node::{Message, NodeId};

/// How a driver routes a message sent from outside a handler. Only drivers implement it.
pub(crate) trait Route<M>: Send + Sync {
    fn route(&self, from: NodeId, to: NodeId, msg: M) -> Result<(), NetError>;
}

/// A handle that sends as node `me()`. Cheap to clone, `Send`; the same delivery contract as
/// [`crate::Ctx::send`] (at most once, unordered). A message to `me()` itself reaches the node's
/// own `on_message`, which is how a thread hands work to its node.
pub struct Transport<M> {
    me: NodeId,
    route: Arc<dyn Route<M>>,
}

impl<M> Clone for Transport<M> {
    fn clone(&self) -> Self {
        Self {
            me: self.me,
            route: Arc::clone(&self.route),
        }
    }
}

impl<M> fmt::Debug for Transport<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport").field("me", &self.me).finish()
    }
}

impl<M: Message> Transport<M> {
    pub(crate) fn new(me: NodeId, route: Arc<dyn Route<M>>) -> Self {
        Self { me, route }
    }

    /// The node this handle sends as.
    pub fn me(&self) -> NodeId {
        self.me
    }

    /// Sends `msg` to `to`. Errors: an unknown node, a stopped driver, and with an encoding
    /// driver an encoding failure or an oversize frame.
    pub fn send(&self, to: NodeId, msg: M) -> Result<(), NetError> {
        self.route.route(self.me, to, msg)
    }
}
