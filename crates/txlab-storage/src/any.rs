//! [`AnyIndex`]: one of the built-in indexes, or a user's own, behind a single type.
//!
//! Protocols store one `AnyIndex<R>` per table and call the [`Index`] methods on it. The built-in
//! variants dispatch statically (a `match` the optimiser can see through, every method
//! `#[inline]`); only [`AnyIndex::Custom`] goes through a vtable, so plugging in an experimental
//! index costs nothing for the tables that do not use one.

use crate::dense::DenseIndex;
use crate::hash::HashIndex;
use crate::ordered::OrderedIndex;
use crossbeam_epoch::Guard;
use std::fmt;
use txlab_core::protocol::storage::{Entry, Index, PhantomStripes, Record, StripeBump};
use txlab_core::{Error, IndexKind, TableId};

/// A table's index: a built-in one, or a user-supplied [`Index`] implementation.
#[expect(
    clippy::large_enum_variant,
    reason = "one value per table, stored once in `Tables` and never moved on the hot path; \
              boxing the ordered index would add a pointer chase to every operation"
)]
pub enum AnyIndex<R> {
    /// Pre-allocated records for keys `0..capacity`.
    Dense(DenseIndex<R>),
    /// Concurrent hash index over `u64` keys.
    Hash(HashIndex<u64, R>),
    /// Concurrent ordered index over `u64` keys, with phantom stripes.
    Ordered(OrderedIndex<u64, R>),
    /// A user-supplied index (dynamic dispatch).
    Custom(Box<dyn Index<R>>),
}

/// Expands to `$body` with `$i` bound to the variant's index, for every variant.
macro_rules! dispatch {
    ($self:expr, $i:ident => $body:expr) => {
        match $self {
            AnyIndex::Dense($i) => $body,
            AnyIndex::Hash($i) => $body,
            AnyIndex::Ordered($i) => $body,
            AnyIndex::Custom($i) => $body,
        }
    };
}

impl<R: Record> Index<R> for AnyIndex<R> {
    #[inline]
    fn kind(&self) -> IndexKind {
        dispatch!(self, i => Index::kind(i.as_ref_index()))
    }

    #[inline]
    fn get<'g>(&'g self, key: u64, guard: &'g Guard) -> Result<Option<&'g R>, Error> {
        dispatch!(self, i => Index::get(i.as_ref_index(), key, guard))
    }

    /// Inlined into every caller, with the dense array's lookup on the fast path and the other
    /// indexes out of line (every interactive operation locates its record through this).
    #[inline(always)]
    fn get_or_insert<'g>(&'g self, key: u64, guard: &'g Guard) -> Result<Entry<'g, R>, Error> {
        match self {
            AnyIndex::Dense(i) => Index::get_or_insert(i, key, guard),
            other => other.get_or_insert_keyed(key, guard),
        }
    }

    #[inline]
    fn unlink(&self, key: u64, record: &R, guard: &Guard) -> Result<Option<StripeBump>, Error> {
        dispatch!(self, i => Index::unlink(i.as_ref_index(), key, record, guard))
    }

    #[inline]
    fn scan<'g>(
        &'g self,
        lo: u64,
        hi: u64,
        guard: &'g Guard,
        visit: &mut dyn FnMut(u64, &'g R) -> bool,
    ) -> Result<(), Error> {
        dispatch!(self, i => Index::scan(i.as_ref_index(), lo, hi, guard, visit))
    }

    #[inline]
    fn phantom_stripes(&self) -> Option<&PhantomStripes> {
        dispatch!(self, i => Index::phantom_stripes(i.as_ref_index()))
    }

    #[inline]
    fn len(&self) -> usize {
        dispatch!(self, i => Index::len(i.as_ref_index()))
    }

    #[inline]
    fn is_empty(&self) -> bool {
        dispatch!(self, i => Index::is_empty(i.as_ref_index()))
    }

    #[inline]
    fn table(&self) -> TableId {
        dispatch!(self, i => Index::table(i.as_ref_index()))
    }

    #[inline]
    fn value_size(&self) -> usize {
        dispatch!(self, i => Index::value_size(i.as_ref_index()))
    }
}

impl<R> AnyIndex<R> {
    /// Whether engines that retire tombstones unlink deleted records from this index: the
    /// built-in hash and ordered indexes do; the dense array keeps a record per key for the
    /// index's life, and a user-supplied index is not assumed to support unlinking.
    #[inline]
    pub fn unlinks_deleted_records(&self) -> bool {
        matches!(self, AnyIndex::Hash(_) | AnyIndex::Ordered(_))
    }
}

impl<R: Record> AnyIndex<R> {
    /// [`Index::get_or_insert`] of the keyed and user-supplied indexes, out of line.
    #[inline(never)]
    fn get_or_insert_keyed<'g>(
        &'g self,
        key: u64,
        guard: &'g Guard,
    ) -> Result<Entry<'g, R>, Error> {
        dispatch!(self, i => Index::get_or_insert(i.as_ref_index(), key, guard))
    }
}

/// Views a variant's payload as the concrete (or boxed) index, so `dispatch!` can name one method
/// for all variants while the built-in ones still resolve statically.
trait AsRefIndex<R: Record> {
    type Target: Index<R> + ?Sized;
    fn as_ref_index(&self) -> &Self::Target;
}

impl<R: Record> AsRefIndex<R> for DenseIndex<R> {
    type Target = Self;
    #[inline]
    fn as_ref_index(&self) -> &Self {
        self
    }
}

impl<R: Record> AsRefIndex<R> for HashIndex<u64, R> {
    type Target = Self;
    #[inline]
    fn as_ref_index(&self) -> &Self {
        self
    }
}

impl<R: Record> AsRefIndex<R> for OrderedIndex<u64, R> {
    type Target = Self;
    #[inline]
    fn as_ref_index(&self) -> &Self {
        self
    }
}

impl<R: Record> AsRefIndex<R> for Box<dyn Index<R>> {
    type Target = dyn Index<R>;
    #[inline]
    fn as_ref_index(&self) -> &Self::Target {
        &**self
    }
}

impl<R: Record> fmt::Debug for AnyIndex<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyIndex::Dense(i) => f.debug_tuple("Dense").field(i).finish(),
            AnyIndex::Hash(i) => f.debug_tuple("Hash").field(i).finish(),
            AnyIndex::Ordered(i) => f.debug_tuple("Ordered").field(i).finish(),
            AnyIndex::Custom(i) => f
                .debug_struct("Custom")
                .field("kind", &i.kind().name())
                .field("table", &i.table())
                .finish_non_exhaustive(),
        }
    }
}
