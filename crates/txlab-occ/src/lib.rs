//! # txlab-occ
//!
//! The toolkit txlab's interactive optimistic engines (Silo, TicToc, MVTO and their NWR forms)
//! are built from. A protocol supplies its record type, how a read observes a record, its phantom
//! protection and its commit protocol ([`Protocol`]); the toolkit supplies the rest, once:
//!
//! - [`Sets`]: the read set, the write set, the stripe set, the value buffers and the history
//!   events, reused across a worker's transactions;
//! - [`WriteKind`]: what a buffered write installs, and the one rule deciding whether it is blind
//!   ([`Sets::is_blind`]), the rule the non-visible write rule's omission relies on;
//! - [`Txn`]: begin, end, and every operation of `TxOps` (reads of one's own writes, locating and
//!   observing records, buffering writes, inserts and deletes, scans with their coverage);
//! - [`Worker`] and [`Shell`]: the worker and the engine's shared parts (schema, tables, value
//!   sizes, epochs, configuration, recorder, worker ids, the tags of retired tombstones), and
//!   [`impl_engine!`], which makes an engine type a `txlab_core::Engine`;
//! - [`OccConfig`]: the configuration they share, generic over the protocol's mutations and
//!   settings.
//!
//! **Why a crate of its own**, rather than a module of `txlab-core`: `txlab-core` is the
//! application-facing vocabulary every engine model shares (interactive, batch pipelines,
//! deterministic and distributed engines alike), while this toolkit is for authors of *interactive
//! optimistic* engines only and depends on `txlab-storage`'s indexes. It knows nothing of the
//! non-visible write rule: `txlab-nwr` builds its glue on top of these sets, and an engine that
//! does not use NWR does not compile any of it.
//!
//! Everything is statically dispatched: `Protocol` hooks are associated functions of the engine
//! type, so a protocol's commit path compiles as if it were written by hand.

#![warn(missing_docs)]

pub mod config;
mod lock;
pub mod protocol;
pub mod sets;
pub mod shell;
pub mod txn;
pub mod worker;
pub mod write_kind;

pub use config::{MAX_INTERVAL, NoMutation, NoSettings, OccConfig, Settings, check_interval};
pub use lock::{LockWord, lock_writes, unlock_writes};
pub use protocol::{ConfigOf, Observation, Protocol, RetireEntry, unlinks};
pub use sets::{
    Read, ReadEntry, Sets, StripeEntry, Write, WriteEntry, record_stripes, write_index,
};
pub use shell::Shell;
pub use txn::{Txn, refused};
pub use worker::Worker;
pub use write_kind::WriteKind;

#[doc(hidden)]
pub mod __private {
    pub use txlab_core::protocol::epoch::EpochManager;
    pub use txlab_core::protocol::sync::Arc;
    pub use txlab_core::{AckMode, Engine, Error, Schema, TableId};
}

/// Implements `txlab_core::Engine` for an engine type that implements [`Protocol`] (its workers
/// are [`Worker`]s and everything else comes from its [`Shell`]), and gives the type the shell's
/// accessors as inherent methods (`epochs`, `recorder`, `config`, and for tests `mapped_keys` and
/// `is_mapped`).
///
/// ```ignore
/// txlab_occ::impl_engine!([Rec: Recorder, W: WriteOmission] Silo<Rec, W>);
/// ```
#[macro_export]
macro_rules! impl_engine {
    ([$($generics:tt)*] $engine:ty) => {
        impl<$($generics)*> $crate::__private::Engine for $engine {
            type Worker<'e>
                = $crate::Worker<'e, Self>
            where
                Self: 'e;

            fn name(&self) -> &'static str {
                <Self as $crate::Protocol>::name(self)
            }

            fn schema(&self) -> &$crate::__private::Schema {
                $crate::Protocol::shell(self).schema()
            }

            fn worker(&self) -> Result<$crate::Worker<'_, Self>, $crate::__private::Error> {
                $crate::Worker::new(self)
            }

            fn load(
                &self,
                table: $crate::__private::TableId,
                key: u64,
                value: &[u8],
            ) -> Result<(), $crate::__private::Error> {
                $crate::Protocol::shell(self).load(table, key, value)
            }

            fn stable_epoch(&self) -> u64 {
                $crate::Protocol::shell(self).stable_epoch()
            }

            fn ack_mode(&self) -> $crate::__private::AckMode {
                $crate::Protocol::shell(self).config.ack
            }
        }

        impl<$($generics)*> $engine {
            /// The epoch manager (tests advance epochs by hand through it).
            pub fn epochs(&self) -> &$crate::__private::EpochManager {
                &$crate::Protocol::shell(self).epochs
            }

            /// The history recorder.
            pub fn recorder(&self) -> &$crate::__private::Arc<<Self as $crate::Protocol>::Recorder> {
                &$crate::Protocol::shell(self).recorder
            }

            /// The configuration.
            pub fn config(&self) -> &$crate::ConfigOf<Self> {
                &$crate::Protocol::shell(self).config
            }

            /// Number of keys `table`'s index maps (approximate under concurrency; a dense index
            /// reports its capacity). Tests use it to see retired tombstones leave the index.
            #[doc(hidden)]
            pub fn mapped_keys(
                &self,
                table: $crate::__private::TableId,
            ) -> Result<usize, $crate::__private::Error> {
                $crate::Protocol::shell(self).mapped_keys(table)
            }

            /// Whether `table`'s index maps `key` to a record (present, absent or tombstone).
            /// Tests use it to see retired tombstones leave the index.
            #[doc(hidden)]
            pub fn is_mapped(
                &self,
                table: $crate::__private::TableId,
                key: u64,
            ) -> Result<bool, $crate::__private::Error> {
                $crate::Protocol::shell(self).tables.is_mapped(table, key)
            }
        }
    };
}
