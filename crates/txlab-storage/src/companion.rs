//! [`Companions`]: one cold cell per key, kept beside a database's tables instead of inside
//! their records.
//!
//! A protocol puts into its record what every read touches (the version word, the value) and
//! into a companion what only a rare path touches. The record stays small, so more of the hot
//! records share a cache line; the rare path pays one more lookup. The users are the pivot
//! version objects of Silo+NWR, TicToc+NWR and MVTO+NWR (`txlab_nwr::PivotCell`, 16 bytes), which
//! only a would-be omitter reads: kept in the record it would make Silo's record 48 bytes instead
//! of 32 and cost every read (`docs/results/nwr.md#record-layout`).
//!
//! Where the cells live, per index of the [`Tables`] the companion is built beside:
//!
//! | table's index | companion | lookup |
//! |---|---|---|
//! | dense, capacity `n` | a [`DenseIndex`] of `n` cells, allocated up front | bounds check, array access |
//! | hash, ordered, custom | a [`HashIndex`], a cell published on a key's first lookup | one shard read lock |
//!
//! Invariants:
//!
//! - **Every key the table accepts has a cell.** The companion mirrors the indexes themselves,
//!   not the schema's declarations (a table declared dense may be given a custom index), so a
//!   lookup of a key found in the table never comes back empty.
//! - **One cell per key until [`Companions::remove`].** Every lookup of `(table, key)` returns the
//!   same cell, whichever record the table maps `key` to at the time, until the user removes it
//!   (keyed tables only; a dense cell lives as long as the companion). A user that does not remove
//!   a key's cell when the table unlinks the key's record must accept a cell left by an earlier
//!   record. Silo+NWR, TicToc+NWR and MVTO+NWR remove it when they retire a deleted record, so
//!   their maps hold at most one cell per mapped key.
//! - **Stable references.** As for the indexes: a reference is valid while the guard it was
//!   looked up under is pinned (for dense tables, while the companion is borrowed); a removed cell
//!   is destroyed only after every guard that could see it is unpinned.
//! - **Memory.** Dense tables cost `n` cells from the start; keyed tables one cell per key looked
//!   up and not removed.

use crate::any::AnyIndex;
use crate::dense::DenseIndex;
use crate::hash::HashIndex;
use crate::tables::Tables;
use crossbeam_epoch::Guard;
use txlab_core::protocol::storage::{Index, Record};
use txlab_core::{Error, TableId};

/// Cold per-key cells of type `C` beside a database's [`Tables`] (module docs).
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

    /// One companion per table of `tables`, mirroring each index: a dense index gets an array of
    /// its own capacity (so every key it accepts has a cell), any other index a keyed map.
    ///
    /// Errors: a dense array that cannot be allocated.
    pub fn beside<R: Record>(tables: &Tables<R>) -> Result<Self, Error> {
        let mut cells = Vec::with_capacity(tables.len());
        for (id, index) in tables.iter() {
            let value_size = tables.value_size(id)?;
            cells.push(match index {
                AnyIndex::Dense(d) => {
                    AnyIndex::Dense(DenseIndex::new(id, value_size, d.records().len() as u64)?)
                }
                _ => AnyIndex::Hash(HashIndex::new(id, value_size)),
            });
        }
        Ok(Self {
            tables: cells.into_boxed_slice(),
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

    /// The cell of `(table, key)` for a key the caller found in `table` of the [`Tables`] this
    /// companion was built beside ([`Companions::beside`]), under a guard of the default
    /// collector: such a lookup always has a cell (module docs), so a missing one is the caller's
    /// bug.
    ///
    /// # Panics
    ///
    /// If there is no cell: the companion was built by [`Companions::none`] or beside other
    /// tables, or the key is one its table rejects.
    #[inline]
    pub fn cell_of_found_key<'g>(&'g self, table: TableId, key: u64, guard: &'g Guard) -> &'g C {
        self.cell(table, key, guard)
            .expect("a companion built beside the tables has a cell for every key they accept")
    }

    /// Drops the cell of `(table, key)` from a keyed table's map (epoch-deferred, like an
    /// unlinked record), so that a later lookup publishes a fresh one; a no-op for dense tables,
    /// whose cells live as long as the companion. For a user whose cells may be replaced at any
    /// time, e.g. when the table unlinks the key's record.
    pub fn remove(&self, table: TableId, key: u64, guard: &Guard) {
        if let Some(AnyIndex::Hash(h)) = self.tables.get(table.0 as usize)
            && let Ok(Some(cell)) = h.get(&key, guard)
        {
            // Only a guard of another collector can fail here; the cell then simply stays.
            let _ = h.unlink(&key, cell, guard);
        }
    }

    /// Whether this companion has no cells at all (built by [`Companions::none`]).
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use txlab_core::{Schema, TableSpec};

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

    fn companions() -> Companions<Cell> {
        Companions::beside(&Tables::<Cell>::new(&schema()).unwrap()).unwrap()
    }

    #[test]
    fn every_lookup_of_a_key_returns_its_one_cell() {
        let c = companions();
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
        let c = companions();
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

    /// The companion follows the tables it is given, not the schema: a table declared dense but
    /// given a hash index (or a dense index of another capacity) gets cells for every key that
    /// index accepts.
    #[test]
    fn the_companion_mirrors_the_indexes_not_the_declarations() {
        let s = schema();
        let tables = Tables::<Cell>::with_custom(
            &s,
            vec![(
                TableId(0),
                Box::new(HashIndex::<u64, Cell>::new(TableId(0), 8)) as Box<dyn Index<Cell>>,
            )],
        )
        .unwrap();
        let c = Companions::<Cell>::beside(&tables).unwrap();
        let guard = crossbeam_epoch::pin();
        assert!(
            c.cell(TableId(0), 1 << 20, &guard).is_some(),
            "keyed, any key"
        );

        let mut bigger = Schema::new();
        bigger.add(TableSpec::dense("d", 8, 100)).unwrap();
        let c = Companions::<Cell>::beside(&Tables::<Cell>::new(&bigger).unwrap()).unwrap();
        assert!(
            c.cell(TableId(0), 99, &guard).is_some(),
            "the index's capacity"
        );
        assert!(c.cell(TableId(0), 100, &guard).is_none());
    }

    /// `remove` replaces a keyed table's cell by a fresh one on the next lookup and leaves the
    /// other keys' cells and dense cells alone.
    #[test]
    fn removed_keyed_cells_come_back_fresh() {
        let c = companions();
        let guard = crossbeam_epoch::pin();
        for table in 0..3u16 {
            for key in 0..2u64 {
                c.cell(TableId(table), key, &guard)
                    .unwrap()
                    .0
                    .store(7, Ordering::Relaxed);
            }
            c.remove(TableId(table), 0, &guard);
            let after = c
                .cell(TableId(table), 0, &guard)
                .unwrap()
                .0
                .load(Ordering::Relaxed);
            assert_eq!(after, if table == 0 { 7 } else { 0 }, "table {table}");
            let other = c
                .cell(TableId(table), 1, &guard)
                .unwrap()
                .0
                .load(Ordering::Relaxed);
            assert_eq!(other, 7, "table {table}");
        }
    }
}
