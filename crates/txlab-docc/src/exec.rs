//! The execution phase (the paper's Algorithms 1 and 2, lines 1 to 8; Algorithm 3 for retries):
//! a [`TxOps`] that reads optimistically, remembers what it read, and buffers its writes.
//!
//! - **Reads** copy the version visible to the transaction (`Layout::read` with the
//!   transaction's bound: its own `Seq` with snapshots, the newest version without) and enter
//!   the read set as `(record, version, presence)`.
//! - **Writes, inserts and deletes** are buffered in the write set; nothing is installed before
//!   the commit phase. Inserts and deletes observe the key first (that observation is validated
//!   like a read), so they need the record: a lookup of a missing key publishes an absent record
//!   (insert-if-absent), which a later insert of the key then changes.
//! - **Scans** on ordered tables read the phantom stripes covering their range before the
//!   traversal (storage invariant 4) and validate them later, as Silo does; every record visited
//!   is read like a point read, so a record present in a later version but not in the visible
//!   one counts as absent (the snapshot scan of section 3.2). The transaction's own inserts bump
//!   stripes it scanned; those bumps are recognised by the stripe's version before the bump and
//!   do not fail it.
//! - **Retries** run without waiting or validation (Algorithm 3). With prefetching, the retry
//!   reaches the records its first attempt looked up through the references that attempt kept
//!   (they stay valid: the worker's epoch guard stays pinned across both attempts, records never
//!   move and deletes are logical), and looks up only keys the first attempt did not touch; a
//!   kept record that was sealed meanwhile is looked up again.
//! - **Read-only claims**: a program whose `read_only()` is `true` that calls a writing
//!   operation gets `Error::Misuse` naming its kind; the misuse sticks to the attempt even if the
//!   program swallows the error.
//!
//! Record references are raw pointers obtained under the transaction's pinned guard; the sets
//! are cleared before the guard is dropped (`crate::worker`).

use crate::layout::{Layout, Observed};
use crossbeam_epoch::Guard;
use std::marker::PhantomData;
use txlab_core::protocol::history::{ReadEvent, Recorder, RetiredTags, ScanCoverage, ScanEvent};
use txlab_core::protocol::storage::{Index, StripeBump};
use txlab_core::{Conflict, ConflictCause, Error, TableId, TxError, TxOps, TxResult};
use txlab_storage::Tables;

/// One read: the record, what was seen of it (its version and presence) and its key; the
/// interactive OCC engines' read entry (`txlab_occ::sets`) with DOCC's observation.
pub(crate) type ReadEntry<R> = txlab_occ::sets::ReadEntry<R, Observed>;

/// A phantom stripe's version read before a scan (`txlab_occ::sets`).
pub(crate) type NodeEntry = txlab_occ::sets::StripeEntry;

// Derived `Clone`/`Copy` would require `R: Copy`; the entries only hold pointers to `R`.
macro_rules! copy_entry {
    ($($t:ident),*) => {$(
        impl<R> Clone for $t<R> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<R> Copy for $t<R> {}
    )*};
}
copy_entry!(WriteEntry, Located);

/// What a buffered write installs. Not `txlab_occ`'s write kind and entry: those carry what
/// the interactive engines' commit needs and DOCC's does not (a blind-write kind for the
/// non-visible-write rule, a per-write scratch word for locking, a flag for a read of the same
/// record): DOCC's single committer installs every buffered write at its position, unlocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    Put,
    Insert,
    Delete,
}

/// One buffered write; its value is `wbuf[off..off + len]` (empty for deletes).
#[derive(Debug)]
pub(crate) struct WriteEntry<R> {
    pub rec: *const R,
    pub table: TableId,
    pub key: u64,
    pub kind: WriteKind,
    pub off: u32,
    pub len: u32,
}

/// A record the first attempt looked up (the prefetch list of Algorithm 3).
#[derive(Debug)]
pub(crate) struct Located<R> {
    pub table: TableId,
    pub key: u64,
    pub rec: *const R,
}

/// Which attempt is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// The optimistic execution; `keep` records the lookups for a prefetching retry.
    First { keep: bool },
    /// A retry after the dependency committed: no validation follows. `prefetch` reaches the
    /// first attempt's records through its references.
    Retry { prefetch: bool },
}

/// A worker's reusable per-transaction buffers.
#[derive(Debug)]
pub(crate) struct ExecState<R> {
    pub reads: Vec<ReadEntry<R>>,
    pub writes: Vec<WriteEntry<R>>,
    pub nodes: Vec<NodeEntry>,
    pub wbuf: Vec<u8>,
    pub rbuf: Vec<u8>,
    /// This attempt's lookups (kept only when a prefetching retry may follow).
    pub located: Vec<Located<R>>,
    /// The first attempt's lookups, during a prefetching retry.
    pub prefetched: Vec<Located<R>>,
    /// Where the next lookup of the retry is expected in `prefetched`.
    pub prefetch_pos: usize,
    /// Lookups of the retry answered from `prefetched` (`docc_retry_lookups_saved`).
    pub lookups_saved: u64,
    /// Lookups of the retry whose key the first attempt had looked up.
    pub lookups_seen_before: u64,
    /// A read-only program called a writing operation.
    pub misuse: Option<&'static str>,
    pub h_reads: Vec<ReadEvent>,
    pub h_scans: Vec<ScanEvent>,
    /// `Mutation::PrefetchByPosition` (tests only).
    #[cfg(feature = "mutation")]
    pub mutant_prefetch_by_position: bool,
}

// The raw record pointers make `ExecState` neither `Send` nor `Sync`, which is what we want: a
// worker's sets are only touched by the thread driving it.

impl<R> Default for ExecState<R> {
    fn default() -> Self {
        Self {
            reads: Vec::with_capacity(64),
            writes: Vec::with_capacity(64),
            nodes: Vec::new(),
            wbuf: Vec::with_capacity(4096),
            rbuf: Vec::with_capacity(256),
            located: Vec::with_capacity(64),
            prefetched: Vec::with_capacity(64),
            prefetch_pos: 0,
            lookups_saved: 0,
            lookups_seen_before: 0,
            misuse: None,
            h_reads: Vec::new(),
            h_scans: Vec::new(),
            #[cfg(feature = "mutation")]
            mutant_prefetch_by_position: false,
        }
    }
}

impl<R> ExecState<R> {
    /// Clears everything for a new transaction.
    pub fn clear(&mut self) {
        self.clear_attempt();
        self.located.clear();
        self.prefetched.clear();
    }

    /// Clears the sets of one attempt (the prefetch lists stay).
    pub fn clear_attempt(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.nodes.clear();
        self.wbuf.clear();
        self.h_reads.clear();
        self.h_scans.clear();
        self.misuse = None;
        self.prefetch_pos = 0;
    }

    /// Prepares a retry: the first attempt's lookups become the prefetch list.
    pub fn start_retry(&mut self) {
        self.clear_attempt();
        std::mem::swap(&mut self.located, &mut self.prefetched);
        self.located.clear();
    }

    /// The position of this attempt's own write to `(table, key)`, if any.
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
    fn write_value_mut(&mut self, i: usize) -> &mut [u8] {
        let w = self.writes[i];
        &mut self.wbuf[w.off as usize..(w.off + w.len) as usize]
    }

    fn push_write(&mut self, rec: *const R, table: TableId, key: u64, kind: WriteKind, v: &[u8]) {
        let off = self.wbuf.len() as u32;
        self.wbuf.extend_from_slice(v);
        self.writes.push(WriteEntry {
            rec,
            table,
            key,
            kind,
            off,
            len: v.len() as u32,
        });
    }

    /// Gives write entry `i` the value `v` (a delete entry gets a value slot).
    fn set_write_value(&mut self, i: usize, v: &[u8]) {
        if self.writes[i].len as usize == v.len() {
            self.write_value_mut(i).copy_from_slice(v);
        } else {
            let off = self.wbuf.len() as u32;
            self.wbuf.extend_from_slice(v);
            self.writes[i].off = off;
            self.writes[i].len = v.len() as u32;
        }
    }

    /// Our own insert bumped a stripe: if we scanned it at exactly the version before the bump,
    /// move our recorded version along. Returns whether it did (a scan of ours then saw the key
    /// missing).
    fn own_bump(&mut self, table: TableId, b: StripeBump) -> bool {
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

/// The `Error::Misuse` message for a program of kind `kind` claiming `read_only` and writing
/// (`Error::Misuse` holds a `&'static str`: built once per kind, `crate::driver::counter_name`).
pub(crate) fn misuse_message(kind: &'static str) -> &'static str {
    crate::driver::counter_name(
        "a program claims read_only() but wrote; deterministic engines order transactions \
         after a read-only one without waiting for it, so its writes are refused. Its kind: ",
        kind,
    )
}

/// The execution-phase [`TxOps`] of one attempt (module docs).
pub(crate) struct Exec<'a, L: Layout, Rec: Recorder> {
    pub tables: &'a Tables<L::Record>,
    pub st: &'a mut ExecState<L::Record>,
    pub guard: &'a Guard,
    /// Reads see the newest version below this raw `Seq` (`u64::MAX`: the newest).
    pub bound: u64,
    pub attempt: Attempt,
    /// `Some(kind)` if the program claims `read_only` (writes are then a misuse).
    pub read_only: Option<&'static str>,
    pub retired_tags: &'a RetiredTags,
    pub _rec: PhantomData<Rec>,
}

/// Reads `rec` at `bound` into `st.rbuf[..vs]` and adds it to the read set (a free function, so
/// a scan's callback can call it while the index is borrowed).
#[allow(clippy::too_many_arguments)]
#[inline]
fn observe<L: Layout, Rec: Recorder>(
    st: &mut ExecState<L::Record>,
    rec: *const L::Record,
    vs: usize,
    table: TableId,
    key: u64,
    bound: u64,
    retry: bool,
    guard: &Guard,
    retired_tags: &RetiredTags,
) -> Observed {
    if st.rbuf.len() < vs {
        st.rbuf.resize(vs, 0);
    }
    // SAFETY: `rec` came from the table's index under `guard`, which stays pinned until the
    // transaction ends; records are not freed while it is pinned (storage invariant 1).
    let r = unsafe { &*rec };
    let mut seen = L::read(r, bound, &mut st.rbuf[..vs], guard);
    if retry {
        // No validation follows a retry. A sealed record's newest version is a tombstone below
        // every running transaction, so it reads as what it is: absent (crate::gc).
        seen.sealed = false;
    }
    st.reads.push(ReadEntry {
        rec,
        table,
        key,
        seen,
    });
    if Rec::ENABLED {
        let version = if seen.version == 0 && !seen.present {
            retired_tags.fresh_version(table, key)
        } else {
            seen.version
        };
        st.h_reads.push(ReadEvent {
            table,
            key,
            version,
            present: seen.present,
        });
    }
    seen
}

impl<L: Layout, Rec: Recorder> Exec<'_, L, Rec> {
    #[inline]
    fn value_size(&self, table: TableId) -> TxResult<usize> {
        Ok(self.tables.value_size(table)?)
    }

    #[inline]
    fn check_value(&self, table: TableId, value: &[u8]) -> TxResult<usize> {
        let vs = self.value_size(table)?;
        if value.len() != vs {
            return Err(Error::ValueSize {
                table: table.0,
                expected: vs,
                got: value.len(),
            }
            .into());
        }
        Ok(vs)
    }

    /// Refuses a writing operation of a program claiming `read_only`.
    #[inline]
    fn may_write(&mut self) -> TxResult<()> {
        match self.read_only {
            Some(kind) => {
                self.st.misuse = Some(kind);
                Err(Error::Misuse(misuse_message(kind)).into())
            }
            None => Ok(()),
        }
    }

    /// The record of `(table, key)` from the prefetch list, if the first attempt looked it up at
    /// about the same point of the program (the expected position or a few after it) and it is
    /// not sealed. A retry runs the same program on mostly the same data, so its lookups come in
    /// the first attempt's order; where the data changed the path (a scan found other rows), the
    /// key is looked up in the index instead of searching the whole list, which would make a
    /// retry of a long program quadratic.
    #[inline]
    fn prefetched(&mut self, table: TableId, key: u64) -> Option<*const L::Record> {
        const WINDOW: usize = 8;
        let st = &mut *self.st;
        #[cfg(feature = "mutation")]
        let any_key = st.mutant_prefetch_by_position;
        #[cfg(not(feature = "mutation"))]
        let any_key = false;
        let at = |l: &Located<L::Record>| l.table == table && (any_key || l.key == key);
        let from = st.prefetch_pos.min(st.prefetched.len());
        let until = (from + WINDOW).min(st.prefetched.len());
        let i = from + st.prefetched[from..until].iter().position(at)?;
        st.prefetch_pos = i + 1;
        st.lookups_seen_before += 1;
        let rec = st.prefetched[i].rec;
        // SAFETY: kept from the first attempt under the same pinned guard (module docs).
        if L::is_sealed(unsafe { &*rec }, self.guard) {
            return None;
        }
        st.lookups_saved += 1;
        Some(rec)
    }

    /// Finds or creates (absent) the record of `(table, key)`; also tells whether we created it
    /// inside a stripe one of our scans covered (that scan saw the key missing).
    #[inline]
    fn locate(&mut self, table: TableId, key: u64) -> TxResult<(*const L::Record, bool)> {
        if self.attempt == (Attempt::Retry { prefetch: true })
            && let Some(rec) = self.prefetched(table, key)
        {
            return Ok((rec, false));
        }
        let entry = self.tables.get(table)?.get_or_insert(key, self.guard)?;
        let scan_miss = entry.bumped.is_some_and(|b| self.st.own_bump(table, b));
        let rec = entry.record as *const L::Record;
        if self.attempt == (Attempt::First { keep: true }) {
            self.st.located.push(Located { table, key, rec });
        }
        Ok((rec, scan_miss))
    }

    #[inline]
    fn observe(&mut self, rec: *const L::Record, vs: usize, table: TableId, key: u64) -> Observed {
        let retry = matches!(self.attempt, Attempt::Retry { .. });
        observe::<L, Rec>(
            self.st,
            rec,
            vs,
            table,
            key,
            self.bound,
            retry,
            self.guard,
            self.retired_tags,
        )
    }
}

impl<L: Layout, Rec: Recorder> TxOps for Exec<'_, L, Rec> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        let vs = self.value_size(table)?;
        if let Some(i) = self.st.find_write(table, key) {
            return Ok(match self.st.writes[i].kind {
                WriteKind::Delete => None,
                _ => Some(self.st.write_value(i)),
            });
        }
        let (rec, _) = self.locate(table, key)?;
        let seen = self.observe(rec, vs, table, key);
        Ok(seen.present.then(|| &self.st.rbuf[..vs]))
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.may_write()?;
        self.check_value(table, value)?;
        if let Some(i) = self.st.find_write(table, key) {
            self.st.set_write_value(i, value);
            self.st.writes[i].kind = match self.st.writes[i].kind {
                WriteKind::Delete => WriteKind::Put,
                k => k,
            };
            return Ok(());
        }
        let (rec, scan_miss) = self.locate(table, key)?;
        if scan_miss {
            // A scan of ours saw this key missing and we just created its record, moving our
            // stripe version past our own bump. An earlier transaction's write of the record
            // bumps no stripe, so read the record too: validation then sees that write
            // (`txlab_testkit::phantom`).
            let vs = value.len();
            if self.observe(rec, vs, table, key).present {
                return Err(Conflict::at(ConflictCause::PhantomValidation, table, key).into());
            }
        }
        self.st.push_write(rec, table, key, WriteKind::Put, value);
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.may_write()?;
        let vs = self.value_size(table)?;
        if let Some(i) = self.st.find_write(table, key) {
            if self.st.writes[i].kind == WriteKind::Delete {
                return Ok(false);
            }
            f(self.st.write_value_mut(i));
            return Ok(true);
        }
        let (rec, _) = self.locate(table, key)?;
        if !self.observe(rec, vs, table, key).present {
            return Ok(false);
        }
        let st = &mut *self.st;
        let off = st.wbuf.len();
        st.wbuf.extend_from_slice(&st.rbuf[..vs]);
        f(&mut st.wbuf[off..off + vs]);
        st.writes.push(WriteEntry {
            rec,
            table,
            key,
            kind: WriteKind::Put,
            off: off as u32,
            len: vs as u32,
        });
        Ok(true)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.may_write()?;
        let vs = self.check_value(table, value)?;
        if let Some(i) = self.st.find_write(table, key) {
            if self.st.writes[i].kind != WriteKind::Delete {
                return Ok(false);
            }
            self.st.set_write_value(i, value);
            self.st.writes[i].kind = WriteKind::Put;
            return Ok(true);
        }
        let (rec, _) = self.locate(table, key)?;
        if self.observe(rec, vs, table, key).present {
            return Ok(false);
        }
        self.st
            .push_write(rec, table, key, WriteKind::Insert, value);
        Ok(true)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.may_write()?;
        let vs = self.value_size(table)?;
        if let Some(i) = self.st.find_write(table, key) {
            if self.st.writes[i].kind == WriteKind::Delete {
                return Ok(false);
            }
            self.st.writes[i].kind = WriteKind::Delete;
            return Ok(true);
        }
        let (rec, _) = self.locate(table, key)?;
        if !self.observe(rec, vs, table, key).present {
            return Ok(false);
        }
        self.st.push_write(rec, table, key, WriteKind::Delete, &[]);
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        let vs = self.value_size(table)?;
        let index = self.tables.get(table)?;
        if let Some(stripes) = index.phantom_stripes() {
            let nodes = &mut self.st.nodes;
            stripes.for_range(lo, hi, |stripe| {
                nodes.push(NodeEntry {
                    table,
                    stripe,
                    version: stripes.version(stripe),
                })
            });
        }
        let (st, bound, guard, tags) = (&mut *self.st, self.bound, self.guard, self.retired_tags);
        let retry = matches!(self.attempt, Attempt::Retry { .. });
        let mut coverage = ScanCoverage::new(table, lo, hi);
        index.scan(lo, hi, guard, &mut |key, rec| {
            let goes_on = if let Some(i) = st.find_write(table, key) {
                match st.writes[i].kind {
                    WriteKind::Delete => true,
                    _ => visit(key, st.write_value(i)),
                }
            } else {
                let rec = rec as *const L::Record;
                let seen = observe::<L, Rec>(st, rec, vs, table, key, bound, retry, guard, tags);
                !seen.present || visit(key, &st.rbuf[..vs])
            };
            coverage.step(key, Ok(goes_on))
        })?;
        coverage.finish::<Rec>(&mut st.h_scans)
    }
}

/// Why an attempt cannot commit as executed.
pub(crate) fn validation_conflict<L: Layout>(
    st: &ExecState<L::Record>,
    tables: &Tables<L::Record>,
    bound: u64,
    guard: &Guard,
) -> Option<Conflict> {
    for r in &st.reads {
        // SAFETY: obtained under `guard`, still pinned (module docs).
        let now = L::current(unsafe { &*r.rec }, bound, guard);
        if r.seen.sealed
            || now.sealed
            || now.version != r.seen.version
            || now.present != r.seen.present
        {
            return Some(Conflict::at(ConflictCause::ReadValidation, r.table, r.key));
        }
    }
    for n in &st.nodes {
        let stripes = tables.get(n.table).ok().and_then(|i| i.phantom_stripes());
        if stripes.is_some_and(|s| s.version(n.stripe) != n.version) {
            return Some(Conflict {
                cause: ConflictCause::PhantomValidation,
                table: Some(n.table),
                key: None,
            });
        }
    }
    None
}

/// Turns a conflict a program reported at its serial position (where no conflict can occur)
/// into a real error naming it.
pub(crate) fn no_conflict_at_serial_position<T>(r: TxResult<T>, kind: &str) -> TxResult<T> {
    match r {
        Err(TxError::Conflict(c)) => Err(Error::Internal(format!(
            "a program of kind '{kind}' reported {c} when run at its position in the order, \
             where every earlier transaction has committed"
        ))
        .into()),
        other => other,
    }
}
