//! TPC-C (Transaction Processing Performance Council, "TPC Benchmark C, Standard Specification",
//! revision 5.11, 2010), written once against [`TxOps`](txlab_core::TxOps).
//!
//! | file | contents | clauses |
//! |---|---|---|
//! | [`config`] | [`TpccConfig`], [`TpccMix`], validation, ROCOCO's scaled variant | 1.2, 5.2.3 |
//! | [`schema`] | the nine tables as fixed-size rows (+ two secondary indexes) | 1.3 |
//! | [`codec`] | the row codec macro | – |
//! | [`keys`] | composite keys packed into `u64`, scan-friendly | 1.3 (primary keys) |
//! | [`random`] | NURand, the C-delta rule, last names, random strings | 2.1.6, 4.3.2 |
//! | [`load`] | population | 4.3.3.1 |
//! | [`new_order`], [`payment`], [`order_status`], [`delivery`], [`stock_level`] | the five transactions | 2.4–2.8 |
//! | [`pieces`] | ROCOCO's pieces: profiles, column groups, [`Pieced`](txlab_core::pieces::Pieced) | ROCOCO §3.1, Figures 3, 12, 13 |
//! | [`warehouse_ytd`] | the scaled variant's read-only `sum(D_YTD)` replacing `W_YTD` | ROCOCO §5 "Scaled TPC-C" |
//! | [`generator`] | inputs and the mix | 2.x.1, 5.2.3 |
//! | [`consistency`] | consistency conditions 1–4 | 3.3.2.1–3.3.2.4 (and 3.3.2.8 for the scaled condition 1) |
//!
//! Workload names: `tpcc` ([`TpccMix::Full`]: NewOrder 45 %, Payment 43 %, OrderStatus,
//! Delivery, StockLevel 4 % each) and `tpcc-np` ([`TpccMix::NewOrderPayment`], 50/50).
//! Defaults: 1 warehouse, 10 districts, 3000 customers per district, 100 000 items; smaller
//! sizes are accepted (reported by [`Workload::parameters`]).
//!
//! # The scaled variant
//!
//! [`TpccConfig::scaled`] follows ROCOCO (Mu et al., OSDI 2014, §5 Evaluation, subsection
//! "Scaled TPC-C", paragraph "Partition Strategy"): many districts per warehouse
//! ([`TpccConfig::rococo_scaled`]: customer:district:warehouse = 3M:1K:1), and `W_YTD` removed —
//! the WAREHOUSE row has no such column ([`schema::ScaledWarehouseRow`]), Payment reads the
//! warehouse's name and address only and never writes it, and the warehouse total is the
//! read-only transaction [`warehouse_ytd`] (`sum(D_YTD)`). That query is **not** part of the mix:
//! the paper runs "a mixture of TPC-C transactions according to the specification" and its
//! Table 1 lists only the five TPC-C types (reasoning in [`warehouse_ytd`]). Consistency
//! condition 1 becomes "the read-only sum equals the payments recorded in HISTORY"
//! ([`consistency`]).
//!
//! # Key layouts
//!
//! See [`keys`]: dense keys for warehouse, district, customer, item and stock; ordered keys with
//! the district index in the high bits for order / new-order (`dx << 32 | o_id`), order-line
//! (`dx << 36 | o_id << 4 | ol_number`), order-by-customer (`dx << 44 | c_id << 27 | o_id`) and
//! customer-by-last-name (`dx << 27 | name << 17 | c_id`).
//!
//! # Value dependencies
//!
//! Which keys a transaction can know from its inputs (declared by
//! [`Program::declare`](txlab_core::Program::declare)) and which depend on values it reads
//! (the declared set is then marked `dependent`). This is what ROCOCO's immediate vs deferrable
//! pieces and DOCC's reconnaissance need.
//!
//! | transaction | keys known from inputs | keys depending on values read |
//! |---|---|---|
//! | NewOrder | warehouse (R), district (RW), customer (R), items (R), stocks (RW) | order, new-order, order-by-customer, order-lines (inserted under `D_NEXT_O_ID`) |
//! | Payment by id | warehouse (RW; R when scaled: name and address only, no `W_YTD`), district (RW), customer (RW), history (blind W) | – (`dependent = false`) |
//! | Payment by last name | warehouse, district, history | customer (from the name-index scan) |
//! | OrderStatus | customer (R) if by id | customer by name; latest order (order-by-customer scan); its order-lines |
//! | Delivery | – | per district: oldest new-order (scan), order, order-lines, customer (`O_C_ID`) |
//! | StockLevel | district (R) | order-lines of the last 20 orders (`D_NEXT_O_ID`), their stocks |
//! | WarehouseYtd (scaled variant's query, not in the mix) | every district of the warehouse (R) | – (`dependent = false`) |
//!
//! Range scans (name index, order-by-customer, new-order, order-line) cannot be written in an
//! [`AccessSet`](txlab_core::AccessSet); they are covered by `dependent`.
//!
//! # Invariants
//!
//! - After load and after any serializable run, consistency conditions 1–4 hold
//!   ([`Workload::check`] verifies them through read-only transactions).
//! - NewOrder's 1 % rollbacks are [`TxError::UserAbort`], never a
//!   conflict; a missing row that must exist is [`Error::Invariant`], never a panic.
//! - Generators are deterministic given `(seed, thread)` and allocate nothing per transaction
//!   (Payment/OrderStatus by last name allocate a small vector for the name scan).

pub mod codec;
pub mod config;
pub mod consistency;
pub mod delivery;
pub mod generator;
pub mod keys;
pub mod load;
pub mod new_order;
pub mod order_status;
pub mod partition;
pub mod payment;
pub mod pieces;
pub mod random;
pub mod schema;
pub mod stock_level;
pub mod txn;
pub mod warehouse_ytd;

#[cfg(test)]
mod tests;

pub use config::{TpccConfig, TpccMix};
pub use generator::TpccGenerator;
pub use schema::TpccTables;
pub use txn::{CustomerSelector, TpccContext, TpccInput, TpccKind, TpccTxn};

use crate::Workload;
use crate::rng::worker_rng;
use random::NuRandConstants;
use txlab_core::{Engine, Error, RetryPolicy, Schema, TxError, run};
use warehouse_ytd::WarehouseYtdInput;

/// The `O_ENTRY_D` / `C_SINCE` / `H_DATE` of loaded rows (run dates are larger).
pub const LOAD_DATE: u64 = 1;

/// Stream of `worker_rng(load_seed, ..)` for the load NURand constants (warehouse streams are
/// `1..=warehouses`, items stream 0).
const LOAD_CONSTANTS_STREAM: usize = usize::MAX;
/// Stream of `worker_rng(seed, ..)` for the run NURand constants (shared by all generators).
const RUN_CONSTANTS_STREAM: usize = usize::MAX;

/// The TPC-C workload (module docs).
#[derive(Debug, Clone)]
pub struct Tpcc {
    cfg: TpccConfig,
    schema: Schema,
    tables: TpccTables,
    keys: keys::Keys,
    load_constants: NuRandConstants,
}

impl Tpcc {
    /// Validates `cfg` (see [`TpccConfig::validate`]) and builds the workload.
    pub fn new(cfg: TpccConfig) -> Result<Tpcc, Error> {
        let (schema, tables) = schema::build(&cfg)?;
        let load_constants =
            NuRandConstants::for_load(&mut worker_rng(cfg.load_seed, LOAD_CONSTANTS_STREAM));
        Ok(Tpcc {
            keys: schema::keys_of(&cfg),
            cfg,
            schema,
            tables,
            load_constants,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &TpccConfig {
        &self.cfg
    }

    /// The table ids.
    pub fn tables(&self) -> &TpccTables {
        &self.tables
    }

    /// The key packing.
    pub fn keys(&self) -> keys::Keys {
        self.keys
    }

    /// The NURand constants used by the population.
    pub fn load_constants(&self) -> NuRandConstants {
        self.load_constants
    }

    /// The NURand constants of a run seeded with `seed` (clause 2.1.6.1).
    pub fn run_constants(&self, seed: u64) -> NuRandConstants {
        NuRandConstants::for_run(
            &self.load_constants,
            &mut worker_rng(seed, RUN_CONSTANTS_STREAM),
        )
    }

    /// What transactions need to know about the database.
    pub fn context(&self) -> TpccContext {
        TpccContext {
            tables: self.tables,
            keys: self.keys,
            warehouses: self.cfg.warehouses,
            scaled: self.cfg.scaled,
        }
    }

    /// The read-only transaction computing warehouse `w`'s year-to-date total, `sum(D_YTD)`
    /// ([`warehouse_ytd`]), as a program any engine runs. `w` outside `1..=warehouses` is an
    /// [`Error::InvalidConfig`] naming it.
    pub fn warehouse_ytd_txn(&self, w: u32) -> Result<TpccTxn, Error> {
        self.check_warehouse_id(w)?;
        Ok(TpccTxn::new(
            self.context(),
            TpccInput::WarehouseYtd(WarehouseYtdInput { w }),
        ))
    }

    /// Runs [`warehouse_ytd`] for warehouse `w` on `engine` (retried on conflicts, at most 16
    /// attempts) and returns `sum(D_YTD)` in cents. In the scaled variant this is the
    /// warehouse's `W_YTD`; in the standard one it equals `W_YTD` (condition 1).
    pub fn warehouse_ytd<E: Engine>(&self, engine: &E, w: u32) -> Result<i64, Error> {
        self.check_warehouse_id(w)?;
        let ctx = self.context();
        let inp = WarehouseYtdInput { w };
        let mut worker = engine.worker()?;
        run(&mut worker, RetryPolicy::attempts(16)?, |tx| {
            warehouse_ytd::run(&ctx, &inp, tx)
        })
        .map(|c| c.value)
        .map_err(|e| match e {
            TxError::Error(e) => e,
            other => Error::Internal(format!(
                "tpcc warehouse_ytd: the read-only transaction of warehouse {w} failed: {other}"
            )),
        })
    }

    fn check_warehouse_id(&self, w: u32) -> Result<(), Error> {
        if (1..=self.cfg.warehouses).contains(&w) {
            Ok(())
        } else {
            Err(Error::invalid(
                "warehouse",
                w,
                format!("in 1..={}", self.cfg.warehouses),
            ))
        }
    }

    /// Writes the population into `sink` (see [`load`]); [`Workload::load`] passes
    /// `Engine::load`.
    pub fn populate(&self, sink: &mut load::Sink<'_>) -> Result<(), Error> {
        load::populate(self, sink)
    }
}

impl Workload for Tpcc {
    type Program = TpccTxn;
    type Generator = TpccGenerator;

    fn name(&self) -> String {
        match self.cfg.mix {
            TpccMix::Full => "tpcc",
            TpccMix::NewOrderPayment => "tpcc-np",
        }
        .to_string()
    }

    fn schema(&self) -> Schema {
        self.schema.clone()
    }

    fn load<E: Engine>(&self, engine: &E) -> Result<(), Error> {
        self.populate(&mut |table, key, value| engine.load(table, key, value))
    }

    fn generator(&self, thread: usize, seed: u64) -> TpccGenerator {
        let ctx = self.context();
        let home = (thread % self.cfg.warehouses as usize) as u32 + 1;
        TpccGenerator {
            rng: worker_rng(seed, thread),
            ctx,
            weights: self.cfg.mix.weights(),
            constants: self.run_constants(seed),
            home,
            thread,
            seed_tag: (seed ^ (seed >> 8) ^ (seed >> 16) ^ (seed >> 32)) as u8,
            seq: 0,
            txn: TpccTxn::new(
                ctx,
                TpccInput::StockLevel(stock_level::StockLevelInput {
                    w: home,
                    d: 1,
                    threshold: 10,
                }),
            ),
        }
    }

    fn check<E: Engine>(&self, engine: &E) -> Result<(), Error> {
        consistency::check(self, engine)
    }

    fn parameters(&self) -> Vec<(&'static str, String)> {
        vec![
            ("warehouses", self.cfg.warehouses.to_string()),
            (
                "districts_per_warehouse",
                self.cfg.districts_per_warehouse.to_string(),
            ),
            (
                "customers_per_district",
                self.cfg.customers_per_district.to_string(),
            ),
            ("items", self.cfg.items.to_string()),
            ("mix", self.cfg.mix.name().to_string()),
            ("scaled", self.cfg.scaled.to_string()),
        ]
    }
}
