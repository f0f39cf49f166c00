//! The distributed kit on the `sim` driver (turmoil): seeds 0 to 19, latency 50 µs to 2 ms, a
//! 100 ms partition between a coordinator node and a server, one between the two servers (while
//! commits and status requests are in flight), and a coordinator node crashing and bouncing
//! (its transactions recovered from its `Durable` log, §3.5). Every check of the kit holds and
//! every transaction finishes after the partitions heal. `TXLAB_SIM_SEED` replays one seed.
//!
//! ROCOCO also runs every seed with read-only holds from the first round
//! (`Params::ro_hold_after = Some(0)`), so holds meet the partitions and the crash: a release
//! lost in a partition or never sent by the crashed coordinator leaves a hold that only its
//! timeout clears, and a server keeping a hold is not quiescent, so such a hold that stayed
//! would fail the run.

use txlab_net::sim::seeds;
use txlab_rococo::{PiecedWorkload, Protocol};
use txlab_testkit::distributed::kit::{
    Case, every_protocol_every_seed, hot_ycsb, partitions_and_a_crash, run_sim, sim_params,
    small_tpcc,
};

/// ROCOCO with holds from the first round through [`partitions_and_a_crash`], every seed; the
/// holds were used.
fn rococo_holding_from_the_first_round<W: PiecedWorkload>(workload: W) {
    let (mut held_rounds, mut expiries) = (0, 0);
    for seed in seeds(0..20).unwrap_or_else(|e| panic!("{e}")) {
        let mut params = sim_params(seed);
        params.ro_hold_after = Some(0);
        let case = Case {
            workload: workload.clone(),
            protocol: Protocol::Rococo,
            servers: 2,
            clients: vec![vec![0, 1], vec![2, 3]],
            quota: 4,
            params,
        };
        let s = run_sim(&case, partitions_and_a_crash(seed)).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.committed > 0, "seed {seed}: nothing committed");
        held_rounds += s.counters.ro_held_rounds;
        expiries += s.counters.ro_hold_expiries;
    }
    eprintln!(
        "{}: held rounds {held_rounds}, expired holds {expiries}",
        workload.name()
    );
    assert!(held_rounds > 0, "no read-only round held its keys");
}

#[test]
fn ycsb_through_partitions_and_a_coordinator_crash() {
    every_protocol_every_seed(hot_ycsb(4));
}

#[test]
fn scaled_tpcc_through_partitions_and_a_coordinator_crash() {
    every_protocol_every_seed(small_tpcc(2, 1000));
}

#[test]
fn ycsb_with_holds_through_partitions_and_a_coordinator_crash() {
    rococo_holding_from_the_first_round(hot_ycsb(4));
}

#[test]
fn scaled_tpcc_with_holds_through_partitions_and_a_coordinator_crash() {
    rococo_holding_from_the_first_round(small_tpcc(2, 1000));
}
