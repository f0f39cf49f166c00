//! The start-request micro-benchmark (§3.4: with one-hop tracking and GC, handling a start
//! request is constant work in the number of earlier transactions).
//!
//! One `rococo` server with its shard of scaled TPC-C (one warehouse of one district, 100
//! customers, 1,000 items, the full mix) and one client node with one closed-loop slot, on the
//! simulated network (turmoil, 50 µs per message, GC every 1 ms of virtual time), production
//! build of the server: no recording, no checked operations. Every transaction touches the
//! same district's keys, so the `N` transactions before the measured ones are all earlier
//! transactions on the same keys.
//!
//! The program only runs `N` transactions; the cost is read with callgrind, whose instruction
//! counts are exact on a noisy host and repeatable (the run is deterministic). The inclusive cost
//! of the server's start handler (`Server::start`, kept out of line for this) over a run of
//! `N + 100` transactions minus that over a run of `N`, divided by the start requests the 100
//! added, is the cost of a start request after `N` earlier transactions
//! (docs/results/rococo.md, "Start-request cost"):
//!
//! ```sh
//! cargo build --release -p txlab-rococo --example start_cost
//! for n in 10 110 10000 10100; do
//!   valgrind --tool=callgrind --callgrind-out-file=start-$n.out \
//!     target/release/examples/start_cost $n
//!   callgrind_annotate --inclusive=yes --tree=caller start-$n.out \
//!     | grep -B1 '\*  .*Server<W,R>>::start \['
//! done
//! ```
//!
//! It prints the transactions issued and the server's counters (vertices held, collected).

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;
use txlab_net::NodeId;
use txlab_net::sim::{SimCluster, SimConfig};
use txlab_rococo::client::Issue;
use txlab_rococo::cluster::node_factory;
use txlab_rococo::{NoRecording, Params, Protocol, RococoCluster, RococoNode};
use txlab_workload::{Tpcc, TpccConfig, Workload};

fn main() {
    let n: u64 = match std::env::args().nth(1).map(|a| a.parse()) {
        Some(Ok(n)) if n > 0 => n,
        other => {
            eprintln!(
                "usage: start_cost <transactions, a positive integer>; got {:?}",
                other.map(|r| r.map_err(|e| e.to_string()))
            );
            std::process::exit(2);
        }
    };
    let workload = Tpcc::new(TpccConfig {
        districts_per_warehouse: 1,
        customers_per_district: 100,
        items: 1000,
        scaled: true,
        ..TpccConfig::tiny(1)
    })
    .expect("a valid scaled TPC-C");
    let params = Params {
        gc_epoch: Some(Duration::from_millis(1)),
        ..Params::default()
    };
    let cluster = RococoCluster::new(workload.clone(), Protocol::Rococo, 1, params)
        .expect("one rococo server");
    workload.load(&cluster).expect("the load");
    let factory = node_factory(
        Arc::clone(cluster.shared()),
        cluster.take_shards().expect("the shards"),
        vec![vec![0]],
        Issue::Quota(n),
        Arc::new(NoRecording),
    );
    let factory = RefCell::new(factory);
    let sim = SimConfig {
        seed: 1,
        min_latency: Duration::from_micros(50),
        max_latency: Duration::from_micros(50),
        duration: Duration::from_secs(3600),
        ..SimConfig::default()
    };
    let mut c = SimCluster::new(&[NodeId(0), NodeId(1)], sim, move |id| {
        (factory.borrow_mut())(id)
    })
    .expect("the simulated cluster");
    c.run_until(|nodes| {
        nodes.iter().all(|(_, n)| match n {
            Some(RococoNode::Client(c)) => c.done() || c.fatal().is_some(),
            Some(RococoNode::Server(s)) => s.quiescent() || s.fatal().is_some(),
            None => false,
        })
    })
    .expect("the run ends");
    c.view(|nodes| {
        for (id, node) in nodes {
            match node {
                Some(RococoNode::Server(s)) => {
                    if let Some(f) = s.fatal() {
                        panic!("{id}: {f}");
                    }
                    let k = s.counters();
                    println!(
                        "server: graph max {} held {} collected {} internal errors {}",
                        k.graph_vertices_max,
                        k.graph_vertices,
                        k.gc_vertices,
                        k.internal_errors()
                    );
                }
                Some(RococoNode::Client(c)) => {
                    if let Some(f) = c.fatal() {
                        panic!("{id}: {f}");
                    }
                    println!("client: {n} transactions issued, done {}", c.done());
                }
                None => panic!("{id} is down"),
            }
        }
    });
}
