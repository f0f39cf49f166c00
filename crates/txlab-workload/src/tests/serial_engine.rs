//! A serial reference engine for this crate's tests.
//!
//! [`SerialEngine`] keeps every table in one `BTreeMap` behind one mutex. A transaction holds the
//! mutex from `begin` to `commit`/`abort`, so transactions run one at a time (trivially
//! serializable). Writes are buffered and applied on commit, so an aborted transaction leaves no
//! trace. Each worker records the accesses of its last transaction (table, key, read/write) so
//! tests can compare them with what a program declares.
//!
//! Not for concurrent use from one thread: opening transactions on two workers of the same engine
//! on one thread deadlocks.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use txlab_core::{
    Access, CommitInfo, Engine, Error, IndexKind, Schema, TableId, Transaction, TxOps, TxResult,
    Worker,
};

type Rows = BTreeMap<(u16, u64), Vec<u8>>;

/// A one-mutex, buffered-write engine (module docs).
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

    /// Overwrites a value outside any transaction (to corrupt state on purpose).
    pub fn poke(&self, table: TableId, key: u64, value: &[u8]) {
        self.rows
            .lock()
            .unwrap()
            .insert((table.0, key), value.to_vec());
    }

    /// A copy of a value outside any transaction.
    pub fn peek(&self, table: TableId, key: u64) -> Option<Vec<u8>> {
        self.rows.lock().unwrap().get(&(table.0, key)).cloned()
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
        self.check(table, key, Some(value))?;
        self.rows
            .lock()
            .unwrap()
            .insert((table.0, key), value.to_vec());
        Ok(())
    }
}

/// A worker of [`SerialEngine`].
#[derive(Debug)]
pub struct SerialWorker<'e> {
    engine: &'e SerialEngine,
    accesses: Vec<(TableId, u64, bool, bool)>,
}

impl SerialWorker<'_> {
    /// The accesses of the last transaction begun on this worker, one per key, with the same
    /// classification as [`Access`]: read only, blind write, or read-then-write.
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
        let rows = self.engine.rows.lock().unwrap();
        SerialTxn {
            engine: self.engine,
            rows,
            writes: BTreeMap::new(),
            accesses: &mut self.accesses,
            scratch: Vec::new(),
        }
    }

    fn id(&self) -> u32 {
        0
    }
}

/// An open transaction of [`SerialEngine`]: holds the engine's mutex.
#[derive(Debug)]
pub struct SerialTxn<'w> {
    engine: &'w SerialEngine,
    rows: MutexGuard<'w, Rows>,
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
        _lo: u64,
        _hi: u64,
        _visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        let kind = self.engine.schema.table(table)?.index.name();
        Err(Error::ScanUnsupported {
            table: table.0,
            kind,
        }
        .into())
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
