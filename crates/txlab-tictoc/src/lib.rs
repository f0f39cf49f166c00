//! # txlab-tictoc
//!
//! TicToc (X. Yu, A. Pavlo, D. Sanchez, S. Devadas, "TicToc: Time Traveling Optimistic Concurrency
//! Control", SIGMOD 2016) on txlab's storage trait: optimistic concurrency control that *computes*
//! each transaction's commit timestamp from the data it accessed instead of taking it from a shared
//! counter, so a transaction that read a since-overwritten version may still commit by being
//! ordered before the overwriter. It is the baseline of the NWR paper's TicToc+NWR (§6.1.1).
//!
//! - **Records** ([`TicTocRecord`]): one 64-bit word packing the lock bit, the absent bit, a 15-bit
//!   `delta = rts - wts` and a 47-bit `wts` (`src/word.rs` has the layout and the §3.6 delta
//!   encoding with its overflow rule), the value as atomic words, and a history tag.
//! - **Execution** (`txlab_occ::txn`, Algorithm 1): a read copies the value and the word
//!   consistently (seqlock), remembering `wts` and `rts`; writes, inserts and deletes are buffered;
//!   scans also remember phantom-stripe versions.
//! - **Commit** (`src/commit.rs`, Algorithms 2 and 3): lock the write set in address order;
//!   `commit_ts = max(max wts read, max rts + 1 written)`; validate each read whose `rts <
//!   commit_ts` by checking its `wts` is unchanged and extending its `rts` to `commit_ts` with a
//!   CAS; validate phantom stripes (first writes of new keys commit above the stripes' scan
//!   timestamps); install writes with `wts = rts = commit_ts`. Start reading there.
//! - **Inserts and deletes**: as in Silo. An insert (and a point read of a missing key) publishes
//!   an absent record (`ABSENT` bit, `wts = rts = 0`) during execution; the observation "absent" is
//!   validated like any read, so a concurrent insert (which installs a new `wts`) aborts or orders
//!   the observer. A delete installs a new version with the `ABSENT` bit.
//! - **Phantoms** (`src/stripe_clock.rs`): each phantom stripe of an ordered table is a TicToc
//!   object whose value is the set of its records ever written. A scan records the stripes'
//!   versions before traversing; at commit it extends each stripe's `scan_rts` to its `commit_ts`
//!   and aborts if the version changed. A transaction writing a never-written record first (an
//!   insert or upsert of a new key) announces it on the stripe after locking and commits above the
//!   stripe's `scan_rts`, so no version of a key a scan missed can be ordered before the scan.
//!   (Silo's physical stripe check is not enough under time travel: the writer could commit
//!   physically later at a smaller timestamp.)
//! - **Epochs and group commit**: TicToc needs no epochs for correctness; they serve group commit
//!   as in Silo ([`TicTocConfig::ack`]). The epoch read right after locking is reported in
//!   [`CommitInfo::epoch`](txlab_core::CommitInfo).
//! - **History** (when a recorder is enabled): a version's tag is the `wts` it was installed with,
//!   `order == version`. Tags strictly increase per key (a writer picks `commit_ts > rts >= wts` of
//!   the locked current version). TicToc serializes in `commit_ts` order, which may differ from
//!   real-time order: its histories are serializable but not necessarily strictly serializable, so
//!   tests check them with `CheckOptions::serializable()`.
//! - **NWR**: the engine is generic over a [`WriteOmission`] policy; [`NoNwr`] (the default) is
//!   plain TicToc (record layout and commit path unchanged), [`Nwr`] is TicToc+NWR ([`TicTocNwr`],
//!   engine name `tictoc-nwr`, built with `TicToc::builder().nwr(Nwr)`, [`TicToc::builder`]): blind
//!   writes may be omitted at the `NWR HOOK` of `src/commit.rs`, timestamps carry the epoch
//!   (`src/word.rs`), and every commit marks its pre-epoch reads (the read-epoch word,
//!   `txlab_nwr::read_mark`) before extending their `rts`, which keeps TicToc's reads of old
//!   versions safe next to omitted writes (proof sketch in `src/commit.rs`); the pivot objects are
//!   kept beside the records (`txlab_storage::Companions`), not in them. [`NwrSingleWrite`] is
//!   TicToc+NWR with single-write omitters ([`TicTocNwrSingle`], engine `tictoc-nwr-single`): no
//!   reader marks anything, no pivot objects; the one mark is a bit of the history tag set by the
//!   writer of a record's first version of an epoch that read the record.
//!
//! Not implemented: the paper's optional optimizations (§4: no-wait locking in the validation
//! phase, preemptive aborts, timestamp history); writers lock with spinning in address order and
//! readers wait for a locked record with bounded backoff, like Silo's.
//! - **Retiring tombstones** (`src/retire.rs`): a committed delete on a hash or ordered table is
//!   queued and, two epochs later, its tombstone is unlinked from the index, so scans stop walking
//!   deleted rows (TPC-C's Delivery). Unlinking loses the tombstone's validity interval, so each
//!   retirement raises a *retire floor* (per phantom stripe, or per hash slot) to the tombstone's
//!   `rts`: a transaction that reads a key's fresh, never-written record or scans its stripe
//!   commits at or above the floor, and the fresh record's first write above it. A retired record
//!   holds the final locked word `word::RETIRED`; whoever still holds it aborts
//!   (`ConflictCause::RecordRetired`) or fails validation, unless the tombstone's interval already
//!   covered its timestamp.
//!
//! `docs/protocols/tictoc.md` in the repository walks through the commit path.

#![warn(missing_docs)]

mod commit;
mod config;
mod engine;
mod nwr;
mod record;
mod retire;
mod stripe_clock;
mod word;

#[cfg(feature = "mutation")]
pub use config::Mutation;
pub use config::TicTocConfig;
pub use engine::{
    MAX_WORKERS, TicToc, TicTocBuilder, TicTocNwr, TicTocNwrSingle, TicTocState, TicTocTxn,
    TicTocWorker,
};
pub use record::{LINE_ALIGNED_RECORDS, TicTocRecord};
pub use txlab_nwr::{NoNwr, Nwr, NwrMode, NwrSingleWrite, WriteOmission};

/// Not API: the timestamp layout of `src/word.rs`, which the crate's tests decode histories with.
#[doc(hidden)]
pub mod __layout {
    pub use crate::word::{MAX_DELTA, epoch_base, epoch_floor};
}
