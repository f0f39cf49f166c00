//! The OCC-batching micro benchmark: shape of every transaction, determinism, declared = touched,
//! bad input.

use super::support::{collect, declared, loaded, run_once};
use crate::stamp::read_stamp;
use crate::{Generator, Micro, MicroConfig, Workload};
use txlab_core::{Access, Error, Program};

#[test]
fn defaults_are_the_papers_and_the_name_is_micro() {
    let cfg = MicroConfig::default();
    assert_eq!((cfg.keys, cfg.reads, cfg.writes), (100_000, 5, 5));
    let micro = Micro::new(cfg).unwrap();
    assert_eq!(micro.name(), "micro");
    assert_eq!(micro.schema().tables()[0].name, "objects");
    assert!(micro.parameters().contains(&("reads", "5".to_string())));
}

#[test]
fn every_transaction_reads_5_writes_5_with_exactly_one_shared_key_over_100k() {
    let micro = Micro::new(MicroConfig {
        theta: 0.9,
        ..MicroConfig::default()
    })
    .unwrap();
    let mut generator = micro.generator(1, 17);
    let mut shared_is_hottest = 0u64;
    for _ in 0..100_000 {
        let txn = generator.next();
        let mut set = txlab_core::AccessSet::default();
        txn.declare(&mut set);
        let reads: Vec<u64> = set
            .accesses
            .iter()
            .filter(|a| a.2.reads())
            .map(|a| a.1)
            .collect();
        let writes: Vec<u64> = set
            .accesses
            .iter()
            .filter(|a| a.2.writes())
            .map(|a| a.1)
            .collect();
        assert_eq!((reads.len(), writes.len()), (5, 5));
        let both: Vec<u64> = reads
            .iter()
            .copied()
            .filter(|k| writes.contains(k))
            .collect();
        assert_eq!(
            both,
            vec![txn.shared_key()],
            "exactly one key is read and written"
        );
        let mut all: Vec<u64> = set.accesses.iter().map(|a| a.1).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 9, "9 distinct keys");
        shared_is_hottest += u64::from(txn.shared_key() == 0);
    }
    // Key 0's probability at theta 0.9 over 100K keys is 1 / H(100000, 0.9) ~ 3.4 %.
    let p0 = crate::Zipf::new(100_000, 0.9).unwrap().probability(0);
    let observed = shared_is_hottest as f64 / 100_000.0;
    assert!(
        (observed - p0).abs() < 0.003,
        "key 0 chosen as shared key in {observed}, expected {p0}"
    );
}

#[test]
fn other_shapes_are_respected() {
    for (reads, writes) in [(1, 1), (1, 4), (3, 1), (8, 2)] {
        let micro = Micro::new(MicroConfig {
            keys: 50,
            reads,
            writes,
            ..MicroConfig::default()
        })
        .unwrap();
        let mut generator = micro.generator(0, 3);
        for _ in 0..200 {
            let txn = generator.next();
            assert_eq!(txn.read_only_keys().len(), reads - 1);
            assert_eq!(txn.write_only_keys().len(), writes - 1);
        }
    }
}

#[test]
fn same_seed_and_thread_give_the_same_transactions_and_others_differ() {
    let micro = Micro::new(MicroConfig::default()).unwrap();
    let run = |seed, thread| {
        collect(&micro, seed, thread, 300, |t| {
            (
                t.shared_key(),
                t.read_only_keys().to_vec(),
                t.write_only_keys().to_vec(),
                t.stamp(),
            )
        })
    };
    assert_eq!(run(4, 2), run(4, 2));
    assert_ne!(run(4, 2), run(4, 3));
    assert_ne!(run(4, 2), run(5, 2));
}

#[test]
fn declare_lists_exactly_what_run_touches_and_writes_are_stamped() {
    let micro = Micro::new(MicroConfig {
        keys: 100,
        theta: 0.99,
        value_bytes: 16,
        ..MicroConfig::default()
    })
    .unwrap();
    let engine = loaded(&micro);
    let mut generator = micro.generator(6, 8);
    for _ in 0..2_000 {
        let txn = generator.next();
        let (result, seen) = run_once(&engine, txn);
        result.unwrap();
        assert_eq!(seen, declared(txn));
        assert_eq!(seen.iter().filter(|a| a.2 == Access::ReadWrite).count(), 1);
        for &key in txn.write_only_keys().iter().chain([&txn.shared_key()]) {
            assert_eq!(
                read_stamp(&engine.peek(micro.table(), key).unwrap()),
                Some(txn.stamp())
            );
        }
    }
}

fn expect_invalid(cfg: MicroConfig, name: &str, value: &str, range: &str) {
    match Micro::new(cfg) {
        Err(e @ Error::InvalidConfig { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("{name} = {value}")) && msg.contains(range),
                "{msg}"
            );
        }
        other => panic!("{name} = {value} was not rejected: {other:?}"),
    }
}

#[test]
fn every_bad_field_is_rejected_with_its_value_and_range() {
    let ok = MicroConfig {
        keys: 20,
        ..MicroConfig::default()
    };
    expect_invalid(
        MicroConfig { keys: 0, ..ok },
        "keys",
        "0",
        "1..=1099511627776",
    );
    expect_invalid(MicroConfig { reads: 0, ..ok }, "reads", "0", "1..=20");
    expect_invalid(MicroConfig { writes: 0, ..ok }, "writes", "0", "1..=20");
    expect_invalid(
        MicroConfig {
            writes: usize::MAX,
            ..ok
        },
        "writes",
        &usize::MAX.to_string(),
        "1..=20",
    );
    expect_invalid(
        MicroConfig {
            reads: 11,
            writes: 11,
            ..ok
        },
        "reads + writes",
        "22",
        "at most keys + 1 = 21",
    );
    expect_invalid(
        MicroConfig {
            value_bytes: 0,
            ..ok
        },
        "value_bytes",
        "0",
        "1..=1048576",
    );
    expect_invalid(
        MicroConfig {
            theta: f64::INFINITY,
            ..ok
        },
        "theta",
        "inf",
        "0..=10",
    );
    // reads + writes - 1 == keys is the largest accepted shape.
    Micro::new(MicroConfig {
        reads: 10,
        writes: 11,
        ..ok
    })
    .unwrap();
    Micro::new(MicroConfig {
        keys: 1,
        reads: 1,
        writes: 1,
        ..ok
    })
    .unwrap();
}
