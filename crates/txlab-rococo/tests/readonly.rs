//! Read-only holds (`Params::ro_hold_after`, `server::readonly`) on the simulated network:
//! scaled TPC-C on 2 servers × 2 districts with 16 closed-loop slots (8 per district, all of
//! them writing the districts' `D_NEXT_O_ID`), the same transactions with holds after one
//! disagreement and without holds. Both runs pass the kit's checks (strict serializability, one
//! order, consistency); with holds the read-only transactions disagree less in total and none
//! is abandoned, and holds were used (held rounds, parked start requests).

use std::time::Duration;
use txlab_net::sim::SimConfig;
use txlab_rococo::{Params, Protocol};
use txlab_testkit::distributed::kit::{Case, Summary, params, run_sim, small_tpcc};

fn run(hold_after: Option<u32>) -> Summary {
    let case = Case {
        workload: small_tpcc(2, 1000),
        protocol: Protocol::Rococo,
        servers: 2,
        clients: vec![(0..8).collect(), (8..16).collect()],
        quota: 40,
        params: Params {
            ro_hold_after: hold_after,
            // Disagreements are what is compared: never abandon, so both runs finish the same
            // read-only transactions.
            ro_max_restarts: u32::MAX,
            ..params(7)
        },
    };
    let sim = SimConfig {
        seed: 3,
        min_latency: Duration::from_micros(50),
        max_latency: Duration::from_millis(1),
        duration: Duration::from_secs(600),
        ..SimConfig::default()
    };
    run_sim(&case, sim).unwrap_or_else(|e| panic!("holds after {hold_after:?}: {e}"))
}

#[test]
fn holds_make_read_only_rounds_agree_under_contention() {
    let (held, free) = (run(Some(1)), run(None));
    let c = |s: &Summary| {
        (
            s.committed,
            s.counters.ro_retries,
            s.counters.ro_held_rounds,
            s.counters.ro_parked,
            s.counters.ro_hold_expiries,
        )
    };
    eprintln!(
        "(committed, disagreements, held rounds, parked starts, expired holds): \
         holds {:?}, none {:?}",
        c(&held),
        c(&free)
    );
    assert_eq!(held.committed, free.committed);
    assert_eq!(held.counters.ro_abandoned, 0);
    assert_eq!(free.counters.ro_held_rounds + free.counters.ro_parked, 0);
    assert!(held.counters.ro_held_rounds > 0 && held.counters.ro_parked > 0);
    assert!(
        free.counters.ro_retries > 0,
        "no disagreement without holds: the case has no contention to compare"
    );
    assert!(
        held.counters.ro_retries < free.counters.ro_retries,
        "holds did not lower the disagreements: {} with, {} without",
        held.counters.ro_retries,
        free.counters.ro_retries
    );
}
