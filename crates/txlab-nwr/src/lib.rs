//! # txlab-nwr
//!
//! The non-visible write rule (NWR) of S. Nakazono, H. Uchiyama, Y. Fujiwara, H. Kawashima,
//! "NWR: Rethinking Thomas Write Rule for Omittable Write Operations" (the NWR paper, §3–§6 and
//! appendix A), written once for every protocol that adopts it:
//!
//! - [`pivot`]: the 128-bit pivot version object (epoch, pivot counter, mRS, mWS) and its 4-bit
//!   slot hash, read, validated and replaced by one compare-and-swap;
//! - [`read_mark`]: check (4)'s mark (a pre-epoch read by a transaction of the epoch) as one
//!   32-bit word per record, set by readers with a load and, once per epoch, a `fetch_max`
//!   (Silo and TicToc);
//! - [`read_omit`]: the same mark and an omitter's claim in one 64-bit word per record, for a
//!   baseline whose readers must learn of omissions made before their mark (MVTO);
//! - [`rule`]: the commit-time procedure (Algorithms 2 and 3) over a protocol's hooks
//!   ([`NwrBaseline`]), with the argument why an omitted write is never visible and the history
//!   stays strictly serializable under epoch-based group commit;
//! - [`omission`]: the sealed static switch [`WriteOmission`] (`NoNwr` compiles everything out,
//!   `Nwr` enables it, `NwrSingleWrite` enables the single-write variant with fewer read marks)
//!   engines are generic over, and its run-time image [`NwrMode`];
//! - [`builder`]: [`Builder`], the one way to build an engine of every NWR-extendable family,
//!   with its policy and recorder chosen by type or, by protocol name, at run time;
//! - [`printed`]: the paper's Algorithms 2 and 3 as printed, a test-only mutant
//!   ([`NwrMutation::PrintedAlgorithm`]) that shows the cross-item cycles they miss;
//! - [`stats`]: the counters engines report through `Worker::drain_counters`;
//! - [`commit`]: the glue to engines built on `txlab_occ` (their NWR state, the view of a
//!   committing transaction's sets, the omission attempt of their commit's Phase 0 and the end of
//!   an omitting commit), with per-protocol hooks only where the protocols differ.
//!
//! Invariants every user must keep: only blind writes are omitted; a failed validation hands
//! control back to the baseline protocol, which alone may abort (NWR never adds an abort); every
//! commit (NWR or baseline) marks its reads of pre-epoch versions with [`rule::merge_reads`]
//! before its own read validation, except a read-only commit of pre-epoch versions that the
//! engine serializes at the start of its epoch ([`rule::is_pre_epoch_reader`]); engines with `W::ENABLED` call
//! [`omission::require_lock_free_pivot`] at construction.
//!
//! See `docs/protocols/nwr.md` for the layouts, orderings and a worked example.

#![warn(missing_docs)]

pub mod builder;
pub mod commit;
pub mod omission;
pub mod pivot;
pub mod printed;
pub mod read_mark;
pub mod read_omit;
pub mod rule;
pub mod stats;

pub use builder::{Builder, Family};
pub use commit::{Hooks, NwrParts, View, finish_omitted, try_omit_all, try_omit_one};
pub use omission::{NoNwr, Nwr, NwrMode, NwrSingleWrite, WriteOmission, require_lock_free_pivot};
pub use pivot::{PivotCell, PivotWord};
pub use read_omit::ReadOmitWord;
pub use rule::{
    NwrBaseline, NwrMutation, SinglePivot, is_pre_epoch_reader, merge_reads, try_omit,
    try_omit_single,
};
pub use stats::{NwrFailure, NwrStats};

#[doc(hidden)]
pub mod __private {
    pub use txlab_core::protocol::history::{NoRecorder, Recorder};
    pub use txlab_core::protocol::sync::Arc;
    pub use txlab_core::{Error, Schema, TableId};
    pub use txlab_occ::OccConfig;
    pub use txlab_storage::Tables;
}
