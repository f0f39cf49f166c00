//! The distributed kit on the `step` driver: proptest-chosen delivery orders, drops, duplicates
//! and delays over pieced YCSB on hot keys and over scaled TPC-C, for every protocol. A failure
//! shrinks to a minimal schedule and prints how to replay it:
//! `TXLAB_STEP_CASE='<protocol> <keys|districts> <servers> <seed>' TXLAB_STEP_SCHEDULE='...'`.

mod common;

use common::{Case, cases, hot_ycsb, params, run_step, small_tpcc};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
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

/// Replays `TXLAB_STEP_CASE` / `TXLAB_STEP_SCHEDULE` if both are set and name `family`.
fn replay<W: PiecedWorkload>(family: &str, make: fn(Protocol, Shape) -> Case<W>) -> bool {
    let (Ok(case), Some(schedule)) = (
        std::env::var("TXLAB_STEP_CASE"),
        txlab_net::step::schedule_from_env(),
    ) else {
        return false;
    };
    let f: Vec<&str> = case.split_whitespace().collect();
    assert_eq!(
        f.len(),
        5,
        "TXLAB_STEP_CASE='<family> <protocol> <n> <servers> <seed>'"
    );
    if f[0] != family {
        return true;
    }
    let c = make(
        Protocol::from_name(f[1]).unwrap(),
        (
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
            f[4].parse().unwrap(),
        ),
    );
    if let Err(e) = run_step(&c, schedule.unwrap()) {
        panic!("{e}");
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
        let mut runner = TestRunner::new(Config {
            cases: n,
            failure_persistence: None,
            ..Config::default()
        });
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
            panic!("{}: {e}", protocol.name());
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
