//! YCSB: mixes, determinism, distinct keys, declared = touched, values, bad input.

use super::support::{collect, declared, loaded, run_once};
use crate::stamp::read_stamp;
use crate::ycsb::{YcsbOp, YcsbOpKind};
use crate::{Generator, Workload, Ycsb, YcsbConfig, YcsbPreset};
use proptest::prelude::*;
use txlab_core::{Error, Program};

fn small(preset: YcsbPreset) -> YcsbConfig {
    YcsbConfig {
        records: 1_000,
        ..YcsbConfig::preset(preset)
    }
}

#[test]
fn presets_have_their_names_and_documented_defaults() {
    for (preset, name) in YcsbPreset::ALL
        .into_iter()
        .zip(["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-f"])
    {
        let cfg = YcsbConfig::preset(preset);
        assert_eq!(
            (cfg.records, cfg.ops_per_txn, cfg.payload_bytes, cfg.theta),
            (100_000, 10, 100, 0.0)
        );
        let ycsb = Ycsb::new(YcsbConfig {
            theta: 0.99,
            records: 10,
            ..cfg
        })
        .unwrap();
        assert_eq!(
            ycsb.name(),
            name,
            "sizes and skew do not change the preset's name"
        );
        assert_eq!(YcsbPreset::from_name(name).unwrap(), preset);
        assert_eq!(
            YcsbPreset::from_name(&name[5..].to_uppercase()).unwrap(),
            preset
        );
    }
    let custom = Ycsb::new(YcsbConfig {
        read_ratio: 0.7,
        ..small(YcsbPreset::A)
    })
    .unwrap();
    assert_eq!(custom.name(), "ycsb");
    let e = YcsbPreset::from_name("ycsb-d").unwrap_err().to_string();
    assert!(e.contains("ycsb-d") && e.contains("a, b, c, f"), "{e}");
    let params = custom.parameters();
    assert!(
        params.contains(&("read_ratio", "0.7".to_string())),
        "{params:?}"
    );
}

#[test]
fn preset_mixes_are_within_tolerance_over_100k_transactions() {
    const TXNS: usize = 100_000;
    for preset in YcsbPreset::ALL {
        let cfg = small(preset);
        let ycsb = Ycsb::new(cfg).unwrap();
        let mut generator = ycsb.generator(0, 42);
        let (mut reads, mut blind, mut rmw) = (0u64, 0u64, 0u64);
        for _ in 0..TXNS {
            let txn = generator.next();
            assert_eq!(txn.ops().len(), cfg.ops_per_txn);
            for op in txn.ops() {
                match op.kind {
                    YcsbOpKind::Read => reads += 1,
                    YcsbOpKind::BlindUpdate => blind += 1,
                    YcsbOpKind::ReadModifyWrite => rmw += 1,
                }
            }
        }
        let ops = (reads + blind + rmw) as f64;
        let read_fraction = reads as f64 / ops;
        // 10^6 operations: the standard deviation of a fraction is at most 0.0005.
        assert!(
            (read_fraction - cfg.read_ratio).abs() < 0.003,
            "{preset:?}: read fraction {read_fraction}"
        );
        match preset {
            YcsbPreset::C => assert_eq!(blind + rmw, 0, "C is read only"),
            YcsbPreset::F => assert_eq!(blind, 0, "F writes are all read-modify-writes"),
            _ => assert_eq!(rmw, 0, "{preset:?} writes are all blind"),
        }
    }
    // A custom mix: a third of the writes are read-modify-writes.
    let cfg = YcsbConfig {
        read_ratio: 0.2,
        rmw_ratio: 1.0 / 3.0,
        ..small(YcsbPreset::A)
    };
    let ycsb = Ycsb::new(cfg).unwrap();
    let ops: Vec<YcsbOp> = collect(&ycsb, 9, 0, 20_000, |t| t.ops().to_vec()).concat();
    let writes = ops.iter().filter(|o| o.kind != YcsbOpKind::Read).count() as f64;
    let rmw = ops
        .iter()
        .filter(|o| o.kind == YcsbOpKind::ReadModifyWrite)
        .count() as f64;
    assert!(
        (writes / ops.len() as f64 - 0.8).abs() < 0.005,
        "write fraction {}",
        writes / ops.len() as f64
    );
    assert!(
        (rmw / writes - 1.0 / 3.0).abs() < 0.005,
        "rmw fraction of writes {}",
        rmw / writes
    );
}

/// Keys follow the configured Zipf law through the whole generator (RNG, sampler, distinct-key
/// picker): a chi-square test over one-operation transactions passes against the analytic law
/// and fails against a law with theta off by 0.05.
#[test]
fn generated_keys_follow_the_zipf_law_and_a_wrong_theta_fails() {
    const RECORDS: u64 = 100;
    const TXNS: usize = 200_000;
    // Chi-square critical value, 99 degrees of freedom, p = 0.001.
    const LIMIT: f64 = 148.2;
    for theta in [0.0, 0.5, 0.99] {
        let cfg = YcsbConfig {
            records: RECORDS,
            ops_per_txn: 1,
            theta,
            ..small(YcsbPreset::A)
        };
        let keys = collect(&Ycsb::new(cfg).unwrap(), 17, 3, TXNS, |t| t.ops()[0].key);
        let mut counts = vec![0u64; RECORDS as usize];
        for key in keys {
            counts[key as usize] += 1;
        }
        let chi_square = |theta: f64| {
            let law = crate::Zipf::new(RECORDS, theta).unwrap();
            (0..RECORDS)
                .map(|i| {
                    let expected = law.probability(i) * TXNS as f64;
                    (counts[i as usize] as f64 - expected).powi(2) / expected
                })
                .sum::<f64>()
        };
        let right = chi_square(theta);
        assert!(right < LIMIT, "theta {theta}: chi-square {right:.1}");
        let wrong = chi_square(theta + 0.05);
        assert!(
            wrong > LIMIT,
            "theta {theta}: theta + 0.05 passes ({wrong:.1})"
        );
    }
}

/// The hot keys of a YCSB-sized table are the lowest keys, in order and unscrambled (as CCBench
/// draws them, so that side-by-side runs contend on the same records): key `i` is drawn with the
/// law's probability of item `i`, each of the ten hottest within 5 binomial standard deviations.
#[test]
fn the_hottest_keys_are_the_lowest_ones_with_the_zipf_probabilities() {
    const RECORDS: u64 = 100_000;
    const TXNS: usize = 300_000;
    let cfg = YcsbConfig {
        records: RECORDS,
        ops_per_txn: 1,
        theta: 0.99,
        ..YcsbConfig::preset(YcsbPreset::A)
    };
    let keys = collect(&Ycsb::new(cfg).unwrap(), 23, 0, TXNS, |t| t.ops()[0].key);
    let law = crate::Zipf::new(RECORDS, 0.99).unwrap();
    for i in 0..10u64 {
        let got = keys.iter().filter(|&&k| k == i).count() as f64;
        let p = law.probability(i);
        let expected = p * TXNS as f64;
        let sd = (TXNS as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (got - expected).abs() < 5.0 * sd,
            "key {i}: {got} draws, expected {expected:.0} ± {:.0}",
            5.0 * sd
        );
    }
}

#[test]
fn same_seed_and_thread_give_the_same_transactions_and_others_differ() {
    let ycsb = Ycsb::new(YcsbConfig {
        theta: 0.9,
        ..small(YcsbPreset::A)
    })
    .unwrap();
    let run = |seed, thread| collect(&ycsb, seed, thread, 500, |t| (t.ops().to_vec(), t.stamp()));
    assert_eq!(run(1, 0), run(1, 0));
    assert_ne!(run(1, 0), run(1, 1));
    assert_ne!(run(1, 0), run(2, 0));
    // A second workload object with the same config generates the same sequence.
    let again = Ycsb::new(*ycsb.config()).unwrap();
    assert_eq!(
        run(3, 5),
        collect(&again, 3, 5, 500, |t| (t.ops().to_vec(), t.stamp()))
    );
}

#[test]
fn keys_within_a_transaction_are_distinct_even_when_hot_and_dense() {
    for (records, ops, theta) in [
        (1_000, 10, 0.99),
        (20, 20, 2.0),
        (12, 10, 0.0),
        (5_000, 200, 1.5),
    ] {
        let cfg = YcsbConfig {
            records,
            ops_per_txn: ops,
            theta,
            ..small(YcsbPreset::A)
        };
        let ycsb = Ycsb::new(cfg).unwrap();
        let mut generator = ycsb.generator(3, 7);
        for _ in 0..2_000 {
            let mut keys: Vec<u64> = generator.next().ops().iter().map(|o| o.key).collect();
            assert!(keys.iter().all(|&k| k < records));
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), ops, "records {records} ops {ops} theta {theta}");
        }
    }
}

#[test]
fn generators_reuse_their_buffers() {
    let ycsb = Ycsb::new(small(YcsbPreset::F)).unwrap();
    let mut generator = ycsb.generator(0, 1);
    let first = generator.next().ops().as_ptr();
    for _ in 0..1_000 {
        assert_eq!(
            generator.next().ops().as_ptr(),
            first,
            "the op buffer was reallocated"
        );
    }
}

#[test]
fn clone_from_copies_the_transaction_into_the_kept_buffers() {
    let ycsb = Ycsb::new(small(YcsbPreset::F)).unwrap();
    let mut generator = ycsb.generator(0, 1);
    let mut kept = generator.next().clone();
    let buffer = kept.ops().as_ptr();
    for _ in 0..1_000 {
        let next = generator.next();
        assert_ne!(&kept, next, "each transaction has its own sequence number");
        kept.clone_from(next);
        assert_eq!(&kept, next);
        assert_eq!(kept.stamp(), next.stamp());
        assert_eq!(
            kept.ops().as_ptr(),
            buffer,
            "the kept op buffer was reallocated"
        );
    }
}

#[test]
fn declare_lists_exactly_what_run_touches_and_writes_carry_the_writer_stamp() {
    for preset in YcsbPreset::ALL {
        // 24-byte payloads exercise the read-modify-write counter in bytes 16..24.
        let cfg = YcsbConfig {
            records: 200,
            payload_bytes: 24,
            theta: 0.8,
            ..YcsbConfig::preset(preset)
        };
        let ycsb = Ycsb::new(cfg).unwrap();
        let engine = loaded(&ycsb);
        let table = ycsb.table();
        let mut generator = ycsb.generator(2, 5);
        for _ in 0..2_000 {
            let txn = generator.next();
            let before: Vec<Option<Vec<u8>>> = txn
                .ops()
                .iter()
                .map(|o| engine.peek(table, o.key))
                .collect();
            let (result, seen) = run_once(&engine, txn);
            result.unwrap();
            assert_eq!(seen, declared(txn), "{preset:?}");
            let kind = if txn.ops().iter().all(|o| o.kind == YcsbOpKind::Read) {
                "read_only"
            } else {
                "read_write"
            };
            assert_eq!(txn.kind(), kind);
            for (op, before) in txn.ops().iter().zip(before) {
                let before = before.unwrap();
                let after = engine.peek(table, op.key).unwrap();
                let counter = |v: &[u8]| u64::from_le_bytes(v[16..24].try_into().unwrap());
                match op.kind {
                    YcsbOpKind::Read => assert_eq!(after, before),
                    YcsbOpKind::BlindUpdate => assert_eq!(read_stamp(&after), Some(txn.stamp())),
                    YcsbOpKind::ReadModifyWrite => {
                        assert_eq!(read_stamp(&after), Some(txn.stamp()));
                        assert_eq!(counter(&after), counter(&before) + 1);
                    }
                }
            }
        }
    }
}

#[test]
fn writes_of_different_threads_and_transactions_differ() {
    let ycsb = Ycsb::new(small(YcsbPreset::A)).unwrap();
    let stamps: Vec<(u64, u64)> = (0..4)
        .flat_map(|t| collect(&ycsb, 1, t, 50, |x| x.stamp()))
        .collect();
    let mut unique = stamps.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), stamps.len());
    assert_eq!(stamps[0], (0, 0));
    assert_eq!(stamps[51], (1, 1));
}

#[test]
fn reads_of_an_unloaded_table_are_reported_not_panicked() {
    let ycsb = Ycsb::new(YcsbConfig {
        records: 10,
        ops_per_txn: 1,
        ..YcsbConfig::preset(YcsbPreset::C)
    })
    .unwrap();
    let engine = txlab_check::serial::SerialEngine::new(ycsb.schema());
    let mut generator = ycsb.generator(0, 0);
    let (result, _) = run_once(&engine, generator.next());
    let msg = result.unwrap_err().to_string();
    assert!(msg.contains("absent"), "{msg}");
}

fn expect_invalid(cfg: YcsbConfig, name: &str, value: &str, range: &str) {
    match Ycsb::new(cfg) {
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
    let ok = small(YcsbPreset::A);
    expect_invalid(
        YcsbConfig { records: 0, ..ok },
        "records",
        "0",
        "1..=1099511627776",
    );
    expect_invalid(
        YcsbConfig {
            records: (1 << 40) + 1,
            ..ok
        },
        "records",
        "1099511627777",
        "1..=",
    );
    expect_invalid(
        YcsbConfig {
            ops_per_txn: 0,
            ..ok
        },
        "ops_per_txn",
        "0",
        "1..=1000",
    );
    expect_invalid(
        YcsbConfig {
            ops_per_txn: 1001,
            ..ok
        },
        "ops_per_txn",
        "1001",
        "1..=1000",
    );
    expect_invalid(
        YcsbConfig {
            read_ratio: -0.1,
            ..ok
        },
        "read_ratio",
        "-0.1",
        "0..=1",
    );
    expect_invalid(
        YcsbConfig {
            read_ratio: f64::NAN,
            ..ok
        },
        "read_ratio",
        "NaN",
        "0..=1",
    );
    expect_invalid(
        YcsbConfig {
            rmw_ratio: 1.5,
            ..ok
        },
        "rmw_ratio",
        "1.5",
        "0..=1",
    );
    expect_invalid(
        YcsbConfig {
            payload_bytes: 0,
            ..ok
        },
        "payload_bytes",
        "0",
        "1..=1048576",
    );
    expect_invalid(
        YcsbConfig {
            payload_bytes: (1 << 20) + 1,
            ..ok
        },
        "payload_bytes",
        "1048577",
        "1..=1048576",
    );
    expect_invalid(YcsbConfig { theta: 11.0, ..ok }, "theta", "11", "0..=10");
    expect_invalid(
        YcsbConfig {
            theta: f64::NAN,
            ..ok
        },
        "theta",
        "NaN",
        "0..=10",
    );
    expect_invalid(YcsbConfig { theta: -1.0, ..ok }, "theta", "-1", "0..=10");
    // Edge values are accepted.
    for cfg in [
        YcsbConfig {
            records: 1,
            ops_per_txn: 1,
            ..ok
        },
        YcsbConfig {
            ops_per_txn: 1000,
            payload_bytes: 1 << 20,
            ..ok
        },
        YcsbConfig {
            read_ratio: 0.0,
            rmw_ratio: 1.0,
            theta: 10.0,
            ..ok
        },
    ] {
        Ycsb::new(cfg).unwrap();
    }
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        -2.0..12.0f64,
        proptest::num::f64::ANY,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_configs_are_accepted_or_rejected_never_panic(
        records in prop_oneof![0..2_000u64, Just(1u64 << 40), Just((1u64 << 40) + 1), any::<u64>()],
        ops_per_txn in prop_oneof![0..2_000usize, any::<usize>()],
        read_ratio in float(),
        rmw_ratio in float(),
        payload_bytes in prop_oneof![0..64usize, Just((1usize << 20) + 1), any::<usize>()],
        theta in float(),
    ) {
        let cfg = YcsbConfig { records, ops_per_txn, read_ratio, rmw_ratio, payload_bytes, theta };
        match Ycsb::new(cfg) {
            Ok(ycsb) => {
                // A valid config generates valid transactions.
                let mut generator = ycsb.generator(0, 0);
                let txn = generator.next();
                prop_assert_eq!(txn.ops().len(), ops_per_txn);
                prop_assert!(txn.ops().iter().all(|o| o.key < records));
            }
            Err(Error::InvalidConfig { name, value, expected }) => {
                let field = match name {
                    "records" => records.to_string(),
                    "ops_per_txn" => ops_per_txn.to_string(),
                    "read_ratio" => read_ratio.to_string(),
                    "rmw_ratio" => rmw_ratio.to_string(),
                    "payload_bytes" => payload_bytes.to_string(),
                    "theta" => theta.to_string(),
                    other => return Err(TestCaseError::fail(format!("unexpected field {other}"))),
                };
                prop_assert_eq!(value, field);
                prop_assert!(expected.contains("..="), "no range in {}", expected);
            }
            Err(other) => return Err(TestCaseError::fail(format!("not an InvalidConfig: {other:?}"))),
        }
    }
}
