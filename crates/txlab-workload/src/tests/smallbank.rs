//! SmallBank: mix, distinct customers, determinism, semantics against an independent model,
//! money conservation with `audit`, detection of corruption, declared = touched, bad input.

use super::support::{collect, declared, loaded, run_once};
use crate::smallbank::{LEDGER_SLOTS, MIX};
use crate::{Generator, SmallBank, SmallBankConfig, SmallBankKind, Workload};
use proptest::prelude::*;
use std::collections::BTreeMap;
use txlab_check::serial::SerialEngine;
use txlab_core::{Access, Error, Program, TxError};

fn config(customers: u64, theta: f64, initial_balance: i64, audit: bool) -> SmallBankConfig {
    SmallBankConfig {
        customers,
        theta,
        initial_balance,
        audit,
    }
}

fn balance(engine: &SerialEngine, table: txlab_core::TableId, key: u64) -> i64 {
    i64::from_le_bytes(engine.peek(table, key).unwrap().try_into().unwrap())
}

#[test]
fn defaults_schema_and_name() {
    let cfg = SmallBankConfig::default();
    assert_eq!(cfg.customers, 100_000);
    let bank = SmallBank::new(cfg).unwrap();
    assert_eq!(bank.name(), "smallbank");
    let names: Vec<String> = bank
        .schema()
        .tables()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(names, ["savings", "checking"]);
    let audited = SmallBank::new(SmallBankConfig { audit: true, ..cfg }).unwrap();
    let names: Vec<String> = audited
        .schema()
        .tables()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(names, ["savings", "checking", "ledger"]);
    assert!(audited.schema().tables().iter().all(|t| t.value_size == 8));
    assert_eq!(MIX.iter().map(|m| m.1).sum::<u32>(), 100);
}

#[test]
fn mix_matches_the_oltp_bench_weights_over_100k_and_pairs_are_distinct() {
    const TXNS: usize = 100_000;
    let bank = SmallBank::new(config(1_000, 0.99, 10_000, false)).unwrap();
    let mut generator = bank.generator(0, 123);
    let mut counts: BTreeMap<SmallBankKind, usize> = BTreeMap::new();
    for _ in 0..TXNS {
        let txn = generator.next();
        *counts.entry(txn.txn_kind()).or_default() += 1;
        let (a, b) = txn.customers();
        assert!(a < 1_000);
        match txn.txn_kind() {
            SmallBankKind::Amalgamate | SmallBankKind::SendPayment => {
                let b = b.expect("two customers");
                assert!(
                    b < 1_000 && b != a,
                    "{:?} on customers {a} and {b}",
                    txn.txn_kind()
                );
            }
            _ => assert_eq!(b, None),
        }
        assert_eq!(txn.kind(), txn.txn_kind().name());
    }
    for (kind, weight) in MIX {
        let observed = counts[&kind] as f64 / TXNS as f64;
        let expected = f64::from(weight) / 100.0;
        // 5 standard deviations of a fraction near 0.25 over 100K draws is 0.007.
        assert!(
            (observed - expected).abs() < 0.007,
            "{kind:?}: {observed} vs {expected}"
        );
    }
}

#[test]
fn same_seed_and_thread_give_the_same_transactions_and_others_differ() {
    let bank = SmallBank::new(config(10_000, 0.5, 100, true)).unwrap();
    let run = |seed, thread| {
        collect(&bank, seed, thread, 500, |t| {
            (t.txn_kind(), t.customers(), t.amount())
        })
    };
    assert_eq!(run(8, 1), run(8, 1));
    assert_ne!(run(8, 1), run(8, 2));
    assert_ne!(run(8, 1), run(9, 1));
}

/// An independent model of the documented semantics: `(savings, checking)` per customer.
#[derive(Debug, Clone, PartialEq)]
struct Model {
    accounts: Vec<(i64, i64)>,
}

impl Model {
    /// Applies one transaction; `Err(())` for the documented user aborts. Returns the bank's net
    /// change on success.
    fn apply(
        &mut self,
        kind: SmallBankKind,
        a: u64,
        b: Option<u64>,
        amount: i64,
    ) -> Result<i64, ()> {
        let a = a as usize;
        match kind {
            SmallBankKind::Balance => Ok(0),
            SmallBankKind::Amalgamate => {
                let b = b.unwrap() as usize;
                let (s, c) = self.accounts[a];
                self.accounts[a] = (0, 0);
                self.accounts[b].1 += s + c;
                Ok(0)
            }
            SmallBankKind::DepositChecking => {
                assert_eq!(amount, 130);
                self.accounts[a].1 += amount;
                Ok(amount)
            }
            SmallBankKind::SendPayment => {
                assert_eq!(amount, 500);
                let b = b.unwrap() as usize;
                if self.accounts[a].1 < amount {
                    return Err(());
                }
                self.accounts[a].1 -= amount;
                self.accounts[b].1 += amount;
                Ok(0)
            }
            SmallBankKind::TransactSavings => {
                assert_eq!(amount.abs(), 2020);
                if self.accounts[a].0 + amount < 0 {
                    return Err(());
                }
                self.accounts[a].0 += amount;
                Ok(amount)
            }
            SmallBankKind::WriteCheck => {
                assert_eq!(amount, 500);
                let (s, c) = self.accounts[a];
                let debit = if s + c < amount { amount + 1 } else { amount };
                self.accounts[a].1 = c - debit;
                Ok(-debit)
            }
        }
    }
}

#[test]
fn serial_execution_matches_the_model_conserves_money_and_passes_check() {
    // Few customers and small balances: overdrafts, penalties and both user aborts all occur.
    const CUSTOMERS: u64 = 40;
    let bank = SmallBank::new(config(CUSTOMERS, 0.9, 3_000, true)).unwrap();
    let engine = loaded(&bank);
    let tables = bank.tables();
    let ledger = tables.ledger.unwrap();
    let mut model = Model {
        accounts: vec![(3_000, 3_000); CUSTOMERS as usize],
    };
    let mut net = 0i64;
    let mut user_aborts: BTreeMap<SmallBankKind, usize> = BTreeMap::new();
    let mut penalties = 0usize;
    // Thread 1025 writes ledger slot 1025 % 1024 = 1.
    let mut generator = bank.generator(1025, 77);
    for _ in 0..20_000 {
        let txn = generator.next();
        let (a, b) = txn.customers();
        if txn.txn_kind() == SmallBankKind::WriteCheck {
            let (s, c) = model.accounts[a as usize];
            penalties += usize::from(s + c < txn.amount());
        }
        let expected = model.apply(txn.txn_kind(), a, b, txn.amount());
        let (result, seen) = run_once(&engine, txn);
        match (expected, result) {
            (Ok(delta), Ok(())) => {
                net += delta;
                assert_eq!(seen, declared(txn), "{:?}", txn.txn_kind());
            }
            (Err(()), Err(TxError::UserAbort(_))) => {
                *user_aborts.entry(txn.txn_kind()).or_default() += 1;
                let declared = declared(txn);
                for access in &seen {
                    assert!(
                        declared.iter().any(|d| d.0 == access.0 && d.1 == access.1),
                        "{access:?} touched but not declared by {:?}",
                        txn.txn_kind()
                    );
                }
            }
            (expected, got) => panic!("{:?}: model {expected:?}, engine {got:?}", txn.txn_kind()),
        }
    }
    for (key, &(s, c)) in model.accounts.iter().enumerate() {
        assert_eq!(
            balance(&engine, tables.savings, key as u64),
            s,
            "savings {key}"
        );
        assert_eq!(
            balance(&engine, tables.checking, key as u64),
            c,
            "checking {key}"
        );
    }
    assert_eq!(
        balance(&engine, ledger, 1),
        net,
        "ledger slot of thread 1025"
    );
    for slot in (0..LEDGER_SLOTS).filter(|&s| s != 1) {
        assert_eq!(balance(&engine, ledger, slot), 0);
    }
    assert!(
        user_aborts
            .get(&SmallBankKind::SendPayment)
            .copied()
            .unwrap_or(0)
            > 0,
        "{user_aborts:?}"
    );
    assert!(
        user_aborts
            .get(&SmallBankKind::TransactSavings)
            .copied()
            .unwrap_or(0)
            > 0,
        "{user_aborts:?}"
    );
    assert!(penalties > 0, "no WriteCheck penalty was exercised");
    assert!(
        net != 0,
        "the bank's total never changed, so the ledger was not exercised"
    );
    bank.check(&engine).unwrap();
}

#[test]
fn check_detects_a_corrupted_balance_and_reports_the_numbers() {
    let bank = SmallBank::new(config(100, 0.0, 1_000, true)).unwrap();
    let engine = loaded(&bank);
    let mut generator = bank.generator(0, 1);
    for _ in 0..500 {
        let _ = run_once(&engine, generator.next());
    }
    bank.check(&engine).unwrap();
    let checking = bank.tables().checking;
    let corrupted = balance(&engine, checking, 7) + 1;
    engine.poke(checking, 7, &corrupted.to_le_bytes());
    match bank.check(&engine) {
        Err(Error::Invariant(msg)) => {
            assert!(
                msg.contains("money not conserved") && msg.contains("difference 1"),
                "{msg}"
            );
            assert!(msg.contains("initial total 200000"), "{msg}");
        }
        other => panic!("corruption not detected: {other:?}"),
    }
    // Losing the ledger's record of a deposit is detected too.
    engine.poke(checking, 7, &(corrupted - 1).to_le_bytes());
    bank.check(&engine).unwrap();
    let ledger = bank.tables().ledger.unwrap();
    engine.poke(
        ledger,
        0,
        &(balance(&engine, ledger, 0) - 130).to_le_bytes(),
    );
    assert!(
        matches!(bank.check(&engine), Err(Error::Invariant(m)) if m.contains("difference 130"))
    );
}

#[test]
fn check_without_audit_verifies_presence_only_and_reports_missing_rows() {
    let bank = SmallBank::new(config(10, 0.0, 1_000, false)).unwrap();
    let engine = loaded(&bank);
    bank.check(&engine).unwrap();
    let empty = SerialEngine::new(bank.schema());
    match bank.check(&empty) {
        Err(Error::Invariant(msg)) => assert!(msg.contains("absent"), "{msg}"),
        other => panic!("an unloaded bank passed check: {other:?}"),
    }
}

#[test]
fn without_audit_no_ledger_is_declared_or_touched() {
    let bank = SmallBank::new(config(50, 0.5, 1_000_000, false)).unwrap();
    let engine = loaded(&bank);
    let mut generator = bank.generator(2, 2);
    for _ in 0..2_000 {
        let txn = generator.next();
        let (result, seen) = run_once(&engine, txn);
        // Amalgamate empties accounts, so later withdrawals from them abort as documented.
        if let Err(e) = result {
            assert!(matches!(e, TxError::UserAbort(_)), "{e:?}");
            continue;
        }
        assert_eq!(seen, declared(txn));
        let reads_only = seen.iter().all(|a| a.2 == Access::Read);
        assert_eq!(reads_only, txn.txn_kind() == SmallBankKind::Balance);
    }
}

fn expect_invalid(cfg: SmallBankConfig, name: &str, value: &str, range: &str) {
    match SmallBank::new(cfg) {
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
    let ok = SmallBankConfig::default();
    expect_invalid(
        SmallBankConfig { customers: 0, ..ok },
        "customers",
        "0",
        "2..=1099511627776",
    );
    expect_invalid(
        SmallBankConfig { customers: 1, ..ok },
        "customers",
        "1",
        "2..=",
    );
    expect_invalid(
        SmallBankConfig {
            customers: u64::MAX,
            ..ok
        },
        "customers",
        &u64::MAX.to_string(),
        "2..=",
    );
    expect_invalid(
        SmallBankConfig {
            initial_balance: -1,
            ..ok
        },
        "initial_balance",
        "-1",
        "0..=1000000000000",
    );
    expect_invalid(
        SmallBankConfig {
            initial_balance: i64::MAX,
            ..ok
        },
        "initial_balance",
        &i64::MAX.to_string(),
        "0..=",
    );
    expect_invalid(
        SmallBankConfig {
            theta: f64::NAN,
            ..ok
        },
        "theta",
        "NaN",
        "0..=10",
    );
    expect_invalid(
        SmallBankConfig { theta: 10.01, ..ok },
        "theta",
        "10.01",
        "0..=10",
    );
    SmallBank::new(SmallBankConfig {
        customers: 2,
        theta: 10.0,
        initial_balance: 0,
        audit: true,
    })
    .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_configs_are_accepted_or_rejected_never_panic(
        customers in prop_oneof![0..100u64, any::<u64>()],
        theta in prop_oneof![Just(f64::NAN), -1.0..11.0f64, proptest::num::f64::ANY],
        initial_balance in prop_oneof![-10..10i64, any::<i64>()],
        audit in any::<bool>(),
    ) {
        let cfg = SmallBankConfig { customers, theta, initial_balance, audit };
        match SmallBank::new(cfg) {
            Ok(bank) => {
                let mut generator = bank.generator(0, 0);
                for _ in 0..20 {
                    let (a, b) = generator.next().customers();
                    prop_assert!(a < customers && b.is_none_or(|b| b < customers && b != a));
                }
            }
            Err(Error::InvalidConfig { name, value, .. }) => {
                let field = match name {
                    "customers" => customers.to_string(),
                    "theta" => theta.to_string(),
                    "initial_balance" => initial_balance.to_string(),
                    other => return Err(TestCaseError::fail(format!("unexpected field {other}"))),
                };
                prop_assert_eq!(value, field);
            }
            Err(other) => return Err(TestCaseError::fail(format!("not an InvalidConfig: {other:?}"))),
        }
    }
}
