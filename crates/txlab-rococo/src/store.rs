//! A server's shard ([`Shard`]: its rows in `txlab_storage::Tables<RococoRecord>`) and the
//! [`TxOps`] pieces run against it ([`ShardTx`]).
//!
//! A server is single-threaded (the H-Store model of the paper's §5.1), so a record needs no
//! lock: a presence flag and the value as atomic words (the `Record` trait wants `Sync`; the
//! atomics are relaxed and uncontended).
//!
//! **Buffered writes.** A piece (ROCOCO) or a transaction's pieces at this server (2PL, OCC)
//! write into a [`TxnBuffer`]; reads and scans see it. [`Shard::apply`] installs it: a failed
//! piece leaves nothing behind, and the baselines install only at commit.
//!
//! **Versions per column group.** Every installed write takes a tag from the server's counter
//! (unique per key, since a key lives on one server, and increasing in execution order, so it
//! is also the version order) and becomes the version of each column group it writes. Reads
//! observe, per group the piece declared reading, that group's version. This is what histories
//! record at column-group granularity (`pieces::history_table`) and what the read-only
//! protocol compares between its two rounds (equal versions, not merely equal values, so a
//! value written back between rounds cannot hide a change).
//!
//! Which groups an access covers comes from the piece's declared conflict keys: a read covers
//! the groups declared reading the key's unit, a write the groups declared writing it (every
//! group of the table if none is); inserts and deletes write every group. A read no group is
//! declared for records nothing: only the write checks of `CheckedOps` read that way (a
//! blind write's row read to see what changed), and the servers do not order such reads.

use foldhash::HashMap;
use std::collections::BTreeMap;
use std::ops::Bound;
use txlab_core::pieces::{ColumnGroup, ConflictKey, KeyUnit, TableLayout, history_table};
use txlab_core::protocol::history::{ReadEvent, ScanEvent, WriteEvent, WriteKind};
use txlab_core::protocol::storage::{Guard, Index, Record};
use txlab_core::protocol::sync::{AtomicBool, Ordering};
use txlab_core::protocol::value::AtomicValue;
use txlab_core::{Access, Error, Schema, TableId, TxOps, TxResult};
use txlab_storage::Tables;

/// A row of a shard (module docs).
#[derive(Debug)]
pub struct RococoRecord {
    present: AtomicBool,
    value: AtomicValue,
}

impl Record for RococoRecord {
    fn absent(value_size: usize) -> Self {
        Self {
            present: AtomicBool::new(false),
            value: AtomicValue::zeroed(value_size),
        }
    }
}

/// Conflict units and column groups of every table, indexed by table id.
#[derive(Debug, Clone, Default)]
pub struct Layouts {
    tables: Vec<Option<TableLayout>>,
}

impl Layouts {
    /// From a workload's [`table_layouts`](txlab_core::pieces::PieceProfiles::table_layouts).
    pub fn new(layouts: Vec<TableLayout>) -> Self {
        let n = layouts
            .iter()
            .map(|l| l.table.0 as usize + 1)
            .max()
            .unwrap_or(0);
        let mut tables = vec![None; n];
        for l in layouts {
            let i = l.table.0 as usize;
            tables[i] = Some(l);
        }
        Self { tables }
    }

    /// Every layout, in table order.
    pub fn all(&self) -> Vec<TableLayout> {
        self.tables.iter().flatten().cloned().collect()
    }

    fn layout(&self, table: TableId) -> Option<&TableLayout> {
        self.tables.get(table.0 as usize).and_then(Option::as_ref)
    }

    /// The conflict unit of `key` in `table`.
    pub fn unit(&self, table: TableId, key: u64) -> u64 {
        self.layout(table).map_or(KeyUnit::Row, |l| l.unit).of(key)
    }

    /// Copies the byte spans of the groups in `mask` from `from` into `into`.
    fn copy_groups(&self, table: TableId, mask: u16, from: &[u8], into: &mut [u8]) {
        let Some(l) = self.layout(table) else {
            into.copy_from_slice(from);
            return;
        };
        for g in l.groups.iter().filter(|g| mask & (1 << g.group.0) != 0) {
            for &(s, e) in &g.spans {
                into[s..e].copy_from_slice(&from[s..e]);
            }
        }
    }

    /// Bit mask of every group of `table` (bit `g` for group `g`).
    pub fn all_groups(&self, table: TableId) -> u16 {
        self.layout(table)
            .map_or(1, |l| l.all_groups().fold(0, |m, g| m | 1 << g.0))
    }
}

/// The group mask `declared` gives `(table, key)` for accesses that `want` accepts (0 if none).
fn groups(
    layouts: &Layouts,
    declared: &[(ConflictKey, Access)],
    table: TableId,
    key: u64,
    want: impl Fn(Access) -> bool,
) -> u16 {
    let unit = layouts.unit(table, key);
    declared
        .iter()
        .filter(|(k, a)| k.table == table && k.key == unit && want(*a))
        .fold(0u16, |m, (k, _)| m | 1 << k.group.0)
}

fn each_group(mask: u16) -> impl Iterator<Item = ColumnGroup> {
    (0..=ColumnGroup::MAX)
        .filter(move |g| mask & 1 << g != 0)
        .map(ColumnGroup)
}

/// A buffered write: the new value (`None` deletes) and the groups it writes.
#[derive(Debug, Clone)]
struct Pending {
    value: Option<Vec<u8>>,
    groups: u16,
}

/// Writes not yet installed, and what the reads observed (module docs).
#[derive(Debug, Default, Clone)]
pub struct TxnBuffer {
    writes: BTreeMap<(u16, u64), Pending>,
    /// Reads observed, one per group read (only when capturing).
    pub reads: Vec<ReadEvent>,
    /// Scans, one per group read (only when capturing).
    pub scans: Vec<ScanEvent>,
}

impl TxnBuffer {
    /// Whether nothing is buffered or captured.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.reads.is_empty() && self.scans.is_empty()
    }

    /// Empties the buffer.
    pub fn clear(&mut self) {
        self.writes.clear();
        self.reads.clear();
        self.scans.clear();
    }

    /// The keys written, as `(table, key)`.
    pub fn written(&self) -> impl Iterator<Item = (TableId, u64)> + '_ {
        self.writes.keys().map(|&(t, k)| (TableId(t), k))
    }
}

/// A server's rows (module docs).
#[derive(Debug)]
pub struct Shard {
    tables: Tables<RococoRecord>,
    schema: Schema,
    layouts: Layouts,
    versions: HashMap<(u16, u8, u64), u64>,
    next_tag: u64,
}

impl Shard {
    /// An empty shard of `schema`.
    pub fn new(schema: &Schema, layouts: Layouts) -> Result<Self, Error> {
        Ok(Self {
            tables: Tables::new(schema)?,
            schema: schema.clone(),
            layouts,
            versions: HashMap::default(),
            next_tag: 1,
        })
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The layouts.
    pub fn layouts(&self) -> &Layouts {
        &self.layouts
    }

    /// Sets `key` present with `value`, outside any transaction (initial load: version 0).
    pub fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        let size = self.tables.value_size(table)?;
        if value.len() != size {
            return Err(Error::ValueSize {
                table: table.0,
                expected: size,
                got: value.len(),
            });
        }
        let guard = crossbeam_epoch::pin();
        let r = self.tables.get(table)?.get_or_insert(key, &guard)?.record;
        r.value.store(value);
        r.present.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Every present row of `table` (ordered and dense tables; a hash table's error says so).
    pub fn rows(&self, table: TableId) -> Result<Vec<(u64, Vec<u8>)>, Error> {
        let guard = crossbeam_epoch::pin();
        let size = self.tables.value_size(table)?;
        let mut out = Vec::new();
        self.tables
            .get(table)?
            .scan(0, u64::MAX, &guard, &mut |k, r| {
                if r.present.load(Ordering::Relaxed) {
                    let mut v = vec![0; size];
                    r.value.load_into(&mut v);
                    out.push((k, v));
                }
                true
            })?;
        Ok(out)
    }

    /// The version of `(table, group, key)` (0: the initial version).
    fn version(&self, table: TableId, group: ColumnGroup, key: u64) -> u64 {
        self.versions
            .get(&(table.0, group.0, key))
            .copied()
            .unwrap_or(0)
    }

    /// Installs `buffer`'s writes in key order, each with a fresh tag; appends their history
    /// events to `writes` when `capture`. Returns how many rows were written.
    pub fn apply(
        &mut self,
        buffer: &mut TxnBuffer,
        capture: bool,
        writes: &mut Vec<WriteEvent>,
    ) -> Result<usize, Error> {
        let guard = crossbeam_epoch::pin();
        let n = buffer.writes.len();
        for ((t, key), p) in std::mem::take(&mut buffer.writes) {
            let table = TableId(t);
            let r = self.tables.get(table)?.get_or_insert(key, &guard)?.record;
            match &p.value {
                // A write of some groups of a present row installs only those groups: a
                // baseline's buffer holds the row as its transaction read it, and another
                // transaction may have committed other groups of the row since (they hold
                // different conflict keys).
                Some(v)
                    if p.groups != self.layouts.all_groups(table)
                        && r.present.load(Ordering::Relaxed) =>
                {
                    let mut row = vec![0; r.value.len()];
                    r.value.load_into(&mut row);
                    self.layouts.copy_groups(table, p.groups, v, &mut row);
                    r.value.store(&row);
                }
                Some(v) => {
                    r.value.store(v);
                    r.present.store(true, Ordering::Relaxed);
                }
                None => r.present.store(false, Ordering::Relaxed),
            }
            let tag = self.next_tag;
            self.next_tag += 1;
            for g in each_group(p.groups) {
                self.versions.insert((t, g.0, key), tag);
                if capture {
                    writes.push(WriteEvent {
                        table: history_table(table, g)?,
                        key,
                        version: tag,
                        order: tag,
                        kind: if p.value.is_some() {
                            WriteKind::Put
                        } else {
                            WriteKind::Delete
                        },
                        visible: true,
                    });
                }
            }
        }
        Ok(n)
    }

    /// A [`TxOps`] over this shard for a piece that declared `declared`, writing into `buffer`;
    /// with `capture`, reads and scans are recorded in the buffer (module docs).
    pub fn tx<'a>(
        &'a self,
        buffer: &'a mut TxnBuffer,
        declared: &'a [(ConflictKey, Access)],
        capture: bool,
    ) -> ShardTx<'a> {
        ShardTx {
            shard: self,
            guard: crossbeam_epoch::pin(),
            buffer,
            declared,
            capture,
            scratch: Vec::new(),
        }
    }
}

/// [`TxOps`] of one piece over a [`Shard`] (module docs).
#[derive(Debug)]
pub struct ShardTx<'a> {
    shard: &'a Shard,
    guard: Guard,
    buffer: &'a mut TxnBuffer,
    declared: &'a [(ConflictKey, Access)],
    capture: bool,
    scratch: Vec<u8>,
}

impl ShardTx<'_> {
    fn size(&self, table: TableId) -> Result<usize, Error> {
        self.shard.tables.value_size(table)
    }

    /// The committed row into `scratch`; whether it is present.
    fn load(&mut self, table: TableId, key: u64) -> Result<bool, Error> {
        let size = self.size(table)?;
        self.scratch.resize(size, 0);
        match self.shard.tables.get(table)?.get(key, &self.guard)? {
            Some(r) if r.present.load(Ordering::Relaxed) => {
                r.value.load_into(&mut self.scratch);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn observe(&mut self, table: TableId, key: u64, present: bool, mask: u16) -> Result<(), Error> {
        if !self.capture {
            return Ok(());
        }
        for g in each_group(mask) {
            self.buffer.reads.push(ReadEvent {
                table: history_table(table, g)?,
                key,
                version: self.shard.version(table, g, key),
                present,
            });
        }
        Ok(())
    }

    fn read_groups(&self, table: TableId, key: u64) -> u16 {
        groups(
            &self.shard.layouts,
            self.declared,
            table,
            key,
            Access::reads,
        )
    }

    fn any_groups(&self, table: TableId, key: u64) -> u16 {
        groups(&self.shard.layouts, self.declared, table, key, |_| true)
    }

    fn write_groups(&self, table: TableId, key: u64) -> u16 {
        match groups(
            &self.shard.layouts,
            self.declared,
            table,
            key,
            Access::writes,
        ) {
            0 => self.shard.layouts.all_groups(table),
            mask => mask,
        }
    }

    /// The current row (buffered, or committed and observed) into `scratch`; whether present.
    fn current(&mut self, table: TableId, key: u64, mask: u16) -> Result<bool, Error> {
        if let Some(p) = self.buffer.writes.get(&(table.0, key)) {
            return Ok(match &p.value {
                Some(v) => {
                    self.scratch.clear();
                    self.scratch.extend_from_slice(v);
                    true
                }
                None => false,
            });
        }
        let present = self.load(table, key)?;
        self.observe(table, key, present, mask)?;
        Ok(present)
    }

    fn put(&mut self, table: TableId, key: u64, value: Option<Vec<u8>>, groups: u16) {
        let e = self.buffer.writes.entry((table.0, key)).or_insert(Pending {
            value: None,
            groups: 0,
        });
        e.value = value;
        e.groups |= groups;
    }

    fn check_size(&self, table: TableId, value: &[u8]) -> Result<(), Error> {
        let size = self.size(table)?;
        if value.len() != size {
            return Err(Error::ValueSize {
                table: table.0,
                expected: size,
                got: value.len(),
            });
        }
        Ok(())
    }
}

impl TxOps for ShardTx<'_> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        let mask = self.read_groups(table, key);
        Ok(self.current(table, key, mask)?.then_some(&self.scratch[..]))
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.check_size(table, value)?;
        let g = self.write_groups(table, key);
        self.put(table, key, Some(value.to_vec()), g);
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        let mask = self.read_groups(table, key);
        if !self.current(table, key, mask)? {
            return Ok(false);
        }
        let mut v = std::mem::take(&mut self.scratch);
        f(&mut v);
        let g = self.write_groups(table, key);
        self.put(table, key, Some(v), g);
        Ok(true)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.check_size(table, value)?;
        let mask = self.any_groups(table, key);
        if self.current(table, key, mask)? {
            return Ok(false);
        }
        let all = self.shard.layouts.all_groups(table);
        self.put(table, key, Some(value.to_vec()), all);
        Ok(true)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let mask = self.any_groups(table, key);
        if !self.current(table, key, mask)? {
            return Ok(false);
        }
        let all = self.shard.layouts.all_groups(table);
        self.put(table, key, None, all);
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        if lo > hi {
            return Ok(());
        }
        let size = self.size(table)?;
        let mut committed: Vec<(u64, Vec<u8>)> = Vec::new();
        self.shard
            .tables
            .get(table)?
            .scan(lo, hi, &self.guard, &mut |k, r| {
                if r.present.load(Ordering::Relaxed) {
                    let mut v = vec![0; size];
                    r.value.load_into(&mut v);
                    committed.push((k, v));
                }
                true
            })?;
        let range = (
            Bound::Included((table.0, lo)),
            Bound::Included((table.0, hi)),
        );
        let mut merged: BTreeMap<u64, Option<Vec<u8>>> =
            committed.into_iter().map(|(k, v)| (k, Some(v))).collect();
        let mut own = Vec::new();
        for (&(_, k), p) in self.buffer.writes.range(range) {
            merged.insert(k, p.value.clone());
            own.push(k);
        }
        let mask = self.read_groups(table, lo);
        let mut stopped = hi;
        for (k, v) in merged {
            let Some(v) = v else { continue };
            if own.binary_search(&k).is_err() {
                self.observe(table, k, true, mask)?;
            }
            if !visit(k, &v) {
                stopped = k;
                break;
            }
        }
        if self.capture {
            for g in each_group(mask) {
                self.buffer.scans.push(ScanEvent {
                    table: history_table(table, g)?,
                    lo,
                    hi: stopped,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use txlab_core::TableSpec;
    use txlab_core::pieces::GroupLayout;

    fn shard() -> Shard {
        let mut s = Schema::new();
        s.add(TableSpec::dense("t", 4, 8)).unwrap();
        s.add(TableSpec::ordered("o", 2)).unwrap();
        let t = TableLayout {
            table: TableId(0),
            name: "t",
            unit: KeyUnit::Row,
            groups: vec![
                GroupLayout {
                    group: ColumnGroup(1),
                    name: "a",
                    spans: vec![(0, 2)],
                },
                GroupLayout {
                    group: ColumnGroup(2),
                    name: "b",
                    spans: vec![(2, 4)],
                },
            ],
        };
        let o = TableLayout::whole(TableId(1), "o").unit(KeyUnit::Shift(8));
        Shard::new(&s, Layouts::new(vec![t, o])).unwrap()
    }

    fn key(t: u16, g: u8, k: u64, a: Access) -> (ConflictKey, Access) {
        (ConflictKey::new(TableId(t), ColumnGroup(g), k), a)
    }

    #[test]
    fn writes_version_only_the_groups_declared_and_reads_see_group_versions() {
        let mut s = shard();
        s.load(TableId(0), 3, &[1, 1, 2, 2]).unwrap();
        let mut b = TxnBuffer::default();
        let decl = [key(0, 1, 3, Access::ReadWrite), key(0, 2, 3, Access::Read)];
        let mut tx = s.tx(&mut b, &decl, true);
        assert!(tx.update(TableId(0), 3, &mut |v| v[0] = 9).unwrap());
        // The piece sees its own write; the observation was recorded once, at version 0.
        assert_eq!(tx.read(TableId(0), 3).unwrap().unwrap(), &[9, 1, 2, 2]);
        drop(tx);
        assert_eq!(b.reads.len(), 2);
        assert!(b.reads.iter().all(|r| r.version == 0 && r.present));
        let mut w = Vec::new();
        assert_eq!(s.apply(&mut b, true, &mut w).unwrap(), 1);
        assert_eq!(w.len(), 1, "only group a is written");
        assert_eq!(
            w[0].table,
            history_table(TableId(0), ColumnGroup(1)).unwrap()
        );
        assert_eq!(s.version(TableId(0), ColumnGroup(1), 3), w[0].version);
        assert_eq!(s.version(TableId(0), ColumnGroup(2), 3), 0);
        // A failed piece leaves nothing: the buffer is simply not applied.
        let mut b2 = TxnBuffer::default();
        let mut tx = s.tx(&mut b2, &decl, false);
        tx.write(TableId(0), 3, &[0; 4]).unwrap();
        drop(tx);
        drop(b2);
        assert_eq!(s.rows(TableId(0)).unwrap(), vec![(3, vec![9, 1, 2, 2])]);
    }

    #[test]
    fn scans_merge_buffered_writes_and_record_where_they_stopped() {
        let mut s = shard();
        for k in [1u64, 2, 4] {
            s.load(TableId(1), k, &[k as u8, 0]).unwrap();
        }
        let mut b = TxnBuffer::default();
        let decl = [key(1, 0, 0, Access::ReadWrite)];
        let mut tx = s.tx(&mut b, &decl, true);
        assert!(tx.delete(TableId(1), 2).unwrap());
        assert!(tx.insert(TableId(1), 3, &[3, 0]).unwrap());
        assert!(!tx.insert(TableId(1), 4, &[0, 0]).unwrap());
        let mut seen = Vec::new();
        tx.scan(TableId(1), 0, 100, &mut |k, _| {
            seen.push(k);
            k < 3
        })
        .unwrap();
        drop(tx);
        assert_eq!(seen, vec![1, 3]);
        assert_eq!(b.scans.len(), 1);
        assert_eq!((b.scans[0].lo, b.scans[0].hi), (0, 3));
        let mut w = Vec::new();
        s.apply(&mut b, true, &mut w).unwrap();
        let keys: Vec<u64> = s.rows(TableId(1)).unwrap().iter().map(|r| r.0).collect();
        assert_eq!(keys, vec![1, 3, 4]);
        assert!(w.iter().any(|e| e.key == 2 && e.kind == WriteKind::Delete));
        let e = s.load(TableId(0), 1, &[0; 3]).unwrap_err();
        assert!(matches!(e, Error::ValueSize { .. }), "{e}");
    }
}
