//! The distributed kit on the `sim` driver (turmoil): seeds 0 to 19, latency 50 µs to 2 ms, a
//! 100 ms partition between a coordinator node and a server, one between the two servers (while
//! commits and status requests are in flight), and a coordinator node crashing and bouncing
//! (its transactions recovered from its `Durable` log, §3.5). Every check of the kit holds and
//! every transaction finishes after the partitions heal. `TXLAB_SIM_SEED` replays one seed.

use txlab_testkit::distributed::kit::{every_protocol_every_seed, hot_ycsb, small_tpcc};

#[test]
fn ycsb_through_partitions_and_a_coordinator_crash() {
    every_protocol_every_seed(hot_ycsb(4));
}

#[test]
fn scaled_tpcc_through_partitions_and_a_coordinator_crash() {
    every_protocol_every_seed(small_tpcc(2, 1000));
}
