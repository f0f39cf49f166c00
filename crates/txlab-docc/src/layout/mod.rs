//! The two record layouts, chosen at compile time (`Docc<L>`), both over `txlab_storage::Tables`
//! so every index (and a user's own) works.
//!
//! - [`InPlace`] (the paper's section 3.1, `docc-basic`): a version word and the value as atomic
//!   words. The one committer installs in place; optimistic readers copy under the version-word
//!   seqlock. Only the newest version exists, so every transaction depends on the one just
//!   before it.
//! - [`Chain`] (section 3.2, `docc-snapshot` and `docc`): the record in the index is the paper's
//!   *placeholder*, an epoch-protected pointer to the newest immutable version; versions link
//!   newest to oldest. A delete installs a tombstone version. `T_N` reads the newest version
//!   below `N`, so read-only transactions never make later ones wait.
//!
//! Both layouts keep the invariants the engine relies on:
//!
//! - **Single writer.** Only the transaction in its commit phase installs (one at a time: the
//!   waiting phase orders them), so installing needs no lock and no compare-and-swap.
//! - **Versions are sequence numbers** (`crate::seq`), `0` for the loaded state; a record that
//!   was never written reads as absent with version `0`.
//! - **Sealing** (section 3.4.2): a placeholder whose newest version is a tombstone older than
//!   every running transaction is sealed, then unlinked from its index. A sealed record is never
//!   written again (the committer writes a fresh placeholder instead) and a read of it fails
//!   validation, so nobody can miss a write that went to the fresh one.

mod chain;
mod in_place;

pub use chain::{Chain, Placeholder};
pub use in_place::{InPlace, InPlaceRecord};

use crossbeam_epoch::Guard;
use txlab_core::protocol::storage::Record;

/// What a read saw of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observed {
    /// The version (a raw `Seq`; 0: the loaded state, or never written).
    pub version: u64,
    /// Whether the key was present in that version.
    pub present: bool,
    /// Whether the record is sealed (on its way out of the index; see the module docs).
    pub sealed: bool,
}

/// Which older versions an install keeps (section 3.4.1, sharpened: `crate::commit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep<'a> {
    /// Every version (tests build chains with it).
    #[cfg(test)]
    All,
    /// The new version, and for each bound (raw `Seq`s of the running transactions, in
    /// descending order) the newest version below it; an empty list keeps the new version only.
    Below(&'a [u64]),
}

/// What an install did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Installed {
    /// The record is sealed: nothing was installed; the committer installs into a fresh record.
    pub sealed: bool,
    /// Versions allocated (`Chain`: exactly one per install).
    pub allocated: u32,
    /// Older versions unlinked from the chain and handed to the epoch collector.
    pub trimmed: u32,
}

mod sealed {
    pub trait Sealed {}
}

/// A record layout (module docs). Sealed: the engine's soundness depends on its invariants.
pub trait Layout: sealed::Sealed + Send + Sync + 'static {
    /// The record the index holds.
    type Record: Record + std::fmt::Debug;
    /// Whether reads are bounded by the transaction's position (multi-version snapshots): then a
    /// transaction depends only on the last read-write transaction before it.
    const SNAPSHOT: bool;
    /// A short name for messages.
    const NAME: &'static str;

    /// Copies the newest version of `rec` below `bound` (a raw `Seq`; `u64::MAX` for the newest)
    /// into `out` (`out.len()` is the table's value size; untouched if absent).
    fn read(rec: &Self::Record, bound: u64, out: &mut [u8], guard: &Guard) -> Observed;

    /// The version [`read`](Self::read) would see now, without copying the value (validation).
    fn current(rec: &Self::Record, bound: u64, guard: &Guard) -> Observed;

    /// Installs version `seq` (a value, or a tombstone for `None`). Only the committer calls it.
    /// Older versions that `keep` does not keep are visible to no running or future
    /// transaction and are unlinked.
    fn install(
        rec: &Self::Record,
        seq: u64,
        value: Option<&[u8]>,
        keep: Keep<'_>,
        guard: &Guard,
    ) -> Installed;

    /// Non-transactional load: the key is present with `value` at version 0.
    fn load(rec: &Self::Record, value: &[u8], guard: &Guard);

    /// Seals `rec` if its newest version is still the tombstone `seq`; returns whether it did.
    /// Only the committer calls it.
    fn seal_tombstone(rec: &Self::Record, seq: u64, guard: &Guard) -> bool;

    /// Whether `rec` is sealed.
    fn is_sealed(rec: &Self::Record, guard: &Guard) -> bool;

    /// Number of versions `rec` holds (`InPlace`: 1; tests of garbage collection).
    fn versions(rec: &Self::Record, guard: &Guard) -> usize;
}
