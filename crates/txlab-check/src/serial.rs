//! [`SerialEngine`]: the reference engine every other engine is compared with.
//!
//! All tables live in one `BTreeMap` keyed by `(table, key)` behind one mutex. A transaction holds
//! the mutex from `begin` to `commit`/`abort`, so transactions run one at a time: every history is
//! serial, in the order transactions began. Writes are buffered and applied at commit, so an
//! aborted transaction leaves no trace; reads and scans see the transaction's own writes.
//!
//! It serves as
//!
//! - the **oracle** of the deterministic model: [`Deterministic::execute_log`] runs the programs
//!   one after another in log order, which is by definition what a deterministic engine must
//!   reproduce;
//! - the **merged state of a distributed run**: shards dump their rows into one engine with
//!   [`SerialEngine::insert_raw`], and `Workload::check` and
//!   [`StateDigest`](crate::digest::StateDigest) run on it;
//! - the engine of the workload crate's own tests: each worker records the point accesses of its
//!   last transaction ([`SerialWorker::accesses`]) so tests compare them with what a program
//!   declares.
//!
//! Not for concurrent use from one thread: opening transactions on two workers of one engine on
//! the same thread deadlocks (the second `begin` waits for the first transaction's mutex).
//!
//! Checks match the storage trait's: unknown tables, keys beyond a dense table's capacity and
//! values of the wrong size are errors; scans work on dense and ordered tables and are refused on
//! hash tables, as [`Index::scan`](txlab_core::protocol::storage::Index::scan) is.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Mutex, MutexGuard};
use txlab_core::deterministic::Deterministic;
use txlab_core::{
    Access, CommitInfo, Engine, Error, IndexKind, Program, Schema, TableId, Transaction, TxOps,
    TxResult, Worker,
};

type Rows = BTreeMap<(u16, u64), Vec<u8>>;

/// The one-mutex, buffered-write reference engine (module docs).
#[derive(Debug)]
pub struct SerialEngine {
    schema: Schema,
    rows: Mutex<Rows>,
}

impl SerialEngine {
    /// An empty database with `schema`.
    pub fn new(schema: Schema) -> Self {
        Self {
            schema,
            rows: Mutex::new(BTreeMap::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Rows> {
        // A panic inside a transaction leaves the map as it was before the commit applied
        // anything (writes are applied in one loop that cannot panic), so poisoning is ignored.
        self.rows.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets a row outside any transaction, with the same checks as [`Engine::load`]: fills an
    /// engine from the rows of the shards of a distributed run.
    pub fn insert_raw(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        self.check(table, key, Some(value))?;
        self.lock().insert((table.0, key), value.to_vec());
        Ok(())
    }

    /// Overwrites a value outside any transaction without checks (tests corrupt state with it).
    pub fn poke(&self, table: TableId, key: u64, value: &[u8]) {
        self.lock().insert((table.0, key), value.to_vec());
    }

    /// A copy of a committed value, outside any transaction.
    pub fn peek(&self, table: TableId, key: u64) -> Option<Vec<u8>> {
        self.lock().get(&(table.0, key)).cloned()
    }

    /// A copy of every present row, ordered by table and key.
    pub fn rows(&self) -> Vec<(TableId, u64, Vec<u8>)> {
        self.lock()
            .iter()
            .map(|(&(t, k), v)| (TableId(t), k, v.clone()))
            .collect()
    }

    /// Number of present rows.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no row is present.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check(&self, table: TableId, key: u64, value: Option<&[u8]>) -> Result<(), Error> {
        let spec = self.schema.table(table)?;
        if let IndexKind::Dense { capacity } = spec.index
            && key >= capacity
        {
            return Err(Error::KeyOutOfRange {
                table: table.0,
                key,
                capacity,
            });
        }
        if let Some(v) = value
            && v.len() != spec.value_size
        {
            return Err(Error::ValueSize {
                table: table.0,
                expected: spec.value_size,
                got: v.len(),
            });
        }
        Ok(())
    }
}

impl Engine for SerialEngine {
    type Worker<'e> = SerialWorker<'e>;

    fn name(&self) -> &'static str {
        "serial"
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn worker(&self) -> Result<SerialWorker<'_>, Error> {
        Ok(SerialWorker {
            engine: self,
            accesses: Vec::new(),
        })
    }

    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        self.insert_raw(table, key, value)
    }
}

impl Deterministic for SerialEngine {
    /// Runs the programs one after another on one worker, whatever `workers` is (at least 1):
    /// the serial execution in log order that deterministic engines must reproduce.
    fn execute_log<P>(&self, log: &[P], workers: usize) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send,
    {
        if workers == 0 {
            return Err(Error::invalid("workers", workers, "at least 1"));
        }
        let mut worker = self.worker()?;
        Ok(log.iter().map(|p| run_one(&mut worker, p)).collect())
    }
}

/// Runs `program` in one transaction: committed if it succeeded, rolled back otherwise.
fn run_one<P: Program>(worker: &mut SerialWorker<'_>, program: &P) -> TxResult<P::Output> {
    let mut tx = worker.begin();
    match program.run(&mut tx) {
        Ok(out) => tx.commit().map(|_| out),
        Err(e) => {
            tx.abort();
            Err(e)
        }
    }
}

/// A worker of [`SerialEngine`].
#[derive(Debug)]
pub struct SerialWorker<'e> {
    engine: &'e SerialEngine,
    accesses: Vec<(TableId, u64, bool, bool)>,
}

impl SerialWorker<'_> {
    /// The point accesses of the last transaction begun on this worker, one per key and sorted,
    /// classified as [`Access`] is: read only, blind write, or read-then-write (inserts and
    /// deletes count as read-then-write: they observe whether the key is present). Scans are not
    /// listed.
    pub fn accesses(&self) -> Vec<(TableId, u64, Access)> {
        let mut merged: BTreeMap<(TableId, u64), (bool, bool)> = BTreeMap::new();
        for &(t, k, read, write) in &self.accesses {
            let e = merged.entry((t, k)).or_default();
            // A read after the transaction's own blind write does not read the database.
            e.0 |= read && !e.1;
            e.1 |= write;
        }
        merged
            .into_iter()
            .map(|((t, k), (read, write))| {
                let access = match (read, write) {
                    (true, true) => Access::ReadWrite,
                    (false, true) => Access::BlindWrite,
                    _ => Access::Read,
                };
                (t, k, access)
            })
            .collect()
    }
}

impl Worker for SerialWorker<'_> {
    type Txn<'w>
        = SerialTxn<'w>
    where
        Self: 'w;

    fn begin(&mut self) -> SerialTxn<'_> {
        self.accesses.clear();
        SerialTxn {
            engine: self.engine,
            rows: self.engine.lock(),
            writes: BTreeMap::new(),
            accesses: &mut self.accesses,
            scratch: Vec::new(),
        }
    }

    fn id(&self) -> u32 {
        0
    }
}

/// An open transaction of [`SerialEngine`]: holds the engine's mutex until it ends.
#[derive(Debug)]
pub struct SerialTxn<'w> {
    engine: &'w SerialEngine,
    rows: MutexGuard<'w, Rows>,
    /// Buffered writes: `None` deletes.
    writes: BTreeMap<(u16, u64), Option<Vec<u8>>>,
    accesses: &'w mut Vec<(TableId, u64, bool, bool)>,
    scratch: Vec<u8>,
}

impl SerialTxn<'_> {
    fn current(&self, table: TableId, key: u64) -> Option<&Vec<u8>> {
        match self.writes.get(&(table.0, key)) {
            Some(buffered) => buffered.as_ref(),
            None => self.rows.get(&(table.0, key)),
        }
    }

    /// The present keys of `lo..=hi` in `table`, committed rows merged with buffered writes.
    fn keys_in(&self, table: TableId, lo: u64, hi: u64) -> Vec<u64> {
        let range = (
            Bound::Included((table.0, lo)),
            Bound::Included((table.0, hi)),
        );
        let mut keys: Vec<u64> = self.rows.range(range).map(|(&(_, k), _)| k).collect();
        keys.extend(self.writes.range(range).map(|(&(_, k), _)| k));
        keys.sort_unstable();
        keys.dedup();
        keys.retain(|&k| self.current(table, k).is_some());
        keys
    }
}

impl TxOps for SerialTxn<'_> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.engine.check(table, key, None)?;
        self.accesses.push((table, key, true, false));
        Ok(self.current(table, key).map(Vec::as_slice))
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.engine.check(table, key, Some(value))?;
        self.accesses.push((table, key, false, true));
        self.writes.insert((table.0, key), Some(value.to_vec()));
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.engine.check(table, key, None)?;
        self.accesses.push((table, key, true, false));
        let mut value = std::mem::take(&mut self.scratch);
        value.clear();
        let Some(current) = self.current(table, key) else {
            self.scratch = value;
            return Ok(false);
        };
        value.extend_from_slice(current);
        f(&mut value);
        self.write(table, key, &value)?;
        self.scratch = value;
        Ok(true)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.engine.check(table, key, Some(value))?;
        self.accesses.push((table, key, true, true));
        if self.current(table, key).is_some() {
            return Ok(false);
        }
        self.writes.insert((table.0, key), Some(value.to_vec()));
        Ok(true)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.engine.check(table, key, None)?;
        self.accesses.push((table, key, true, true));
        if self.current(table, key).is_none() {
            return Ok(false);
        }
        self.writes.insert((table.0, key), None);
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        let kind = self.engine.schema.table(table)?.index;
        if kind == IndexKind::Hash {
            return Err(Error::ScanUnsupported {
                table: table.0,
                kind: kind.name(),
            }
            .into());
        }
        for key in self.keys_in(table, lo, hi) {
            let value = self
                .current(table, key)
                .expect("keys_in lists present keys");
            if !visit(key, value) {
                break;
            }
        }
        Ok(())
    }
}

impl Transaction for SerialTxn<'_> {
    fn commit(mut self) -> TxResult<CommitInfo> {
        let read_only = self.writes.is_empty();
        for ((t, k), v) in std::mem::take(&mut self.writes) {
            match v {
                Some(v) => self.rows.insert((t, k), v),
                None => self.rows.remove(&(t, k)),
            };
        }
        Ok(CommitInfo {
            epoch: 0,
            acknowledged: true,
            read_only,
        })
    }

    fn abort(self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use txlab_core::{AccessSet, TableSpec, TxError};

    fn engine() -> (SerialEngine, TableId, TableId, TableId) {
        let mut s = Schema::new();
        let dense = s.add(TableSpec::dense("d", 8, 100)).unwrap();
        let ordered = s.add(TableSpec::ordered("o", 8)).unwrap();
        let hash = s.add(TableSpec::hash("h", 8)).unwrap();
        (SerialEngine::new(s), dense, ordered, hash)
    }

    fn v(x: u64) -> [u8; 8] {
        x.to_le_bytes()
    }

    #[test]
    fn scans_merge_committed_rows_with_the_transactions_own_writes() {
        let (e, _, o, _) = engine();
        for k in [10, 20, 30] {
            e.load(o, k, &v(k)).unwrap();
        }
        let mut w = e.worker().unwrap();
        let mut tx = w.begin();
        assert!(tx.delete(o, 20).unwrap());
        assert!(tx.insert(o, 25, &v(250)).unwrap());
        tx.write(o, 30, &v(300)).unwrap();
        let mut seen = Vec::new();
        tx.scan(o, 0, 100, &mut |k, val| {
            seen.push((k, u64::from_le_bytes(val.try_into().unwrap())));
            true
        })
        .unwrap();
        assert_eq!(seen, vec![(10, 10), (25, 250), (30, 300)]);
        let mut first = Vec::new();
        tx.scan(o, 11, 100, &mut |k, _| {
            first.push(k);
            false
        })
        .unwrap();
        assert_eq!(first, vec![25], "the visitor stops the scan");
        tx.abort();
        assert_eq!(e.peek(o, 20), Some(v(20).to_vec()), "abort leaves no trace");
        assert_eq!(e.peek(o, 25), None);
    }

    #[test]
    fn bad_accesses_are_errors_naming_the_value() {
        let (e, d, _, h) = engine();
        let mut w = e.worker().unwrap();
        let mut tx = w.begin();
        let err = tx.read(d, 100).unwrap_err();
        assert!(err.to_string().contains("key 100 is out of range"), "{err}");
        let err = tx.write(d, 1, &[0; 4]).unwrap_err();
        assert!(err.to_string().contains("value of 4 bytes"), "{err}");
        let err = tx.scan(h, 0, 1, &mut |_, _| true).unwrap_err();
        assert!(err.to_string().contains("hash index"), "{err}");
        let err = tx.read(TableId(9), 0).unwrap_err();
        assert!(err.to_string().contains("unknown table id 9"), "{err}");
    }

    /// Adds its input to key 0 and returns the value it read; aborts itself on a negative input.
    struct Add(i64);

    impl Program for Add {
        type Output = u64;

        fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<u64> {
            let before = tx
                .read(TableId(0), 0)?
                .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()));
            tx.write(TableId(0), 0, &v(before.wrapping_add(self.0 as u64)))?;
            if self.0 < 0 {
                return Err(TxError::user_abort("negative"));
            }
            Ok(before)
        }

        fn declare(&self, out: &mut AccessSet) {
            out.push(TableId(0), 0, Access::ReadWrite);
        }

        fn kind(&self) -> &'static str {
            "add"
        }
    }

    #[test]
    fn execute_log_runs_in_log_order_and_rolls_back_user_aborts() {
        let (e, d, _, _) = engine();
        let log = [Add(1), Add(-5), Add(2), Add(3)];
        let out = e.execute_log(&log, 4).unwrap();
        assert_eq!(out[0], Ok(0));
        assert_eq!(out[1], Err(TxError::user_abort("negative")));
        assert_eq!(out[2], Ok(1), "the aborted program wrote nothing");
        assert_eq!(out[3], Ok(3));
        assert_eq!(e.peek(d, 0), Some(v(6).to_vec()));
        let err = e.execute_log(&log, 0).unwrap_err();
        assert!(err.to_string().contains("workers = 0"), "{err}");
    }
}
