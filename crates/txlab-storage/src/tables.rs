//! [`Tables`]: one index per table of a [`Schema`], addressed by [`TableId`].
//!
//! Built once when an engine starts: each table gets the index its [`IndexKind`] names (dense,
//! hash or ordered), except the tables for which the caller plugs in an index of its own through
//! [`Tables::with_custom`]. Lookup by id is a bounds-checked slice access; a bad id is
//! [`Error::UnknownTable`], never a panic.

use crate::any::AnyIndex;
use crate::dense::DenseIndex;
use crate::hash::HashIndex;
use crate::ordered::OrderedIndex;
use txlab_core::protocol::storage::{Index, Record};
use txlab_core::{Error, IndexKind, Schema, TableId};

/// The indexes of a database's tables, in [`TableId`] order.
#[derive(Debug)]
pub struct Tables<R: Record> {
    indexes: Box<[AnyIndex<R>]>,
    value_sizes: Box<[usize]>,
}

impl<R: Record> Tables<R> {
    /// One built-in index per table of `schema`, chosen by the table's [`IndexKind`].
    ///
    /// Errors: a table declaration that fails [`txlab_core::TableSpec::validate`], or a dense
    /// table whose records cannot be allocated.
    pub fn new(schema: &Schema) -> Result<Self, Error> {
        Self::with_custom(schema, Vec::new())
    }

    /// Like [`Tables::new`], but the tables listed in `custom` use the given index instead of a
    /// built-in one (the built-in one is not constructed).
    ///
    /// Errors: [`Error::UnknownTable`] for an id not in `schema`; [`Error::InvalidConfig`] for a
    /// table listed twice, an index whose [`Index::table`] differs from the id it is given for, or
    /// one whose [`Index::value_size`] differs from the table's.
    pub fn with_custom(
        schema: &Schema,
        custom: Vec<(TableId, Box<dyn Index<R>>)>,
    ) -> Result<Self, Error> {
        let mut slots: Vec<Option<AnyIndex<R>>> = (0..schema.len()).map(|_| None).collect();
        for (id, index) in custom {
            schema.table(id)?;
            if index.table() != id {
                return Err(Error::invalid(
                    "custom index table",
                    index.table().0,
                    format!(
                        "the index given for table {} must report table {}",
                        id.0, id.0
                    ),
                ));
            }
            let expected = schema.table(id)?.value_size;
            if index.value_size() != expected {
                return Err(Error::invalid(
                    "custom index value size",
                    index.value_size(),
                    format!(
                        "the index given for table {} must create records of the table's value \
                         size, {expected} bytes",
                        id.0
                    ),
                ));
            }
            let slot = &mut slots[id.0 as usize];
            if slot.is_some() {
                return Err(Error::invalid(
                    "custom index table",
                    id.0,
                    "each table may be given at most one custom index",
                ));
            }
            *slot = Some(AnyIndex::Custom(index));
        }
        let mut indexes = Vec::with_capacity(schema.len());
        for ((i, spec), slot) in schema.tables().iter().enumerate().zip(slots) {
            spec.validate()?;
            let id = TableId(i as u16);
            let index = match (slot, spec.index) {
                (Some(custom), _) => custom,
                (None, IndexKind::Dense { capacity }) => {
                    AnyIndex::Dense(DenseIndex::new(id, spec.value_size, capacity)?)
                }
                (None, IndexKind::Hash) => AnyIndex::Hash(HashIndex::new(id, spec.value_size)),
                (None, IndexKind::Ordered) => AnyIndex::Ordered(OrderedIndex::with_layout(
                    id,
                    spec.value_size,
                    spec.stripes,
                )?),
                (None, other) => {
                    return Err(Error::invalid(
                        "index",
                        other.name(),
                        format!(
                            "table '{}': txlab-storage builds dense, hash and ordered indexes; \
                             supply this one through Tables::with_custom",
                            spec.name
                        ),
                    ));
                }
            };
            indexes.push(index);
        }
        let value_sizes = schema.tables().iter().map(|t| t.value_size).collect();
        Ok(Self {
            indexes: indexes.into_boxed_slice(),
            value_sizes,
        })
    }

    /// Checks that these tables fit `schema`, the one an engine will copy values by: one index
    /// per table, each creating records of its table's value size (a mismatch would make every
    /// value copy index out of bounds).
    ///
    /// Errors: [`Error::InvalidConfig`] naming the table count or the table and its value size.
    pub fn check_schema(&self, schema: &Schema) -> Result<(), Error> {
        if self.len() != schema.len() {
            return Err(Error::invalid(
                "tables",
                self.len(),
                format!("one index per table of the schema ({})", schema.len()),
            ));
        }
        for ((index, spec), size) in self
            .indexes
            .iter()
            .zip(schema.tables())
            .zip(&*self.value_sizes)
        {
            let made = index.value_size();
            if made != spec.value_size || *size != spec.value_size {
                return Err(Error::invalid(
                    "table value size",
                    made,
                    format!(
                        "table '{}' holds {}-byte values in the schema; its index must create \
                         records of that size",
                        spec.name, spec.value_size
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The index of table `id`, or [`Error::UnknownTable`].
    #[inline]
    pub fn get(&self, id: TableId) -> Result<&AnyIndex<R>, Error> {
        self.indexes.get(id.0 as usize).ok_or(Error::UnknownTable {
            id: id.0,
            count: self.indexes.len(),
        })
    }

    /// The fixed value size of table `id`, or [`Error::UnknownTable`].
    #[inline]
    pub fn value_size(&self, id: TableId) -> Result<usize, Error> {
        self.value_sizes
            .get(id.0 as usize)
            .copied()
            .ok_or(Error::UnknownTable {
                id: id.0,
                count: self.value_sizes.len(),
            })
    }

    /// Whether table `id`'s index maps `key` to a record (present, absent or tombstone), under a
    /// guard of its own. Tests use it to see retired tombstones leave their index.
    pub fn is_mapped(&self, id: TableId, key: u64) -> Result<bool, Error> {
        let guard = crossbeam_epoch::pin();
        Ok(self.get(id)?.get(key, &guard)?.is_some())
    }

    /// Number of tables.
    #[inline]
    pub fn len(&self) -> usize {
        self.indexes.len()
    }

    /// Whether there are no tables.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.indexes.is_empty()
    }

    /// The indexes in table-id order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (TableId, &AnyIndex<R>)> {
        self.indexes
            .iter()
            .enumerate()
            .map(|(i, x)| (TableId(i as u16), x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{Counted, ids};
    use txlab_core::TableSpec;

    type Rec = Counted<{ ids::TABLES }>;

    fn schema() -> Schema {
        let mut s = Schema::new();
        s.add(TableSpec::dense("accounts", 16, 100)).unwrap();
        s.add(TableSpec::hash("sessions", 32)).unwrap();
        s.add(TableSpec::ordered("orders", 64)).unwrap();
        s
    }

    #[test]
    fn each_table_gets_the_index_its_spec_names() {
        let tables = Tables::<Rec>::new(&schema()).unwrap();
        assert_eq!(tables.len(), 3);
        assert!(!tables.is_empty());
        let kinds: Vec<_> = tables.iter().map(|(id, i)| (id, i.kind())).collect();
        assert_eq!(
            kinds,
            [
                (TableId(0), IndexKind::Dense { capacity: 100 }),
                (TableId(1), IndexKind::Hash),
                (TableId(2), IndexKind::Ordered)
            ]
        );
        assert!(matches!(
            tables.get(TableId(0)).unwrap(),
            AnyIndex::Dense(_)
        ));
        assert!(matches!(tables.get(TableId(1)).unwrap(), AnyIndex::Hash(_)));
        assert!(matches!(
            tables.get(TableId(2)).unwrap(),
            AnyIndex::Ordered(_)
        ));
        for (id, size) in [(0, 16), (1, 32), (2, 64)] {
            assert_eq!(tables.value_size(TableId(id)).unwrap(), size);
            assert_eq!(tables.get(TableId(id)).unwrap().table(), TableId(id));
        }
        // Records are made with the table's value size, through the AnyIndex dispatch.
        let guard = crossbeam_epoch::pin();
        let hash = tables.get(TableId(1)).unwrap();
        let e = hash.get_or_insert(42, &guard).unwrap();
        assert!(e.created && e.record.value_size == 32);
        let ordered = tables.get(TableId(2)).unwrap();
        let e = ordered.get_or_insert(42, &guard).unwrap();
        assert!(e.created && e.bumped.is_some() && e.record.value_size == 64);
        assert!(ordered.phantom_stripes().is_some());
        assert!(hash.phantom_stripes().is_none());
        assert!(tables.get(TableId(0)).unwrap().phantom_stripes().is_none());
        let e = hash.scan(0, 1, &guard, &mut |_, _| true).unwrap_err();
        assert_eq!(
            e,
            Error::ScanUnsupported {
                table: 1,
                kind: "hash"
            }
        );
        let mut keys = Vec::new();
        ordered
            .scan(0, 100, &guard, &mut |k, _| {
                keys.push(k);
                true
            })
            .unwrap();
        assert_eq!(keys, [42]);
        assert!(
            ordered
                .unlink(42, e_record(ordered, &guard), &guard)
                .unwrap()
                .is_some()
        );
        assert!(ordered.is_empty());
    }

    fn e_record<'g>(index: &'g AnyIndex<Rec>, guard: &'g crossbeam_epoch::Guard) -> &'g Rec {
        index.get(42, guard).unwrap().unwrap()
    }

    #[test]
    fn unknown_table_ids_are_errors_naming_the_id_and_count() {
        let tables = Tables::<Rec>::new(&schema()).unwrap();
        let e = tables.get(TableId(3)).unwrap_err();
        assert_eq!(e, Error::UnknownTable { id: 3, count: 3 });
        assert!(e.to_string().contains("unknown table id 3"), "{e}");
        assert_eq!(
            tables.value_size(TableId(9)).unwrap_err(),
            Error::UnknownTable { id: 9, count: 3 }
        );
        let empty = Tables::<Rec>::new(&Schema::new()).unwrap();
        assert!(empty.is_empty());
        assert_eq!(
            empty.get(TableId(0)).unwrap_err(),
            Error::UnknownTable { id: 0, count: 0 }
        );
    }

    #[test]
    fn custom_indexes_replace_the_built_in_one() {
        let schema = schema();
        let custom: Box<dyn Index<Rec>> = Box::new(HashIndex::<u64, Rec>::new(TableId(0), 16));
        let tables = Tables::with_custom(&schema, vec![(TableId(0), custom)]).unwrap();
        let t0 = tables.get(TableId(0)).unwrap();
        assert!(matches!(t0, AnyIndex::Custom(_)));
        assert_eq!(t0.kind(), IndexKind::Hash);
        assert!(format!("{t0:?}").contains("Custom"));
        let guard = crossbeam_epoch::pin();
        // Key 1000 is beyond the dense capacity the spec declared, but the custom index takes it.
        assert!(t0.get_or_insert(1000, &guard).unwrap().created);
        assert_eq!(t0.len(), 1);
    }

    #[test]
    fn bad_custom_lists_are_rejected() {
        let schema = schema();
        let hash = |t, size| -> Box<dyn Index<Rec>> {
            Box::new(HashIndex::<u64, Rec>::new(TableId(t), size))
        };
        let e = Tables::with_custom(&schema, vec![(TableId(7), hash(7, 32))]).unwrap_err();
        assert_eq!(e, Error::UnknownTable { id: 7, count: 3 });
        let e = Tables::with_custom(
            &schema,
            vec![(TableId(1), hash(1, 32)), (TableId(1), hash(1, 32))],
        )
        .unwrap_err();
        assert!(e.to_string().contains("custom index table = 1"), "{e}");
        let e = Tables::with_custom(&schema, vec![(TableId(1), hash(2, 32))]).unwrap_err();
        assert!(e.to_string().contains("custom index table = 2"), "{e}");
        // Table 1 holds 32-byte values: an index making 8-byte records would make every value
        // copy of an engine index out of bounds.
        let e = Tables::with_custom(&schema, vec![(TableId(1), hash(1, 8))]).unwrap_err();
        assert!(e.to_string().contains("custom index value size = 8"), "{e}");
        assert!(e.to_string().contains("32 bytes"), "{e}");
    }

    #[test]
    fn tables_of_another_schema_do_not_fit() {
        let tables = Tables::<Rec>::new(&schema()).unwrap();
        tables.check_schema(&schema()).unwrap();
        let mut fewer = Schema::new();
        fewer.add(TableSpec::dense("accounts", 16, 100)).unwrap();
        let e = tables.check_schema(&fewer).unwrap_err();
        assert!(e.to_string().contains("tables = 3"), "{e}");
        let mut wider = Schema::new();
        wider.add(TableSpec::dense("accounts", 16, 100)).unwrap();
        wider.add(TableSpec::hash("sessions", 48)).unwrap();
        wider.add(TableSpec::ordered("orders", 64)).unwrap();
        let e = tables.check_schema(&wider).unwrap_err();
        assert!(e.to_string().contains("table value size = 32"), "{e}");
        assert!(
            e.to_string().contains("'sessions' holds 48-byte values"),
            "{e}"
        );
    }
}
