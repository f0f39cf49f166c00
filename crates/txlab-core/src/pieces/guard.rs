//! [`CheckedOps`]: a [`TxOps`] wrapper that refuses any access a piece did not declare.
//!
//! A piece declares its conflict keys before it runs ([`Pieced::conflict_keys`]); servers order
//! it by exactly those keys, so an access outside them would escape ordering. The wrapper checks
//! every operation against the declared keys and returns [`Error::Invariant`] naming the piece,
//! the operation, the table and the key when one is not covered:
//!
//! - a read, or a scan (whose first and last keys must fall in one conflict unit), needs a
//!   declared reading access on the table at the key's unit (any group: a read cannot tell
//!   which columns the piece looks at);
//! - a write or update needs, for every column group whose bytes it changes, a declared writing
//!   access on that group at the key's unit, and at least one declared write on the row; an
//!   insert, a delete and a write of an absent row change every group.
//!
//! To see which bytes a write changes it reads the row first through the wrapped `TxOps`; it is
//! meant for tests and checked runs, not the measured path.
//!
//! [`Pieced::conflict_keys`]: super::Pieced::conflict_keys

use super::{ColumnGroup, ConflictKey, TableLayout, permits};
use crate::error::{Error, TxError, TxResult};
use crate::program::Access;
use crate::table::TableId;
use crate::txn::TxOps;

/// A [`TxOps`] that checks every access against a piece's declared conflict keys (module docs).
#[derive(Debug)]
pub struct CheckedOps<'a, T: TxOps + ?Sized> {
    inner: &'a mut T,
    piece: &'a str,
    declared: &'a [(ConflictKey, Access)],
    tables: &'a [TableLayout],
    old: Vec<u8>,
    new: Vec<u8>,
    checked: usize,
}

impl<'a, T: TxOps + ?Sized> CheckedOps<'a, T> {
    /// Wraps `inner` for piece `piece`, which declared `declared`; `tables` lays out every table
    /// it may name.
    pub fn new(
        inner: &'a mut T,
        piece: &'a str,
        declared: &'a [(ConflictKey, Access)],
        tables: &'a [TableLayout],
    ) -> Self {
        Self {
            inner,
            piece,
            declared,
            tables,
            old: Vec::new(),
            new: Vec::new(),
            checked: 0,
        }
    }

    /// How many operations were checked (and allowed).
    pub fn checked(&self) -> usize {
        self.checked
    }

    fn layout(&self, table: TableId) -> Result<&'a TableLayout, Error> {
        let tables: &'a [TableLayout] = self.tables;
        tables.iter().find(|l| l.table == table).ok_or_else(|| {
            Error::Invariant(format!(
                "piece {}: table {} has no layout (it is not a table of the workload's pieces)",
                self.piece, table.0
            ))
        })
    }

    fn uncovered(&self, op: &str, layout: &TableLayout, key: u64, what: String) -> TxError {
        TxError::Error(Error::Invariant(format!(
            "piece {}: {op} of table {} key {key:#x} {what} is not covered by its declared \
             conflict keys",
            self.piece, layout.name
        )))
    }

    fn declares(
        &self,
        table: TableId,
        group: Option<ColumnGroup>,
        unit: u64,
        used: Access,
    ) -> bool {
        self.declared.iter().any(|&(k, a)| {
            k.table == table
                && k.key == unit
                && group.is_none_or(|g| k.group == g)
                && permits(a, used)
        })
    }

    fn check_read(&mut self, op: &str, table: TableId, key: u64) -> TxResult<()> {
        let layout = self.layout(table)?;
        let unit = layout.unit.of(key);
        if !self.declares(table, None, unit, Access::Read) {
            return Err(self.uncovered(op, layout, key, format!("(unit {unit}, read)")));
        }
        self.checked += 1;
        Ok(())
    }

    /// Checks a write whose old value is in `self.old` (`old_present`) and new one in
    /// `self.new` (`None` for a delete).
    fn check_write(
        &mut self,
        op: &str,
        table: TableId,
        key: u64,
        used: Access,
        old_present: bool,
        new_present: bool,
    ) -> TxResult<()> {
        let layout = self.layout(table)?;
        let unit = layout.unit.of(key);
        if !self.declares(table, None, unit, used) {
            let what = format!("(unit {unit}, {used:?})");
            return Err(self.uncovered(op, layout, key, what));
        }
        let whole = !(old_present && new_present) || self.old.len() != self.new.len();
        for group in layout.all_groups() {
            let changed = whole
                || self
                    .old
                    .iter()
                    .zip(&self.new)
                    .enumerate()
                    .any(|(i, (a, b))| a != b && layout.group_of_byte(i) == Some(group));
            if changed && !self.declares(table, Some(group), unit, Access::BlindWrite) {
                let what = format!(
                    "(unit {unit}, writes group {} {})",
                    group.0,
                    layout.group_name(group)
                );
                return Err(self.uncovered(op, layout, key, what));
            }
        }
        self.checked += 1;
        Ok(())
    }

    fn load_old(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.old.clear();
        match self.inner.read(table, key)? {
            Some(v) => {
                self.old.extend_from_slice(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

impl<T: TxOps + ?Sized> TxOps for CheckedOps<'_, T> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.check_read("read", table, key)?;
        self.inner.read(table, key)
    }

    fn read_for_update(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.check_read("read_for_update", table, key)?;
        self.inner.read_for_update(table, key)
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        let present = self.load_old(table, key)?;
        self.new.clear();
        self.new.extend_from_slice(value);
        self.check_write("write", table, key, Access::BlindWrite, present, true)?;
        self.inner.write(table, key, value)
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        if !self.load_old(table, key)? {
            self.check_read("update", table, key)?;
            return Ok(false);
        }
        self.new.clear();
        self.new.extend_from_slice(&self.old);
        f(&mut self.new);
        self.check_write("update", table, key, Access::ReadWrite, true, true)?;
        let new = &self.new;
        self.inner
            .update(table, key, &mut |v| v.copy_from_slice(new))
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.old.clear();
        self.new.clear();
        self.check_write("insert", table, key, Access::Insert, false, true)?;
        self.inner.insert(table, key, value)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.old.clear();
        self.new.clear();
        self.check_write("delete", table, key, Access::Delete, true, false)?;
        self.inner.delete(table, key)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        let layout = self.layout(table)?;
        if layout.unit.of(lo) != layout.unit.of(hi) {
            let what = format!(
                "(a scan to {hi:#x} spans units {} to {})",
                layout.unit.of(lo),
                layout.unit.of(hi)
            );
            return Err(self.uncovered("scan", layout, lo, what));
        }
        self.check_read("scan", table, lo)?;
        self.inner.scan(table, lo, hi, visit)
    }
}
