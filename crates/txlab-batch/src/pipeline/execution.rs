//! A transaction's read phase on the processor side: [`TxOps`] over the versioned storage that
//! remembers the version of every key read and buffers every write (the "local workspace" of
//! Ding, Kot, Gehrke, VLDB 2018, §2).
//!
//! Invariants:
//!
//! - **Repeatable reads.** The first read of a key fixes its `(version, value)` in the
//!   [`TxnBuffer`]; later reads return the same value (or the transaction's own write). Keys a
//!   processor prefetched through a storage worker are in the buffer before the program runs;
//!   a key the program reads that was not prefetched (a dependent access) is read from the
//!   storage directly, once.
//! - **Writes are private** until the validator commits the transaction; they are shipped with
//!   its commit timestamp as their version.
//! - **Every read is validated**, including the absence observed by a failed insert or delete,
//!   and the read behind an update; a key only written blindly is not a read.
//! - Range scans are not supported: the validator's cache is per key and cannot detect phantoms,
//!   so [`TxOps::scan`] returns [`Error::ScanUnsupported`].

use super::messages::{Key, Value};
use super::storage::VersionedStorage;
use foldhash::HashMap;
use txlab_core::{Error, IndexKind, Schema, TableId, TxOps, TxResult};

/// What the pipeline needs to know of a table to check requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TableShape {
    pub(crate) value_size: usize,
    pub(crate) capacity: Option<u64>,
    pub(crate) kind: &'static str,
}

/// The tables of a schema, for argument checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shapes(pub(crate) Box<[TableShape]>);

impl Shapes {
    pub(crate) fn of(schema: &Schema) -> Self {
        Shapes(
            schema
                .tables()
                .iter()
                .map(|t| TableShape {
                    value_size: t.value_size,
                    capacity: match t.index {
                        IndexKind::Dense { capacity } => Some(capacity),
                        _ => None,
                    },
                    kind: t.index.name(),
                })
                .collect(),
        )
    }

    /// Checks the table and key; returns the table's shape.
    pub(crate) fn check(&self, table: TableId, key: u64) -> Result<&TableShape, Error> {
        let shape = self.0.get(table.0 as usize).ok_or(Error::UnknownTable {
            id: table.0,
            count: self.0.len(),
        })?;
        if let Some(capacity) = shape.capacity
            && key >= capacity
        {
            return Err(Error::KeyOutOfRange {
                table: table.0,
                key,
                capacity,
            });
        }
        Ok(shape)
    }

    pub(crate) fn check_value(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        let shape = self.check(table, key)?;
        if value.len() != shape.value_size {
            return Err(Error::ValueSize {
                table: table.0,
                expected: shape.value_size,
                got: value.len(),
            });
        }
        Ok(())
    }
}

/// One key the transaction read: the version and value it observed.
#[derive(Debug, Clone)]
struct Observed {
    version: u64,
    value: Value,
    /// Whether the program actually read it (prefetched keys may go unread).
    used: bool,
}

/// A transaction's read set, snapshot and write buffer, reused across transactions.
#[derive(Debug, Default)]
pub struct TxnBuffer {
    observed: HashMap<Key, Observed>,
    /// Keys in the order the program first read them.
    read_order: Vec<Key>,
    /// Written keys → index into `writes`.
    written: HashMap<Key, usize>,
    writes: Vec<(Key, Value)>,
    scratch: Vec<u8>,
}

impl TxnBuffer {
    /// Forgets everything (keeps capacity).
    pub fn clear(&mut self) {
        self.observed.clear();
        self.read_order.clear();
        self.written.clear();
        self.writes.clear();
    }

    /// Adds a key a storage worker read ahead of execution; it counts as read only once the
    /// program reads it.
    pub fn prefetch(&mut self, key: Key, version: u64, value: Value) {
        self.observed.insert(
            key,
            Observed {
                version,
                value,
                used: false,
            },
        );
    }

    /// `(key, version)` of every key the program read, in first-read order.
    pub fn reads(&self) -> impl Iterator<Item = (Key, u64, bool)> + '_ {
        self.read_order.iter().map(|k| {
            let o = &self.observed[k];
            (*k, o.version, o.value.is_some())
        })
    }

    /// The written keys and values (one entry per key, the last value written).
    pub fn writes(&self) -> &[(Key, Value)] {
        &self.writes
    }

    /// Takes the writes out, leaving the buffer's write set empty.
    pub fn take_writes(&mut self) -> Vec<(Key, Value)> {
        self.written.clear();
        std::mem::take(&mut self.writes)
    }

    fn observe(&mut self, storage: &VersionedStorage, key: Key) -> &Value {
        let observed = self.observed.entry(key).or_insert_with(|| {
            let (version, value) = storage.get(key);
            Observed {
                version,
                value,
                used: false,
            }
        });
        if !observed.used {
            observed.used = true;
            self.read_order.push(key);
        }
        &observed.value
    }

    fn current(&mut self, storage: &VersionedStorage, key: Key) -> Option<&[u8]> {
        if let Some(&i) = self.written.get(&key) {
            return self.writes[i].1.as_deref();
        }
        self.observe(storage, key).as_deref()
    }

    /// [`TxOps::read`] on this buffer.
    pub(crate) fn read(
        &mut self,
        storage: &VersionedStorage,
        shapes: &Shapes,
        table: TableId,
        key: u64,
    ) -> TxResult<Option<&[u8]>> {
        shapes.check(table, key)?;
        Ok(self.current(storage, (table.0, key)))
    }

    fn put(&mut self, key: Key, value: Value) {
        match self.written.get(&key) {
            Some(&i) => self.writes[i].1 = value,
            None => {
                self.written.insert(key, self.writes.len());
                self.writes.push((key, value));
            }
        }
    }
}

/// [`TxOps`] over a [`TxnBuffer`] and the storage (module docs).
pub struct Execution<'a> {
    pub(crate) storage: &'a VersionedStorage,
    pub(crate) shapes: &'a Shapes,
    pub(crate) buffer: &'a mut TxnBuffer,
}

impl std::fmt::Debug for Execution<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Execution")
            .field("reads", &self.buffer.read_order.len())
            .field("writes", &self.buffer.writes.len())
            .finish()
    }
}

impl TxOps for Execution<'_> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.buffer.read(self.storage, self.shapes, table, key)
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.shapes.check_value(table, key, value)?;
        self.buffer.put((table.0, key), Some(value.into()));
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.shapes.check(table, key)?;
        let k = (table.0, key);
        let mut scratch = std::mem::take(&mut self.buffer.scratch);
        scratch.clear();
        let present = match self.buffer.current(self.storage, k) {
            Some(v) => {
                scratch.extend_from_slice(v);
                true
            }
            None => false,
        };
        if present {
            f(&mut scratch);
            self.buffer.put(k, Some(scratch.as_slice().into()));
        }
        self.buffer.scratch = scratch;
        Ok(present)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.shapes.check_value(table, key, value)?;
        let k = (table.0, key);
        if self.buffer.current(self.storage, k).is_some() {
            return Ok(false);
        }
        self.buffer.put(k, Some(value.into()));
        Ok(true)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.shapes.check(table, key)?;
        let k = (table.0, key);
        if self.buffer.current(self.storage, k).is_none() {
            return Ok(false);
        }
        self.buffer.put(k, None);
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        _lo: u64,
        _hi: u64,
        _visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        let shape = self.shapes.check(table, 0)?;
        Err(Error::ScanUnsupported {
            table: table.0,
            kind: match shape.kind {
                "ordered" => "ordered (but pipeline-validated, per key)",
                other => other,
            },
        }
        .into())
    }
}
