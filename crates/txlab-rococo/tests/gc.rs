//! Bounded state (§3.4): on the simulated network, the dependency graph a ROCOCO server holds
//! stays bounded with epoch GC however long the run, and grows with the run without it.
//!
//! Scaled TPC-C (2 servers × 2 districts) and pieced YCSB on 8 keys, 2 client nodes of 2 slots,
//! `SHORT` and `4 × SHORT` transactions per slot, GC every 1 ms or off (virtual time: a run
//! lasts tens of milliseconds of it, 50 µs to 1 ms per message). Every
//! run passes the kit's checks (strict serializability, one order, consistency). Asserted on the
//! graph sizes the servers count (`graph_vertices_max`: the most vertices one server held at a
//! start; `graph_vertices`: held at the end, summed over servers):
//!
//! - with GC, the peak of the 4× longer run is below twice the short run's, and below a tenth of
//!   what it committed;
//! - without GC, every committed transaction is still held at the end, and the peak of the 4×
//!   longer run is at least 3× the short run's.

use std::time::Duration;
use txlab_net::sim::SimConfig;
use txlab_rococo::{Params, PiecedWorkload, Protocol};
use txlab_testkit::distributed::kit::{Case, Summary, hot_ycsb, params, run_sim, small_tpcc};

const SHORT: u64 = 100;

fn run<W: PiecedWorkload>(workload: &W, quota: u64, gc: bool) -> Summary {
    let case = Case {
        workload: workload.clone(),
        protocol: Protocol::Rococo,
        servers: 2,
        clients: vec![vec![0, 1], vec![2, 3]],
        quota,
        params: Params {
            gc_epoch: gc.then(|| Duration::from_millis(1)),
            ..params(quota)
        },
    };
    let sim = SimConfig {
        seed: 1,
        min_latency: Duration::from_micros(50),
        max_latency: Duration::from_millis(1),
        duration: Duration::from_secs(600),
        ..SimConfig::default()
    };
    run_sim(&case, sim).unwrap_or_else(|e| panic!("quota {quota}, gc {gc}: {e}"))
}

fn bounded_with_gc_and_growing_without<W: PiecedWorkload>(workload: W) {
    let sizes = |s: &Summary| {
        (
            s.committed as u64,
            s.counters.graph_vertices_max,
            s.counters.graph_vertices,
        )
    };
    let (short_on, long_on) = (run(&workload, SHORT, true), run(&workload, 4 * SHORT, true));
    let (short_off, long_off) = (
        run(&workload, SHORT, false),
        run(&workload, 4 * SHORT, false),
    );
    let [son, lon, soff, loff] = [&short_on, &long_on, &short_off, &long_off].map(sizes);
    let name = workload.name();
    eprintln!(
        "{name}: (committed, peak, held at the end): GC short {son:?} long {lon:?}; \
         no GC short {soff:?} long {loff:?}"
    );
    assert!(
        long_on.counters.gc_vertices > 0,
        "{name}: GC collected nothing"
    );
    assert!(
        lon.1 < 2 * son.1,
        "{name}: GC peak grew: {son:?} -> {lon:?}"
    );
    assert!(
        lon.1 * 10 < lon.0,
        "{name}: GC peak {lon:?} not below committed / 10"
    );
    assert_eq!(long_off.counters.gc_vertices, 0);
    assert!(
        loff.2 >= loff.0,
        "{name}: no GC, yet vertices went: {loff:?}"
    );
    assert!(
        loff.1 >= 3 * soff.1,
        "{name}: no GC, peak did not grow: {soff:?} -> {loff:?}"
    );
}

#[test]
fn scaled_tpcc_graph_is_bounded_with_gc_and_grows_without() {
    bounded_with_gc_and_growing_without(small_tpcc(2, 1000));
}

#[test]
fn ycsb_graph_is_bounded_with_gc_and_grows_without() {
    bounded_with_gc_and_growing_without(hot_ycsb(8));
}
