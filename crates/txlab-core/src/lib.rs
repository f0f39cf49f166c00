//! # txlab-core
//!
//! The vocabulary every txlab crate shares. The crate root is what an application needs: build a
//! [`Schema`] of [`TableSpec`]s, open an [`Engine`] (a protocol crate's), take a [`Worker`] per
//! thread, and run transactions with [`run`] (or [`Worker::begin`] and [`Transaction::commit`])
//! through [`TxOps`], reading and writing values as bytes or, with [`TypedOps`], as any
//! [`FixedValue`]. Errors keep a retryable [`Conflict`] apart from a [`TxError::UserAbort`] and a
//! real [`Error`].
//!
//! ```
//! use txlab_core::{Error, FixedValue, Schema, TableSpec, TxOps, TypedOps};
//!
//! fn deposit(tx: &mut dyn TxOps, accounts: txlab_core::TableId, key: u64) -> txlab_core::TxResult<()> {
//!     let balance: i64 = tx.read_as(accounts, key)?.unwrap_or(0);
//!     tx.write_as(accounts, key, &(balance + 100))
//! }
//!
//! let mut schema = Schema::new();
//! let accounts = schema.add(TableSpec::hash("accounts", i64::SIZE))?;
//! # let _ = (deposit, accounts);
//! # Ok::<(), Error>(())
//! ```
//!
//! Application modules (their main items are also at the root):
//!
//! - [`table`]: table ids, fixed value sizes, index kinds, the [`Schema`];
//! - [`txn`]: the interactive model (engine → worker → transaction) and [`TxOps`], the operations
//!   programs are written against;
//! - [`fixed_value`]: [`FixedValue`], a type's encoding as a fixed-size value, and [`TypedOps`]
//!   (`read_as`, `write_as`, ...) on every [`TxOps`];
//! - [`error`]: retryable [`Conflict`]s kept apart from real [`Error`]s;
//! - [`retry`]: the [`run`] helper (the closure may run several times);
//! - [`program`]: transaction programs written once for all four execution models;
//! - [`deterministic`]: [`Deterministic`], executing a log of programs with the effect of their
//!   serial execution in log order;
//! - [`pieces`]: transactions as immediate/deferrable pieces with profiles, conflict keys and
//!   column groups (the distributed-pieces model: ROCOCO, 2PL/OCC with 2PC);
//! - [`partition`]: which partition owns each row of a partitioned (distributed) database;
//! - [`run_limit`]: [`RunLimit`], when a driver that runs a workload itself stops.
//!
//! What a protocol (or index) author needs, and an application does not, is under [`protocol`]:
//! storage and records, epochs, history recording, reclamation, the `sync` facade.
//!
//! See `docs/architecture.md` in the repository for how the pieces fit.

#![warn(missing_docs)]

pub mod deterministic;
pub mod error;
pub mod fixed_value;
pub mod partition;
pub mod pieces;
pub mod program;
pub mod retry;
pub mod run_limit;
pub mod table;
pub mod txn;

pub mod protocol;

#[cfg(test)]
mod test_support;

pub use deterministic::Deterministic;
pub use error::{Conflict, ConflictCause, Error, TxError, TxResult};
pub use fixed_value::{FixedValue, TypedOps};
pub use program::{Access, AccessSet, Program};
pub use protocol::epoch::EpochConfig;
pub use retry::{Committed, RetryPolicy, run};
pub use run_limit::RunLimit;
pub use table::{IndexKind, Schema, TableId, TableSpec};
pub use txn::{AckMode, CommitInfo, Engine, EngineVisitor, Transaction, TxOps, Worker};
