//! # txlab-rococo: ROCOCO
//!
//! S. Mu, Y. Cui, Y. Zhang, W. Lloyd, J. Li, *Extracting More Concurrency from Distributed
//! Transactions*, OSDI 2014. Transactions are sets of pieces
//! ([`txlab_core::pieces`]); servers track dependencies between pieces in a first round and
//! deterministically reorder deferrable pieces in a second instead of aborting. An offline check
//! of the transaction profiles guarantees a serializable reordering always exists.
//!
//! - [`sc`]: the offline SC-graph checker (§3.1): immediacy propagation, the exact
//!   unreorderable-cycle test and the proposed merges, with text and JSON reports.
//! - Servers and coordinators as sans-IO `txlab_net::Node`s ([`node::RococoNode`]): the
//!   dependency graph ([`graph`]) with one-hop tracking (`keys`), the start and commit phases,
//!   the 2-round read-only path, epoch GC and coordinator recovery (`server`, [`client`]);
//!   the 2PL and OCC baselines with 2PC on the same servers, storage (`store`), pieces and
//!   transport ([`config::Protocol`]).
//! - [`history`]: merged column-group histories and the one-order check.
//! - `remote` (feature `tcp`): one node per process over TCP (`txlab cluster --local N`).
//!
//! See `docs/protocols/rococo.md`.

#![warn(missing_docs)]

pub mod client;
pub mod cluster;
pub mod config;
pub mod counters;
pub mod graph;
pub mod history;
mod keys;
mod msg;
pub mod node;
#[cfg(feature = "tcp")]
pub mod remote;
pub mod sc;
mod server;
mod store;
pub mod workload;

pub use cluster::{RococoCluster, RunOptions, RunReport, RunStats};
pub use config::{MemoryRecording, NoRecording, Params, Protocol, Recording, Shared};
pub use msg::OrderEntry;
pub use node::RococoNode;
pub use workload::{PieceProgram, PiecedWorkload};
