//! # txlab-docc
//!
//! Deterministic optimistic concurrency control (Z.-Y. Dong, C.-Z. Tang, J.-C. Wang, Z.-G. Wang,
//! H.-B. Chen, B.-Y. Zang, "Optimistic Transaction Processing in Deterministic Database", JCST
//! 35(2), 2020) on txlab's storage trait.
//!
//! A sequencer fixes the order of one-shot programs before they run; workers then execute them
//! concurrently and enforce the order lazily, at validation:
//!
//! - `seq`: [`Seq`], a position in the global order, which is also the version a
//!   transaction installs;
//! - `layout`: the two record layouts, [`InPlace`] (`docc-basic`) and [`Chain`] (placeholders
//!   and version chains: `docc-snapshot`, and `docc` with prefetching);
//! - `exec`: the execution phase, a `TxOps` that reads optimistically and buffers writes;
//! - `wait`: the waiting phase (the chain of committed transactions, spin then park);
//! - `run`: the four phases of one transaction, workers claiming transactions in order, and
//!   `Deterministic::execute_log`; start reading there;
//! - `commit`: the commit phase and garbage collection (version trimming, tombstone retirement);
//! - `schedule`: batches, claims in sequence order, the horizon;
//! - [`calvin`]: the Calvin-style deterministic-locking baseline on the same storage, sequencer
//!   and driver, with reconnaissance for dependent programs (`recon`);
//! - [`cluster`]: multi-partition DOCC and Calvin over `txlab-net` (`DoccCluster`,
//!   `CalvinCluster`): one sans-IO node type, the sequencer, the merge and the exchange;
//! - `pool`: where a run's threads come from (scoped per run, or a partition's persistent
//!   pool);
//! - `interactive`: the `Engine`/`Worker`/`Transaction` entry point ("sequence at commit", not
//!   deterministic).
//!
//! See `docs/protocols/docc.md`.

#![warn(missing_docs)]

pub mod calvin;
pub mod cluster;
pub mod commit;
pub mod config;
pub mod driver;
pub mod engine;
mod exec;
pub mod interactive;
mod layout;
mod meter;
mod pool;
mod recon;
mod run;
mod schedule;
mod seq;
mod sequencer;
pub mod stats;
mod wait;

pub use commit::GcCounters;
#[cfg(feature = "mutation")]
pub use config::Mutation;
pub use config::{BatchConfig, DoccConfig, MAX_WORKERS};
pub use driver::{KindStats, Metered, RunStats, StandAlone};
pub use engine::{Docc, DoccBasic, DoccMode, DoccSnapshot};
pub use layout::{Chain, InPlace, InPlaceRecord, Layout, Placeholder};
pub use schedule::Positioned;
pub use seq::Seq;
pub use sequencer::{DriverConfig, InputLog, LoggedBatch, MAX_CONCURRENCY, Submission};
pub use stats::DoccStats;
