//! The driver-conformance suite: the same toy nodes on every driver. A fault-free run delivers
//! every message exactly once, timers fire (and cancelled ones do not), and every node sees its
//! peers come up.

mod common;

use std::time::Duration;

use common::{Toy, ids};
use txlab_net::NodeId;
use txlab_net::inproc::{InprocCluster, InprocConfig, LinkModel};
use txlab_net::step::{Schedule, Source, StepConfig, StepDriver};

const N: u16 = 3;

fn check_all(nodes: &[(NodeId, Toy)]) {
    assert_eq!(nodes.len(), N as usize);
    for (id, t) in nodes {
        t.assert_exactly_once(*id);
        assert_eq!(t.downs, 0, "{id}: a peer went down in a fault-free run");
    }
}

#[test]
fn step_fault_free() {
    let mut d = StepDriver::new(&ids(N), StepConfig::default(), |_| Toy::new(N as usize)).unwrap();
    let report = d
        .run(
            Source::Choices(Schedule::default()),
            |_| Ok(()),
            |w| w.nodes().all(|(_, t)| t.done()) && w.nodes().all(|(_, t)| t.timer1 == 1),
        )
        .unwrap();
    let nodes: Vec<_> = d
        .world()
        .nodes()
        .map(|(id, t)| (id, clone_toy(t)))
        .collect();
    check_all(&nodes);
    assert!(report.delivered > 0);
}

fn inproc(config: InprocConfig) {
    let c = InprocCluster::start(&ids(N), config, |_| Toy::new(N as usize)).unwrap();
    c.wait_until(Duration::from_secs(20), |t: &Toy| t.done())
        .unwrap();
    let stopped = c.stop().unwrap();
    check_all(&stopped.nodes);
    let counters: std::collections::BTreeMap<_, _> =
        stopped.metrics.counters().into_iter().collect();
    // Per node: PINGS pings and PINGS pongs per peer, one rumor per origin per peer.
    let per_node = (N as u64 - 1) * (2 * common::PINGS as u64 + N as u64);
    assert_eq!(counters["net.messages"], N as u64 * per_node);
    assert_eq!(counters["net.dropped"], 0);
}

#[test]
fn inproc_fault_free() {
    inproc(InprocConfig::default());
}

#[test]
fn inproc_fault_free_encoded_on_one_thread_with_a_link_model() {
    inproc(InprocConfig {
        threads: 1,
        encode: true,
        link: Some(LinkModel {
            latency: Duration::from_micros(100),
            jitter: Duration::from_micros(50),
            seed: 7,
        }),
        ..InprocConfig::default()
    });
}

/// Tests hold the step driver's nodes by reference; the toy's state is copied out for checks.
fn clone_toy(t: &Toy) -> Toy {
    Toy {
        n: t.n,
        pings: t.pings.clone(),
        pongs: t.pongs.clone(),
        rumors: t.rumors.clone(),
        known: t.known.clone(),
        timer1: t.timer1,
        timer2: t.timer2,
        ups: t.ups.clone(),
        downs: t.downs,
    }
}
