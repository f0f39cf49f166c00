//! The graph checker agrees with the brute-force oracle on small random histories produced by
//! executing random transaction plans, serially and interleaved, against a multi-version store
//! model (`mv_model`).

mod mv_model;

use mv_model::{Op, Plan, ReadMode, execute};
use proptest::prelude::*;
use txlab_check::{AnomalyKind, CheckOptions, History, check, serializable_by_enumeration};

fn plan(keys: u64) -> impl Strategy<Value = Plan> {
    (
        prop::collection::vec((any::<bool>(), 0..keys), 1..=4),
        0u8..3,
        prop::bool::weighted(0.15),
    )
        .prop_map(|(ops, mode, abort)| Plan {
            ops: ops
                .into_iter()
                .map(|(w, k)| if w { Op::Write(k) } else { Op::Read(k) })
                .collect(),
            mode: match mode {
                0 => ReadMode::Latest,
                1 => ReadMode::Snapshot,
                _ => ReadMode::Dirty,
            },
            abort,
        })
}

/// Checks agreement; returns the verdict.
fn agree(h: &History) -> Result<bool, TestCaseError> {
    let report = check(h, CheckOptions::serializable());
    let oracle = serializable_by_enumeration(h).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(report.is_serializable(), oracle, "{}\n{:#?}", report, h);
    // The model never produces garbage reads or an inconsistent history.
    prop_assert_eq!(report.count(AnomalyKind::GarbageRead), 0);
    prop_assert_eq!(report.count(AnomalyKind::InvalidHistory), 0);
    Ok(oracle)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn checker_agrees_with_the_oracle(
        (plans, schedule, serial) in (2u64..=3).prop_flat_map(|keys| (
            prop::collection::vec(plan(keys), 2..=5),
            prop::collection::vec(0usize..8, 0..48),
            prop::bool::weighted(0.25),
        ))
    ) {
        let h = if serial {
            execute(&plans, |_, _| 0)
        } else {
            execute(&plans, |step, _| schedule.get(step).copied().unwrap_or(step))
        };
        let verdict = agree(&h)?;
        if serial {
            prop_assert!(verdict, "a serial execution must be serializable: {:#?}", h);
        }
    }
}

/// The same agreement over a fixed pseudo-random sweep, also checking that the generator is not
/// vacuous: both verdicts occur often, and every kind of read anomaly the model can make shows up.
#[test]
fn the_random_histories_cover_both_verdicts() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |m: u64| {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % m
    };
    let (mut yes, mut no) = (0, 0);
    let mut kinds = std::collections::BTreeSet::new();
    for _ in 0..1500 {
        let keys = 2 + next(2);
        let plans: Vec<Plan> = (0..2 + next(4))
            .map(|_| Plan {
                ops: (0..1 + next(4))
                    .map(|_| {
                        if next(2) == 0 {
                            Op::Read(next(keys))
                        } else {
                            Op::Write(next(keys))
                        }
                    })
                    .collect(),
                mode: [ReadMode::Latest, ReadMode::Snapshot, ReadMode::Dirty][next(3) as usize],
                abort: next(7) == 0,
            })
            .collect();
        let schedule: Vec<usize> = (0..40).map(|_| next(8) as usize).collect();
        let h = execute(&plans, |step, _| {
            schedule.get(step).copied().unwrap_or(step)
        });
        let report = check(&h, CheckOptions::serializable());
        kinds.extend(report.counts.keys().copied());
        match agree(&h) {
            Ok(true) => yes += 1,
            Ok(false) => no += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(yes > 150 && no > 150, "serializable {yes}, not {no}");
    for kind in [
        AnomalyKind::G1a,
        AnomalyKind::G1b,
        AnomalyKind::GSingle,
        AnomalyKind::G2Item,
    ] {
        assert!(
            kinds.contains(&kind),
            "{kind} never produced; got {kinds:?}"
        );
    }
}
