//! Prefetching retry where lookups cost something: TPC-C (1 warehouse, the full mix) with its
//! large dense tables (customer, stock, item) on hash indexes instead, `docc` against
//! `docc-snapshot` in interleaved rounds (docs/results/docc.md, "Prefetching").
//!
//! ```text
//! cargo run --release -p txlab-docc --example prefetch_hash_tpcc -- ROUNDS SECONDS WORKERS
//! ```
//!
//! Prints one line per run: label, round, committed per second, retries per commit, lookups
//! saved per retry.

use std::time::Duration;
use txlab_core::protocol::storage::Index;
use txlab_core::{Error, RunLimit, TableId};
use txlab_docc::{BatchConfig, Chain, Docc, DoccConfig, DriverConfig, Placeholder, StandAlone};
use txlab_storage::{HashIndex, Tables};
use txlab_workload::{Tpcc, TpccConfig, Workload};

fn hash_tables(tpcc: &Tpcc) -> Result<Tables<Placeholder>, Error> {
    let schema = tpcc.schema();
    let t = tpcc.tables();
    let custom = [t.customer, t.stock, t.item]
        .into_iter()
        .map(
            |id: TableId| -> Result<(TableId, Box<dyn Index<Placeholder>>), Error> {
                let size = schema.table(id)?.value_size;
                Ok((id, Box::new(HashIndex::<u64, Placeholder>::new(id, size))))
            },
        )
        .collect::<Result<Vec<_>, _>>()?;
    Tables::with_custom(&schema, custom)
}

fn main() -> Result<(), Error> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("ROUNDS SECONDS WORKERS"))
        .collect();
    let (rounds, seconds, workers) = match args[..] {
        [r, s, w] => (r, s, w as usize),
        _ => (3, 3, 2),
    };
    let tpcc = Tpcc::new(TpccConfig::default())?;
    for round in 1..=rounds {
        for prefetch in [true, false] {
            let config = DoccConfig {
                workers,
                prefetch,
                batch: BatchConfig::default(),
                ..DoccConfig::default()
            };
            let db = Docc::<Chain>::builder()
                .config(config)
                .tables(hash_tables(&tpcc)?)
                .build(&tpcc.schema())?;
            tpcc.load(&db)?;
            let driver = DriverConfig {
                concurrency: 1024,
                ..DriverConfig::default()
            };
            let limit = RunLimit::Duration(Duration::from_secs(seconds));
            let s = db.run(&tpcc, limit, driver)?;
            let label = if prefetch { "docc" } else { "docc-snapshot" };
            println!(
                "{label} round {round} {:.0}/s retries/commit {:.3} saved/retry {:.1}",
                s.throughput(),
                s.docc.retries as f64 / s.committed.max(1) as f64,
                s.docc.retry_lookups_saved as f64 / s.docc.retries.max(1) as f64
            );
        }
    }
    Ok(())
}
