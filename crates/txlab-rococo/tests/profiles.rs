//! Random transaction profiles (`txlab_testkit::distributed::profiles`) through the offline
//! SC-graph checker and the servers:
//!
//! - the generator is not vacuous: it yields profiles without SC-cycles, profiles whose
//!   SC-cycles ROCOCO can reorder (plain chopping cannot), and profiles with an unreorderable
//!   SC-cycle;
//! - the checker's verdict equals the brute-force enumeration's on every profile;
//! - on the step driver under random schedules (drops, duplicates, delays), every profile the
//!   checker accepts runs strictly serializable with one order under `rococo` (at least 500
//!   accepted profiles by default), and every profile runs so under `2pl-2pc` and `occ-2pc`
//!   (they need no checker);
//! - profiles the checker rejects, forced through ROCOCO with `unchecked`, produce a violation
//!   the kit finds in some case.
//!
//! A failure prints the spec (JSON), the protocol and `TXLAB_STEP_SCHEDULE`; `TXLAB_SEED` and
//! `TXLAB_PROPTEST_CASES` work as in the rest of the kit.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestCaseError;
use std::cell::Cell;
use txlab_core::pieces::PieceProfiles;
use txlab_net::step::Schedule;
use txlab_net::step::strategy::{Faults, choices};
use txlab_rococo::sc::{ScOptions, ScReport, analyze};
use txlab_rococo::{Params, Protocol};
use txlab_testkit::distributed::kit::{Case, cases, params, run_step, runner};
use txlab_testkit::distributed::profiles::{
    ProfileSpec, RandomPieces, brute_force_safe, profile_spec,
};

const FAULTS: Faults = Faults {
    drop: true,
    duplicate: true,
    delay: true,
    crash: false,
};

fn check(spec: &ProfileSpec) -> ScReport {
    let w = RandomPieces::new(spec.clone()).unwrap();
    analyze(&spec.profiles(), &w.table_layouts(), ScOptions::default()).unwrap()
}

fn case(
    spec: &ProfileSpec,
    protocol: Protocol,
    servers: u16,
    params: Params,
) -> Case<RandomPieces> {
    Case {
        workload: RandomPieces::new(spec.clone()).unwrap(),
        protocol,
        servers,
        clients: vec![vec![0, 1], vec![2, 3]],
        quota: 2,
        params,
    }
}

#[test]
fn the_checker_agrees_with_brute_force_and_sees_every_kind_of_profile() {
    let (mut runner, seed) = runner(cases(1000), 0);
    let mut kinds = [0u32; 3];
    for _ in 0..cases(1000) {
        let spec = profile_spec(0.35).new_tree(&mut runner).unwrap().current();
        let r = check(&spec);
        assert_eq!(
            r.is_safe(),
            brute_force_safe(&spec.profiles()),
            "TXLAB_SEED={seed}: {}\n{r}",
            serde_json::to_string(&spec).unwrap()
        );
        let kind = match (r.is_safe(), r.chopping.blocks_with_sc_cycles) {
            (true, 0) => 0,
            (true, _) => 1,
            (false, _) => 2,
        };
        kinds[kind] += 1;
    }
    eprintln!("no SC-cycle / reorderable only / unreorderable: {kinds:?}");
    let n = cases(1000) / 20;
    assert!(
        kinds.iter().all(|&k| k >= n),
        "no SC-cycle / reorderable only / unreorderable: {kinds:?}, each at least {n} wanted"
    );
}

#[test]
fn accepted_profiles_run_serializably_under_every_schedule() {
    let (mut runner, seed) = runner(cases(1400), 64);
    let (rococo_runs, committed) = (Cell::new(0u32), Cell::new(0usize));
    let r = runner.run(
        &(
            profile_spec(0.25),
            2u16..=3,
            any::<u64>(),
            choices(150, FAULTS),
        ),
        |(spec, servers, s, schedule): (ProfileSpec, u16, u64, Schedule)| {
            let safe = check(&spec).is_safe();
            for protocol in Protocol::ALL {
                if protocol == Protocol::Rococo && !safe {
                    continue;
                }
                rococo_runs.set(rococo_runs.get() + u32::from(protocol == Protocol::Rococo));
                let summary =
                    run_step(&case(&spec, protocol, servers, params(s)), schedule.clone())
                        .map_err(|e| {
                            TestCaseError::fail(format!(
                                "{} on {} servers, seed {s}: {}\n{e}",
                                protocol.name(),
                                servers,
                                serde_json::to_string(&spec).unwrap()
                            ))
                        })?;
                committed.set(committed.get() + summary.committed);
            }
            Ok(())
        },
    );
    if let Err(e) = r {
        panic!("TXLAB_SEED={seed}: {e}");
    }
    let (ran, committed) = (rococo_runs.get(), committed.get());
    eprintln!("{ran} accepted profiles ran on rococo; {committed} commits in all");
    assert!(
        ran >= cases(1400) * 5 / 14,
        "only {ran} accepted profiles ran on rococo"
    );
    assert!(
        committed >= cases(1400) as usize,
        "only {committed} commits"
    );
}

#[test]
fn rejected_profiles_forced_through_rococo_break_in_some_case() {
    let (mut runner, seed) = runner(cases(500), 0);
    let mut rejected = 0u32;
    for _ in 0..cases(500) {
        let spec = profile_spec(0.6).new_tree(&mut runner).unwrap().current();
        if check(&spec).is_safe() {
            continue;
        }
        rejected += 1;
        let schedule = choices(150, FAULTS)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let mut p = params(u64::from(rejected));
        p.unchecked = true;
        if let Err(e) = run_step(&case(&spec, Protocol::Rococo, 2, p), schedule) {
            eprintln!("rejected profile {rejected} broke rococo: {e}");
            // A violation of the kit's checks, not a run that failed to finish.
            assert!(
                ["not strictly serializable", "one order", "internal errors"]
                    .iter()
                    .any(|v| e.contains(v)),
                "{e}"
            );
            return;
        }
    }
    panic!("TXLAB_SEED={seed}: none of {rejected} rejected profiles broke ROCOCO");
}

/// A profile whose deferrable piece the checker promotes (it writes `b`, which an immediate
/// piece of the other type reads): the servers must run it as immediate, or they see an
/// immediate–deferrable edge (`mixed_edges`).
#[test]
fn a_promoted_piece_runs_as_immediate() {
    let spec: ProfileSpec = serde_json::from_str(concat!(
        r#"{"keys":1,"types":[[{"immediate":false,"target":"AFirst","writes":false,"input":null},"#,
        r#"{"immediate":false,"target":"B","writes":true,"input":null}],"#,
        r#"[{"immediate":false,"target":"AFirst","writes":false,"input":null},"#,
        r#"{"immediate":true,"target":"B","writes":false,"input":null}]]}"#
    ))
    .unwrap();
    let r = check(&spec);
    assert!(r.is_safe(), "{r}");
    assert_eq!(r.promotions.len(), 1, "{r}");
    let schedule: Schedule = "d0 d2 d0 d0 w3 d2 u1 u2 d1 u2 w1 d0 d0 d0 d0 d1 d0 d0 x0 x0"
        .parse()
        .unwrap();
    let s = run_step(&case(&spec, Protocol::Rococo, 2, params(56380)), schedule).unwrap();
    assert_eq!(s.counters.mixed_edges, 0);
    assert!(s.committed > 0);
}
