//! A worker's reusable transaction state: read set, write set, stripe set, buffers.
//!
//! Records are held as raw pointers: they were obtained under the transaction's pinned
//! crossbeam-epoch guard and records are never freed while a guard that could see them is pinned
//! (`txlab_core::storage` invariant 1). Every set is cleared before the guard is dropped.

use crate::record::{StableRead, TicTocRecord};
use crate::word::is_absent;
use txlab_core::history::{ReadEvent, Recorder, RetiredTags, ScanEvent, WriteEvent};
use txlab_core::{Conflict, ConflictCause, TableId, TxResult};

/// One read: the record and the word (hence `wts` and `rts`) observed with the value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadEntry {
    pub rec: *const TicTocRecord,
    /// The timestamp word observed (unlocked).
    pub word: u64,
    pub table: TableId,
    pub key: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    Put,
    Insert,
    Delete,
}

/// One buffered write.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WriteEntry {
    pub rec: *const TicTocRecord,
    pub table: TableId,
    pub key: u64,
    pub kind: WriteKind,
    /// Offset and length of the new value in `WorkerState::wbuf` (length 0 for deletes).
    pub off: u32,
    pub len: u32,
    /// The word replaced when the record was locked at commit.
    pub locked_word: u64,
    /// Set at commit (Step 3, `tictoc-nwr-single` only) when a read of this record validated
    /// under our own lock: the transaction read the record it writes (`crate::commit`).
    pub read: bool,
}

/// A phantom stripe a scan covered and its version (`crate::stripe_clock`) before the traversal.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StripeEntry {
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
    pub reads: Vec<ReadEntry>,
    /// TicToc+NWR only: the history tag (install timestamp) of each read's version, parallel to
    /// `reads` (empty in plain TicToc). It tells the epoch the version was installed in, which
    /// the word's `wts` may not after a delta-overflow shift (`crate::word`).
    pub read_tags: Vec<u64>,
    pub writes: Vec<WriteEntry>,
    pub stripes: Vec<StripeEntry>,
    /// Whether the transaction ran a range scan, on any table (`stripes` holds only ordered
    /// tables' stripes, and the history's scan events exist only when recording): the NWR rules
    /// leave scanners to the baseline, the same way with and without a recorder.
    pub scanned: bool,
    /// Commit scratch: the `(table, stripe)`s holding records this transaction writes first
    /// (`crate::stripe_clock`).
    pub first_writes: Vec<(TableId, u32)>,
    /// New values of the write set.
    pub wbuf: Vec<u8>,
    /// The value copy returned by the last read.
    pub rbuf: Vec<u8>,
    /// History events (only filled when the recorder is enabled).
    pub h_reads: Vec<ReadEvent>,
    pub h_writes: Vec<WriteEvent>,
    pub h_scans: Vec<ScanEvent>,
    /// Why the open transaction failed during execution, if it did.
    pub failed: Option<ConflictCause>,
    /// The largest retire floor (`crate::retire`) of a never-written absent record read or a
    /// stripe scanned: the commit timestamp is at least this.
    pub ts_floor: u64,
}

// The raw record pointers make `WorkerState` !Send/!Sync automatically, which is what we want: a
// worker's sets are only touched by the thread driving it.

impl WorkerState {
    pub fn new(id: u32) -> Self {
        Self {
            id,
            seq: 0,
            reads: Vec::with_capacity(64),
            read_tags: Vec::new(),
            writes: Vec::with_capacity(64),
            stripes: Vec::new(),
            scanned: false,
            first_writes: Vec::new(),
            wbuf: Vec::with_capacity(4096),
            rbuf: Vec::with_capacity(256),
            h_reads: Vec::new(),
            h_writes: Vec::new(),
            h_scans: Vec::new(),
            failed: None,
            ts_floor: 0,
        }
    }

    pub fn clear(&mut self) {
        self.reads.clear();
        self.read_tags.clear();
        self.writes.clear();
        self.stripes.clear();
        self.scanned = false;
        self.first_writes.clear();
        self.wbuf.clear();
        self.h_reads.clear();
        self.h_writes.clear();
        self.h_scans.clear();
        self.failed = None;
        self.ts_floor = 0;
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
        let (off, len) = (self.writes[i].off, self.writes[i].len);
        &mut self.wbuf[off as usize..(off + len) as usize]
    }

    /// Appends a write entry whose value is `value` (empty for deletes).
    #[inline]
    pub fn push_write(
        &mut self,
        rec: *const TicTocRecord,
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

    /// Reads `rec` consistently into `rbuf[..vs]` and adds it to the read set (Algorithm 1).
    /// `keep_tags` (TicToc+NWR: a constant per engine type) also keeps the version's history tag
    /// in `read_tags`. A read of a never-written absent record (tag 0) raises `ts_floor` to
    /// `retire_floor()` (`crate::retire`), and reports the key's last retired tombstone as its
    /// version in histories (`retired_tags`). A retired record fails with
    /// `ConflictCause::RecordRetired`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn observe<Rec: Recorder>(
        &mut self,
        rec: *const TicTocRecord,
        vs: usize,
        table: TableId,
        key: u64,
        max_waits: u32,
        keep_tags: bool,
        retire_floor: impl FnOnce() -> u64,
        retired_tags: &RetiredTags,
    ) -> TxResult<u64> {
        // SAFETY: `rec` came from the table's index under the transaction's pinned guard, which
        // stays pinned until the transaction ends; records are not freed while it is pinned.
        let r = unsafe { &*rec };
        if self.rbuf.len() < vs {
            self.rbuf.resize(vs, 0);
        }
        match r.read_stable(&mut self.rbuf[..vs], max_waits, Rec::ENABLED || keep_tags) {
            StableRead::Ok { word, tag } => {
                // Never written: absent with tag 0 (`read_stable` reads an absent version's tag
                // inside its seqlock window, recorder or not).
                let fresh = is_absent(word) && tag == 0;
                if fresh {
                    self.ts_floor = self.ts_floor.max(retire_floor());
                }
                self.reads.push(ReadEntry {
                    rec,
                    word,
                    table,
                    key,
                });
                if keep_tags {
                    self.read_tags.push(tag);
                }
                if Rec::ENABLED {
                    self.h_reads.push(ReadEvent {
                        table,
                        key,
                        version: if fresh {
                            retired_tags.fresh_version(table, key)
                        } else {
                            tag
                        },
                        present: !is_absent(word),
                    });
                }
                Ok(word)
            }
            StableRead::Busy => {
                self.failed = Some(ConflictCause::ReadBusy);
                Err(Conflict::at(ConflictCause::ReadBusy, table, key).into())
            }
            StableRead::Retired => {
                self.failed = Some(ConflictCause::RecordRetired);
                Err(Conflict::at(ConflictCause::RecordRetired, table, key).into())
            }
        }
    }

    /// Our own first write was announced on a stripe (`crate::stripe_clock`): if we scanned that
    /// stripe at exactly the version before our announce, move our recorded version along so our
    /// own write does not abort our own scan.
    pub fn own_announce(&mut self, table: TableId, stripe: u32, before: u64) {
        for n in self.stripes.iter_mut() {
            if n.table == table && n.stripe == stripe && n.version == before {
                n.version = before + 1;
            }
        }
    }

    /// The position of `rec` in the write set (which must be sorted by address, as at commit).
    #[inline]
    pub fn write_index(&self, rec: *const TicTocRecord) -> Option<usize> {
        self.writes
            .binary_search_by_key(&(rec as usize), |w| w.rec as usize)
            .ok()
    }
}
