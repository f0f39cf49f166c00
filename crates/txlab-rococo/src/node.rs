//! [`RococoNode`]: the one node type of a cluster (every driver runs one type), a server or a
//! client node, implementing `txlab_net::Node`.

use crate::client::Client;
use crate::config::Recording;
use crate::msg::Msg;
use crate::server::Server;
use crate::workload::PiecedWorkload;
use txlab_net::{Ctx, Node, NodeId, TimerId};
use txlab_workload::Workload;

/// A server or a client node.
#[derive(Debug)]
pub enum RococoNode<W: PiecedWorkload, R: Recording> {
    /// A server (node ids `0..servers`).
    Server(Box<Server<W, R>>),
    /// A client node (the ids after the servers).
    Client(Box<Client<W, R>>),
}

impl<W: PiecedWorkload, R: Recording> RococoNode<W, R> {
    /// The server, if this is one.
    pub fn server(&self) -> Option<&Server<W, R>> {
        match self {
            RococoNode::Server(s) => Some(s),
            RococoNode::Client(_) => None,
        }
    }

    /// The client node, if this is one.
    pub fn client(&self) -> Option<&Client<W, R>> {
        match self {
            RococoNode::Client(c) => Some(c),
            RococoNode::Server(_) => None,
        }
    }
}

impl<W: PiecedWorkload, R: Recording> Node for RococoNode<W, R> {
    type Msg = Msg<<W as Workload>::Program>;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self::Msg>) {
        match self {
            RococoNode::Server(s) => s.on_start(ctx),
            RococoNode::Client(c) => c.on_start(ctx),
        }
    }

    fn on_message(&mut self, from: NodeId, msg: Self::Msg, ctx: &mut Ctx<'_, Self::Msg>) {
        match self {
            RococoNode::Server(s) => s.on_message(from, msg, ctx),
            RococoNode::Client(c) => c.on_message(from, msg, ctx),
        }
    }

    fn on_timer(&mut self, timer: TimerId, ctx: &mut Ctx<'_, Self::Msg>) {
        match self {
            RococoNode::Server(s) => s.on_timer(timer, ctx),
            RococoNode::Client(c) => c.on_timer(timer, ctx),
        }
    }

    fn on_peer(&mut self, peer: NodeId, up: bool, ctx: &mut Ctx<'_, Self::Msg>) {
        match self {
            RococoNode::Server(s) => s.on_peer(peer, up, ctx),
            RococoNode::Client(c) => c.on_peer(peer, up),
        }
    }
}
