//! # txlab
//!
//! Facade over the txlab workspace: concurrency-control protocols on one storage trait, workloads
//! written once, a measurement harness and a serializability checker. Each crate is re-exported
//! under a short name behind a feature of the same name (all on by default); with
//! `default-features = false` only `txlab-core` is built and each feature adds one crate. The
//! `txlab` command line is the `txlab-cli` crate.

#![warn(missing_docs)]

#[cfg(feature = "batch")]
pub use txlab_batch as batch;
#[cfg(feature = "check")]
pub use txlab_check as check;
pub use txlab_core as core;
#[cfg(feature = "docc")]
pub use txlab_docc as docc;
#[cfg(feature = "harness")]
pub use txlab_harness as harness;
#[cfg(feature = "mvto")]
pub use txlab_mvto as mvto;
#[cfg(feature = "net")]
pub use txlab_net as net;
#[cfg(feature = "nwr")]
pub use txlab_nwr as nwr;
#[cfg(feature = "occ")]
pub use txlab_occ as occ;
#[cfg(feature = "rococo")]
pub use txlab_rococo as rococo;
#[cfg(feature = "silo")]
pub use txlab_silo as silo;
#[cfg(feature = "storage")]
pub use txlab_storage as storage;
#[cfg(feature = "tictoc")]
pub use txlab_tictoc as tictoc;
#[cfg(feature = "workload")]
pub use txlab_workload as workload;
