//! [`History`]: the finished transactions of one run, and a small builder for writing histories
//! by hand in tests.
//!
//! A history is just the set of [`TxnRecord`]s engines handed to their recorder; the order of the
//! records carries no meaning (the checker orders versions by [`WriteEvent::order`] and, for
//! real-time checks, transactions by their `begin_ns`/`end_ns`).
//!
//! The builder writes one transaction per statement:
//!
//! ```
//! use txlab_core::protocol::history::History;
//! let mut h = History::new();
//! h.txn(1).read(7, 0).write(7, 1).commit(); // T1 read the initial version of key 7, wrote 1
//! h.txn(2).read(7, 1).commit(); // T2 read T1's version
//! assert_eq!(h.len(), 2);
//! ```
//!
//! Keys given as a bare `u64` live in table 0; use `(TableId, u64)` for other tables. Unless
//! [`TxnBuilder::during`] says otherwise, a hand-written transaction begins and ends at instant 0,
//! so no two of them are ordered in real time.

use super::{Outcome, ReadEvent, TxnId, TxnRecord, WriteEvent, WriteKind};
use crate::error::ConflictCause;
use crate::table::TableId;
use std::fmt;

/// A key of some table: the unit the checker orders versions of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The table.
    pub table: TableId,
    /// The key within the table.
    pub key: u64,
}

impl Key {
    /// A key of a table.
    pub const fn new(table: TableId, key: u64) -> Self {
        Self { table, key }
    }
}

impl From<u64> for Key {
    /// A key of table 0.
    fn from(key: u64) -> Self {
        Self {
            table: TableId(0),
            key,
        }
    }
}

impl From<(TableId, u64)> for Key {
    fn from((table, key): (TableId, u64)) -> Self {
        Self { table, key }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.table.0 == 0 {
            write!(f, "k{}", self.key)
        } else {
            write!(f, "t{}/k{}", self.table.0, self.key)
        }
    }
}

/// Formats a transaction id for humans: `T<seq>` for worker 0 (hand-written histories),
/// `T<worker>.<seq>` otherwise (see [`txn_id`](super::txn_id)).
pub fn display_txn(id: TxnId) -> String {
    let worker = id >> 40;
    let seq = id & ((1 << 40) - 1);
    if worker == 0 {
        format!("T{seq}")
    } else {
        format!("T{worker}.{seq}")
    }
}

/// The finished transactions of a run (committed and aborted), in no particular order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct History {
    records: Vec<TxnRecord>,
}

impl History {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// A history holding these records.
    pub fn from_records(records: Vec<TxnRecord>) -> Self {
        Self { records }
    }

    /// Adds one finished transaction.
    pub fn push(&mut self, record: TxnRecord) {
        self.records.push(record);
    }

    /// The records.
    pub fn records(&self) -> &[TxnRecord] {
        &self.records
    }

    /// The records, by value.
    pub fn into_records(self) -> Vec<TxnRecord> {
        self.records
    }

    /// Mutable access to the records (tests use it to corrupt a valid history on purpose).
    pub fn records_mut(&mut self) -> &mut Vec<TxnRecord> {
        &mut self.records
    }

    /// Number of records (committed and aborted).
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Starts writing transaction `id` by hand; it is added when [`TxnBuilder::commit`] (or an
    /// abort method) is called. `id` is used as given (worker 0, sequence `id`).
    pub fn txn(&mut self, id: TxnId) -> TxnBuilder<'_> {
        TxnBuilder {
            history: self,
            record: TxnRecord {
                id,
                reads: Vec::new(),
                writes: Vec::new(),
                scans: Vec::new(),
                outcome: Outcome::Committed,
                begin_ns: 0,
                end_ns: 0,
            },
        }
    }
}

impl FromIterator<TxnRecord> for History {
    fn from_iter<I: IntoIterator<Item = TxnRecord>>(iter: I) -> Self {
        Self {
            records: iter.into_iter().collect(),
        }
    }
}

impl Extend<TxnRecord> for History {
    fn extend<I: IntoIterator<Item = TxnRecord>>(&mut self, iter: I) {
        self.records.extend(iter);
    }
}

/// One hand-written transaction under construction (see [`History::txn`]).
#[derive(Debug)]
#[must_use = "a transaction is added to the history only by commit() or an abort method"]
pub struct TxnBuilder<'h> {
    history: &'h mut History,
    record: TxnRecord,
}

impl TxnBuilder<'_> {
    /// Reads version `version` of `key` (0: the initial version), observing the key present.
    pub fn read(self, key: impl Into<Key>, version: u64) -> Self {
        self.push_read(key.into(), version, true)
    }

    /// Reads version `version` of `key`, observing the key absent.
    pub fn read_absent(self, key: impl Into<Key>, version: u64) -> Self {
        self.push_read(key.into(), version, false)
    }

    fn push_read(mut self, key: Key, version: u64, present: bool) -> Self {
        self.record.reads.push(ReadEvent {
            table: key.table,
            key: key.key,
            version,
            present,
        });
        self
    }

    /// Scans `lo..=hi` of `table` (a predicate read): keys in the range it did not read are
    /// claimed absent. Record the keys it returned with [`read`](Self::read) as well.
    pub fn scan(mut self, table: u16, lo: u64, hi: u64) -> Self {
        self.record.scans.push(super::ScanEvent {
            table: TableId(table),
            lo,
            hi,
        });
        self
    }

    /// Writes version `version` of `key`, placed at `order == version` in the version order.
    pub fn write(self, key: impl Into<Key>, version: u64) -> Self {
        self.push_write(key.into(), version, version, WriteKind::Put, true)
    }

    /// Writes version `version` of `key` at an explicit position `order` in the version order.
    pub fn write_at(self, key: impl Into<Key>, version: u64, order: u64) -> Self {
        self.push_write(key.into(), version, order, WriteKind::Put, true)
    }

    /// An omitted write (NWR): version `version` sits at `order` in the version order but no reader
    /// could ever observe it (`visible: false`).
    pub fn omitted_write(self, key: impl Into<Key>, version: u64, order: u64) -> Self {
        self.push_write(key.into(), version, order, WriteKind::Put, false)
    }

    /// Deletes `key`, installing version `version` at `order == version`.
    pub fn delete(self, key: impl Into<Key>, version: u64) -> Self {
        self.push_write(key.into(), version, version, WriteKind::Delete, true)
    }

    /// Sets the real-time interval: began at `begin_ns`, finished at `end_ns`.
    pub fn during(mut self, begin_ns: u64, end_ns: u64) -> Self {
        self.record.begin_ns = begin_ns;
        self.record.end_ns = end_ns;
        self
    }

    /// Adds the transaction as committed.
    pub fn commit(self) {
        self.finish(Outcome::Committed);
    }

    /// Adds the transaction as aborted by concurrency control (read validation).
    pub fn abort(self) {
        self.finish(Outcome::Aborted(ConflictCause::ReadValidation));
    }

    /// Adds the transaction as rolled back by its program.
    pub fn user_abort(self) {
        self.finish(Outcome::UserAborted);
    }

    /// Adds the transaction with the given outcome.
    pub fn finish(mut self, outcome: Outcome) {
        self.record.outcome = outcome;
        self.history.records.push(self.record);
    }

    fn push_write(
        mut self,
        key: Key,
        version: u64,
        order: u64,
        kind: WriteKind,
        visible: bool,
    ) -> Self {
        self.record.writes.push(WriteEvent {
            table: key.table,
            key: key.key,
            version,
            order,
            kind,
            visible,
        });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builder_records_reads_writes_outcome_and_interval() {
        let mut h = History::new();
        h.txn(1)
            .read(3, 0)
            .write(3, 5)
            .omitted_write((TableId(2), 9), 4, 7)
            .during(10, 20)
            .commit();
        h.txn(2).read_absent(3, 0).abort();
        assert_eq!(h.len(), 2);
        let t1 = &h.records()[0];
        assert_eq!(t1.id, 1);
        assert_eq!(
            t1.reads,
            vec![ReadEvent {
                table: TableId(0),
                key: 3,
                version: 0,
                present: true
            }]
        );
        assert_eq!(t1.writes[0].order, 5);
        assert!(t1.writes[0].visible);
        assert_eq!(
            t1.writes[1],
            WriteEvent {
                table: TableId(2),
                key: 9,
                version: 4,
                order: 7,
                kind: WriteKind::Put,
                visible: false
            }
        );
        assert_eq!((t1.begin_ns, t1.end_ns), (10, 20));
        assert_eq!(t1.outcome, Outcome::Committed);
        let t2 = &h.records()[1];
        assert!(!t2.reads[0].present);
        assert!(matches!(t2.outcome, Outcome::Aborted(_)));
    }

    #[test]
    fn transaction_ids_and_keys_print_compactly() {
        assert_eq!(display_txn(7), "T7");
        assert_eq!(
            display_txn(crate::protocol::history::txn_id(3, 12)),
            "T3.12"
        );
        assert_eq!(Key::from(4).to_string(), "k4");
        assert_eq!(Key::new(TableId(1), 4).to_string(), "t1/k4");
    }
}
