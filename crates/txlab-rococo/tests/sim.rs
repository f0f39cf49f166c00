//! The distributed kit on the `sim` driver (turmoil): seeds 0 to 19, latency 50 µs to 2 ms, a
//! 100 ms partition between a coordinator node and a server, one between the two servers (while
//! commits and status requests are in flight), and a coordinator node crashing and bouncing
//! (its transactions recovered from its `Durable` log, §3.5). Every check of the kit holds and
//! every transaction finishes after the partitions heal. `TXLAB_SIM_SEED` replays one seed.

mod common;

use common::{Case, hot_ycsb, params, run_sim, small_tpcc};
use std::time::Duration;
use txlab_net::NodeId;
use txlab_net::sim::{Crash, Partition, SimConfig, seeds};
use txlab_rococo::{Params, PiecedWorkload, Protocol};

fn sim(seed: u64) -> SimConfig {
    let ms = Duration::from_millis;
    SimConfig {
        seed,
        min_latency: Duration::from_micros(50),
        max_latency: ms(2),
        partitions: vec![
            Partition {
                at: ms(2),
                duration: ms(100),
                side_a: vec![NodeId(2)],
                side_b: vec![NodeId(0)],
            },
            Partition {
                at: ms(6),
                duration: ms(100),
                side_a: vec![NodeId(0)],
                side_b: vec![NodeId(1)],
            },
        ],
        crashes: vec![Crash {
            at: ms(4),
            node: NodeId(3),
            restart_after: ms(50),
        }],
        duration: Duration::from_secs(30),
        ..SimConfig::default()
    }
}

fn sim_params(seed: u64) -> Params {
    Params {
        log_requests: true,
        retransmit: Duration::from_millis(20),
        gc_epoch: Some(Duration::from_millis(10)),
        ..params(seed)
    }
}

fn every_seed<W: PiecedWorkload>(workload: W) {
    for protocol in Protocol::ALL {
        for seed in seeds(0..20).unwrap() {
            let case = Case {
                workload: workload.clone(),
                protocol,
                servers: 2,
                clients: vec![vec![0, 1], vec![2, 3]],
                quota: 4,
                params: sim_params(seed),
            };
            let s =
                run_sim(&case, sim(seed)).unwrap_or_else(|e| panic!("{}: {e}", protocol.name()));
            assert!(
                s.committed > 0,
                "{}: seed {seed}: nothing committed",
                protocol.name()
            );
        }
    }
}

#[test]
fn ycsb_through_partitions_and_a_coordinator_crash() {
    every_seed(hot_ycsb(4));
}

#[test]
fn scaled_tpcc_through_partitions_and_a_coordinator_crash() {
    every_seed(small_tpcc(2, 1000));
}
