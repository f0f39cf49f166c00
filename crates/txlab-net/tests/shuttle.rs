//! The `inproc` driver under shuttle: its node threads and channels come from
//! `txlab_core::protocol::sync`, so shuttle schedules them, and the fault-free delivery contract (every
//! message exactly once, peers come up) holds on every schedule it tries, with one thread per node
//! and with all nodes on one thread.
//!
//! Shuttle's `recv_timeout` never times out (it has no clock), so nodes that wait for timers
//! cannot run under it; this node uses none.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-net --test shuttle --target-dir target/shuttle
//! ```
#![cfg(txlab_shuttle)]

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use txlab_net::inproc::{InprocCluster, InprocConfig};
use txlab_net::{Ctx, Node, NodeId};

const NODES: u16 = 3;
const PINGS: u32 = 2;

#[derive(Debug, Serialize, Deserialize)]
enum Msg {
    Ping(u32),
    Pong(u32),
}

/// Pings every peer `PINGS` times once the link is up and counts the pongs.
#[derive(Debug, Default)]
struct Echo {
    pongs: BTreeMap<(NodeId, u32), u32>,
    pings: u32,
}

impl Echo {
    fn done(&self) -> bool {
        self.pongs.len() as u32 == PINGS * u32::from(NODES - 1)
    }
}

impl Node for Echo {
    type Msg = Msg;

    fn on_peer(&mut self, peer: NodeId, up: bool, ctx: &mut Ctx<'_, Msg>) {
        if up && peer != ctx.me() {
            for i in 0..PINGS {
                ctx.send(peer, Msg::Ping(i)).unwrap();
            }
        }
    }

    fn on_message(&mut self, from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Msg>) {
        match msg {
            Msg::Ping(i) => {
                self.pings += 1;
                ctx.send(from, Msg::Pong(i)).unwrap();
            }
            Msg::Pong(i) => *self.pongs.entry((from, i)).or_default() += 1,
        }
    }
}

#[test]
fn inproc_delivers_exactly_once_on_every_schedule() {
    shuttle::check_random(
        || {
            let ids: Vec<NodeId> = (0..NODES).map(NodeId).collect();
            for threads in [1, NODES as usize] {
                let config = InprocConfig {
                    threads,
                    ..InprocConfig::default()
                };
                let c = InprocCluster::start(&ids, config, |_| Echo::default()).unwrap();
                c.wait_until(Duration::from_secs(60), Echo::done).unwrap();
                for (id, e) in c.stop().unwrap().nodes {
                    assert!(e.pongs.values().all(|&n| n == 1), "{id}: {:?}", e.pongs);
                    assert_eq!(e.pings, PINGS * u32::from(NODES - 1), "{id}");
                }
            }
        },
        100,
    );
}
