//! The distributed kit on the `step` driver: proptest-chosen delivery orders, drops, duplicates
//! and delays over pieced YCSB on hot keys and over scaled TPC-C, for every protocol. A failure
//! shrinks to a minimal schedule and prints how to replay it:
//! `TXLAB_STEP_CASE='<protocol> <keys|districts> <servers> <seed>' TXLAB_STEP_SCHEDULE='...'`.

mod common;

use common::{Case, cases, hot_ycsb, params, run_step, runner, small_tpcc};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use txlab_net::step::Schedule;
use txlab_net::step::strategy::{Faults, choices};
use txlab_rococo::{PiecedWorkload, Protocol};

/// Message faults; crashes are left to the simulation (server recovery is out of scope).
const FAULTS: Faults = Faults {
    drop: true,
    duplicate: true,
    delay: true,
    crash: false,
};

/// `(keys or districts, servers, seed)`.
type Shape = (u64, u16, u64);

fn ycsb(protocol: Protocol, (keys, servers, seed): Shape) -> Case<txlab_workload::Ycsb> {
    Case {
        workload: hot_ycsb(keys),
        protocol,
        servers,
        clients: vec![vec![0, 1], vec![2, 3]],
        quota: 2,
        params: params(seed),
    }
}

fn tpcc(protocol: Protocol, (districts, servers, seed): Shape) -> Case<txlab_workload::Tpcc> {
    Case {
        workload: small_tpcc(districts as u32, 1000),
        protocol,
        servers,
        clients: vec![vec![0, 1], vec![2, 3]],
        quota: 2,
        params: params(seed),
    }
}

/// A case spec as printed on failure: `<family> <protocol> <keys|districts> <servers> <seed>`.
fn parse_case(spec: &str) -> (String, Protocol, Shape) {
    let f: Vec<&str> = spec.split_whitespace().collect();
    let usage = "TXLAB_STEP_CASE='<family> <protocol> <n> <servers> <seed>'";
    assert_eq!(f.len(), 5, "{usage}, got {spec:?}");
    let num = |s: &str| -> u64 {
        s.parse()
            .unwrap_or_else(|_| panic!("{usage}, got {spec:?}"))
    };
    let protocol = Protocol::from_name(f[1]).unwrap_or_else(|e| panic!("{e}"));
    (
        f[0].to_string(),
        protocol,
        (num(f[2]), num(f[3]) as u16, num(f[4])),
    )
}

/// Runs `spec` (of `family`) under `schedule`, panicking with the kit's error.
fn run_spec<W: PiecedWorkload>(make: fn(Protocol, Shape) -> Case<W>, spec: &str, schedule: &str) {
    let (_, protocol, shape) = parse_case(spec);
    let schedule: Schedule = schedule.parse().unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = run_step(&make(protocol, shape), schedule) {
        panic!("{spec}: {e}");
    }
}

/// Replays `TXLAB_STEP_CASE` / `TXLAB_STEP_SCHEDULE` if both are set and name `family`.
fn replay<W: PiecedWorkload>(family: &str, make: fn(Protocol, Shape) -> Case<W>) -> bool {
    let (Ok(case), Ok(schedule)) = (
        std::env::var("TXLAB_STEP_CASE"),
        std::env::var("TXLAB_STEP_SCHEDULE"),
    ) else {
        return false;
    };
    if parse_case(&case).0 == family {
        run_spec(make, &case, &schedule);
    }
    true
}

fn property<W: PiecedWorkload>(
    family: &str,
    make: fn(Protocol, Shape) -> Case<W>,
    shapes: impl Strategy<Value = Shape>,
    n: u32,
) {
    if replay(family, make) {
        return;
    }
    for protocol in Protocol::ALL {
        let (mut runner, seed) = runner(n, Config::default().max_shrink_iters);
        let r = runner.run(
            &(&shapes, choices(150, FAULTS)),
            |(shape, s): (Shape, Schedule)| {
                run_step(&make(protocol, shape), s).map(drop).map_err(|e| {
                    TestCaseError::fail(format!(
                        "{e}\nTXLAB_STEP_CASE='{family} {} {} {} {}'",
                        protocol.name(),
                        shape.0,
                        shape.1,
                        shape.2
                    ))
                })
            },
        );
        if let Err(e) = r {
            panic!("{} (TXLAB_SEED={seed}): {e}", protocol.name());
        }
    }
}

#[test]
fn ycsb_on_hot_keys_under_every_schedule() {
    property("ycsb", ycsb, (2u64..=4, 2u16..=3, any::<u64>()), cases(500));
}

#[test]
fn scaled_tpcc_under_every_schedule() {
    property(
        "tpcc",
        tpcc,
        (Just(2u64), Just(2u16), any::<u64>()),
        cases(500),
    );
}

/// Schedules that once failed, replayed on every run: `(TXLAB_STEP_CASE, TXLAB_STEP_SCHEDULE)`.
///
/// - A server collected a finished transaction (GC, §3.4), then a late commit request of
///   another one carried it as undecided: the server brought it back as a vertex involving
///   only itself and, waiting for it to be COMMITTING, had no other server to ask
///   (`status_errors`). Collected transactions now stay collected (`Graph::merge_all`), and
///   late start and commit requests of collected transactions are ignored.
const YCSB_REGRESSIONS: &[(&str, &str)] =
    &[("ycsb rococo 2 2 3405232657703426386", REGRESSION_GC_REVIVAL)];

const REGRESSION_GC_REVIVAL: &str = concat!(
    "d4 d4 d6 d0 d5 d5 w1 w2 d3 d3 d0 x2 d0 w1 d0 x0 w0 d0 d0 d2 d1 d1 d1 w2 d1 d0 w1 u0 ",
    "d0 d0 d1 x2 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 w0 d0 d0 d0 d0 d0 d3 d1 w4 d0 d0 d0 d0 d0 ",
    "d0 d0 d0 d0 d0 d0 d0 d1 w0 d0 d1 d1 x0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 d0 ",
    "d3 d0 d0 d0 d3 w5 d0 d0 d2 d2 x2 d2 d4 w4 d2 d0 w3 d1 d1 d0 d0 d0 d0 w2 w0 x0 d0 d0 ",
    "d0 d0 d0 d0 d0 d0 d0 u0",
);

#[test]
fn ycsb_schedules_that_once_failed_pass() {
    for (spec, schedule) in YCSB_REGRESSIONS {
        run_spec(ycsb, spec, schedule);
    }
}
