//! # txlab-workload
//!
//! Benchmark workloads written once against `txlab-core`'s traits: each one declares its tables
//! ([`Workload::schema`]), loads them ([`Workload::load`]), produces transaction
//! [`Program`]s per worker ([`Workload::generator`]) and checks its invariants
//! after a run ([`Workload::check`]).
//!
//! | workload | module | name | definition |
//! |---|---|---|---|
//! | YCSB A/B/C/F and custom mixes | [`ycsb`] | `ycsb-a`, ..., `ycsb` | Cooper et al., SoCC 2010, §4 |
//! | OCC-batching micro benchmark | [`micro`] | `micro` | Ding, Kot, Gehrke, PVLDB 2018, §5.1 |
//! | SmallBank | [`smallbank`] | `smallbank` | Alomari et al., ICDE 2008; Cahill 2009; OLTP-Bench mix |
//! | TPC-C (and ROCOCO's scaled variant) | [`tpcc`] | `tpcc`, `tpcc-np` | TPC-C 5.11; Mu et al., OSDI 2014, §5 "Scaled TPC-C" |
//!
//! Shared pieces: [`zipf`] (skewed key choice, item 0 hottest), [`distinct`] (distinct keys per
//! transaction), [`rng`] (per-worker xoshiro256++ streams) and [`stamp`] (values that identify their
//! writer). [`gray`] holds the inexact Zipf generator of CCBench and YCSB, for comparisons only.
//!
//! # Invariants every workload keeps
//!
//! - **Deterministic**: the generator of `(seed, thread)` yields the same transactions on every
//!   run and machine; different threads (or seeds) yield different ones.
//! - **No allocation per transaction**: a generator rewrites one program in place; `next` borrows
//!   it until the following call, and the harness may re-run it on retry.
//! - **Declared = touched**: [`Program::declare`] lists exactly the
//!   keys and access kinds [`Program::run`] performs (a user abort may
//!   stop a run before all declared keys are touched).
//! - **Validated configuration**: constructors reject bad parameters with
//!   [`Error::InvalidConfig`] naming the value and the accepted
//!   range; they never panic.
//! - Values are fixed-size byte strings per table (dense tables, loaded with
//!   [`Engine::load`]).

#![warn(missing_docs)]

pub mod distinct;
pub mod gray;
pub mod micro;
pub mod rng;
pub mod smallbank;
pub mod stamp;
pub mod tpcc;
pub mod ycsb;
pub mod zipf;

#[cfg(test)]
mod tests;

pub use micro::{Micro, MicroConfig, MicroGenerator, MicroTxn};
pub use smallbank::{SmallBank, SmallBankConfig, SmallBankGenerator, SmallBankKind, SmallBankTxn};
pub use tpcc::{Tpcc, TpccConfig, TpccGenerator, TpccKind, TpccMix, TpccTxn};
pub use ycsb::{Ycsb, YcsbConfig, YcsbGenerator, YcsbPreset, YcsbTxn};
pub use zipf::Zipf;

use txlab_core::{Engine, Error, Program, Schema};

/// A benchmark workload: its tables, how to load them, how to generate transactions, and the
/// invariants that must hold after any run.
pub trait Workload: Send + Sync {
    /// The transaction programs this workload generates.
    type Program: Program<Output = ()>;
    /// A per-thread generator.
    type Generator: Generator<Program = Self::Program>;

    /// A short, stable name (`ycsb-a`, `smallbank`, ...).
    fn name(&self) -> String;

    /// The tables the workload needs (engines are built from this).
    fn schema(&self) -> Schema;

    /// Loads the initial database through [`Engine::load`].
    fn load<E: Engine>(&self, engine: &E) -> Result<(), Error>;

    /// The generator for worker `thread`, deterministic given `(seed, thread)`.
    fn generator(&self, thread: usize, seed: u64) -> Self::Generator;

    /// Checks the workload's invariants on the engine's current state (run it when no
    /// transaction is running). Returns [`Error::Invariant`] naming what is violated.
    fn check<E: Engine>(&self, _engine: &E) -> Result<(), Error> {
        Ok(())
    }

    /// `(name, value)` pairs of the workload's parameters, for reports (one CSV column each).
    fn parameters(&self) -> Vec<(&'static str, String)>;
}

/// Produces a workload's transactions for one worker, reusing its buffers (no allocation per
/// transaction once warmed up).
pub trait Generator: Send {
    /// The program type.
    type Program: Program<Output = ()>;

    /// The next transaction. It stays valid (and may be re-run on retry) until the next call.
    fn next(&mut self) -> &Self::Program;
}
