//! Helpers for this crate's unit tests.

use crate::error::TxResult;
use crate::table::TableId;
use crate::txn::TxOps;
use std::collections::BTreeMap;

/// A map-backed `TxOps`: every operation applies at once, nothing conflicts, any value size is
/// accepted.
#[derive(Default)]
pub(crate) struct Map(pub(crate) BTreeMap<(u16, u64), Vec<u8>>);

impl TxOps for Map {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        Ok(self.0.get(&(table.0, key)).map(Vec::as_slice))
    }
    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.0.insert((table.0, key), value.to_vec());
        Ok(())
    }
    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        Ok(self.0.get_mut(&(table.0, key)).map(|v| f(v)).is_some())
    }
    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        let absent = !self.0.contains_key(&(table.0, key));
        if absent {
            self.0.insert((table.0, key), value.to_vec());
        }
        Ok(absent)
    }
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        Ok(self.0.remove(&(table.0, key)).is_some())
    }
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        for ((_, k), v) in self.0.range((table.0, lo)..=(table.0, hi)) {
            if !visit(*k, v) {
                break;
            }
        }
        Ok(())
    }
}
