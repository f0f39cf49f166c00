//! The start of a multi-process run (`remote`): the client process asks every server whether it
//! is ready ([`Msg::AwaitReady`]) before its clients issue anything, and the warm-up starts only
//! once every server answered [`Msg::Ready`].
//!
//! A server process starts its node only after its shard is loaded, so a server that can answer
//! has its data; it answers once its link to every other node of the cluster (servers and
//! client nodes) is up, so no transaction of the run waits for a connection. A request that
//! arrives earlier is answered when the last link comes up; a link that goes down again makes
//! the next request wait again.

use super::{Program, Server};
use crate::config::Recording;
use crate::msg::Msg;
use crate::workload::PiecedWorkload;
use std::collections::BTreeSet;
use txlab_net::{Ctx, NodeId};

/// What the server knows of its links and of the nodes waiting for it to be ready.
#[derive(Debug, Default)]
pub(super) struct Readiness {
    /// Peers whose link from this server is up.
    up: BTreeSet<NodeId>,
    /// Nodes that asked and have not been answered yet.
    waiting: BTreeSet<NodeId>,
    /// Whether any node asked.
    asked: bool,
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    /// Whether a node asked this server whether it is ready ([`Msg::AwaitReady`]).
    pub fn asked_ready(&self) -> bool {
        self.ready.asked
    }

    pub(super) fn await_ready(&mut self, from: NodeId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        self.ready.asked = true;
        self.ready.waiting.insert(from);
        self.answer_ready(ctx);
    }

    /// The link to `peer` came up or went down.
    pub(crate) fn on_peer(&mut self, peer: NodeId, up: bool, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        if up {
            self.ready.up.insert(peer);
            self.answer_ready(ctx);
        } else {
            self.ready.up.remove(&peer);
        }
    }

    /// Answers every waiting node if the link to every other node is up.
    fn answer_ready(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let me = ctx.me();
        let all_up = ctx
            .nodes()
            .iter()
            .all(|n| *n == me || self.ready.up.contains(n));
        if !all_up {
            return;
        }
        for to in std::mem::take(&mut self.ready.waiting) {
            self.send(ctx, to, Msg::Ready);
        }
    }
}
