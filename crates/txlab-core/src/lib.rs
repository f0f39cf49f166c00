//! # txlab-core
//!
//! The vocabulary every txlab crate shares:
//!
//! - [`table`]: table ids, fixed value sizes, index kinds, the [`Schema`](table::Schema);
//! - [`storage`]: the [`Index`](storage::Index) trait generic over a protocol's record type, with
//!   stable references, insert-if-absent, logical delete, epoch-based reclamation and phantom
//!   stripes;
//! - [`txn`]: the interactive model (engine → worker → transaction) and [`TxOps`](txn::TxOps),
//!   the operations programs are written against;
//! - [`program`]: transaction programs written once for all four execution models;
//! - [`deterministic`]: [`Deterministic`](deterministic::Deterministic), executing a log of
//!   programs with the effect of their serial execution in log order;
//! - [`partition`]: which partition owns each row of a partitioned (distributed) database;
//! - [`pieces`]: transactions as immediate/deferrable pieces with profiles, conflict keys and
//!   column groups (the distributed-pieces model: ROCOCO, 2PL/OCC with 2PC);
//! - [`fixed_value`]: [`FixedValue`], a type's encoding as a fixed-size value, and [`TypedOps`]
//!   (`read_as`, `write_as`, ...) on every [`TxOps`];
//! - [`error`]: retryable [`Conflict`](error::Conflict)s kept apart from real [`Error`](error::Error)s;
//! - [`retry`]: the [`run`](retry::run) helper (the closure may run several times);
//! - [`run_limit`]: [`RunLimit`], when a driver that runs a workload itself stops;
//! - [`meter`]: [`Meter`](meter::Meter) and [`Probe`](meter::Probe), how such a driver reports
//!   each transaction's life to whoever measures it (the harness, or a stand-alone meter);
//! - [`epoch`]: the global/local/stable epoch manager used by Silo, NWR and group commit;
//! - [`value`]: race-free word-wise value copies for seqlock-style readers;
//! - [`history`]: compile-time-switched history recording for the checker;
//! - [`sync`]: the single import point of atomics and locks (std, loom or shuttle by cfg).
//!
//! See `docs/architecture.md` in the repository for how the pieces fit.

pub mod deterministic;
pub mod epoch;
pub mod error;
pub mod fixed_value;
pub mod history;
pub mod meter;
pub mod partition;
pub mod pieces;
pub mod program;
pub mod retire_floor;
pub mod retire_queue;
pub mod retry;
pub mod run_limit;
pub mod storage;
pub mod sync;
pub mod table;
pub mod txn;
pub mod value;

#[cfg(test)]
mod test_support;

pub use error::{Conflict, ConflictCause, Error, TxError, TxResult};
pub use fixed_value::{FixedValue, TypedOps};
pub use program::{Access, AccessSet, Program};
pub use retry::{RetryPolicy, run};
pub use run_limit::RunLimit;
pub use table::{IndexKind, Schema, TableId, TableSpec};
pub use txn::{AckMode, CommitInfo, Engine, Transaction, TxOps, Worker};
