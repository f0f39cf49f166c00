//! A worker's reusable transaction state: the read set, the write set, the stripe set (phantom
//! protection of scans), the value buffers and the history events.
//!
//! Records are held as raw pointers. They were obtained from an index under the transaction's
//! pinned crossbeam-epoch guard, and records are never freed while a guard that could see them is
//! pinned (`txlab_core::protocol::storage` invariant 1). [`Sets::clear`] runs before the guard is released
//! ([`crate::Txn`]), so no pointer outlives the guard it was obtained under. The pointers also make
//! `Sets` `!Send` and `!Sync`, which is what a worker's private state should be.
//!
//! What a read remembers of the version it saw is the protocol's ([`crate::Protocol::Seen`]: the
//! version word for Silo and TicToc, the version itself for MVTO), and so is what commit notes per
//! write ([`crate::Protocol::Scratch`]: the word a lock replaced, the version a write installed).

use crate::Protocol;
use crate::write_kind::WriteKind;
use txlab_core::protocol::history::{ReadEvent, ScanEvent, WriteEvent};
use txlab_core::protocol::storage::Index;
use txlab_core::protocol::storage::StripeBump;
use txlab_core::{Conflict, ConflictCause, TableId};
use txlab_storage::Tables;

/// One read: the record, what was seen of it, and its key.
#[derive(Debug)]
pub struct ReadEntry<R, S> {
    /// The record (valid while the transaction's guard is pinned).
    pub rec: *const R,
    /// What the read saw of the record's current version.
    pub seen: S,
    /// The table.
    pub table: TableId,
    /// The key.
    pub key: u64,
}

impl<R, S: Copy> Clone for ReadEntry<R, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R, S: Copy> Copy for ReadEntry<R, S> {}

/// One buffered write.
#[derive(Debug)]
pub struct WriteEntry<R, X> {
    /// The record (valid while the transaction's guard is pinned).
    pub rec: *const R,
    /// The table.
    pub table: TableId,
    /// The key.
    pub key: u64,
    /// What the write installs ([`WriteKind`]).
    pub kind: WriteKind,
    /// Offset of the new value in [`Sets::wbuf`].
    pub off: u32,
    /// Length of the new value (0 for a delete).
    pub len: u32,
    /// What commit notes about this write (the protocol's [`crate::Protocol::Scratch`]).
    pub scratch: X,
    /// Set by commit when a validated read of this record is in the read set (the protocols that
    /// need it say when; `false` otherwise).
    pub read: bool,
}

impl<R, X: Copy> Clone for WriteEntry<R, X> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R, X: Copy> Copy for WriteEntry<R, X> {}

/// A phantom stripe a scan covered and the stripe's version before the traversal.
#[derive(Debug, Clone, Copy)]
pub struct StripeEntry {
    /// The table.
    pub table: TableId,
    /// The stripe.
    pub stripe: u32,
    /// Its version when the scan read it.
    pub version: u64,
}

/// The read entry type of protocol `P`.
pub type Read<P> = ReadEntry<<P as Protocol>::Record, <P as Protocol>::Seen>;
/// The write entry type of protocol `P`.
pub type Write<P> = WriteEntry<<P as Protocol>::Record, <P as Protocol>::Scratch>;

/// Every per-transaction buffer of one worker, reused across transactions (module docs).
#[derive(Debug)]
pub struct Sets<P: Protocol> {
    /// The worker's id.
    pub id: u32,
    /// Transactions begun (the history id's sequence number).
    pub seq: u64,
    /// The read set, in read order.
    pub reads: Vec<Read<P>>,
    /// The write set: one entry per key, in first-write order until commit sorts it.
    pub writes: Vec<Write<P>>,
    /// The phantom stripes scans covered.
    pub stripes: Vec<StripeEntry>,
    /// Whether the transaction ran a range scan, on any table (`stripes` holds only ordered
    /// tables' stripes and scan events are kept only when recording, so rules that treat
    /// scanners differently ask this flag, the same way with and without a recorder).
    pub scanned: bool,
    /// The new values of the write set.
    pub wbuf: Vec<u8>,
    /// The copy of the last value read, for protocols that copy values out of records.
    pub rbuf: Vec<u8>,
    /// History events (filled only when the recorder is enabled).
    pub h_reads: Vec<ReadEvent>,
    /// History events of the writes (filled at commit, only when recording).
    pub h_writes: Vec<WriteEvent>,
    /// History events of the scans (only when recording).
    pub h_scans: Vec<ScanEvent>,
    /// Why the open transaction failed during execution, if it did.
    pub failed: Option<ConflictCause>,
}

impl<P: Protocol> Sets<P> {
    /// Empty sets for worker `id`, with room for typical transactions.
    pub fn new(id: u32) -> Self {
        Self {
            id,
            seq: 0,
            reads: Vec::with_capacity(64),
            writes: Vec::with_capacity(64),
            stripes: Vec::new(),
            scanned: false,
            wbuf: Vec::with_capacity(4096),
            rbuf: Vec::with_capacity(256),
            h_reads: Vec::new(),
            h_writes: Vec::new(),
            h_scans: Vec::new(),
            failed: None,
        }
    }

    /// Empties every set, keeping the buffers.
    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.stripes.clear();
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

    /// The new value of write entry `i`.
    #[inline]
    pub fn write_value(&self, i: usize) -> &[u8] {
        let w = &self.writes[i];
        &self.wbuf[w.off as usize..(w.off + w.len) as usize]
    }

    /// The new value of write entry `i`, to change in place.
    #[inline]
    pub fn write_value_mut(&mut self, i: usize) -> &mut [u8] {
        let (off, len) = (self.writes[i].off, self.writes[i].len);
        &mut self.wbuf[off as usize..(off + len) as usize]
    }

    /// Appends a write entry whose new value is `value` (empty for a delete).
    #[inline]
    pub fn push_write(
        &mut self,
        rec: *const P::Record,
        item: (TableId, u64),
        kind: WriteKind,
        value: &[u8],
    ) {
        let off = self.wbuf.len();
        self.wbuf.extend_from_slice(value);
        self.push_entry(rec, item, kind, off, value.len());
    }

    /// Appends a write entry whose new value is `wbuf[off..off + len]`.
    #[inline]
    pub fn push_entry(
        &mut self,
        rec: *const P::Record,
        (table, key): (TableId, u64),
        kind: WriteKind,
        off: usize,
        len: usize,
    ) {
        self.writes.push(WriteEntry {
            rec,
            table,
            key,
            kind,
            off: off as u32,
            len: len as u32,
            scratch: P::Scratch::default(),
            read: false,
        });
    }

    /// Replaces the value of write entry `i` (same table, so same length), or gives a delete
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

    /// Whether write `i` is blind: written with `TxOps::write` and its record not read by this
    /// transaction (the rule of [`crate::write_kind`], the one NWR's omission relies on).
    #[inline]
    pub fn is_blind(&self, i: usize) -> bool {
        let w = &self.writes[i];
        w.kind == WriteKind::BlindPut && !self.reads.iter().any(|r| r.rec == w.rec)
    }

    /// A stripe change of our own (`bump`, made when this transaction's lookup in `table` linked a
    /// new record or found one whose creator had not bumped yet): a scan of ours that read the
    /// stripe at exactly the version before the bump moves its recorded version along, so our own
    /// bump does not fail our own validation. Returns whether such a scan existed (it then saw the
    /// record's key missing, or saw the record and read it).
    pub fn own_bump(&mut self, table: TableId, bump: StripeBump) -> bool {
        let mut scanned = false;
        for s in self.stripes.iter_mut() {
            if s.table == table && s.stripe == bump.stripe && s.version == bump.before {
                s.version = bump.before + 1;
                scanned = true;
            }
        }
        scanned
    }

    /// Phantom validation: a [`ConflictCause::PhantomValidation`] conflict naming the table of
    /// the first scanned stripe for which `changed` holds, if any.
    #[inline]
    pub fn validate_stripes(
        &self,
        mut changed: impl FnMut(&StripeEntry) -> bool,
    ) -> Result<(), Conflict> {
        match self.stripes.iter().find(|s| changed(s)) {
            Some(s) => Err(Conflict {
                cause: ConflictCause::PhantomValidation,
                table: Some(s.table),
                key: None,
            }),
            None => Ok(()),
        }
    }

    /// [`validate_stripes`](Self::validate_stripes) against the tables' own phantom stripes
    /// (Silo §4.6, MVTO's scans): a stripe changed if its version moved since the scan read it.
    #[inline]
    pub fn validate_stripe_versions(&self, tables: &Tables<P::Record>) -> Result<(), Conflict> {
        self.validate_stripes(|s| {
            let stripes = tables.get(s.table).ok().and_then(|i| i.phantom_stripes());
            stripes.is_some_and(|p| p.version(s.stripe) != s.version)
        })
    }
}

/// The index of `rec`'s entry in a write set sorted by record address (commit sorts it before
/// locking). A free function so that a caller may keep the read set borrowed meanwhile.
#[inline]
pub fn write_index<R, X>(writes: &[WriteEntry<R, X>], rec: *const R) -> Option<usize> {
    writes
        .binary_search_by_key(&(rec as usize), |w| w.rec as usize)
        .ok()
}

/// Records the versions of `index`'s phantom stripes covering `lo..=hi` (none for an index
/// without stripes) in `stripes`: a scan's node set, read before its traversal
/// (`txlab_core::protocol::storage` invariant 4) and validated at commit.
#[inline]
pub fn record_stripes<R: txlab_core::protocol::storage::Record>(
    stripes: &mut Vec<StripeEntry>,
    index: &txlab_storage::AnyIndex<R>,
    table: TableId,
    lo: u64,
    hi: u64,
) {
    use txlab_core::protocol::storage::Index;
    if let Some(s) = index.phantom_stripes() {
        s.for_range(lo, hi, |stripe| {
            stripes.push(StripeEntry {
                table,
                stripe,
                version: s.version(stripe),
            })
        });
    }
}
