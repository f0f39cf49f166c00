//! A concurrent bank on every interactive engine, built the way a dependent project builds txlab:
//! path dependencies, no target flags.
//!
//! ```text
//! CARGO_ENCODED_RUSTFLAGS= cargo run --manifest-path tests/consumer/Cargo.toml --locked \
//!     --target-dir target/consumer -- lock-free
//! ```
//!
//! The argument says what the 128-bit CAS must be on this build: `lock-free` (a CPU with
//! `cmpxchg16b`, detected at run time) or `locked` (run-time detection turned off with
//! `--cfg portable_atomic_no_outline_atomics`). With `lock-free`, the bank runs on all nine
//! engines; with `locked`, the three whose NWR pivot objects need the lock-free CAS must refuse
//! to start with an error that says so, and the other six run the bank.

use std::process::ExitCode;
use txlab_core::{
    Engine, Error, FixedValue, RetryPolicy, Schema, TableId, TableSpec, TxError, TxOps, TypedOps,
    run,
};
use txlab_mvto::{Mvto, MvtoConfig, MvtoNwr, MvtoNwrSingle};
use txlab_silo::{Silo, SiloConfig, SiloNwr, SiloNwrSingle};
use txlab_tictoc::{TicToc, TicTocConfig, TicTocNwr, TicTocNwrSingle};

#[cfg(target_feature = "cmpxchg16b")]
compile_error!(
    "cmpxchg16b is enabled at compile time: this build picked up target flags (build with \
     CARGO_ENCODED_RUSTFLAGS= to check what a dependent project gets)"
);

const ACCOUNTS: u64 = 64;
const INITIAL: i64 = 1_000;
const THREADS: u64 = 2;
const TRANSFERS: u64 = 5_000;

fn balance(tx: &mut dyn TxOps, table: TableId, account: u64) -> Result<i64, TxError> {
    tx.read_as(table, account)?
        .ok_or(TxError::user_abort("no such account"))
}

/// Moves money between accounts on `THREADS` threads and checks that the total is unchanged.
fn bank<E: Engine>(engine: E, accounts: TableId) -> Result<String, String> {
    for a in 0..ACCOUNTS {
        engine
            .load_as(accounts, a, &INITIAL)
            .map_err(|e| e.to_string())?;
    }
    let committed = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let engine = &engine;
                s.spawn(move || transfers(engine, accounts, t))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a bank thread panicked"))
            .sum::<Result<u64, TxError>>()
    })
    .map_err(|e| e.to_string())?;
    let mut worker = engine.worker().map_err(|e| e.to_string())?;
    let total = run(&mut worker, RetryPolicy::default(), |tx| {
        (0..ACCOUNTS).try_fold(0i64, |sum, a| Ok(sum + balance(tx, accounts, a)?))
    })
    .map_err(|e| e.to_string())?
    .value;
    let expected = ACCOUNTS as i64 * INITIAL;
    if total != expected {
        return Err(format!(
            "total {total} after {committed} transfers, expected {expected}"
        ));
    }
    if committed == 0 {
        return Err("no transfer committed".into());
    }
    Ok(format!("{committed} transfers committed, total {total}"))
}

fn transfers<E: Engine>(engine: &E, accounts: TableId, thread: u64) -> Result<u64, TxError> {
    let mut worker = engine.worker()?;
    let mut x = 0x2545_F491_4F6C_DD1D_u64 ^ (thread + 1);
    let mut committed = 0;
    for _ in 0..TRANSFERS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (from, to, amount) = (x % ACCOUNTS, (x >> 20) % ACCOUNTS, (x >> 40) as i64 % 100);
        if from == to {
            continue;
        }
        let result = run(&mut worker, RetryPolicy::default(), |tx| {
            let a = balance(tx, accounts, from)?;
            if a < amount {
                return Err(TxError::user_abort("insufficient funds"));
            }
            let b = balance(tx, accounts, to)?;
            tx.write_as(accounts, from, &(a - amount))?;
            tx.write_as(accounts, to, &(b + amount))?;
            Ok(())
        });
        match result {
            Ok(_) => committed += 1,
            Err(TxError::UserAbort(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(committed)
}

/// Runs the bank on a freshly built engine, or reports why it could not be built.
fn check<E: Engine>(
    built: Result<E, Error>,
    accounts: TableId,
    needs_lock_free_cas: bool,
    lock_free: bool,
) -> Result<String, String> {
    match built {
        Ok(engine) if lock_free || !needs_lock_free_cas => bank(engine, accounts),
        Ok(_) => Err("started although the 128-bit CAS is not lock-free".into()),
        Err(e) if !lock_free && needs_lock_free_cas => {
            let message = e.to_string();
            if message.contains("128-bit compare-and-swap") && message.contains("cmpxchg16b") {
                Ok(format!("refused to start: {message}"))
            } else {
                Err(format!("refused with an unclear error: {message}"))
            }
        }
        Err(e) => Err(format!("failed to start: {e}")),
    }
}

fn main() -> ExitCode {
    let expect = std::env::args().nth(1).unwrap_or_default();
    let expect_lock_free = match expect.as_str() {
        "lock-free" => true,
        "locked" => false,
        other => {
            eprintln!("unknown expectation {other:?}: accepted are lock-free and locked");
            return ExitCode::FAILURE;
        }
    };
    let lock_free = txlab_core::sync::atomic_u128_is_lock_free();
    println!("128-bit CAS lock-free: {lock_free}");
    if lock_free != expect_lock_free {
        eprintln!("expected the 128-bit CAS to be {expect} on this build");
        return ExitCode::FAILURE;
    }

    let mut schema = Schema::new();
    let accounts = match schema.add(TableSpec::hash("accounts", i64::SIZE)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("schema: {e}");
            return ExitCode::FAILURE;
        }
    };
    let s = &schema;
    let results = [
        (
            "silo",
            check(
                Silo::new(s, SiloConfig::default()),
                accounts,
                false,
                lock_free,
            ),
        ),
        (
            "silo-nwr",
            check(
                SiloNwr::new_nwr(s, SiloConfig::default()),
                accounts,
                true,
                lock_free,
            ),
        ),
        (
            "silo-nwr-single",
            check(
                SiloNwrSingle::new_with_omission(s, SiloConfig::default()),
                accounts,
                false,
                lock_free,
            ),
        ),
        (
            "tictoc",
            check(
                TicToc::new(s, TicTocConfig::default()),
                accounts,
                false,
                lock_free,
            ),
        ),
        (
            "tictoc-nwr",
            check(
                TicTocNwr::new_nwr(s, TicTocConfig::default()),
                accounts,
                true,
                lock_free,
            ),
        ),
        (
            "tictoc-nwr-single",
            check(
                TicTocNwrSingle::new_nwr_single(s, TicTocConfig::default()),
                accounts,
                false,
                lock_free,
            ),
        ),
        (
            "mvto",
            check(
                Mvto::new(s, MvtoConfig::default()),
                accounts,
                false,
                lock_free,
            ),
        ),
        (
            "mvto-nwr",
            check(
                MvtoNwr::new_nwr(s, MvtoConfig::default()),
                accounts,
                true,
                lock_free,
            ),
        ),
        (
            "mvto-nwr-single",
            check(
                MvtoNwrSingle::new_nwr_single(s, MvtoConfig::default()),
                accounts,
                false,
                lock_free,
            ),
        ),
    ];
    let mut failed = false;
    for (name, result) in results {
        match result {
            Ok(report) => println!("{name:<18} ok: {report}"),
            Err(e) => {
                println!("{name:<18} FAILED: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
