use std::sync::Arc;
use txlab_net::NodeId;
use txlab_net::step::{Source, StepConfig, StepDriver, World};
use txlab_rococo::client::Issue;
use txlab_rococo::cluster::node_factory;
use txlab_rococo::{MemoryRecording, Params, Protocol, RococoCluster, RococoNode};
use txlab_workload::{Workload, Ycsb, YcsbConfig};

type N = RococoNode<Ycsb, MemoryRecording>;

#[test]
fn ycsb_on_step() {
    for protocol in Protocol::ALL {
        for seed in 0..60 {
            let ycsb = Ycsb::new(YcsbConfig {
                records: 4,
                ops_per_txn: 2,
                read_ratio: 0.5,
                rmw_ratio: 0.5,
                payload_bytes: 8,
                theta: 0.0,
            })
            .unwrap();
            let params = Params {
                seed,
                checked: true,
                ..Params::default()
            };
            let cluster = RococoCluster::new(ycsb.clone(), protocol, 2, params).unwrap();
            ycsb.load(&cluster).unwrap();
            let shards = cluster.take_shards().unwrap();
            let rec = Arc::new(MemoryRecording::new());
            let factory = node_factory(
                Arc::clone(cluster.shared()),
                shards,
                vec![vec![0, 1], vec![2]],
                Issue::Quota(3),
                Arc::clone(&rec),
            );
            let ids: Vec<NodeId> = (0..4).map(NodeId).collect();
            let cfg = StepConfig {
                seed,
                max_steps: 50_000,
                ..StepConfig::default()
            };
            let mut d = StepDriver::new(&ids, cfg, factory).unwrap();
            let done = |w: &World<N>| {
                w.nodes().all(|(_, n)| match n {
                    RococoNode::Client(c) => c.done(),
                    RococoNode::Server(s) => s.quiescent(),
                })
            };
            let r = d.run(
                Source::Random {
                    steps: 300,
                    drop: 0.05,
                    duplicate: 0.05,
                    delay: 0.05,
                    crash: 0.0,
                },
                |_| Ok(()),
                done,
            );
            if let Err(f) = &r {
                let w = d.world();
                for (id, n) in w.nodes() {
                    eprintln!("{id}: {n:?}");
                }
                panic!("{protocol:?} seed {seed}: {f}");
            }
            for (_, n) in d.world().nodes() {
                match n {
                    RococoNode::Server(s) => {
                        assert!(s.fatal().is_none(), "{:?}", s.fatal());
                        assert_eq!(s.counters().internal_errors(), 0, "{:?}", s.counters());
                    }
                    RococoNode::Client(c) => assert!(c.fatal().is_none(), "{:?}", c.fatal()),
                }
            }
            let recorded = rec.take();
            assert_eq!(recorded.len(), 9);
            let dump = format!("{recorded:#?}");
            let checked = txlab_rococo::history::check(recorded);
            if !checked.passed() {
                eprintln!("{dump}");
            }
            assert!(
                checked.passed(),
                "{protocol:?} seed {seed}: {:?} {:?}",
                checked.report,
                checked.one_order
            );
        }
    }
}
