//! # txlab-silo
//!
//! Silo (S. Tu, W. Zheng, E. Kohler, B. Liskov, S. Madden, "Speedy Transactions in Multicore
//! In-Memory Databases", SOSP 2013) on txlab's storage trait.
//!
//! - **Records** ([`SiloRecord`]): a 64-bit TID word (`src/tid.rs` has the bit layout) and the
//!   value as atomic words, read with a seqlock protocol that never races
//!   (`txlab_core::protocol::value`).
//! - **Execution** (`txlab_occ::txn`): reads copy the value and remember the TID word; writes,
//!   inserts and deletes are buffered; scans also remember phantom-stripe versions (Silo's node
//!   set).
//! - **Commit** (`src/commit.rs`): lock the write set in address order, read the global epoch,
//!   validate the read and node sets, pick the TID, install. This is the whole protocol; start
//!   reading there.
//! - **Epochs and group commit**: the global epoch advances every 40 ms by default
//!   ([`SiloConfig::epoch`]); with [`AckMode::EpochStable`](txlab_core::AckMode) (the default) a
//!   commit is acknowledged once its epoch is stable, with
//!   [`AckMode::AtCommit`](txlab_core::AckMode) at commit (for latency runs). The switch is
//!   [`SiloConfig::ack`].
//! - **Inserts and deletes**: an insert publishes an absent, unlocked record in the index during
//!   execution (insert-if-absent) and validates at commit that it is still absent; a point read of
//!   a missing key does the same, so a later insert changes a TID the reader validates. A delete
//!   installs a new TID with the absent bit.
//! - **Phantoms**: scans on ordered tables record the versions of the phantom stripes covering the
//!   range before traversing and validate them at commit; a bump the transaction made itself
//!   (linking a new record, or finding one whose creator had not bumped yet: storage invariant 4)
//!   is recognised by the stripe's pre-bump version and does not abort it.
//!
//! - **Silo+NWR** ([`SiloNwr`] = `Silo<Rec, Nwr>`, engine name `silo-nwr`): the non-visible write
//!   rule of `txlab_nwr` at the commit hook (Phase 0 in `src/commit.rs`); records carry a 128-bit
//!   pivot object next to the TID word. `Silo<Rec, NoNwr>` (the default) compiles all of it out.
//!   See `docs/protocols/nwr.md`.
//! - **Silo+NWR, single-write omitters** ([`SiloNwrSingle`] = `Silo<Rec, NwrSingleWrite>`, engine
//!   name `silo-nwr-single`): only a transaction with one blind write may be omitted, and in
//!   exchange the one mark left is the pivot writer's read of its own record, a status bit of the
//!   TID word it publishes (`tid::PIVOT_READ`). Records keep plain Silo's layout, readers write
//!   nothing to shared memory, and an omitter does no atomic read-modify-write
//!   (`docs/protocols/nwr.md`, "A rule with fewer read marks").
//!
//! - **Retiring deleted records** (`src/retire.rs`): a committed delete on a hash or ordered table
//!   is queued on its worker; two epochs later (`E >= e_d + 2`) the worker marks the tombstone
//!   `RETIRED` (TID bit 2, final) under its lock and unlinks it from the index. Invariants: TIDs of
//!   a key stay monotone across incarnations (writes to the fresh record commit in an epoch above
//!   the tombstone's); a retired record is never used again (reads and commits that meet it abort
//!   with `ConflictCause::RecordRetired`, validation of an earlier read fails); queues hold keys
//!   rather than record pointers, so no pointer outlives the guard it was obtained under; and, when
//!   recording histories, reads of a fresh record report the retired tombstone's tag instead of the
//!   initial version's.

#![warn(missing_docs)]

mod commit;
mod config;
mod engine;
mod nwr;
mod record;
mod retire;
mod tid;

#[cfg(feature = "mutation")]
pub use config::Mutation;
pub use config::SiloConfig;
pub use engine::{Silo, SiloBuilder, SiloNwr, SiloNwrSingle, SiloState, SiloTxn, SiloWorker};
pub use record::{LINE_ALIGNED_RECORDS, SiloRecord};
pub use txlab_nwr::{NoNwr, Nwr, NwrMode, NwrSingleWrite, WriteOmission};
