//! The turmoil driver: determinism by seed, faults on schedule, configuration checked first.

mod common;

use std::time::Duration;

use common::{Toy, ids};
use txlab_net::NodeId;
use txlab_net::sim::{Crash, Partition, SimCluster, SimConfig};

fn run(config: SimConfig) -> (u64, u64) {
    let mut c = SimCluster::new(&ids(3), config, |_| Toy::new(3)).unwrap();
    let r = c
        .run_until(|nodes| nodes.iter().all(|(_, t)| t.is_some_and(|t| t.done())))
        .unwrap();
    (r.trace_hash, r.messages)
}

#[test]
fn one_seed_one_trace_and_other_seeds_other_traces() {
    let cfg = |seed| SimConfig {
        seed,
        ..SimConfig::default()
    };
    let a = run(cfg(1));
    assert_eq!(a, run(cfg(1)));
    let b = run(cfg(2));
    assert_ne!(a.0, b.0);
    assert_eq!(
        a.1, b.1,
        "fault-free runs deliver the same messages, in other orders"
    );
}

#[test]
fn crash_and_bounce_keep_durable_state_and_peers_see_down_and_up() {
    use txlab_net::{Ctx, Node, TimerId};
    #[derive(Debug, Default)]
    struct Beat {
        starts: u32,
        downs: u32,
        ups: u32,
        beats: u32,
    }
    impl Node for Beat {
        type Msg = u32;
        fn on_start(&mut self, ctx: &mut Ctx<'_, u32>) {
            let n: u32 = ctx.durable().get_value(b"starts").unwrap().unwrap_or(0);
            ctx.durable().put_value(b"starts", &(n + 1)).unwrap();
            self.starts = n + 1;
            ctx.set_timer(Duration::from_millis(5), TimerId(0));
        }
        fn on_message(&mut self, _: NodeId, _: u32, _: &mut Ctx<'_, u32>) {
            self.beats += 1;
        }
        fn on_timer(&mut self, t: TimerId, ctx: &mut Ctx<'_, u32>) {
            let me = ctx.me();
            for p in ctx.nodes().to_vec() {
                if p != me {
                    ctx.send(p, 0).unwrap();
                }
            }
            ctx.set_timer(Duration::from_millis(5), t);
        }
        fn on_peer(&mut self, _: NodeId, up: bool, _: &mut Ctx<'_, u32>) {
            if up {
                self.ups += 1;
            } else {
                self.downs += 1;
            }
        }
    }
    let cfg = SimConfig {
        crashes: vec![Crash {
            at: Duration::from_millis(100),
            node: NodeId(1),
            restart_after: Duration::from_millis(100),
        }],
        partitions: vec![Partition {
            at: Duration::from_millis(400),
            duration: Duration::from_millis(100),
            side_a: vec![NodeId(0)],
            side_b: vec![NodeId(2)],
        }],
        ..SimConfig::default()
    };
    let mut c = SimCluster::new(&ids(3), cfg, |_| Beat::default()).unwrap();
    c.run_until(|n| {
        n[1].1.is_some_and(|b| b.starts == 2 && b.beats > 20)
            && n[0].1.is_some_and(|b| b.downs >= 2 && b.ups >= 4)
    })
    .unwrap();
    c.view(|n| {
        let n0 = n[0].1.unwrap();
        // Node 0 lost node 1 (crash) and node 2 (partition) and got both back.
        assert!(n0.downs >= 2 && n0.ups >= 4, "{n0:?}");
        assert_eq!(n[1].1.unwrap().starts, 2);
    });
}

#[test]
fn bad_configurations_are_refused_naming_the_value() {
    let check = |cfg: SimConfig, want: &str| {
        let e = SimCluster::new(&ids(2), cfg, |_| Toy::new(2))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want) && e.contains("accepted"), "{e}");
    };
    check(
        SimConfig {
            min_latency: Duration::from_millis(2),
            max_latency: Duration::from_millis(1),
            ..SimConfig::default()
        },
        "max_latency 1ms < min_latency 2ms",
    );
    check(
        SimConfig {
            fail_rate: 1.5,
            ..SimConfig::default()
        },
        "fail_rate 1.5",
    );
    check(
        SimConfig {
            repair_rate: -0.1,
            ..SimConfig::default()
        },
        "repair_rate -0.1",
    );
    check(
        SimConfig {
            partitions: vec![Partition {
                at: Duration::ZERO,
                duration: Duration::from_millis(1),
                side_a: vec![NodeId(0)],
                side_b: vec![NodeId(7)],
            }],
            ..SimConfig::default()
        },
        "unknown node 7",
    );
    check(
        SimConfig {
            crashes: vec![Crash {
                at: Duration::ZERO,
                node: NodeId(9),
                restart_after: Duration::ZERO,
            }],
            ..SimConfig::default()
        },
        "unknown node 9",
    );
}
