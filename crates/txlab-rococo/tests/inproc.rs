//! Threaded runs on the `inproc` driver: scaled TPC-C at 20 clients per server on 2 servers and
//! 2 client threads, recording on, for every protocol: the merged history is strictly
//! serializable with one order, and the merged shards pass TPC-C's consistency conditions.

use std::sync::Arc;
use std::time::Duration;
use txlab_core::RunLimit;
use txlab_net::inproc::LinkModel;
use txlab_rococo::{MemoryRecording, Protocol, RococoCluster, RunOptions};
use txlab_workload::Workload as _;

#[test]
fn scaled_tpcc_at_20_clients_per_server_is_strictly_serializable() {
    for protocol in Protocol::ALL {
        let tpcc = txlab_testkit::distributed::kit::small_tpcc(4, 1000);
        let cluster = RococoCluster::new(
            tpcc.clone(),
            protocol,
            2,
            txlab_testkit::distributed::kit::params(7),
        )
        .unwrap();
        tpcc.load(&cluster).unwrap();
        let opts = RunOptions {
            clients_per_server: 20,
            client_threads: 2,
            link: Some(LinkModel {
                latency: Duration::from_micros(50),
                jitter: Duration::ZERO,
                seed: 7,
            }),
            ..RunOptions::default()
        };
        let rec = Arc::new(MemoryRecording::new());
        let stats = cluster
            .run_recorded(RunLimit::Transactions(600), &opts, Arc::clone(&rec))
            .unwrap_or_else(|e| panic!("{}: {e}", protocol.name()));
        assert!(stats.committed >= 500, "{}: {stats:?}", protocol.name());
        assert_eq!(stats.counters.internal_errors(), 0, "{}", protocol.name());
        let recorded = rec.take();
        assert_eq!(recorded.len() as u64, stats.committed + stats.user_aborts);
        let checked = txlab_rococo::history::check(recorded);
        assert!(
            checked.report.is_serializable(),
            "{}: {:?}",
            protocol.name(),
            checked.report
        );
        checked.one_order.unwrap();
        tpcc.check(&cluster.snapshot().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", protocol.name()));
    }
}
