//! [`StateDigest`]: an order-independent 128-bit digest of a database's rows.
//!
//! The digest of a state is the wrapping sum, modulo 2^128, of one hash per present row,
//! `xxh3_128(table ‖ key ‖ value)` (little-endian `u16` and `u64`, then the value's bytes). A sum
//! does not depend on the order rows are visited in, and the digest of a union of disjoint row
//! sets is the sum of their digests, so the shards of a partitioned database digest separately
//! and add up ([`Add`]). Two states with equal digests are equal up to a 128-bit hash collision;
//! unequal digests prove the states differ, and [`StateDigest::diff`] names the rows.
//!
//! The hash is XXH3 (the `xxhash-rust` crate), whose output is fixed by its specification, so a
//! digest printed by one process or host compares with another's.
//!
//! [`StateDigest::of`] reads a state through any [`Engine`]: every key of a dense table, and a
//! scan over the whole key space of an ordered one, each table in one transaction (retried on
//! conflict; run it while no other transaction runs). Hash tables can be neither enumerated nor
//! scanned, and are refused with an error naming the table.

use crate::serial::SerialEngine;
use std::fmt;
use std::ops::{Add, AddAssign};
use txlab_core::{Engine, Error, IndexKind, RetryPolicy, TableId, TxError, TxOps};

/// An order-independent digest of a set of rows (module docs).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StateDigest(pub u128);

impl StateDigest {
    /// The digest of no rows.
    pub const EMPTY: StateDigest = StateDigest(0);

    /// The digest of one row.
    pub fn row(table: TableId, key: u64, value: &[u8]) -> Self {
        let mut bytes = Vec::with_capacity(10 + value.len());
        bytes.extend_from_slice(&table.0.to_le_bytes());
        bytes.extend_from_slice(&key.to_le_bytes());
        bytes.extend_from_slice(value);
        StateDigest(xxhash_rust::xxh3::xxh3_128(&bytes))
    }

    /// The digest of every row of a serial engine.
    pub fn of_serial(engine: &SerialEngine) -> Self {
        engine
            .rows()
            .iter()
            .map(|(t, k, v)| Self::row(*t, *k, v))
            .fold(Self::EMPTY, Add::add)
    }

    /// The digest of every present row of `engine`, read in one transaction per table (module
    /// docs). Errors: a hash table (named), or a real error of the engine.
    pub fn of<E: Engine>(engine: &E) -> Result<Self, Error> {
        let schema = engine.schema();
        let mut worker = engine.worker()?;
        let mut total = Self::EMPTY;
        for (i, spec) in schema.tables().iter().enumerate() {
            let table = TableId(i as u16);
            let kind = spec.index;
            if kind == IndexKind::Hash {
                return Err(Error::invalid(
                    "table",
                    format!("'{}' (id {i})", spec.name),
                    "a state digest reads dense tables key by key and scans ordered ones; \
                     a hash table can be neither enumerated nor scanned",
                ));
            }
            let committed = txlab_core::run(&mut worker, RetryPolicy::default(), |tx| {
                digest_table(tx, table, kind)
            })
            .map_err(|e| match e {
                TxError::Error(e) => e,
                other => Error::Internal(format!("state digest of table {i}: {other}")),
            })?;
            total += committed.value;
        }
        Ok(total)
    }

    /// The first `n` rows, by table and key, where `a` and `b` differ.
    pub fn diff(a: &SerialEngine, b: &SerialEngine, n: usize) -> Vec<RowDiff> {
        let (ra, rb) = (a.rows(), b.rows());
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while out.len() < n && (i < ra.len() || j < rb.len()) {
            let ka = ra.get(i).map(|(t, k, _)| (*t, *k));
            let kb = rb.get(j).map(|(t, k, _)| (*t, *k));
            let take_a = kb.is_none() || ka.is_some_and(|ka| ka <= kb.unwrap());
            let take_b = ka.is_none() || kb.is_some_and(|kb| kb <= ka.unwrap());
            let (table, key) = if take_a { ka } else { kb }.expect("one side has a row");
            let left = take_a.then(|| ra[i].2.clone());
            let right = take_b.then(|| rb[j].2.clone());
            i += usize::from(take_a);
            j += usize::from(take_b);
            if left != right {
                out.push(RowDiff {
                    table,
                    key,
                    left,
                    right,
                });
            }
        }
        out
    }
}

/// Digests one table inside a transaction.
fn digest_table(
    tx: &mut dyn TxOps,
    table: TableId,
    kind: IndexKind,
) -> Result<StateDigest, TxError> {
    let mut d = StateDigest::EMPTY;
    match kind {
        IndexKind::Dense { capacity } => {
            for key in 0..capacity {
                if let Some(v) = tx.read(table, key)? {
                    d += StateDigest::row(table, key, v);
                }
            }
        }
        _ => tx.scan(table, 0, u64::MAX, &mut |key, v| {
            d += StateDigest::row(table, key, v);
            true
        })?,
    }
    Ok(d)
}

impl Add for StateDigest {
    type Output = StateDigest;

    fn add(self, rhs: StateDigest) -> StateDigest {
        StateDigest(self.0.wrapping_add(rhs.0))
    }
}

impl AddAssign for StateDigest {
    fn add_assign(&mut self, rhs: StateDigest) {
        *self = *self + rhs;
    }
}

impl fmt::Debug for StateDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StateDigest({:032x})", self.0)
    }
}

impl fmt::Display for StateDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// A row where two states differ: its value on each side (`None`: absent there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowDiff {
    /// The table.
    pub table: TableId,
    /// The key.
    pub key: u64,
    /// The value in the first state.
    pub left: Option<Vec<u8>>,
    /// The value in the second state.
    pub right: Option<Vec<u8>>,
}

impl fmt::Display for RowDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Vec<u8>>| match v {
            None => "absent".to_string(),
            Some(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
        };
        write!(
            f,
            "table {} key {}: {} vs {}",
            self.table.0,
            self.key,
            show(&self.left),
            show(&self.right)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use txlab_core::{Schema, TableSpec};

    fn schema() -> Schema {
        let mut s = Schema::new();
        s.add(TableSpec::dense("d", 8, 50)).unwrap();
        s.add(TableSpec::ordered("o", 8)).unwrap();
        s
    }

    fn filled(rows: &[(u16, u64, u64)]) -> SerialEngine {
        let e = SerialEngine::new(schema());
        for &(t, k, v) in rows {
            e.insert_raw(TableId(t), k, &v.to_le_bytes()).unwrap();
        }
        e
    }

    #[test]
    fn the_digest_ignores_order_and_shards_add_up() {
        let rows = [(0, 1, 10), (0, 7, 70), (1, 3, 30), (1, 1 << 40, 5)];
        let whole = filled(&rows);
        let (left, right) = (filled(&rows[..2]), filled(&rows[2..]));
        let mut reversed = rows;
        reversed.reverse();
        assert_eq!(
            StateDigest::of_serial(&whole),
            StateDigest::of_serial(&filled(&reversed))
        );
        assert_eq!(
            StateDigest::of_serial(&whole),
            StateDigest::of_serial(&left) + StateDigest::of_serial(&right)
        );
        assert_eq!(
            StateDigest::of(&whole).unwrap(),
            StateDigest::of_serial(&whole),
            "reading through the Engine trait gives the same digest"
        );
    }

    #[test]
    fn any_changed_value_key_or_table_changes_the_digest() {
        let base = StateDigest::of_serial(&filled(&[(0, 1, 10), (1, 2, 20)]));
        for changed in [
            [(0, 1, 11), (1, 2, 20)],
            [(0, 3, 10), (1, 2, 20)],
            [(1, 1, 10), (1, 2, 20)],
        ] {
            assert_ne!(
                base,
                StateDigest::of_serial(&filled(&changed)),
                "{changed:?}"
            );
        }
        assert_ne!(base, StateDigest::of_serial(&filled(&[(0, 1, 10)])));
    }

    #[test]
    fn diff_lists_the_first_differing_rows_in_key_order() {
        let a = filled(&[(0, 1, 10), (0, 2, 20), (1, 5, 50), (1, 9, 90)]);
        let b = filled(&[(0, 1, 10), (0, 2, 21), (1, 6, 60), (1, 9, 90)]);
        let d = StateDigest::diff(&a, &b, 10);
        let keys: Vec<_> = d.iter().map(|r| (r.table.0, r.key)).collect();
        assert_eq!(keys, vec![(0, 2), (1, 5), (1, 6)]);
        assert_eq!(d[1].right, None);
        assert_eq!(d[2].left, None);
        assert!(d[0].to_string().contains("table 0 key 2: 1400"), "{}", d[0]);
        assert_eq!(StateDigest::diff(&a, &b, 1).len(), 1);
        assert!(StateDigest::diff(&a, &a, 10).is_empty());
    }

    #[test]
    fn hash_tables_are_refused_with_their_name() {
        let mut s = Schema::new();
        s.add(TableSpec::hash("lookup", 8)).unwrap();
        let err = StateDigest::of(&SerialEngine::new(s)).unwrap_err();
        assert!(err.to_string().contains("'lookup' (id 0)"), "{err}");
    }
}
