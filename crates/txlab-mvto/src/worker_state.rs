//! A worker's reusable transaction state: read set, write set, node (stripe) set, buffers.
//!
//! Records and versions are held as raw pointers: they were obtained under the transaction's
//! pinned crossbeam-epoch guard and are not freed while a guard that could see them is pinned
//! (`txlab_core::storage` invariant 1, `crate::gc`). Every set is cleared before the guard is
//! dropped.

use crate::record::MvtoRecord;
use crate::version::Version;
use txlab_core::history::WriteEvent;
use txlab_core::history::{ReadEvent, ScanEvent};
use txlab_core::storage::StripeBump;
use txlab_core::{ConflictCause, TableId};

#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadEntry {
    pub rec: *const MvtoRecord,
    /// The version read (whose `rts` was raised to the transaction's timestamp).
    pub version: *const Version,
    pub table: TableId,
    pub key: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// A blind write or a read-modify-write.
    Put,
    /// An insert of a key observed absent.
    Insert,
    /// A delete of a key observed present.
    Delete,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct WriteEntry {
    pub rec: *const MvtoRecord,
    pub table: TableId,
    pub key: u64,
    pub kind: WriteKind,
    /// Whether the transaction wrote without reading the key (the NWR hook's input).
    pub blind: bool,
    /// Offset and length of the new value in `WorkerState::wbuf` (length 0 for deletes).
    pub off: u32,
    pub len: u32,
    /// The pending version installed at commit (null before, or if omitted).
    pub installed: *const Version,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeEntry {
    pub table: TableId,
    pub stripe: u32,
    pub version: u64,
}

/// All per-transaction buffers of one worker, reused across transactions.
#[derive(Debug)]
pub(crate) struct WorkerState {
    pub id: u32,
    /// Transactions begun (for history ids).
    pub seq: u64,
    /// Writing transactions committed since the horizon was last recomputed.
    pub since_horizon: u32,
    pub reads: Vec<ReadEntry>,
    pub writes: Vec<WriteEntry>,
    pub nodes: Vec<NodeEntry>,
    /// Whether the transaction ran a range scan, on any table (`nodes` holds only ordered tables'
    /// stripes, and the history's scan events exist only when recording): the NWR rule leaves
    /// scanners to the baseline, the same way with and without a recorder.
    pub scanned: bool,
    /// New values of the write set.
    pub wbuf: Vec<u8>,
    /// History events (only filled when the recorder is enabled).
    pub h_reads: Vec<ReadEvent>,
    pub h_writes: Vec<WriteEvent>,
    pub h_scans: Vec<ScanEvent>,
    /// Why the open transaction failed during execution, if it did.
    pub failed: Option<ConflictCause>,
}

impl WorkerState {
    pub fn new(id: u32) -> Self {
        Self {
            id,
            seq: 0,
            since_horizon: 0,
            reads: Vec::with_capacity(64),
            writes: Vec::with_capacity(64),
            nodes: Vec::new(),
            scanned: false,
            wbuf: Vec::with_capacity(4096),
            h_reads: Vec::new(),
            h_writes: Vec::new(),
            h_scans: Vec::new(),
            failed: None,
        }
    }

    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.nodes.clear();
        self.scanned = false;
        self.wbuf.clear();
        self.h_reads.clear();
        self.h_writes.clear();
        self.h_scans.clear();
        self.failed = None;
    }

    /// The position of this transaction's own write to `(table, key)`, if any.
    #[inline]
    pub fn find_write(&self, table: TableId, key: u64) -> Option<usize> {
        self.writes
            .iter()
            .position(|w| w.key == key && w.table == table)
    }

    #[inline]
    pub fn write_value(&self, i: usize) -> &[u8] {
        let w = &self.writes[i];
        &self.wbuf[w.off as usize..(w.off + w.len) as usize]
    }

    #[inline]
    pub fn write_value_mut(&mut self, i: usize) -> &mut [u8] {
        let w = self.writes[i];
        &mut self.wbuf[w.off as usize..(w.off + w.len) as usize]
    }

    /// Appends a write entry whose value is `value` (empty for deletes).
    #[inline]
    pub fn push_write(
        &mut self,
        rec: *const MvtoRecord,
        (table, key): (TableId, u64),
        kind: WriteKind,
        blind: bool,
        value: &[u8],
    ) {
        let off = self.wbuf.len() as u32;
        self.wbuf.extend_from_slice(value);
        self.writes.push(WriteEntry {
            rec,
            table,
            key,
            kind,
            blind,
            off,
            len: value.len() as u32,
            installed: std::ptr::null(),
        });
    }

    /// Overwrites the value of write entry `i` (same table, so same length), or gives a delete
    /// entry a value slot.
    pub fn set_write_value(&mut self, i: usize, value: &[u8]) {
        if self.writes[i].len as usize == value.len() {
            self.write_value_mut(i).copy_from_slice(value);
        } else {
            let off = self.wbuf.len() as u32;
            self.wbuf.extend_from_slice(value);
            self.writes[i].off = off;
            self.writes[i].len = value.len() as u32;
        }
    }

    /// Our own insert bumped a phantom stripe: if we scanned that stripe at exactly the version
    /// before our bump, move our recorded version along so our own insert does not abort us.
    pub fn own_bump(&mut self, table: TableId, b: StripeBump) {
        for n in self.nodes.iter_mut() {
            if n.table == table && n.stripe == b.stripe && n.version == b.before {
                n.version = b.before + 1;
            }
        }
    }
}
