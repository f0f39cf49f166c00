//! # txlab-workload
//!
//! Workloads written once against `txlab-core`'s traits, deterministic given a seed.
//! (Contents arrive with the workload modules; this file fixes the shared trait first.)

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
