//! A bank on Silo, written the way an application embedding txlab would write it: only the
//! public API of `txlab-core` and `txlab-silo` (through the `txlab` facade).
//!
//! Threads move money between accounts with `run`, which retries conflicts (so the closure may
//! run more than once: it only touches the transaction). A transfer that would overdraw is a user
//! abort. Balances are `i64`s read and written as typed values (`TypedOps::read_as`/`write_as`,
//! 8 little-endian bytes in storage). At the end, one read-only transaction sums the balances:
//! money is neither created nor destroyed.
//!
//! ```text
//! cargo run --release --example bank_transfer -- [threads] [transfers-per-thread]
//! ```

use txlab::core::{
    Engine, FixedValue, RetryPolicy, Schema, TableSpec, TxError, TxOps, TypedOps, run,
};
use txlab::silo::Silo;

const ACCOUNTS: u64 = 1_000;
const INITIAL: i64 = 1_000;

fn balance(tx: &mut dyn TxOps, table: txlab::core::TableId, account: u64) -> Result<i64, TxError> {
    tx.read_as(table, account)?
        .ok_or(TxError::user_abort("no such account"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(2);
    let transfers: u64 = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(100_000);
    if threads == 0 {
        return Err("threads must be at least 1".into());
    }

    let mut schema = Schema::new();
    let accounts = schema.add(TableSpec::hash("accounts", i64::SIZE))?;
    let bank = Silo::builder().build(&schema)?;
    for a in 0..ACCOUNTS {
        bank.load_as(accounts, a, &INITIAL)?;
    }

    let start = std::time::Instant::now();
    let (committed, refused) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let bank = &bank;
                s.spawn(move || -> Result<(u64, u64), TxError> {
                    let mut worker = bank.worker()?;
                    let mut x = 0x2545_F491_4F6C_DD1D_u64 ^ (t as u64 + 1);
                    let (mut ok, mut refused) = (0, 0);
                    for _ in 0..transfers {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let (from, to, amount) =
                            (x % ACCOUNTS, (x >> 20) % ACCOUNTS, (x >> 40) as i64 % 200);
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
                            Ok(_) => ok += 1,
                            Err(TxError::UserAbort(_)) => refused += 1,
                            Err(e) => return Err(e),
                        }
                    }
                    Ok((ok, refused))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker panicked"))
            .try_fold((0, 0), |acc, r| r.map(|(o, f)| (acc.0 + o, acc.1 + f)))
    })?;
    let elapsed = start.elapsed();

    let mut worker = bank.worker()?;
    let total = run(&mut worker, RetryPolicy::default(), |tx| {
        (0..ACCOUNTS).try_fold(0i64, |sum, a| Ok(sum + balance(tx, accounts, a)?))
    })?
    .value;
    println!(
        "{committed} transfers committed, {refused} refused (insufficient funds), {:.0} transfers/s on {threads} threads",
        committed as f64 / elapsed.as_secs_f64()
    );
    println!(
        "total balance {total} (expected {})",
        ACCOUNTS as i64 * INITIAL
    );
    if total != ACCOUNTS as i64 * INITIAL {
        return Err("money was created or destroyed".into());
    }
    Ok(())
}
