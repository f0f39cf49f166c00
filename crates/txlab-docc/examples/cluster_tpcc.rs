//! Figures 8 and 9 on one host: `DoccCluster` against `CalvinCluster` on TPC-C partitioned by
//! warehouse, 1 to 3 nodes on `txlab_net::inproc` with a one-way link latency, rounds
//! interleaved (every node count and engine once per round, ABAB). docs/results/docc.md,
//! "Multi-node".
//!
//! ```text
//! cargo run --release -p txlab-docc --example cluster_tpcc -- ROUNDS EPOCHS WAREHOUSES_PER_NODE LINK_US
//! ```
//!
//! Thread budget per node: DOCC 2 workers; Calvin 1 lock manager + 1 worker (the single-node
//! bar's budget), plus the node's own thread. Each run seals `EPOCHS` epochs of 1 ms with 256
//! transactions outstanding per node (closed loop), then drains. Prints one CSV line per run:
//! round, engine, nodes, committed/s in all, committed/s per node, multi-partition fraction,
//! restarts per commit, on-demand reads per multi-partition transaction, p50 and p99 latency.

use std::sync::Arc;
use std::time::Duration;
use txlab_core::Error;
use txlab_docc::calvin::Calvin;
use txlab_docc::cluster::inproc::{self, InprocOptions};
use txlab_docc::cluster::{Cluster, NodeConfig, Overlap, PartitionEngine, Pipeline, WorkloadFeed};
use txlab_docc::{Chain, Docc};
use txlab_net::inproc::LinkModel;
use txlab_workload::tpcc::partition::ByWarehouse;
use txlab_workload::{Tpcc, TpccConfig, Workload};

struct Shape {
    nodes: u16,
    per_node: u32,
    epochs: u32,
    link_us: u64,
}

fn run<E: PartitionEngine>(
    label: &str,
    round: u32,
    s: &Shape,
    workers: usize,
    make: impl Fn(&txlab_core::Schema) -> Result<E, Error>,
) -> Result<(), Error> {
    let tpcc = Tpcc::new(TpccConfig {
        warehouses: u32::from(s.nodes) * s.per_node,
        ..TpccConfig::default()
    })?;
    let schema = tpcc.schema();
    let part = ByWarehouse::new(tpcc.config(), *tpcc.tables(), u32::from(s.nodes))?;
    let cluster = Cluster::new(&schema, Arc::new(part.clone()), |_| make(&schema))?;
    tpcc.load(&cluster)?;
    let w = tpcc.config().warehouses as usize;
    let config = NodeConfig {
        epoch: Duration::from_millis(1),
        epochs: s.epochs,
        workers,
        retry: Duration::from_millis(20),
        concurrency: 256,
        keep_log: false,
        overlap: Overlap::On,
        pipeline: Pipeline::Off,
    };
    let nodes = (0..s.nodes)
        .map(|me| {
            // 16 clients per warehouse the node owns.
            let threads = (0..16 * w)
                .filter(|t| part.partition_of_warehouse((t % w) as u32 + 1) == u32::from(me));
            let feed = WorkloadFeed::with_threads(&tpcc, threads, 42 + u64::from(round), None);
            cluster.node(me, config, Box::new(feed))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let done = inproc::run(
        nodes,
        &InprocOptions {
            link: (s.link_us > 0).then(|| LinkModel {
                latency: Duration::from_micros(s.link_us),
                jitter: Duration::ZERO,
                seed: 1,
            }),
            timeout: Duration::from_secs(600),
            ..InprocOptions::default()
        },
    )?;
    let secs = done.elapsed.as_secs_f64();
    let (mut committed, mut multi, mut restarts, mut reads) = (0u64, 0u64, 0u64, 0u64);
    let mut latency = done.nodes[0].latency_us().clone();
    for (i, n) in done.nodes.iter().enumerate() {
        let st = n.stats();
        committed += st.committed;
        multi += st.multi_led;
        restarts += st.restarts;
        reads += st.remote_reads;
        if i > 0 {
            latency
                .add(n.latency_us())
                .map_err(|e| Error::Internal(e.to_string()))?;
        }
    }
    let c = committed.max(1) as f64;
    println!(
        "{round},{label},{},{:.0},{:.0},{:.4},{:.4},{:.3},{},{}",
        s.nodes,
        committed as f64 / secs,
        committed as f64 / secs / f64::from(s.nodes),
        multi as f64 / c,
        restarts as f64 / c,
        reads as f64 / multi.max(1) as f64,
        latency.value_at_quantile(0.5),
        latency.value_at_quantile(0.99),
    );
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .expect("ROUNDS EPOCHS WAREHOUSES_PER_NODE LINK_US")
        })
        .collect();
    let [rounds, epochs, per_node, link_us] = args[..] else {
        panic!("usage: ROUNDS EPOCHS WAREHOUSES_PER_NODE LINK_US");
    };
    println!(
        "round,engine,nodes,committed_per_s,per_node_per_s,multi_fraction,restarts_per_commit,remote_reads_per_multi,p50_us,p99_us"
    );
    for round in 0..rounds as u32 {
        for nodes in 1..=3u16 {
            let s = Shape {
                nodes,
                per_node: per_node as u32,
                epochs: epochs as u32,
                link_us,
            };
            run("docc", round, &s, 2, |schema| {
                Docc::<Chain>::builder().build(schema)
            })?;
            run("calvin", round, &s, 1, |schema| {
                Calvin::builder().build(schema)
            })?;
        }
    }
    Ok(())
}
