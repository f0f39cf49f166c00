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
//! - [`pipeline`]: the paper's centralized-validator prototype as an engine ([`Pipeline`]):
//!   clients, non-blocking processors, a versioned storage with storage batching, and the
//!   validator pipeline (batch preparation, parallel pre-validation and reordering, in-order
//!   validation) in the modes `base`, `batch`, `sr`, `vc`, `srvc` (§5.3, appendix A);
//! - [`thread_aware`]: thread-aware batching for decentralized engines (§4.2, §5.6): a
//!   [`ThreadAware`] wrapper over any [`txlab_core::Engine`].
//!
//! The reordering core depends on nothing engine-specific; keys are any `Hash + Eq + Copy` type. See
//! `docs/protocols/batch.md` for the algorithms with a worked example.

#![warn(missing_docs)]

pub mod fvs;
pub mod graph;
mod meter;
pub mod pipeline;
pub mod reorder;
pub mod residual;
pub mod thread_aware;
pub mod trim;

pub use fvs::{Algorithm, Policy, Refinement};
pub use graph::{DependencyGraph, GraphBuilder};
pub use pipeline::{Mode, Pipeline, PipelineConfig, ReorderPolicy, RunLimit, RunStats};
pub use reorder::{ReorderScratch, Reordering, abort_set, reorder, reorder_refined};
pub use thread_aware::{
    Assignment, ThreadAssigner, ThreadAware, ThreadAwareConfig, ThreadAwareStats,
};
