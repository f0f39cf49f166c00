//! Overlap: the single-partition transactions after a multi-partition transaction `T` run while
//! `T`'s exchange is in flight, and commit after it, in order (`docs/protocols/docc.md`,
//! "Overlap").
//!
//! **The invariant.** A partition's committed state always equals the serial execution of its
//! share of the global order up to some position, and a transaction's result is the one it has
//! at its position in that serial execution. While `T` is in flight at a partition, nothing
//! after `T` installs anything there, so `T`'s read set, on-demand reads and writes see exactly
//! the state at its position; a later transaction `L` commits only after `T` has installed its
//! writes here, and only if what `L` read is what it would have read after `T`.
//!
//! **How.** The node hands the window `L_1 .. L_k` (the single-partition transactions after `T`,
//! up to the next multi-partition one involving the partition) to its local engine, unchanged:
//! DOCC runs them optimistically, Calvin under its locks, with its own workers. Each program
//! runs through `Spec`, whose `TxOps` passes every access to the engine, except that a key an
//! earlier window transaction wrote is read from the window's `Overlay` (its writes, not
//! installed), and that the attempt ends as a rollback: the engine installs nothing. The wrapper
//! keeps the final attempt's `Capture`: what it read and from where (the committed state, or
//! window transaction `j`'s attempt `a`), its scans, its writes and its result.
//!
//! Once `T` has installed its writes `W_T` here (or installed nothing: a rollback or a restart),
//! the node validates the window in order (`Window::valid_prefix`): `L_i` is valid if every
//! key it read comes from where the serial order says (the last valid `L_j`, `j < i`, that wrote
//! it; else the committed state, and then `T` did not write it), and no scanned range holds a
//! key of `W_T` or a window write other than the ones the scan merged. The valid prefix
//! installs its writes at its positions (an `Apply` transaction each, as a participant installs
//! `T`'s) and is finished in order; from the first invalid transaction on, the window goes back
//! to the ordinary path and runs again at its position. A later window transaction reads,
//! scans and updates what an earlier one wrote, inserted or deleted, from the overlay (an update
//! of a deleted row finds none); a blind write, an insert or a delete of a key an earlier window
//! transaction wrote, or an update of a row one inserted, stops it instead (it runs again at its
//! position).
//!
//! For the history, the committed version of every key a window transaction read from the
//! committed state is looked up right after its run (`Capture::note_committed`), before `T`
//! installs anything, so what is recorded is what it read, not what validation assumes it read.
//!
//! The window runs on ranks of its own (never a transaction's, and each node's apart from the
//! others'), so the engine's records of it are rollbacks no real transaction, nor another node's
//! window, merges with; the chain of DOCC's waiting phase is saved before the run and restored
//! after it (`super::local::WindowChain`).
//!
//! The window runs synchronously in the node's handler: up to `WINDOW_MAX` transactions per
//! engine run, during which the messages that arrive for the node (`T`'s outcome or read sets
//! included) wait.

use super::local::PartitionEngine;
use super::msg::WriteOp;
use super::ops::{Confined, Staged, staged_op};
use crate::seq::Seq;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use txlab_core::protocol::history::{ReadEvent, ScanEvent};
use txlab_core::{AccessSet, Error, Program, TableId, TxError, TxOps, TxResult};

/// How a node treats the single-partition transactions after a multi-partition transaction in
/// flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overlap {
    /// They wait until it finished here.
    Off,
    /// They run while it is in flight and commit after it (module docs).
    #[default]
    On,
    /// Mutant (tests only): the window commits without being validated against `T`'s writes.
    #[cfg(feature = "mutation")]
    #[doc(hidden)]
    SkipValidation,
    /// Mutant (tests only): the window commits through the engine at once, before `T`.
    #[cfg(feature = "mutation")]
    #[doc(hidden)]
    CommitEarly,
    /// Mutant (tests only): scanned ranges are not checked (neither against `T`'s writes nor
    /// against the window's); reads are.
    #[cfg(feature = "mutation")]
    #[doc(hidden)]
    SkipScanCheck,
    /// Mutant (tests only): a read from the committed state is not checked against `T`'s writes
    /// (where it came from still is; scans are checked).
    #[cfg(feature = "mutation")]
    #[doc(hidden)]
    SkipBaseReadCheck,
}

impl Overlap {
    /// Whether the window is validated against the multi-partition transaction's writes (the
    /// mutants commit it whole).
    fn validates(self) -> bool {
        #[cfg(feature = "mutation")]
        if matches!(self, Overlap::SkipValidation | Overlap::CommitEarly) {
            return false;
        }
        true
    }

    /// Whether scanned ranges are checked (not by the `SkipScanCheck` mutant).
    fn checks_scans(self) -> bool {
        #[cfg(feature = "mutation")]
        if self == Overlap::SkipScanCheck {
            return false;
        }
        true
    }

    /// Whether a read from the committed state is checked against `T`'s writes (not by the
    /// `SkipBaseReadCheck` mutant).
    fn checks_base_reads(self) -> bool {
        #[cfg(feature = "mutation")]
        if self == Overlap::SkipBaseReadCheck {
            return false;
        }
        true
    }

    /// Whether the window commits through the engine as it runs (the `CommitEarly` mutant).
    pub(crate) fn commits_early(self) -> bool {
        #[cfg(feature = "mutation")]
        if self == Overlap::CommitEarly {
            return true;
        }
        false
    }
}

/// Why a window attempt's engine run rolls back (not the program's own decision).
const WINDOW: &str = "overlap: run ahead of a multi-partition transaction, committed later";

/// Where a read came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The committed state.
    Base,
    /// Window transaction `j`'s attempt `a`.
    Window(usize, u32),
}

/// A scan as a window transaction made it.
#[derive(Debug, Clone)]
pub(crate) struct ScanCap {
    table: u16,
    lo: u64,
    hi: u64,
    /// The last key visited (`hi` if the scan ran to the end).
    last: u64,
    /// The rows visited: key and source (`None`: the transaction's own write).
    rows: Vec<(u64, Option<Source>)>,
    /// Every window write in the range the scan merged: key, writer, attempt.
    merged: Vec<(u64, usize, u32)>,
}

/// What a window transaction's final attempt did (module docs).
#[derive(Debug, Default)]
pub(crate) struct Capture {
    attempt: u32,
    reads: Vec<(u16, u64, Source)>,
    scans: Vec<ScanCap>,
    /// Its writes (none if it rolled back or restarts: it installs nothing).
    writes: BTreeMap<(u16, u64), Staged>,
    /// It wrote a key a window transaction wrote, or updated a row one inserted: it runs again
    /// (module docs).
    poisoned: bool,
    /// The committed version and presence of every key it read from the committed state (reads
    /// and scanned rows), looked up right after its run, before `T` installs anything
    /// (`note_committed`; only when the engine records histories).
    committed: BTreeMap<(u16, u64), (u64, bool)>,
    /// The program's result.
    pub result: Option<TxResult<()>>,
    /// A partition outside this one it touched (`Confined`).
    pub outside: Option<u16>,
}

impl Capture {
    /// Its writes, as installed.
    pub fn write_ops(&self) -> Vec<WriteOp> {
        self.writes
            .iter()
            .filter_map(|(&(t, k), s)| staged_op(t, k, s))
            .collect()
    }

    /// Looks up, in `engine`'s committed state, the version of every key it read from there
    /// (module docs). Call right after the window's run, while `T` is still in flight here.
    pub fn note_committed<E: PartitionEngine>(&mut self, engine: &E) -> Result<(), Error> {
        let reads = self.reads.iter().map(|&(t, k, src)| (t, k, Some(src)));
        let rows = self
            .scans
            .iter()
            .flat_map(|s| s.rows.iter().map(|&(k, src)| (s.table, k, src)));
        let base: BTreeSet<(u16, u64)> = reads
            .chain(rows)
            .filter(|&(_, _, src)| src == Some(Source::Base))
            .map(|(t, k, _)| (t, k))
            .collect();
        for (t, k) in base {
            let seen = match engine.committed(TableId(t), k)? {
                Some((_, v)) => (v, true),
                None => (0, false),
            };
            self.committed.insert((t, k), seen);
        }
        Ok(())
    }

    /// Whether its reads and scans are those of the serial order after `t_writes` (the
    /// multi-partition transaction's writes here) and `written` (the valid window writes before
    /// it: key to writer and attempt); `mode` may be a mutant that skips part of the check.
    fn consistent(
        &self,
        t_writes: &BTreeSet<(u16, u64)>,
        written: &BTreeMap<(u16, u64), (usize, u32)>,
        mode: Overlap,
    ) -> bool {
        let base_reads = mode.checks_base_reads();
        let reads = self.reads.iter().all(|&(t, k, src)| {
            let want = written
                .get(&(t, k))
                .map_or(Source::Base, |&(j, a)| Source::Window(j, a));
            src == want && (want != Source::Base || !base_reads || !t_writes.contains(&(t, k)))
        });
        reads
            && (!mode.checks_scans()
                || self.scans.iter().all(|s| {
                    let range = (s.table, s.lo)..=(s.table, s.hi);
                    t_writes.range(range.clone()).next().is_none()
                        && written
                            .range(range)
                            .map(|(&(_, k), &(j, a))| (k, j, a))
                            .eq(s.merged.iter().copied())
                }))
    }
}

/// A window write as later window transactions see it.
#[derive(Debug, Clone)]
enum Val {
    Put(Vec<u8>),
    Insert(Vec<u8>),
    Delete,
}

impl Val {
    fn of(s: &Staged) -> Option<Val> {
        match s {
            (Some(false), None) => None,
            (_, None) => Some(Val::Delete),
            (Some(false), Some(v)) => Some(Val::Insert(v.clone())),
            (_, Some(v)) => Some(Val::Put(v.clone())),
        }
    }

    fn value(&self) -> Option<Vec<u8>> {
        match self {
            Val::Put(v) | Val::Insert(v) => Some(v.clone()),
            Val::Delete => None,
        }
    }
}

/// `(table, key, writer)` to the writer's attempt and value.
type Writes = BTreeMap<(u16, u64, usize), (u32, Val)>;

/// The window's writes, not installed.
#[derive(Debug, Default)]
pub(crate) struct Overlay {
    map: Mutex<Writes>,
}

impl Overlay {
    fn lock(&self) -> std::sync::MutexGuard<'_, Writes> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The last write of `(table, key)` by a window transaction before `index`.
    fn latest(&self, table: u16, key: u64, index: usize) -> Option<(Source, Val)> {
        self.lock()
            .range((table, key, 0)..(table, key, index))
            .next_back()
            .map(|(&(_, _, j), (a, v))| (Source::Window(j, *a), v.clone()))
    }

    /// The last write before `index` of every key of `table` in `lo..=hi`.
    fn latest_in(&self, table: u16, lo: u64, hi: u64, index: usize) -> Vec<(u64, usize, u32, Val)> {
        let map = self.lock();
        let mut out: Vec<(u64, usize, u32, Val)> = Vec::new();
        for (&(_, k, j), (a, v)) in map.range((table, lo, 0)..=(table, hi, usize::MAX)) {
            if j >= index {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.0 == k => *last = (k, j, *a, v.clone()),
                _ => out.push((k, j, *a, v.clone())),
            }
        }
        out
    }

    fn publish(&self, index: usize, attempt: u32, writes: &BTreeMap<(u16, u64), Staged>) {
        let mut map = self.lock();
        for (&(t, k), s) in writes {
            if let Some(v) = Val::of(s) {
                map.insert((t, k, index), (attempt, v));
            }
        }
    }
}

/// Window transaction `index`: its program, run so that the engine installs nothing (module
/// docs).
pub(crate) struct Spec<'a, P> {
    confined: Confined<'a, P>,
    index: usize,
    overlay: &'a Overlay,
    mode: Overlap,
    attempts: AtomicU32,
    capture: Mutex<Capture>,
}

impl<'a, P: Program> Spec<'a, P> {
    pub fn new(
        confined: Confined<'a, P>,
        index: usize,
        overlay: &'a Overlay,
        mode: Overlap,
    ) -> Self {
        Self {
            confined,
            index,
            overlay,
            mode,
            attempts: AtomicU32::new(0),
            capture: Mutex::new(Capture::default()),
        }
    }

    /// The final attempt's capture, if the engine's result for it is the expected one (else it
    /// is stopped: `None`).
    pub fn finish(self, engine_result: &TxResult<()>) -> Option<Capture> {
        let cap = self.capture.into_inner().unwrap_or_else(|e| e.into_inner());
        let expected = if self.mode.commits_early() {
            cap.result
                .as_ref()
                .is_some_and(|r| match (r, engine_result) {
                    (Ok(()), Ok(())) => true,
                    (Err(TxError::UserAbort(a)), Err(TxError::UserAbort(b))) => a == b,
                    _ => false,
                })
        } else {
            matches!(engine_result, Err(TxError::UserAbort(m)) if m == WINDOW)
        };
        let final_attempt = cap.attempt == self.attempts.load(Ordering::Relaxed);
        (expected && final_attempt && cap.result.is_some() && !cap.poisoned).then_some(cap)
    }
}

impl<P: Program> Program for Spec<'_, P> {
    type Output = ();

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<()> {
        let attempt = self.attempts.fetch_add(1, Ordering::Relaxed) + 1;
        let mut ops = SpecOps {
            tx,
            overlay: self.overlay,
            index: self.index,
            cap: Capture {
                attempt,
                ..Capture::default()
            },
            buf: Vec::new(),
        };
        let r = self.confined.run(&mut ops).map(|_| ());
        let mut cap = ops.cap;
        if let Err(TxError::Conflict(c)) = r {
            return Err(TxError::Conflict(c));
        }
        cap.outside = self.confined.outside();
        if self.confined.program.read_only() && !cap.writes.is_empty() {
            // The ordinary path reports the misuse.
            cap.poisoned = true;
        }
        if r.is_err() || cap.outside.is_some() {
            // A rollback or a restart installs nothing: later transactions must not see it.
            cap.writes.clear();
        }
        self.overlay.publish(self.index, attempt, &cap.writes);
        let early = self.mode.commits_early().then(|| match &r {
            Ok(()) => Ok(()),
            Err(TxError::UserAbort(m)) => Err(TxError::UserAbort(m.clone())),
            Err(_) => Err(TxError::user_abort(WINDOW)),
        });
        cap.result = Some(r);
        *self.capture.lock().unwrap_or_else(|e| e.into_inner()) = cap;
        early.unwrap_or_else(|| Err(TxError::user_abort(WINDOW)))
    }

    fn declare(&self, out: &mut AccessSet) {
        self.confined.declare(out)
    }

    fn kind(&self) -> &'static str {
        self.confined.kind()
    }

    fn read_only(&self) -> bool {
        self.confined.read_only()
    }
}

/// A window transaction's `TxOps` over the engine's (module docs).
struct SpecOps<'a, 't, T: ?Sized> {
    tx: &'t mut T,
    overlay: &'a Overlay,
    index: usize,
    cap: Capture,
    buf: Vec<u8>,
}

impl<T: TxOps + ?Sized> SpecOps<'_, '_, T> {
    fn own(&self, table: TableId, key: u64) -> bool {
        self.cap.writes.contains_key(&(table.0, key))
    }

    /// An earlier window transaction's write of a key this one has not written, noting the read.
    fn window(&mut self, table: TableId, key: u64) -> Option<Val> {
        if self.own(table, key) {
            return None;
        }
        match self.overlay.latest(table.0, key, self.index) {
            Some((src, v)) => {
                self.cap.reads.push((table.0, key, src));
                Some(v)
            }
            None => {
                self.cap.reads.push((table.0, key, Source::Base));
                None
            }
        }
    }

    /// Whether an earlier window transaction wrote the key (this one has not).
    fn in_window(&self, table: TableId, key: u64) -> bool {
        !self.own(table, key) && self.overlay.latest(table.0, key, self.index).is_some()
    }

    fn poison(&mut self) -> TxError {
        self.cap.poisoned = true;
        TxError::user_abort("overlap: a write of a key an earlier window transaction wrote")
    }

    fn stage(&mut self, table: TableId, key: u64, before: Option<bool>, now: Option<Vec<u8>>) {
        let e = self
            .cap
            .writes
            .entry((table.0, key))
            .or_insert((before, None));
        e.1 = now;
    }

    fn serve(&mut self, v: Option<Vec<u8>>) -> Option<&[u8]> {
        v.map(|v| {
            self.buf = v;
            &self.buf[..]
        })
    }
}

impl<T: TxOps + ?Sized> TxOps for SpecOps<'_, '_, T> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        match self.window(table, key) {
            Some(v) => Ok(self.serve(v.value())),
            None => self.tx.read(table, key),
        }
    }

    fn read_for_update(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        match self.window(table, key) {
            Some(v) => Ok(self.serve(v.value())),
            None => self.tx.read_for_update(table, key),
        }
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        if self.in_window(table, key) {
            return Err(self.poison());
        }
        self.tx.write(table, key, value)?;
        self.stage(table, key, None, Some(value.to_vec()));
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        match self.window(table, key) {
            Some(Val::Put(mut v)) => {
                f(&mut v);
                self.tx.write(table, key, &v)?;
                self.stage(table, key, Some(true), Some(v));
                Ok(true)
            }
            Some(Val::Delete) => Ok(false),
            Some(Val::Insert(_)) => Err(self.poison()),
            None => {
                let mut now = None;
                let ok = self.tx.update(table, key, &mut |b| {
                    f(b);
                    now = Some(b.to_vec());
                })?;
                if ok {
                    self.stage(table, key, Some(true), now);
                }
                Ok(ok)
            }
        }
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        if self.window(table, key).is_some() {
            return Err(self.poison());
        }
        let ok = self.tx.insert(table, key, value)?;
        if ok {
            self.stage(table, key, Some(false), Some(value.to_vec()));
        }
        Ok(ok)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        if self.window(table, key).is_some() {
            return Err(self.poison());
        }
        let ok = self.tx.delete(table, key)?;
        if ok {
            self.stage(table, key, Some(true), None);
        }
        Ok(ok)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        // The engine's rows (its own writes included), then the window's writes merged in.
        // The engine's scan reads the whole range, whatever `visit` stops at: the window's
        // writes are merged by key before `visit` sees any row (and the check covers `lo..=hi`,
        // not only what was visited: conservative).
        let mut rows: Vec<(u64, Option<Vec<u8>>, Option<Source>)> = Vec::new();
        self.tx.scan(table, lo, hi, &mut |k, v| {
            rows.push((k, Some(v.to_vec()), Some(Source::Base)));
            true
        })?;
        let window = self.overlay.latest_in(table.0, lo, hi, self.index);
        let mut merged = Vec::with_capacity(window.len());
        for (k, j, a, v) in window {
            merged.push((k, j, a));
            if self.own(table, k) {
                continue;
            }
            let row = (k, v.value(), Some(Source::Window(j, a)));
            match rows.binary_search_by_key(&k, |r| r.0) {
                Ok(i) => rows[i] = row,
                Err(i) => rows.insert(i, row),
            }
        }
        let mut cap = ScanCap {
            table: table.0,
            lo,
            hi,
            last: hi,
            rows: Vec::new(),
            merged,
        };
        for (k, v, src) in rows {
            let Some(v) = v else { continue };
            let src = if self.own(table, k) { None } else { src };
            cap.rows.push((k, src));
            if !visit(k, &v) {
                cap.last = k;
                break;
            }
        }
        self.cap.scans.push(cap);
        Ok(())
    }
}

/// A transaction of the window: the queue entry's `Seq`, whether it runs here, and its
/// capture once run (`None` until then, or if it was stopped).
#[derive(Debug)]
pub(crate) struct Speculated {
    pub seq: Seq,
    /// It involves this partition (else it is only finished in order).
    pub involved: bool,
    pub capture: Option<Capture>,
}

/// The transactions after the multi-partition one at the head, run ahead (module docs).
#[derive(Debug, Default)]
pub(crate) struct Window {
    /// `queue[1 + i]` while the multi-partition transaction is at the head.
    pub entries: Vec<Speculated>,
    pub overlay: Overlay,
    /// Nothing more is added: the next multi-partition transaction was reached, or a window
    /// transaction was stopped (what follows it would be run again anyway).
    pub closed: bool,
}

impl Window {
    /// How many entries, from the first, commit after the multi-partition transaction whose
    /// writes here are `t_writes` (module docs; `mode` may be a mutant that skips the check).
    pub fn valid_prefix(&self, t_writes: &[WriteOp], mode: Overlap) -> usize {
        let t_writes: BTreeSet<(u16, u64)> = t_writes.iter().map(WriteOp::key).collect();
        let mut written: BTreeMap<(u16, u64), (usize, u32)> = BTreeMap::new();
        for (i, s) in self.entries.iter().enumerate() {
            if !s.involved {
                continue;
            }
            let Some(cap) = &s.capture else { return i };
            if mode.validates() && !cap.consistent(&t_writes, &written, mode) {
                return i;
            }
            for (&key, st) in &cap.writes {
                if Val::of(st).is_some() {
                    written.insert(key, (i, cap.attempt));
                }
            }
        }
        self.entries.len()
    }

    /// What valid entry `i` read, for the history: every read with the version it saw (a
    /// window writer's `Seq`, or the committed version noted right after its run:
    /// `Capture::note_committed`), and its scans. Errors: a read from the committed state whose
    /// version was not noted.
    pub fn read_events(&self, i: usize) -> Result<(Vec<ReadEvent>, Vec<ScanEvent>), Error> {
        let Some(cap) = &self.entries[i].capture else {
            return Ok((Vec::new(), Vec::new()));
        };
        let mut reads = Vec::with_capacity(cap.reads.len());
        for &(t, k, src) in &cap.reads {
            let (version, present) = self.version(cap, t, k, src)?;
            reads.push(ReadEvent {
                table: TableId(t),
                key: k,
                version,
                present,
            });
        }
        let mut scans = Vec::with_capacity(cap.scans.len());
        for s in &cap.scans {
            for &(k, src) in &s.rows {
                if let Some(src) = src {
                    let (version, present) = self.version(cap, s.table, k, src)?;
                    reads.push(ReadEvent {
                        table: TableId(s.table),
                        key: k,
                        version,
                        present,
                    });
                }
            }
            scans.push(ScanEvent {
                table: TableId(s.table),
                lo: s.lo,
                hi: s.last,
            });
        }
        Ok((reads, scans))
    }

    fn version(&self, cap: &Capture, t: u16, k: u64, src: Source) -> Result<(u64, bool), Error> {
        Ok(match src {
            Source::Base => *cap.committed.get(&(t, k)).ok_or_else(|| {
                Error::Internal(format!(
                    "overlap: no committed version noted for table {t} key {k}"
                ))
            })?,
            Source::Window(j, _) => {
                let present = self.entries[j]
                    .capture
                    .as_ref()
                    .and_then(|c| c.writes.get(&(t, k)))
                    .is_some_and(|s| s.1.is_some());
                (self.entries[j].seq.raw(), present)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    //! `Capture::consistent` and `Window::valid_prefix` over constructed captures: each case
    //! names the serial-order rule it breaks, and the mutants skip exactly their part.

    use super::*;

    const TABLE: u16 = 3;
    const B: Source = Source::Base;

    fn w(j: usize, a: u32) -> Source {
        Source::Window(j, a)
    }

    /// A committed attempt `attempt` that did nothing yet.
    fn cap(attempt: u32) -> Capture {
        Capture {
            attempt,
            result: Some(Ok(())),
            ..Capture::default()
        }
    }

    impl Capture {
        fn reads(mut self, key: u64, src: Source) -> Self {
            self.reads.push((TABLE, key, src));
            self
        }

        fn puts(mut self, key: u64) -> Self {
            self.writes.insert((TABLE, key), (None, Some(vec![1])));
            self
        }

        /// A scan of `lo..=hi` that visited `rows` and merged the window writes `merged`.
        fn scans(
            mut self,
            lo: u64,
            hi: u64,
            rows: &[(u64, Source)],
            merged: &[(u64, usize, u32)],
        ) -> Self {
            self.scans.push(ScanCap {
                table: TABLE,
                lo,
                hi,
                last: hi,
                rows: rows.iter().map(|&(k, s)| (k, Some(s))).collect(),
                merged: merged.to_vec(),
            });
            self
        }
    }

    fn window(caps: Vec<Option<Capture>>) -> Window {
        Window {
            entries: caps
                .into_iter()
                .enumerate()
                .map(|(i, capture)| Speculated {
                    seq: Seq::from_raw(i as u64 + 10),
                    involved: true,
                    capture,
                })
                .collect(),
            ..Window::default()
        }
    }

    fn put(key: u64) -> WriteOp {
        WriteOp::Put(TABLE, key, vec![2])
    }

    fn insert(key: u64) -> WriteOp {
        WriteOp::Insert(TABLE, key, vec![2])
    }

    fn delete(key: u64) -> WriteOp {
        WriteOp::Delete(TABLE, key)
    }

    /// The valid prefix of a one-transaction window under `mode`.
    fn one(c: Capture, t: &[WriteOp], mode: Overlap) -> usize {
        window(vec![Some(c)]).valid_prefix(t, mode)
    }

    fn scanner() -> Capture {
        cap(1).scans(10, 20, &[(10, B), (15, B)], &[])
    }

    #[test]
    fn a_scan_is_invalid_if_t_inserts_or_deletes_in_its_range() {
        // A phantom: T inserts a key between the rows the scan saw.
        assert_eq!(one(scanner(), &[insert(12)], Overlap::On), 0);
        // T deletes a row the scan saw, or one at its bound.
        assert_eq!(one(scanner(), &[delete(15)], Overlap::On), 0);
        assert_eq!(one(scanner(), &[delete(20)], Overlap::On), 0);
        // Outside the range, or in another table: valid.
        assert_eq!(one(scanner(), &[insert(21), delete(9)], Overlap::On), 1);
        assert_eq!(
            one(
                scanner(),
                &[WriteOp::Insert(TABLE + 1, 12, vec![])],
                Overlap::On
            ),
            1
        );
        assert_eq!(one(scanner(), &[], Overlap::On), 1);
    }

    #[test]
    fn a_read_from_the_committed_state_is_invalid_if_t_wrote_the_key() {
        let reader = || cap(1).reads(5, B);
        assert_eq!(one(reader(), &[delete(5)], Overlap::On), 0);
        assert_eq!(one(reader(), &[put(5)], Overlap::On), 0);
        assert_eq!(one(reader(), &[insert(5)], Overlap::On), 0);
        assert_eq!(one(reader(), &[put(6), delete(4)], Overlap::On), 1);
    }

    #[test]
    fn a_chain_of_window_writers_is_read_from_the_last_valid_one() {
        // L0 writes 7; L1 reads it from L0 and writes it; L2 reads it from L1 and scans it.
        let l0 = || cap(1).puts(7);
        let l1 = || cap(1).reads(7, w(0, 1)).puts(7);
        let l2 = |src, merged: (u64, usize, u32)| {
            cap(1).reads(7, src).scans(0, 9, &[(7, src)], &[merged])
        };
        let run =
            |c2| window(vec![Some(l0()), Some(l1()), Some(c2)]).valid_prefix(&[], Overlap::On);
        assert_eq!(run(l2(w(1, 1), (7, 1, 1))), 3);
        // L2 read L0's write, which L1 overwrote.
        assert_eq!(run(l2(w(0, 1), (7, 1, 1))), 2);
        // L2's scan merged L0's write instead of L1's.
        let stale_scan = cap(1)
            .reads(7, w(1, 1))
            .scans(0, 9, &[(7, w(0, 1))], &[(7, 0, 1)]);
        assert_eq!(run(stale_scan), 2);
        // T wrote the key the chain starts from: L0 is still valid (it only wrote it), and so
        // are the reads of the chain; a scanned range holding a key of T's is not (the check is
        // conservative there).
        let reads = window(vec![Some(l0()), Some(l1()), Some(cap(1).reads(7, w(1, 1)))]);
        assert_eq!(reads.valid_prefix(&[put(7)], Overlap::On), 3);
        let all = window(vec![Some(l0()), Some(l1()), Some(l2(w(1, 1), (7, 1, 1)))]);
        assert_eq!(all.valid_prefix(&[put(7)], Overlap::On), 2);
        // L1 stopped (no capture): the window ends before it.
        let stopped = window(vec![Some(l0()), None, Some(l2(w(1, 1), (7, 1, 1)))]);
        assert_eq!(stopped.valid_prefix(&[], Overlap::On), 1);
        // A window entry this partition is not involved in is skipped.
        let mut skipped = window(vec![Some(l0()), None, Some(l2(w(0, 1), (7, 0, 1)))]);
        skipped.entries[1].involved = false;
        assert_eq!(skipped.valid_prefix(&[], Overlap::On), 3);
        // L1 rolled back (it installs nothing): L2 must read L0's write.
        let rolled = || Capture {
            result: Some(Err(TxError::user_abort("rolled back"))),
            ..cap(1).reads(7, w(0, 1))
        };
        let run_rolled =
            |c2| window(vec![Some(l0()), Some(rolled()), Some(c2)]).valid_prefix(&[], Overlap::On);
        assert_eq!(run_rolled(l2(w(0, 1), (7, 0, 1))), 3);
        assert_eq!(run_rolled(l2(w(1, 1), (7, 1, 1))), 2);
    }

    #[test]
    fn a_read_of_a_stale_attempt_is_invalid() {
        // L0's final attempt is its second; L1 read what its first wrote.
        let l0 = cap(2).puts(7);
        let stale = window(vec![Some(l0), Some(cap(1).reads(7, w(0, 1)))]);
        assert_eq!(stale.valid_prefix(&[], Overlap::On), 1);
        let l0 = cap(2).puts(7);
        let fresh = window(vec![Some(l0), Some(cap(1).reads(7, w(0, 2)))]);
        assert_eq!(fresh.valid_prefix(&[], Overlap::On), 2);
        // The same for a scan that merged the first attempt's write.
        let l0 = cap(2).puts(7);
        let scan = cap(1).scans(0, 9, &[(7, w(0, 1))], &[(7, 0, 1)]);
        assert_eq!(
            window(vec![Some(l0), Some(scan)]).valid_prefix(&[], Overlap::On),
            1
        );
    }

    #[test]
    fn a_read_that_ran_before_an_earlier_write_was_published_is_invalid() {
        // L1 read 7 from the committed state (and scanned over it) before L0 published its
        // write of 7: in the serial order it reads L0's.
        let read = window(vec![Some(cap(1).puts(7)), Some(cap(1).reads(7, B))]);
        assert_eq!(read.valid_prefix(&[], Overlap::On), 1);
        let scan = cap(1).scans(0, 9, &[(3, B)], &[]);
        let scanned = window(vec![Some(cap(1).puts(7)), Some(scan)]);
        assert_eq!(scanned.valid_prefix(&[], Overlap::On), 1);
        // What follows an invalid transaction runs again, valid or not.
        let after = window(vec![
            Some(cap(1).puts(7)),
            Some(cap(1).reads(7, B)),
            Some(cap(1).reads(8, B)),
        ]);
        assert_eq!(after.valid_prefix(&[], Overlap::On), 1);
    }

    #[cfg(feature = "mutation")]
    #[test]
    fn each_mutant_skips_only_its_part_of_the_check() {
        let phantom = || (scanner(), [insert(12)]);
        let read_t = || (cap(1).reads(5, B), [put(5)]);
        let race = || window(vec![Some(cap(1).puts(7)), Some(cap(1).reads(7, B))]);
        let (c, t) = phantom();
        assert_eq!(one(c, &t, Overlap::SkipScanCheck), 1);
        let (c, t) = read_t();
        assert_eq!(one(c, &t, Overlap::SkipScanCheck), 0);
        assert_eq!(race().valid_prefix(&[], Overlap::SkipScanCheck), 1);
        let (c, t) = read_t();
        assert_eq!(one(c, &t, Overlap::SkipBaseReadCheck), 1);
        let (c, t) = phantom();
        assert_eq!(one(c, &t, Overlap::SkipBaseReadCheck), 0);
        assert_eq!(race().valid_prefix(&[], Overlap::SkipBaseReadCheck), 1);
        for m in [Overlap::SkipValidation, Overlap::CommitEarly] {
            let (c, t) = phantom();
            assert_eq!(one(c, &t, m), 1);
            let (c, t) = read_t();
            assert_eq!(one(c, &t, m), 1);
            assert_eq!(race().valid_prefix(&[], m), 2);
        }
    }

    #[test]
    fn the_history_records_the_committed_versions_noted_after_the_run() {
        let mut c = cap(1).reads(5, B).scans(10, 20, &[(10, B)], &[]);
        c.committed.insert((TABLE, 5), (40, true));
        c.committed.insert((TABLE, 10), (0, false));
        let win = window(vec![Some(c)]);
        let (reads, scans) = win.read_events(0).unwrap();
        let got: Vec<(u64, u64, bool)> = reads
            .iter()
            .map(|r| (r.key, r.version, r.present))
            .collect();
        assert_eq!(got, [(5, 40, true), (10, 0, false)]);
        assert_eq!((scans[0].lo, scans[0].hi), (10, 20));
        // A read whose version was not noted is an error, never looked up again later.
        let win = window(vec![Some(cap(1).reads(6, B))]);
        assert!(win.read_events(0).is_err());
    }
}
