//! Toy nodes the driver-conformance suite runs on every driver.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use txlab_net::{Ctx, Node, NodeId, TimerId};

/// Pings per peer.
pub const PINGS: u32 = 5;

#[derive(Debug, Serialize, Deserialize)]
pub enum ToyMsg {
    Ping(u32),
    Pong(u32),
    Rumor(NodeId),
}

/// Echo and gossip in one node: pings every peer, answers pings, floods a rumor of its own and
/// forwards each new rumor once; arms two timers and cancels one; records peer events.
#[derive(Debug, Default)]
pub struct Toy {
    pub n: usize,
    pub pings: BTreeMap<(NodeId, u32), u32>,
    pub pongs: BTreeMap<(NodeId, u32), u32>,
    pub rumors: BTreeMap<(NodeId, NodeId), u32>,
    pub known: BTreeSet<NodeId>,
    pub timer1: u32,
    pub timer2: u32,
    pub ups: BTreeSet<NodeId>,
    pub downs: u32,
}

impl Toy {
    pub fn new(n: usize) -> Self {
        Self {
            n,
            ..Self::default()
        }
    }

    fn broadcast(&self, ctx: &mut Ctx<'_, ToyMsg>, origin: NodeId) {
        let me = ctx.me();
        let others: Vec<NodeId> = ctx.nodes().iter().copied().filter(|&p| p != me).collect();
        for p in others {
            ctx.send(p, ToyMsg::Rumor(origin)).unwrap();
        }
    }

    /// Everything a fault-free run must produce.
    pub fn done(&self) -> bool {
        let others = (self.n - 1) as u32;
        self.pings.len() as u32 == PINGS * others
            && self.pongs.len() as u32 == PINGS * others
            && self.rumors.len() == self.n * (self.n - 1)
            && self.known.len() == self.n
            && self.timer1 >= 1
            && self.ups.len() == self.n - 1
    }

    /// The exactly-once half of the contract in a fault-free run.
    pub fn assert_exactly_once(&self, me: NodeId) {
        assert!(self.done(), "{me}: incomplete: {self:?}");
        for (what, m) in [("ping", &self.pings), ("pong", &self.pongs)] {
            assert!(m.values().all(|&c| c == 1), "{me}: a {what} twice: {m:?}");
        }
        assert!(
            self.rumors.values().all(|&c| c == 1),
            "{me}: a rumor twice: {:?}",
            self.rumors
        );
        assert_eq!(self.timer2, 0, "{me}: a cancelled timer fired");
        assert_eq!(self.timer1, 1, "{me}: a timer fired twice");
    }
}

impl Node for Toy {
    type Msg = ToyMsg;

    fn on_start(&mut self, ctx: &mut Ctx<'_, ToyMsg>) {
        ctx.set_timer(Duration::from_millis(1), TimerId(1));
        ctx.set_timer(Duration::from_millis(50), TimerId(2));
        let me = ctx.me();
        self.known.insert(me);
        self.broadcast(ctx, me);
        let others: Vec<NodeId> = ctx.nodes().iter().copied().filter(|&p| p != me).collect();
        for p in others {
            for k in 0..PINGS {
                ctx.send(p, ToyMsg::Ping(k)).unwrap();
            }
        }
    }

    fn on_message(&mut self, from: NodeId, msg: ToyMsg, ctx: &mut Ctx<'_, ToyMsg>) {
        match msg {
            ToyMsg::Ping(k) => {
                *self.pings.entry((from, k)).or_default() += 1;
                ctx.send(from, ToyMsg::Pong(k)).unwrap();
            }
            ToyMsg::Pong(k) => *self.pongs.entry((from, k)).or_default() += 1,
            ToyMsg::Rumor(o) => {
                *self.rumors.entry((from, o)).or_default() += 1;
                if self.known.insert(o) {
                    self.broadcast(ctx, o);
                }
            }
        }
    }

    fn on_timer(&mut self, t: TimerId, ctx: &mut Ctx<'_, ToyMsg>) {
        match t.0 {
            1 => {
                self.timer1 += 1;
                ctx.cancel_timer(TimerId(2));
            }
            _ => self.timer2 += 1,
        }
    }

    fn on_peer(&mut self, peer: NodeId, up: bool, _: &mut Ctx<'_, ToyMsg>) {
        if up {
            self.ups.insert(peer);
        } else {
            self.downs += 1;
        }
    }
}

pub fn ids(n: u16) -> Vec<NodeId> {
    (0..n).map(NodeId).collect()
}

/// Binds `n` loopback listeners on free ports; returns them with the `(id, address)` list.
pub fn loopback(n: u16) -> (Vec<std::net::TcpListener>, Vec<(NodeId, String)>) {
    let listeners: Vec<_> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let peers = listeners
        .iter()
        .enumerate()
        .map(|(i, l)| (NodeId(i as u16), l.local_addr().unwrap().to_string()))
        .collect();
    (listeners, peers)
}
