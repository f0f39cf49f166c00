//! # txlab
//!
//! Facade over the txlab workspace: concurrency-control protocols on one storage trait, workloads
//! written once, a measurement harness and a serializability checker. Each crate is re-exported
//! under a short name; depend on an individual crate (e.g. `txlab-silo`) to pull in less.

pub use txlab_batch as batch;
pub use txlab_check as check;
pub use txlab_core as core;
pub use txlab_harness as harness;
pub use txlab_mvto as mvto;
pub use txlab_nwr as nwr;
pub use txlab_silo as silo;
pub use txlab_storage as storage;
pub use txlab_tictoc as tictoc;
pub use txlab_workload as workload;
