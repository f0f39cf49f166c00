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
//! to the ordinary path and runs again at its position. A key that a window transaction
//! inserted or deleted is not passed on to a later one (that one is stopped and runs again).
//!
//! The window runs on ranks of its own (never a transaction's), so the engine's records of it
//! are rollbacks no real transaction merges with, and the chain of DOCC's waiting phase is
//! rewound after it (`super::local::window_done`).

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
    /// It touched a key a window transaction inserted or deleted: it runs again.
    poisoned: bool,
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

    /// Whether its reads and scans are those of the serial order after `t_writes` (the
    /// multi-partition transaction's writes here) and `written` (the valid window writes before
    /// it: key to writer and attempt).
    fn consistent(
        &self,
        t_writes: &BTreeSet<(u16, u64)>,
        written: &BTreeMap<(u16, u64), (usize, u32)>,
    ) -> bool {
        let reads = self.reads.iter().all(|&(t, k, src)| {
            let want = written
                .get(&(t, k))
                .map_or(Source::Base, |&(j, a)| Source::Window(j, a));
            src == want && (want != Source::Base || !t_writes.contains(&(t, k)))
        });
        reads
            && self.scans.iter().all(|s| {
                let range = (s.table, s.lo)..=(s.table, s.hi);
                t_writes.range(range.clone()).next().is_none()
                    && written
                        .range(range)
                        .map(|(&(_, k), &(j, a))| (k, j, a))
                        .eq(s.merged.iter().copied())
            })
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
        TxError::user_abort("overlap: a key a window transaction inserted or deleted")
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
            if mode.validates() && !cap.consistent(&t_writes, &written) {
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
    /// window writer's `Seq`, or the committed version, unchanged since it read it), and its
    /// scans. Run before the valid prefix installs anything.
    pub fn read_events<E: PartitionEngine>(
        &self,
        engine: &E,
        i: usize,
    ) -> Result<(Vec<ReadEvent>, Vec<ScanEvent>), Error> {
        let Some(cap) = &self.entries[i].capture else {
            return Ok((Vec::new(), Vec::new()));
        };
        let mut reads = Vec::with_capacity(cap.reads.len());
        for &(t, k, src) in &cap.reads {
            let (version, present) = self.version(engine, t, k, src)?;
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
                    let (version, present) = self.version(engine, s.table, k, src)?;
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

    fn version<E: PartitionEngine>(
        &self,
        engine: &E,
        t: u16,
        k: u64,
        src: Source,
    ) -> Result<(u64, bool), Error> {
        Ok(match src {
            Source::Base => match engine.committed(TableId(t), k)? {
                Some((_, v)) => (v, true),
                None => (0, false),
            },
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
