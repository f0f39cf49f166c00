//! # txlab-mvto
//!
//! Multi-version timestamp ordering in the style of Cicada (H. Lim, M. Kaminsky, D. G. Andersen,
//! "Cicada: Dependably Fast Multi-Core In-Memory Transactions", SIGMOD 2017), as the NWR paper
//! (§6.1.1) uses it for its MVTO baseline: per-thread distributed timestamps, read sets for
//! optimistic multi-versioning, rapid garbage collection, and epoch-based group commit.
//!
//! - **Timestamps** (`src/timestamp.rs`): each worker's clock plus its id in the low bits, prefixed
//!   by the epoch; unique, monotone per worker, loosely synchronized.
//! - **Records** ([`MvtoRecord`], `src/version.rs`): a lock-free list of immutable versions, newest
//!   first, each with its write timestamp, a growing read timestamp and a status (pending /
//!   committed / aborted). The empty list is "absent".
//! - **Execution** (`txlab_occ::txn`): the timestamp is fixed at begin; a read returns the newest
//!   committed version older than it (waiting, bounded, on a pending one) and raises that version's
//!   read timestamp; writes are buffered; scans on ordered tables raise per-stripe scan timestamps
//!   and record phantom-stripe versions.
//! - **Commit** (`src/commit.rs`): install pending versions and check read timestamps
//!   (`WriteTooLate`), validate the read and stripe sets, then mark committed or aborted. Start
//!   reading there.
//! - **Garbage collection** (`src/gc.rs`): at commit, each written record's list is cut below the
//!   newest committed version older than the horizon (the minimum timestamp of any active or future
//!   transaction); cut versions are freed through crossbeam-epoch.
//! - **Group commit**: with [`AckMode::EpochStable`](txlab_core::AckMode) (the default), a commit
//!   is acknowledged once the epoch in its timestamp is stable, which makes the timestamp order
//!   respect real time (strict serializability); `AckMode::AtCommit` gives serializability.
//! - **NWR** (`src/nwr.rs`): `Mvto<Rec, NoNwr>` (the default) is plain MVTO, with its record layout
//!   and commit path unchanged; [`MvtoNwr`] = `Mvto<Rec, Nwr>` (engine name `mvto-nwr`) omits blind
//!   writes with the non-visible write rule of `txlab_nwr`, plus a check that keeps readers of old
//!   versions serializable; [`MvtoNwrSingle`] = `Mvto<Rec, NwrSingleWrite>` (engine name
//!   `mvto-nwr-single`) omits only single blind writes, placed by timestamp just below a pivot, and
//!   marks nothing.
//!
//! Histories: a version's tag is its write timestamp (`order = wts`); 0 is the loaded or initial
//! absent version. Readers legitimately see older versions, so histories are serializable in
//! timestamp order but not in commit order.
//!
//! - **Retiring tombstones** (`src/retire.rs`): a committed delete on a hash or ordered table is
//!   queued; two epochs later, once its timestamp is below the GC horizon, the worker tags the
//!   record's head (new versions are refused, readers abort with `ConflictCause::RecordRetired`),
//!   raises the key's absent floor to the tombstone's read timestamp (the stripe scan timestamp of
//!   an ordered table, a retire floor of a hash table) and unlinks the record, so scans stop
//!   walking deleted rows (TPC-C's Delivery). The key's next record starts empty; its first version
//!   must be above the floor.
//!
//! Known limitations: aborted versions stay in a list until a newer committed version passes below
//! the horizon; an idle worker does not hold the horizon back, but a long-running transaction does
//! (it also delays retirement). Protocol walk-through: `docs/protocols/mvto.md`.

#![warn(missing_docs)]

mod commit;
mod config;
mod engine;
mod gc;
mod head;
mod nwr;
mod pool;
mod record;
mod retire;
mod timestamp;
mod version;

#[cfg(feature = "mutation")]
pub use config::Mutation;
pub use config::{MvtoConfig, MvtoConfigExt, MvtoSettings};
pub use engine::{
    Mvto, MvtoBuilder, MvtoNwr, MvtoNwrSingle, MvtoState, MvtoTxn, MvtoWorker, Timestamped,
};
pub use record::{LINE_ALIGNED_RECORDS, MvtoRecord};
pub use txlab_nwr::{NoNwr, Nwr, NwrMode, NwrSingleWrite, WriteOmission};
pub use version::Version;

/// Not API: the timestamp layout of `src/timestamp.rs`, which the crate's tests decode histories
/// with.
#[doc(hidden)]
pub mod __layout {
    pub use crate::timestamp::epoch_of;
}
