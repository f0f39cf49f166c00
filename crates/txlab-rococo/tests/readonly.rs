//! Read-only holds (`Params::ro_hold_after`, `server::readonly`) on the simulated network, with
//! latencies of 50 µs to 5 ms (a range the simulation draws from: it truncates to whole
//! milliseconds). Every run passes the kit's checks (strict serializability, one order,
//! consistency).
//!
//! - Scaled TPC-C on 2 servers × 2 districts, 16 closed-loop slots (8 per district, all of
//!   them writing the districts' `D_NEXT_O_ID`), read-only transactions abandoned after 2
//!   disagreements, the same transactions with holds after one disagreement and without holds:
//!   without holds some are abandoned; with holds fewer are, the read-only transactions
//!   disagree less in total, and holds were used (held rounds, parked start requests).
//! - Pieced YCSB on 2 keys, 95 % of operations reads (most transactions read-only), holds from
//!   the first round and a 2 ms hold timeout: holds of overlapping read-only transactions keep
//!   the keys held without a gap, and a writer is let through once it has waited the timeout,
//!   so none waits much longer (`ro_parked_wait_us_max`).
//! - On the step driver (messages dropped, duplicated, delayed), holds whose release never
//!   comes expire, so every run ends with no hold kept.
//! - Out-of-range `ro_hold_timeout` values are refused with an error naming the field.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::cell::Cell;
use std::time::Duration;
use txlab_net::sim::SimConfig;
use txlab_net::step::strategy::choices;
use txlab_rococo::{Params, Protocol, RococoCluster};
use txlab_testkit::distributed::kit::{
    Case, FAULTS, Summary, cases, hot_ycsb, params, run_sim, run_step, runner, small_tpcc,
};
use txlab_workload::{Ycsb, YcsbConfig};

fn sim() -> SimConfig {
    SimConfig {
        seed: 3,
        min_latency: Duration::from_micros(50),
        max_latency: Duration::from_millis(5),
        duration: Duration::from_secs(600),
        ..SimConfig::default()
    }
}

fn tpcc(hold_after: Option<u32>) -> Summary {
    let case = Case {
        workload: small_tpcc(2, 1000),
        protocol: Protocol::Rococo,
        servers: 2,
        clients: vec![(0..8).collect(), (8..16).collect()],
        quota: 40,
        params: Params {
            ro_hold_after: hold_after,
            ro_max_restarts: 2,
            ..params(7)
        },
    };
    run_sim(&case, sim()).unwrap_or_else(|e| panic!("holds after {hold_after:?}: {e}"))
}

#[test]
fn holds_make_read_only_rounds_agree_under_contention() {
    let (held, free) = (tpcc(Some(1)), tpcc(None));
    let c = |s: &Summary| {
        (
            s.committed,
            s.counters.ro_retries,
            s.counters.ro_abandoned,
            s.counters.ro_held_rounds,
            s.counters.ro_parked,
            s.counters.ro_hold_expiries,
        )
    };
    eprintln!(
        "(committed, disagreements, abandoned, held rounds, parked starts, expired holds): \
         holds {:?}, none {:?}",
        c(&held),
        c(&free)
    );
    assert_eq!(free.counters.ro_held_rounds + free.counters.ro_parked, 0);
    assert!(held.counters.ro_held_rounds > 0 && held.counters.ro_parked > 0);
    assert!(
        free.counters.ro_abandoned > 0,
        "nothing abandoned without holds: the case has no contention to compare"
    );
    assert!(
        held.counters.ro_abandoned < free.counters.ro_abandoned,
        "holds did not lower the abandoned read-only transactions: {} with, {} without",
        held.counters.ro_abandoned,
        free.counters.ro_abandoned
    );
    assert!(
        held.counters.ro_retries < free.counters.ro_retries,
        "holds did not lower the disagreements: {} with, {} without",
        held.counters.ro_retries,
        free.counters.ro_retries
    );
}

#[test]
fn a_writer_waits_for_holds_at_most_the_timeout() {
    let timeout = Duration::from_millis(2);
    let case = Case {
        workload: Ycsb::new(YcsbConfig {
            records: 2,
            read_ratio: 0.95,
            ..*hot_ycsb(2).config()
        })
        .unwrap(),
        protocol: Protocol::Rococo,
        servers: 2,
        clients: vec![(0..8).collect(), (8..16).collect()],
        quota: 40,
        params: Params {
            ro_hold_after: Some(0),
            ro_hold_timeout: timeout,
            ..params(5)
        },
    };
    let s = run_sim(&case, sim()).unwrap_or_else(|e| panic!("{e}"));
    let c = &s.counters;
    eprintln!(
        "committed {}, held rounds {}, parked {}, let through at the timeout {}, longest wait {} \
         µs, expired holds {}",
        s.committed,
        c.ro_held_rounds,
        c.ro_parked,
        c.ro_park_timeouts,
        c.ro_parked_wait_us_max,
        c.ro_hold_expiries
    );
    // The hold timer fires at the deadline; the simulation steps 100 µs at a time.
    let bound = (timeout + Duration::from_millis(1)).as_micros() as u64;
    assert!(
        c.ro_parked_wait_us_max <= bound,
        "a writer waited {} µs at holds, more than the {timeout:?} timeout (bound {bound} µs)",
        c.ro_parked_wait_us_max
    );
    assert!(
        c.ro_park_timeouts > 0,
        "no writer stayed parked for the timeout: the holds never overlapped long enough"
    );
}

/// Holds whose release never comes (a dropped `RoRelease`, a read duplicated after it, a
/// retransmitted read) are dropped at their timeout: on the step driver, whose schedules drop,
/// duplicate and delay messages, a run ends only once every server is quiescent, which
/// includes keeping no hold.
#[test]
fn holds_whose_release_never_comes_expire() {
    let (mut runner, proptest_seed) = runner(cases(200), 2000);
    let expiries = Cell::new(0);
    let r = runner.run(&(any::<u64>(), choices(150, FAULTS)), |(seed, s)| {
        let case = Case {
            workload: hot_ycsb(3),
            protocol: Protocol::Rococo,
            servers: 2,
            clients: vec![vec![0, 1], vec![2, 3]],
            quota: 3,
            params: Params {
                ro_hold_after: Some(0),
                ..params(seed)
            },
        };
        let summary = run_step(&case, s).map_err(TestCaseError::fail)?;
        expiries.set(expiries.get() + summary.counters.ro_hold_expiries);
        Ok(())
    });
    if let Err(e) = r {
        panic!("TXLAB_SEED={proptest_seed}: {e}");
    }
    assert!(
        expiries.get() > 0,
        "no hold expired: the schedules never lost a release"
    );
}

#[test]
fn out_of_range_hold_timeouts_are_refused() {
    for bad in [Duration::ZERO, Duration::from_secs(3601), Duration::MAX] {
        let p = Params {
            ro_hold_timeout: bad,
            ..Params::default()
        };
        let e = RococoCluster::new(hot_ycsb(4), Protocol::Rococo, 2, p)
            .err()
            .unwrap_or_else(|| panic!("ro_hold_timeout {bad:?} accepted"))
            .to_string();
        assert!(
            e.contains("ro_hold_timeout") && e.contains(&format!("{bad:?}")) && e.contains("1µs"),
            "{bad:?}: {e}"
        );
    }
    for good in [Duration::from_micros(1), Duration::from_secs(3600)] {
        let p = Params {
            ro_hold_timeout: good,
            ..Params::default()
        };
        if let Err(e) = RococoCluster::new(hot_ycsb(4), Protocol::Rococo, 2, p) {
            panic!("ro_hold_timeout {good:?} refused: {e}");
        }
    }
}
