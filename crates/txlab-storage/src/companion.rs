//! [`Companions`]: one cold cell per key, kept beside a database's tables instead of inside
//! their records.
//!
//! A protocol puts into its record what every read touches (the version word, the value) and
//! into a companion what only a rare path touches. The record stays small, so more of the hot
//! records share a cache line; the rare path pays one more lookup. The first user is Silo+NWR and
//! TicToc+NWR's pivot version object (`txlab_nwr::PivotCell`, 16 bytes), which only a would-be
//! omitter reads: kept in the record it made each record 48 bytes instead of 32 and cost every
//! read (`docs/results/nwr.md`, "Twelfth session" and "Fifteenth session").
//!
//! Where the cells live, per table of the [`Schema`]:
//!
//! | table's index | companion | lookup |
//! |---|---|---|
//! | dense, capacity `n` | a [`DenseIndex`] of `n` cells, allocated up front | bounds check, array access |
//! | hash, ordered, custom | a [`HashIndex`], a cell published on a key's first lookup | one shard read lock |
//!
//! Invariants:
//!
//! - **One cell per key for the companion's lifetime.** A cell is never unlinked, so every
//!   lookup of `(table, key)` returns the same cell, whichever record the table maps `key` to at
//!   the time. A user must therefore accept a cell left by an earlier record of the same key
//!   (Silo+NWR and TicToc+NWR do: a pivot object of an earlier epoch reads as empty, and a key's
//!   record is replaced only two epochs after its delete; see `txlab_silo::retire`).
//! - **Memory.** Dense tables cost `n` cells from the start. Keyed tables grow by one cell per
//!   distinct key ever looked up, which the user keeps to its rare path.
//! - **Stable references.** As for the indexes: a reference is valid while the guard it was
//!   looked up under is pinned (for dense tables, while the companion is borrowed).

use crate::any::AnyIndex;
use crate::dense::DenseIndex;
use crate::hash::HashIndex;
use crossbeam_epoch::Guard;
use txlab_core::storage::{Index, Record};
use txlab_core::{Error, IndexKind, Schema, TableId};

/// Cold per-key cells of type `C` beside the tables of a [`Schema`] (module docs).
#[derive(Debug)]
pub struct Companions<C: Record> {
    tables: Box<[AnyIndex<C>]>,
}

impl<C: Record> Companions<C> {
    /// No cells at all: every [`Companions::cell`] is `None`. For engines that need none.
    pub fn none() -> Self {
        Self {
            tables: Box::new([]),
        }
    }

    /// One companion per table of `schema` (module docs for the kinds).
    ///
    /// Errors: a table declaration that fails [`txlab_core::TableSpec::validate`], or a dense
    /// table whose cells cannot be allocated.
    pub fn new(schema: &Schema) -> Result<Self, Error> {
        let mut tables = Vec::with_capacity(schema.len());
        for (i, spec) in schema.tables().iter().enumerate() {
            spec.validate()?;
            let id = TableId(i as u16);
            tables.push(match spec.index {
                IndexKind::Dense { capacity } => {
                    AnyIndex::Dense(DenseIndex::new(id, spec.value_size, capacity)?)
                }
                _ => AnyIndex::Hash(HashIndex::new(id, spec.value_size)),
            });
        }
        Ok(Self {
            tables: tables.into_boxed_slice(),
        })
    }

    /// The cell of `(table, key)`, published on first use for a keyed table.
    ///
    /// `None` for a companion built by [`Companions::none`], an unknown table, a key outside a
    /// dense table's capacity (which its table rejects too), or a guard of another collector.
    #[inline]
    pub fn cell<'g>(&'g self, table: TableId, key: u64, guard: &'g Guard) -> Option<&'g C> {
        let index = self.tables.get(table.0 as usize)?;
        match index {
            AnyIndex::Dense(d) => d.record(key).ok(),
            other => other.get_or_insert(key, guard).ok().map(|e| e.record),
        }
    }

    /// Whether this companion holds cells (built by [`Companions::new`] over a non-empty schema).
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use txlab_core::TableSpec;

    #[derive(Debug, Default)]
    struct Cell(AtomicU64);

    impl Record for Cell {
        fn absent(_value_size: usize) -> Self {
            Self::default()
        }
    }

    fn schema() -> Schema {
        let mut s = Schema::new();
        s.add(TableSpec::dense("d", 8, 4)).unwrap();
        s.add(TableSpec::hash("h", 8)).unwrap();
        s.add(TableSpec::ordered("o", 8)).unwrap();
        s
    }

    #[test]
    fn every_lookup_of_a_key_returns_its_one_cell() {
        let c = Companions::<Cell>::new(&schema()).unwrap();
        let guard = crossbeam_epoch::pin();
        for table in 0..3u16 {
            for key in 0..4u64 {
                let a = c.cell(TableId(table), key, &guard).unwrap();
                a.0.store(10 * table as u64 + key + 1, Ordering::Relaxed);
            }
        }
        for table in 0..3u16 {
            for key in 0..4u64 {
                let a = c.cell(TableId(table), key, &guard).unwrap();
                assert_eq!(a.0.load(Ordering::Relaxed), 10 * table as u64 + key + 1);
            }
        }
    }

    #[test]
    fn bad_lookups_are_none() {
        let c = Companions::<Cell>::new(&schema()).unwrap();
        let guard = crossbeam_epoch::pin();
        assert!(
            c.cell(TableId(0), 4, &guard).is_none(),
            "beyond the dense capacity"
        );
        assert!(c.cell(TableId(3), 0, &guard).is_none(), "unknown table");
        assert!(
            Companions::<Cell>::none()
                .cell(TableId(0), 0, &guard)
                .is_none()
        );
        assert!(Companions::<Cell>::none().is_empty());
        assert!(!c.is_empty());
    }
}
