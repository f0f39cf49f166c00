//! For protocol and index authors: what an engine is built from, which an application using one
//! does not need.
//!
//! - [`storage`]: the [`Index`](storage::Index) trait generic over a protocol's record type, with
//!   stable references, insert-if-absent, logical delete, epoch-based reclamation and phantom
//!   stripes; a custom index plugs in here;
//! - [`epoch`]: the global/local/stable epoch manager used by Silo, NWR and group commit;
//! - [`history`]: compile-time-switched history recording for the checker (the sealed
//!   [`Recorder`](history::Recorder) and the default [`NoRecorder`](history::NoRecorder));
//! - [`retire_queue`] and [`retire_floor`]: unlinking deleted records, and the timestamp floors
//!   that timestamp-ordered engines keep once a tombstone is gone;
//! - [`value`]: race-free word-wise value copies for seqlock-style readers;
//! - [`sync`]: the single import point of atomics and locks (std, loom or shuttle by cfg);
//! - [`assemble`]: the [`Builder`](assemble::Builder) of engines whose only type choice is the
//!   recorder (the batching pipeline, DOCC, Calvin), implemented through
//!   [`Assemble`](assemble::Assemble);
//! - [`meter`]: [`Meter`](meter::Meter) and [`Probe`](meter::Probe), how a driver that runs a
//!   workload itself reports each transaction's life to whoever measures it.
//!
//! The protocol crates import them from here (`txlab_core::protocol::epoch`, ...); the crate root
//! keeps only what an application names ([`EpochConfig`](crate::EpochConfig), for one). Their
//! files sit beside the application modules in `src/`.

#[path = "assemble.rs"]
pub mod assemble;
#[path = "epoch.rs"]
pub mod epoch;
#[path = "history.rs"]
pub mod history;
#[path = "meter.rs"]
pub mod meter;
#[path = "retire_floor.rs"]
pub mod retire_floor;
#[path = "retire_queue.rs"]
pub mod retire_queue;
#[path = "storage.rs"]
pub mod storage;
#[path = "sync.rs"]
pub mod sync;
#[path = "value.rs"]
pub mod value;
