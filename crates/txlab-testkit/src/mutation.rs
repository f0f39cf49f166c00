//! Mutation proof: the kit must catch a protocol whose key check is broken.
//!
//! Each protocol crate builds a broken variant (its `mutation` feature, tests only) and asserts
//! `find_violation::<Broken>().is_some()`. [`find_violation`] runs the Hermitage schedules, then
//! random schedules, then threaded stress, and returns the first violation found.

use crate::Protocol;
use crate::hermitage::Hermitage;
use crate::replay::replay;
use crate::stress::{drive, smallbank_workload, ycsb_workload};

/// The first violation the kit finds on `P`, described; `None` if `P` passes everything.
pub fn find_violation<P: Protocol>() -> Option<String> {
    for test in Hermitage::ALL {
        match replay::<P>(&test.schedule()) {
            Ok(r) if !r.is_clean() => {
                return Some(format!(
                    "Hermitage {test:?}: {:?}\n{}",
                    r.violations, r.report
                ));
            }
            Ok(_) => {}
            Err(e) => return Some(format!("Hermitage {test:?}: replay error {e}")),
        }
    }
    if let Some(v) = crate::schedule::find_violation::<P>() {
        return Some(v);
    }
    for (records, theta) in [(10, 0.99), (1_000, 0.99)] {
        if let Err(e) = drive::<P, _>(&ycsb_workload(records, theta), 2, 2_000) {
            return Some(format!("YCSB {records} keys: {e}"));
        }
    }
    drive::<P, _>(&smallbank_workload(), 2, 2_000)
        .err()
        .map(|e| format!("SmallBank: {e}"))
}

/// Asserts the kit catches `P` (a deliberately broken protocol).
pub fn assert_caught<P: Protocol>() {
    match find_violation::<P>() {
        Some(v) => eprintln!(
            "{} caught as expected: {}",
            P::NAME,
            v.lines().next().unwrap_or("")
        ),
        None => panic!("{}: the kit did not catch a broken protocol", P::NAME),
    }
}
