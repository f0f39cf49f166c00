//! The centralized-validator pipeline of Ding, Kot, Gehrke, "Improving Optimistic Concurrency
//! Control Through Transaction Batching and Operation Reordering", PVLDB 12(2), 2018 (§2, §3,
//! §5.1, §5.3, appendix A), as a txlab engine.
//!
//! ```text
//!  clients ──New──▶ processors ──Read──▶ storage workers (versioned store, storage batching)
//!     ▲                │  ▲ ◀──values──┘        ▲
//!     │                │  │                     │ Write(ts) (write phase)
//!     └──completion────┤  └──decision──┐        │
//!                      └──read/write sets──▶ batch preparation ─▶ reordering workers (‖)
//!                                                     └──────────▶ validation worker (in order,
//!                                                                  commit timestamps, cache)
//! ```
//!
//! That is the staged layout (the paper's). With `reorder_workers = 0` (the single-thread
//! layout) one validator thread forms, reorders and validates each batch itself.
//!
//! - [`config`]: the modes `base`, `batch`, `sr`, `vc`, `srvc` (§5.3), batch size (default 40),
//!   concurrency (default 300), and the thread layout;
//! - [`storage`]: the versioned store (a write older than the stored version is ignored) and the
//!   storage workers with optional storage batching (§3.1);
//! - [`validator`]: backward validation against the cache of committed writes, batch
//!   preparation, pre-validation and reordering workers, the in-order validation worker — and
//!   the argument why the result is serializable;
//! - [`execution`]: the processor-side [`TxOps`](txlab_core::TxOps): reads from the store with
//!   their versions, buffered writes;
//! - `processor`: the non-blocking processor multiplexing live transactions;
//! - [`engine`]: the [`Pipeline`] engine, its threads, and its interactive
//!   [`Engine`](txlab_core::Engine) implementation (why both entry points: see there);
//! - [`driver`]: [`Pipeline::run`], clients and processors driving a workload, and [`RunStats`].
//!
//! Hash maps (the store's and the cache's shards, a transaction's read and write buffers, the
//! graph builder's writer table) use `foldhash` rather than `std`'s SipHash: the keys come from
//! the workload, not from an adversary, and SipHash was 7 % of the CPU profile of `sr` on the
//! micro benchmark at θ = 0.5 (`perf record`, 2-core VM); building a batch's dependency graph
//! takes 52–77 % less time with it at 40 transactions, θ = 0.5 to 0.99 (`cargo bench -p
//! txlab-batch --bench fvs -- build_graph`).
//!
//! Limitations: no range scans (the cache is per key, so phantoms would go undetected: scans
//! return [`Error::ScanUnsupported`](txlab_core::Error::ScanUnsupported)); the cache keeps one
//! entry per key ever written (bounded by the key space, never evicted).

pub mod config;
pub mod driver;
pub mod engine;
pub mod execution;
pub mod messages;
mod processor;
pub mod storage;
pub mod validator;

#[cfg(feature = "mutation")]
pub use config::Mutation;
pub use config::{
    Mode, PipelineConfig, ProcessorScheduling, ReorderPolicy, StorageBatching, StorageRouting,
    ValidatorBatching,
};
pub use driver::{MeteredRun, RunLimit, RunStats, StageTimes};
pub use engine::{Pipeline, PipelineTxn, PipelineWorker};
