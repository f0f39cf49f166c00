//! Tables: a small id, a fixed value size and the kind of index behind it.
//!
//! Every table stores fixed-size values (a TPC-C row, a YCSB payload, a SmallBank balance); fixed
//! sizes let protocols keep values inline as atomic words and copy them without data races. Keys
//! are `u64` on the benchmark path; composite keys (TPC-C's warehouse/district/order) are packed
//! into a `u64` by the workload, and arbitrary byte-string keys go through the hash index's
//! byte-key form (see `txlab-storage`).

use crate::error::Error;
use crate::protocol::storage::StripeLayout;

/// A table's id: its position in the [`Schema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TableId(pub u16);

/// Which index a table uses.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// Pre-allocated array for keys `0..capacity` (the benchmark fast path). Every key exists from
    /// the start, logically absent until inserted.
    Dense {
        /// Number of keys; keys at or above it are rejected with [`Error::KeyOutOfRange`].
        capacity: u64,
    },
    /// Concurrent hash index over arbitrary `u64` keys (no range scans).
    Hash,
    /// Concurrent ordered index with range scans and phantom protection.
    Ordered,
}

impl IndexKind {
    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            IndexKind::Dense { .. } => "dense",
            IndexKind::Hash => "hash",
            IndexKind::Ordered => "ordered",
        }
    }
}

/// Largest value size a table may declare (1 MiB): larger values are a configuration mistake.
pub const MAX_VALUE_SIZE: usize = 1 << 20;

/// The declaration of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSpec {
    /// A human-readable name (for reports and errors).
    pub name: String,
    /// Fixed size of every value in bytes, `1..=MAX_VALUE_SIZE`.
    pub value_size: usize,
    /// The index behind the table.
    pub index: IndexKind,
    /// How an ordered index groups keys onto phantom stripes (ignored by other indexes).
    pub stripes: StripeLayout,
}

impl TableSpec {
    /// A table with a dense index over keys `0..capacity`.
    pub fn dense(name: impl Into<String>, value_size: usize, capacity: u64) -> Self {
        Self {
            name: name.into(),
            value_size,
            index: IndexKind::Dense { capacity },
            stripes: StripeLayout::default(),
        }
    }

    /// A table with a hash index.
    pub fn hash(name: impl Into<String>, value_size: usize) -> Self {
        Self {
            name: name.into(),
            value_size,
            index: IndexKind::Hash,
            stripes: StripeLayout::default(),
        }
    }

    /// A table with an ordered index.
    pub fn ordered(name: impl Into<String>, value_size: usize) -> Self {
        Self {
            name: name.into(),
            value_size,
            index: IndexKind::Ordered,
            stripes: StripeLayout::default(),
        }
    }

    /// The same table with its ordered index's keys grouped onto phantom stripes by `layout`
    /// (e.g. one partition per TPC-C district, so that scans of one district never conflict with
    /// inserts into another).
    pub fn with_stripes(self, layout: StripeLayout) -> Self {
        Self {
            stripes: layout,
            ..self
        }
    }

    /// Checks the declaration; returns an error naming the bad field.
    pub fn validate(&self) -> Result<(), Error> {
        if self.index == IndexKind::Ordered {
            self.stripes.validate().map_err(|e| match e {
                Error::InvalidConfig {
                    name,
                    value,
                    expected,
                } => Error::InvalidConfig {
                    name,
                    value,
                    expected: format!("table '{}': phantom stripes: {expected}", self.name),
                },
                other => other,
            })?;
        }
        if self.value_size == 0 || self.value_size > MAX_VALUE_SIZE {
            return Err(Error::invalid(
                "value_size",
                self.value_size,
                format!(
                    "table '{}': value size must be in 1..={MAX_VALUE_SIZE} bytes",
                    self.name
                ),
            ));
        }
        if let IndexKind::Dense { capacity } = self.index {
            if capacity == 0 {
                return Err(Error::invalid(
                    "capacity",
                    capacity,
                    format!("table '{}': a dense table needs at least 1 key", self.name),
                ));
            }
            if capacity > (1 << 40) {
                return Err(Error::invalid(
                    "capacity",
                    capacity,
                    format!(
                        "table '{}': a dense table holds at most 2^40 keys",
                        self.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The set of tables of a database, indexed by [`TableId`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schema {
    tables: Vec<TableSpec>,
}

impl Schema {
    /// An empty schema.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a table and returns its id.
    pub fn add(&mut self, spec: TableSpec) -> Result<TableId, Error> {
        spec.validate()?;
        if self.tables.len() >= u16::MAX as usize {
            return Err(Error::invalid(
                "tables",
                self.tables.len() + 1,
                "at most 65535 tables",
            ));
        }
        self.tables.push(spec);
        Ok(TableId((self.tables.len() - 1) as u16))
    }

    /// The tables, in id order.
    pub fn tables(&self) -> &[TableSpec] {
        &self.tables
    }

    /// A table's declaration, or [`Error::UnknownTable`].
    pub fn table(&self, id: TableId) -> Result<&TableSpec, Error> {
        self.tables.get(id.0 as usize).ok_or(Error::UnknownTable {
            id: id.0,
            count: self.tables.len(),
        })
    }

    /// Number of tables.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether there are no tables.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_table_specs_are_rejected_with_the_field_named() {
        let e = TableSpec::dense("t", 0, 10).validate().unwrap_err();
        assert!(e.to_string().contains("value_size = 0"), "{e}");
        let e = TableSpec::dense("t", 8, 0).validate().unwrap_err();
        assert!(e.to_string().contains("capacity = 0"), "{e}");
        let e = TableSpec::hash("t", MAX_VALUE_SIZE + 1)
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("value_size"), "{e}");
        assert!(TableSpec::ordered("t", 8).validate().is_ok());
        let e = TableSpec::ordered("t", 8)
            .with_stripes(StripeLayout::partitioned(32, 0))
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("partitions = 0"), "{e}");
    }

    #[test]
    fn unknown_table_is_an_error_not_a_panic() {
        let mut s = Schema::new();
        let id = s.add(TableSpec::hash("a", 8)).unwrap();
        assert_eq!(id, TableId(0));
        let e = s.table(TableId(3)).unwrap_err();
        assert_eq!(e, Error::UnknownTable { id: 3, count: 1 });
        assert!(e.to_string().contains("unknown table id 3"));
    }
}
