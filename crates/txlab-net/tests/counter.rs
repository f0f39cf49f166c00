//! The example protocol converges under every driver's faults, and its FIFO-assuming mutant is
//! caught by the step driver with a shrunk, replayable schedule.
//!
//! `TXLAB_PROPTEST_CASES` raises the case count (default 500); `TXLAB_STEP_SCHEDULE` replays one
//! schedule; `TXLAB_SIM_SEED` one simulation seed.

mod common;

use std::time::Duration;

use common::ids;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use txlab_net::NodeId;
use txlab_net::counter::{Counter, CounterConfig, Variant, expected_total};
use txlab_net::sim::{Crash, Partition, SimCluster, SimConfig};
use txlab_net::step::strategy::{Faults, choices};
use txlab_net::step::{Schedule, Source, StepConfig, StepDriver, StepFailure};

fn cases() -> u32 {
    std::env::var("TXLAB_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500)
}

/// Runs the counter on 3 nodes under `schedule`; every replica's invariant after every step,
/// convergence at the end.
fn run_step(variant: Variant, schedule: Schedule) -> Result<(), StepFailure> {
    let config = CounterConfig {
        variant,
        ..CounterConfig::default()
    };
    let step = StepConfig {
        max_steps: 20_000,
        ..StepConfig::default()
    };
    let mut d = StepDriver::new(&ids(3), step, move |_| Counter::new(config)).unwrap();
    let invariant =
        |w: &txlab_net::step::World<Counter>| w.nodes().try_for_each(|(id, c)| c.check(id));
    let all_converged = |w: &txlab_net::step::World<Counter>| {
        w.nodes().count() == 3 && w.nodes().all(|(_, c)| c.converged())
    };
    let report = d.run(Source::Choices(schedule), invariant, all_converged)?;
    let w = d.world();
    let want = expected_total(w.ids(), &config);
    for (id, c) in w.nodes() {
        if c.total != want || !c.converged() {
            return Err(StepFailure {
                step: 0,
                message: format!("{id} ended at {} of {want}", c.total),
                schedule: report.schedule,
            });
        }
    }
    Ok(())
}

fn property(variant: Variant, faults: Faults, cases: u32) -> Result<(), TestError<Schedule>> {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner.run(&choices(60, faults), |s| {
        run_step(variant, s).map_err(|f| TestCaseError::fail(f.to_string()))
    })
}

#[test]
fn converges_under_drops_duplicates_reordering_and_crashes() {
    if let Some(s) = txlab_net::step::schedule_from_env() {
        run_step(Variant::Correct, s.unwrap()).unwrap_or_else(|f| panic!("{f}"));
        return;
    }
    if let Err(e) = property(Variant::Correct, Faults::ALL, cases()) {
        panic!("{e}");
    }
}

#[test]
fn the_fifo_assuming_mutant_is_caught_and_its_schedule_shrinks() {
    let Err(TestError::Fail(reason, minimal)) = property(Variant::AssumesFifo, Faults::NONE, 500)
    else {
        panic!("the step driver did not catch the FIFO-assuming counter");
    };
    // The shrunk schedule is printed as a replayable list ...
    println!("caught: {reason}\nshrunk schedule: TXLAB_STEP_SCHEDULE='{minimal}'");
    assert!(
        reason.message().contains("TXLAB_STEP_SCHEDULE="),
        "{reason}"
    );
    // ... is short (a single reordering suffices) ...
    assert!(minimal.0.len() <= 4, "not shrunk: {minimal}");
    // ... and replays: the mutant fails it, the correct counter passes it.
    let replay: Schedule = minimal.to_string().parse().unwrap();
    assert!(run_step(Variant::AssumesFifo, replay.clone()).is_err());
    run_step(Variant::Correct, replay).unwrap();
}

#[test]
fn converges_in_simulation_through_partitions_and_a_crash() {
    let config = CounterConfig {
        increments: 5,
        ..CounterConfig::default()
    };
    for seed in txlab_net::sim::seeds(0..6).unwrap() {
        let sim = SimConfig {
            seed,
            partitions: vec![Partition {
                at: Duration::ZERO,
                duration: Duration::from_millis(100),
                side_a: vec![NodeId(0)],
                side_b: vec![NodeId(1), NodeId(2)],
            }],
            crashes: vec![Crash {
                at: Duration::from_millis(50),
                node: NodeId(2),
                restart_after: Duration::from_millis(100),
            }],
            ..SimConfig::default()
        };
        let mut c = SimCluster::new(&ids(3), sim, move |_| Counter::new(config)).unwrap();
        let want = expected_total(&ids(3), &config);
        let r = c.run_until(|nodes| {
            nodes
                .iter()
                .all(|(_, n)| n.is_some_and(|n| n.converged() && n.total == want))
        });
        let r = r.unwrap_or_else(|e| panic!("seed {seed} (TXLAB_SIM_SEED={seed}): {e}"));
        // Node 0 is cut off until 100 ms and node 2 down from 50 to 150 ms.
        assert!(
            r.elapsed >= Duration::from_millis(150),
            "seed {seed}: converged during faults"
        );
        c.view(|nodes| {
            for (id, n) in nodes {
                n.unwrap().check(*id).unwrap();
            }
        });
    }
}

#[test]
fn converges_on_inproc_and_tcp() {
    let config = CounterConfig {
        increments: 50,
        ..CounterConfig::default()
    };
    let want = expected_total(&ids(3), &config);
    let c = txlab_net::inproc::InprocCluster::start(
        &ids(3),
        txlab_net::inproc::InprocConfig::default(),
        move |_| Counter::new(config),
    )
    .unwrap();
    c.wait_until(Duration::from_secs(30), move |n: &Counter| n.converged())
        .unwrap();
    for s in c.stop().unwrap().nodes {
        assert_eq!(s.1.total, want);
    }
    use txlab_net::tcp::{Identity, TcpConfig, TcpNode};
    let (ls, peers) = common::loopback(3);
    let identity = Identity {
        protocol: "net-counter".into(),
        git_revision: "t".into(),
        cluster_digest: "d".into(),
    };
    let nodes: Vec<_> = ls
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let cfg = TcpConfig::new(NodeId(i as u16), peers.clone(), identity.clone());
            TcpNode::start_on(cfg, l, Counter::new(config)).unwrap()
        })
        .collect();
    for n in &nodes {
        n.wait_until(Duration::from_secs(30), |c: &Counter| c.finished())
            .unwrap();
    }
    for n in nodes {
        assert_eq!(n.stop().unwrap().node.total, want);
    }
}
