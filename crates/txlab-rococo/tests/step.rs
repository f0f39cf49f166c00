//! The distributed kit on the `step` driver: proptest-chosen delivery orders, drops, duplicates
//! and delays over pieced YCSB on hot keys and over scaled TPC-C, for every protocol. A failure
//! shrinks to a minimal schedule and prints how to replay it:
//! `TXLAB_STEP_CASE='<protocol> <keys|districts> <servers> <seed>' TXLAB_STEP_SCHEDULE='...'`.
//!
//! ROCOCO's read-only holds (`Params::ro_hold_after`) vary with the case's seed: from the first
//! round, after one disagreement (the default), or never.

use proptest::prelude::*;
use txlab_rococo::{Params, Protocol};
use txlab_testkit::distributed::kit::{
    Case, Shape, cases, every_protocol_under_every_schedule, hot_ycsb, params, run_spec, small_tpcc,
};

/// The kit's parameters, with read-only holds chosen by `seed`.
fn step_params(seed: u64) -> Params {
    Params {
        ro_hold_after: [Some(0), Some(1), None][(seed % 3) as usize],
        ..params(seed)
    }
}

fn ycsb(protocol: Protocol, (keys, servers, seed): Shape) -> Case<txlab_workload::Ycsb> {
    Case {
        workload: hot_ycsb(keys),
        protocol,
        servers,
        clients: vec![vec![0, 1], vec![2, 3]],
        quota: 2,
        params: step_params(seed),
    }
}

fn tpcc(protocol: Protocol, (districts, servers, seed): Shape) -> Case<txlab_workload::Tpcc> {
    Case {
        workload: small_tpcc(districts as u32, 1000),
        protocol,
        servers,
        clients: vec![vec![0, 1], vec![2, 3]],
        quota: 2,
        params: step_params(seed),
    }
}

#[test]
fn ycsb_on_hot_keys_under_every_schedule() {
    every_protocol_under_every_schedule(
        "ycsb",
        ycsb,
        (2u64..=4, 2u16..=3, any::<u64>()),
        cases(500),
    );
}

#[test]
fn scaled_tpcc_under_every_schedule() {
    every_protocol_under_every_schedule(
        "tpcc",
        tpcc,
        (Just(2u64), Just(2u16), any::<u64>()),
        cases(500),
    );
}

/// Regression schedules, replayed on every run: `(TXLAB_STEP_CASE, TXLAB_STEP_SCHEDULE)`,
/// without read-only holds (`ycsb_without_holds`: the schedules were recorded without them,
/// and a schedule replays the same run only with the same messages).
///
/// - A server collects a finished transaction (GC, §3.4), then a late commit request of
///   another one carries it as undecided. Were the server to bring it back as a vertex involving
///   only itself, it would wait for it to be COMMITTING with no other server to ask
///   (`status_errors`). Collected transactions stay collected (`Graph::merge_all`), and late
///   start and commit requests of collected transactions are ignored.
const YCSB_REGRESSIONS: &[(&str, &str)] =
    &[("ycsb rococo 2 2 3405232657703426386", REGRESSION_GC_REVIVAL)];

const REGRESSION_GC_REVIVAL: &str = concat!(
    "d4 d4 d6 d0 d5 d5 w1 w2 d3 d3 d0 x2 d0 w1 d0 x0 w0 d0 d0 d2 d1 d1 d1 w2 d1 d0 w1 u0 ",
    "d0 d0 d1 x2 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 w0 d0 d0 d0 d0 d0 d3 d1 w4 d0 d0 d0 d0 d0 ",
    "d0 d0 d0 d0 d0 d0 d0 d1 w0 d0 d1 d1 x0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 ",
    "d3 d0 d0 d0 d3 w5 d0 d0 d2 d2 x2 d2 d4 w4 d2 d0 w3 d1 d1 d0 d0 d0 d0 w2 w0 x0 d0 d0 ",
    "d0 d0 d0 d0 d0 d0 d0 u0",
);

/// [`ycsb`] without read-only holds, whatever the seed.
fn ycsb_without_holds(protocol: Protocol, shape: Shape) -> Case<txlab_workload::Ycsb> {
    let mut case = ycsb(protocol, shape);
    case.params.ro_hold_after = None;
    case
}

#[test]
fn ycsb_schedules_that_once_failed_pass() {
    for (spec, schedule) in YCSB_REGRESSIONS {
        run_spec(ycsb_without_holds, spec, schedule);
    }
}
