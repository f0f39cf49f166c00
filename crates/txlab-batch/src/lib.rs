//! # txlab-batch: validator reordering for OCC batching
//!
//! The reordering core of B. Ding, L. Kot, J. Gehrke, "Improving Optimistic Concurrency Control
//! Through Transaction Batching and Operation Reordering", PVLDB 12(2), 2018 (§3.2, §4, §5.5):
//! a validator collects a batch of transactions, builds their dependency graph from read and
//! write sets, aborts a feedback vertex set of it, and validates the rest in an order in which
//! none of them fails backward validation.
//!
//! - [`graph`]: the [`DependencyGraph`] (edge `r → w` when `r` read a key `w` writes: `r` must be
//!   validated first) and its allocation-free [`GraphBuilder`];
//! - [`residual`] and [`trim`]: the shrinking view of the graph the algorithms work on, and the
//!   removal of nodes that lie on no cycle;
//! - [`fvs`]: the feedback vertex set [`Algorithm`]s (SCC-based greedy, best-of-k random,
//!   sort-based greedy, hybrid, exact) and [`Policy`]s (random, max/sum/prod-degree, rct, rdeg,
//!   caller priority);
//! - [`reorder`](mod@reorder): the entry point, returning a [`Reordering`] (abort set and
//!   validation order).
//!
//! The crate depends on nothing engine-specific; keys are any `Hash + Eq + Copy` type. See
//! `docs/protocols/batch.md` for the algorithms with a worked example.

pub mod fvs;
pub mod graph;
pub mod reorder;
pub mod residual;
pub mod trim;

pub use fvs::{Algorithm, Policy};
pub use graph::{DependencyGraph, GraphBuilder};
pub use reorder::{ReorderScratch, Reordering, reorder};
