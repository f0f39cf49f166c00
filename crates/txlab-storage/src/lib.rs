//! # txlab-storage
//!
//! The indexes behind [`txlab_core::protocol::storage::Index`]: where a protocol's records live and how
//! they are found. Every index keeps the trait's invariants (see `txlab_core::protocol::storage`): stable
//! references while a crossbeam-epoch guard is pinned, atomic insert-if-absent publishing
//! `R::absent(value_size)`, logical deletes with `unlink` plus epoch-deferred destruction, and
//! phantom stripes bumped after a structural change is visible (ordered index only).
//!
//! | index | for | keys | scans | phantom stripes | unlink |
//! |---|---|---|---|---|---|
//! | [`DenseIndex`] | the benchmark fast path: YCSB, SmallBank, TPC-C fixed tables | `0..capacity` | yes (clipped to the capacity) | none needed: every key always has its record | no-op |
//! | [`HashIndex`] | point lookups on arbitrary keys (`u64`, or byte strings `Box<[u8]>` looked up by `&[u8]`) | any `Hash + Eq` | [`Error::ScanUnsupported`](txlab_core::Error::ScanUnsupported) | none | epoch-deferred |
//! | [`OrderedIndex`] | range scans (TPC-C new-order, order-line; YCSB-E) | any `Ord` + [`StripeKey`] | ascending, early stop | yes | epoch-deferred, bumps |
//!
//! [`AnyIndex`] wraps the three (plus a user-supplied `Box<dyn Index<R>>`) with static dispatch
//! for the built-ins, and [`Tables`] holds one per table of a [`Schema`](txlab_core::Schema).
//! [`Companions`] keeps one cold cell per key beside the tables, for what only a protocol's rare
//! path touches (Silo+NWR's and TicToc+NWR's pivot version objects).
//!
//! **Byte-string keys.** Engines address records by `u64`. An application with byte-string keys
//! interns them in a [`KeyDictionary`] (atomic insert-if-absent, one dense id per key for the
//! dictionary's lifetime) and uses the ids with any engine and index; the hash and ordered indexes
//! also take byte-string keys directly through their inherent methods.
//!
//! ## Design choices
//!
//! - **Dense: one `Box<[R]>`.** No per-key indirection beyond what `R` itself holds, no
//!   resizing, no reclamation. Presence is a protocol concern (the record's version word), which
//!   is also why dense needs no phantom stripes: scans visit every record in range, absent ones
//!   included, and the protocol validates them like any read.
//! - **Hash: sharded `RwLock<HashMap<K, *const R>>` (std's, through `txlab_core::protocol::sync`)** rather than a lock-free map.
//!   Records are boxed once and never move, so stable addresses come for free; unlinked records
//!   are reclaimed through the same crossbeam-epoch guard the protocols already hold; and the
//!   read path is one uncontended read-lock acquisition per lookup on a shard picked by the hash's
//!   top bits. This is far less unsafe code than a lock-free table for a structure that is not
//!   the bottleneck of the benchmarks using it.
//! - **Ordered: `crossbeam_skiplist::base::SkipList`**, a maintained lock-free skip list whose
//!   nodes are already epoch-reclaimed, so `Entry::value()` is a stable reference while the guard
//!   is pinned. Two additions on top: a creator token in each node to tell the one caller that
//!   published a key from the ones that found it, and [`PhantomStripes`](txlab_core::protocol::storage::PhantomStripes)
//!   (Silo's node-set validation with stripes in place of B-tree nodes: Tu et al., "Speedy
//!   Transactions in Multicore In-Memory Databases", SOSP 2013, §4.6).
//! - **One collector.** Both reclaiming indexes use crossbeam-epoch's default collector, the one
//!   `crossbeam_epoch::pin()` pins; a guard from another collector is rejected with
//!   [`Error::Misuse`](txlab_core::Error::Misuse) instead of silently failing to protect readers.

#![warn(missing_docs)]

mod any;
mod companion;
mod dense;
mod guard_check;
mod hash;
#[cfg(any(test, feature = "hooks"))]
pub mod hooks;
mod key_dictionary;
mod ordered;
mod stripe_key;
mod tables;

#[cfg(test)]
mod test_support;

pub use any::AnyIndex;
pub use companion::Companions;
pub use dense::{DenseIndex, MAX_DENSE_CAPACITY};
pub use hash::{DEFAULT_HASH_SHARDS, HashIndex, MAX_HASH_SHARDS};
pub use key_dictionary::{KeyDictionary, MAX_KEY_BYTES};
pub use ordered::{DEFAULT_STRIPE_SHIFT, MAX_STRIPE_SHIFT, OrderedIndex};
pub use stripe_key::StripeKey;
pub use tables::Tables;
