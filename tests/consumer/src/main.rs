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
//! interactive OCC engines; with `locked`, the three whose NWR pivot objects need the lock-free
//! CAS must refuse to start with an error that says so, and the other six run the bank. The three
//! DOCC modes run it too, through DOCC's interactive entry point, built through the `txlab`
//! facade (whose default features compile every library crate). Every engine is built by
//! name through its family's builder; unknown names and other bad input must be refused with an
//! error naming the value.

use std::process::ExitCode;
use txlab_core::{
    Engine, EngineVisitor, Error, FixedValue, RetryPolicy, Schema, TableId, TableSpec, TxError,
    TxOps, TypedOps, run,
};
use txlab_mvto::Mvto;
use txlab_silo::{Silo, SiloConfig};
use txlab_tictoc::TicToc;

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

/// Runs the bank on the engine a builder hands it, unless the engine should have refused to start.
struct Bank {
    accounts: TableId,
    should_refuse: bool,
}

impl EngineVisitor for Bank {
    type Output = Result<String, String>;

    fn visit<E: Engine>(self, engine: E) -> Self::Output {
        if self.should_refuse {
            return Err(format!(
                "{} started although the 128-bit CAS is not lock-free",
                engine.name()
            ));
        }
        bank(engine, self.accounts)
    }
}

/// The engine of protocol `name`, built by its family's builder, handed to `visitor`: what
/// generic code that picks an engine by name does.
fn build_named<V: EngineVisitor>(
    name: &str,
    schema: &Schema,
    visitor: V,
) -> Result<V::Output, Error> {
    match name.split('-').next().unwrap_or_default() {
        "silo" => Silo::builder().build_named(schema, name, visitor),
        "tictoc" => TicToc::builder().build_named(schema, name, visitor),
        "mvto" => Mvto::builder().build_named(schema, name, visitor),
        "docc" => build_docc(name, schema, visitor),
        _ => Err(Error::invalid(
            "protocol",
            name,
            "silo, tictoc or mvto, each optionally with -nwr or -nwr-single; docc, \
             docc-snapshot or docc-basic",
        )),
    }
}

/// DOCC in the mode `name` names, through the facade: `docc` (snapshots and prefetching retry),
/// `docc-snapshot` (no prefetching) or `docc-basic` (in place).
fn build_docc<V: EngineVisitor>(
    name: &str,
    schema: &Schema,
    visitor: V,
) -> Result<V::Output, Error> {
    use txlab::docc::{DoccBasic, DoccConfig, DoccSnapshot};
    let no_prefetch = DoccConfig {
        prefetch: false,
        ..DoccConfig::default()
    };
    match name {
        "docc" => Ok(visitor.visit(DoccSnapshot::builder().build(schema)?)),
        "docc-snapshot" => {
            Ok(visitor.visit(DoccSnapshot::builder().config(no_prefetch).build(schema)?))
        }
        "docc-basic" => Ok(visitor.visit(DoccBasic::builder().config(no_prefetch).build(schema)?)),
        _ => Err(Error::invalid(
            "protocol",
            name,
            "docc, docc-snapshot or docc-basic",
        )),
    }
}

/// Builds `name` and runs the bank on it, or checks that it refused to start where the 128-bit
/// CAS is not lock-free (the NWR variants with pivot objects).
fn check(
    name: &str,
    schema: &Schema,
    accounts: TableId,
    lock_free: bool,
) -> Result<String, String> {
    let needs_lock_free_cas = name.ends_with("-nwr");
    let bank = Bank {
        accounts,
        should_refuse: needs_lock_free_cas && !lock_free,
    };
    match build_named(name, schema, bank) {
        Ok(report) => report,
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

/// Bad input to the builders is refused with an error naming it: unknown protocol names, a
/// zero-sized value, a configuration out of range.
fn check_bad_input(schema: &Schema) -> Result<String, String> {
    struct Refused;
    impl EngineVisitor for Refused {
        type Output = ();
        fn visit<E: Engine>(self, _: E) {}
    }
    for name in [
        "silo-nwr-double",
        "tictoc-silo",
        "mvtoo",
        "occ",
        "",
        "docc-nwr",
    ] {
        match build_named(name, schema, Refused) {
            Ok(()) => return Err(format!("protocol {name:?} was accepted")),
            Err(e) if e.to_string().contains(&format!("protocol = {name}:")) => {}
            Err(e) => return Err(format!("protocol {name:?}: unclear error {e}")),
        }
    }
    match Schema::new().add(TableSpec::hash("zero", 0)) {
        Ok(_) => return Err("a zero-sized value was accepted".into()),
        Err(e) if e.to_string().contains("value_size = 0") => {}
        Err(e) => return Err(format!("zero-sized value: unclear error {e}")),
    }
    let bad = SiloConfig::default().with_read_wait_rounds(0);
    match Silo::builder().config(bad).build(schema) {
        Ok(_) => return Err("read_wait_rounds = 0 was accepted".into()),
        Err(e) if e.to_string().contains("read_wait_rounds = 0") => {}
        Err(e) => return Err(format!("read_wait_rounds = 0: unclear error {e}")),
    }
    Ok("unknown names, a zero-sized value and an out-of-range setting refused".into())
}

const PROTOCOLS: [&str; 12] = [
    "silo",
    "silo-nwr",
    "silo-nwr-single",
    "tictoc",
    "tictoc-nwr",
    "tictoc-nwr-single",
    "mvto",
    "mvto-nwr",
    "mvto-nwr-single",
    "docc",
    "docc-snapshot",
    "docc-basic",
];

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
    let lock_free = txlab_core::protocol::sync::atomic_u128_is_lock_free();
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
    let results = PROTOCOLS
        .into_iter()
        .map(|name| (name, check(name, &schema, accounts, lock_free)))
        .chain([("bad input", check_bad_input(&schema))]);
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
