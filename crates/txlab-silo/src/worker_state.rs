//! A worker's reusable transaction state: read set, write set, node (stripe) set, buffers.
//!
//! Records are held as raw pointers: they were obtained under the transaction's pinned
//! crossbeam-epoch guard and records are never freed while a guard that could see them is pinned
//! (`txlab_core::storage` invariant 1). Every set is cleared before the guard is dropped.

use crate::record::{SiloRecord, StableRead};
use crate::tid::{is_absent, is_retired, tag};
use txlab_core::history::RetiredTags;
use txlab_core::history::{ReadEvent, Recorder, ScanEvent, WriteEvent};
use txlab_core::storage::StripeBump;
use txlab_core::{Conflict, ConflictCause, TableId, TxResult};

#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadEntry {
    pub rec: *const SiloRecord,
    /// The TID word observed (unlocked).
    pub word: u64,
    pub table: TableId,
    pub key: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// A value that does not depend on what the database held (`TxOps::write`): the only kind
    /// NWR may omit.
    BlindPut,
    Put,
    Insert,
    Delete,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct WriteEntry {
    pub rec: *const SiloRecord,
    pub table: TableId,
    pub key: u64,
    pub kind: WriteKind,
    /// Offset and length of the new value in `WorkerState::wbuf` (length 0 for deletes).
    pub off: u32,
    pub len: u32,
    /// The TID word replaced when the record was locked at commit.
    pub locked_word: u64,
    /// Whether the read set holds a validated read of this record (set in Phase 2 of the commit,
    /// and only by Silo+NWR with single-write omitters, for the pivot writer's mark
    /// `crate::tid::PIVOT_READ`).
    pub read: bool,
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
    /// The TID this worker committed last (Silo's TID rule (b)).
    pub last_tid: u64,
    pub reads: Vec<ReadEntry>,
    pub writes: Vec<WriteEntry>,
    pub nodes: Vec<NodeEntry>,
    /// New values of the write set.
    pub wbuf: Vec<u8>,
    /// The value copy returned by the last read.
    pub rbuf: Vec<u8>,
    /// History events (only filled when the recorder is enabled).
    pub h_reads: Vec<ReadEvent>,
    pub h_writes: Vec<WriteEvent>,
    pub h_scans: Vec<ScanEvent>,
    /// Whether the open transaction ran a range scan (on any table, recorded or not: the NWR
    /// rules never omit a scanner, `txlab_nwr::NwrBaseline::has_scans`).
    pub scanned: bool,
    /// Why the open transaction failed during execution, if it did.
    pub failed: Option<ConflictCause>,
}

// SAFETY-relevant note: the raw record pointers make `WorkerState` !Send/!Sync automatically,
// which is what we want: a worker's sets are only touched by the thread driving it.

impl WorkerState {
    pub fn new(id: u32) -> Self {
        Self {
            id,
            seq: 0,
            last_tid: 0,
            reads: Vec::with_capacity(64),
            writes: Vec::with_capacity(64),
            nodes: Vec::new(),
            wbuf: Vec::with_capacity(4096),
            rbuf: Vec::with_capacity(256),
            h_reads: Vec::new(),
            h_writes: Vec::new(),
            h_scans: Vec::new(),
            scanned: false,
            failed: None,
        }
    }

    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.nodes.clear();
        self.wbuf.clear();
        self.h_reads.clear();
        self.h_writes.clear();
        self.h_scans.clear();
        self.scanned = false;
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
        rec: *const SiloRecord,
        table: TableId,
        key: u64,
        kind: WriteKind,
        value: &[u8],
    ) {
        let off = self.wbuf.len() as u32;
        self.wbuf.extend_from_slice(value);
        self.writes.push(WriteEntry {
            rec,
            table,
            key,
            kind,
            off,
            len: value.len() as u32,
            locked_word: 0,
            read: false,
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

    /// Reads `rec` consistently into `rbuf[..vs]` and adds it to the read set.
    #[inline]
    pub fn observe<Rec: Recorder>(
        &mut self,
        rec: *const SiloRecord,
        vs: usize,
        table: TableId,
        key: u64,
        max_waits: u32,
        retired_tags: &RetiredTags,
    ) -> TxResult<u64> {
        // SAFETY: `rec` came from the table's index under the transaction's pinned guard, which
        // stays pinned until the transaction ends; records are not freed while it is pinned.
        let r = unsafe { &*rec };
        if self.rbuf.len() < vs {
            self.rbuf.resize(vs, 0);
        }
        match r.read_stable(&mut self.rbuf[..vs], max_waits) {
            StableRead::Ok(word) if is_retired(word) => {
                // Unlinked from the index (crate::retire): a retry finds the fresh incarnation.
                self.failed = Some(ConflictCause::RecordRetired);
                Err(Conflict::at(ConflictCause::RecordRetired, table, key).into())
            }
            StableRead::Ok(word) => {
                self.reads.push(ReadEntry {
                    rec,
                    word,
                    table,
                    key,
                });
                if Rec::ENABLED {
                    // A fresh incarnation's absent state is the state after the key's last
                    // retired delete (crate::retire, "Histories").
                    let version = match tag(word) {
                        0 if is_absent(word) => retired_tags.fresh_version(table, key),
                        t => t,
                    };
                    self.h_reads.push(ReadEvent {
                        table,
                        key,
                        version,
                        present: !is_absent(word),
                    });
                }
                Ok(word)
            }
            StableRead::Busy => {
                self.failed = Some(ConflictCause::ReadBusy);
                Err(Conflict::at(ConflictCause::ReadBusy, table, key).into())
            }
        }
    }

    /// Our own insert bumped a phantom stripe: if we scanned that stripe at exactly the version
    /// before our bump, move our recorded version along so our own insert does not abort us.
    /// Returns whether it did (a scan of ours then saw the new record's key missing).
    pub fn own_bump(&mut self, table: TableId, b: StripeBump) -> bool {
        let mut scanned = false;
        for n in self.nodes.iter_mut() {
            if n.table == table && n.stripe == b.stripe && n.version == b.before {
                n.version = b.before + 1;
                scanned = true;
            }
        }
        scanned
    }
}

/// The index of `rec`'s entry in a write set sorted by record address (Phase 1 of the commit
/// sorts it). A free function so the caller can hold the read set borrowed meanwhile.
#[inline]
pub(crate) fn write_index(writes: &[WriteEntry], rec: *const SiloRecord) -> Option<usize> {
    writes
        .binary_search_by_key(&(rec as usize), |w| w.rec as usize)
        .ok()
}
