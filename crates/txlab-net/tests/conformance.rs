//! The driver-conformance suite: the same toy nodes on every driver. A fault-free run delivers
//! every message exactly once, timers fire (and cancelled ones do not), and every node sees its
//! peers come up.

mod common;

use std::time::Duration;

use common::{Toy, ids, loopback};
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

fn identity() -> txlab_net::tcp::Identity {
    txlab_net::tcp::Identity {
        protocol: "toy".into(),
        git_revision: "test".into(),
        cluster_digest: "d".into(),
    }
}

fn tcp(batching: bool) {
    use txlab_net::tcp::{TcpConfig, TcpNode};
    let (listeners, peers) = loopback(N);
    let nodes: Vec<_> = listeners
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let mut cfg = TcpConfig::new(NodeId(i as u16), peers.clone(), identity());
            cfg.batching = batching;
            TcpNode::start_on(cfg, l, Toy::new(N as usize)).unwrap()
        })
        .collect();
    for n in &nodes {
        n.wait_until(Duration::from_secs(20), |t: &Toy| t.done())
            .unwrap();
    }
    let mut all = Vec::new();
    let mut metrics = txlab_net::metrics::NetMetrics::default();
    for (i, n) in nodes.into_iter().enumerate() {
        let s = n.stop().unwrap();
        assert!(s.fatal.is_none());
        metrics.merge(&s.metrics);
        all.push((NodeId(i as u16), s.node));
    }
    for (id, t) in &all {
        t.assert_exactly_once(*id);
    }
    let t = metrics.total();
    let per_node = (N as u64 - 1) * (2 * common::PINGS as u64 + N as u64);
    assert_eq!(t.messages, N as u64 * per_node);
    assert_eq!((t.dropped, metrics.decode_errors), (0, 0));
    if !batching {
        assert_eq!(t.batches, t.messages);
    }
    assert!(metrics.rtt_ns.is_some());
}

#[test]
fn tcp_fault_free_batched() {
    tcp(true);
}

#[test]
fn tcp_fault_free_unbatched() {
    tcp(false);
}

#[test]
fn sim_fault_free() {
    use txlab_net::sim::{SimCluster, SimConfig};
    let mut c = SimCluster::new(&ids(N), SimConfig::default(), |_| Toy::new(N as usize)).unwrap();
    let report = c
        .run_until(|nodes| nodes.iter().all(|(_, t)| t.is_some_and(|t| t.done())))
        .unwrap();
    let nodes: Vec<_> = c.view(|v| {
        v.iter()
            .map(|(id, t)| (*id, clone_toy(t.unwrap())))
            .collect()
    });
    check_all(&nodes);
    let per_node = (N as u64 - 1) * (2 * common::PINGS as u64 + N as u64);
    assert_eq!(report.messages, N as u64 * per_node);
    let m = c.metrics();
    assert_eq!(m.total().messages, N as u64 * per_node);
    assert_eq!((m.total().dropped, m.decode_errors), (0, 0));
}
