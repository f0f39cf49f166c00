//! The three ways a partition runs a program:
//!
//! - [`Confined`]: a single-partition transaction through the local engine, unchanged, with
//!   every access checked to stay on this partition; an access to another partition makes the
//!   attempt a no-op (it installs nothing) and names the partition, so the transaction is
//!   re-sequenced with it hinted. The decision is taken on the engine's validated (final)
//!   attempt, so it depends only on the state at the transaction's position.
//! - [`Split`]: the leader's `TxOps` for a multi-partition transaction at its position: local
//!   keys read from the committed state, remote keys from what the participants sent, writes
//!   buffered (and read back) by the program, then split by owner. A remote key nobody sent is
//!   a pending on-demand read; a key of a non-participant is a restart.
//! - [`Apply`]: installs one partition's share of a multi-partition transaction's writes with
//!   version `Seq`, as an ordinary transaction of the local engine at that position.

use super::local::{PartitionEngine, RangeRow};
use super::msg::{Read, Row, ScanRows, WriteOp};
use super::route::Routing;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};
use txlab_core::partition::Placement;
use txlab_core::protocol::history::{ReadEvent, ScanEvent};
use txlab_core::{Access, AccessSet, Error, Program, TableId, TxError, TxOps, TxResult};

const NONE: u32 = u32::MAX;
/// `Confined::outside`'s value for an access to a fenced key (`super::node`, "pipeline").
const FENCED: u32 = u32::MAX - 1;

/// Keys of this partition, as `(table, key)`.
pub(crate) type KeySet = HashSet<(u16, u64)>;

/// Whether `keys` holds `key` of `table`, or (for a range) a key of `table` in `lo..=hi`.
fn touches(keys: &KeySet, table: TableId, lo: u64, hi: u64) -> bool {
    if lo == hi {
        return keys.contains(&(table.0, lo));
    }
    keys.iter()
        .any(|&(t, k)| t == table.0 && (lo..=hi).contains(&k))
}

/// Where an access goes.
enum Loc {
    Local,
    Remote(u16),
    Outside(u16),
}

fn locate(
    routing: &Routing,
    me: u16,
    participants: &[u16],
    table: TableId,
    key: u64,
) -> TxResult<Loc> {
    Ok(match routing.placement(table) {
        Placement::Replicated | Placement::FollowsHome => Loc::Local,
        Placement::Partitioned => {
            let p = routing.owner(table, key)?;
            if p == me {
                Loc::Local
            } else if participants.binary_search(&p).is_ok() {
                Loc::Remote(p)
            } else {
                Loc::Outside(p)
            }
        }
    })
}

/// The range `lo..=hi` of `table` must lie in one partition: its owner (or local for a
/// replicated table).
fn locate_range(
    routing: &Routing,
    me: u16,
    participants: &[u16],
    table: TableId,
    lo: u64,
    hi: u64,
) -> TxResult<Loc> {
    let a = locate(routing, me, participants, table, lo)?;
    if routing.placement(table) == Placement::Partitioned
        && routing.owner(table, lo)? != routing.owner(table, hi)?
    {
        return Err(Error::invalid(
            "scan range",
            format!("table {} {lo:#x}..={hi:#x}", table.0),
            "a range inside one partition (a scan across partitions is not supported)",
        )
        .into());
    }
    Ok(a)
}

fn outside() -> TxError {
    TxError::user_abort("access to a partition that is not a participant: re-sequenced")
}

fn fenced() -> TxError {
    TxError::user_abort(
        "access to a key a pipelined multi-partition transaction earlier in the epoch holds: \
         re-sequenced",
    )
}

/// A single-partition program confined to partition `me` (module docs).
pub(crate) struct Confined<'a, P> {
    pub program: &'a P,
    routing: &'a Routing,
    me: u16,
    /// Keys this transaction may not touch at its position (a pipelined multi-partition
    /// transaction earlier in its epoch holds them; `super::node`): touching one makes the
    /// attempt a no-op, re-sequenced.
    fence: Option<&'a KeySet>,
    outside: AtomicU32,
}

impl<'a, P> Confined<'a, P> {
    pub fn new(program: &'a P, routing: &'a Routing, me: u16, fence: Option<&'a KeySet>) -> Self {
        Self {
            program,
            routing,
            me,
            fence: fence.filter(|f| !f.is_empty()),
            outside: AtomicU32::new(NONE),
        }
    }

    /// The partition the final attempt touched outside this one, if any.
    pub fn outside(&self) -> Option<u16> {
        match self.outside.load(Ordering::Relaxed) {
            NONE | FENCED => None,
            p => Some(p as u16),
        }
    }

    /// Whether the final attempt touched a fenced key.
    pub fn fenced(&self) -> bool {
        self.outside.load(Ordering::Relaxed) == FENCED
    }
}

struct ConfinedOps<'a, 't, T: ?Sized> {
    tx: &'t mut T,
    routing: &'a Routing,
    me: u16,
    fence: Option<&'a KeySet>,
    outside: &'a AtomicU32,
}

impl<T: TxOps + ?Sized> ConfinedOps<'_, '_, T> {
    fn check_fence(&self, table: TableId, lo: u64, hi: u64) -> TxResult<()> {
        if self.fence.is_some_and(|f| touches(f, table, lo, hi)) {
            self.outside.store(FENCED, Ordering::Relaxed);
            return Err(fenced());
        }
        Ok(())
    }

    fn check(&self, table: TableId, key: u64) -> TxResult<()> {
        match locate(self.routing, self.me, &[self.me], table, key)? {
            Loc::Local => self.check_fence(table, key, key),
            Loc::Remote(p) | Loc::Outside(p) => {
                self.outside.store(u32::from(p), Ordering::Relaxed);
                Err(outside())
            }
        }
    }
}

impl<T: TxOps + ?Sized> TxOps for ConfinedOps<'_, '_, T> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.check(table, key)?;
        self.tx.read(table, key)
    }

    fn read_for_update(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.check(table, key)?;
        self.tx.read_for_update(table, key)
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.check(table, key)?;
        self.tx.write(table, key, value)
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.check(table, key)?;
        self.tx.update(table, key, f)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.check(table, key)?;
        self.tx.insert(table, key, value)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.check(table, key)?;
        self.tx.delete(table, key)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        match locate_range(self.routing, self.me, &[self.me], table, lo, hi)? {
            Loc::Local => {
                self.check_fence(table, lo, hi)?;
                self.tx.scan(table, lo, hi, visit)
            }
            Loc::Remote(p) | Loc::Outside(p) => {
                self.outside.store(u32::from(p), Ordering::Relaxed);
                Err(outside())
            }
        }
    }
}

impl<P: Program> Program for Confined<'_, P> {
    type Output = P::Output;

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<P::Output> {
        self.outside.store(NONE, Ordering::Relaxed);
        let r = self.program.run(&mut ConfinedOps {
            tx,
            routing: self.routing,
            me: self.me,
            fence: self.fence,
            outside: &self.outside,
        });
        // A program that swallowed the error must still install nothing.
        if self.outside.load(Ordering::Relaxed) != NONE {
            return Err(outside());
        }
        r
    }

    fn declare(&self, out: &mut AccessSet) {
        self.program.declare(out)
    }

    fn kind(&self) -> &'static str {
        self.program.kind()
    }

    fn read_only(&self) -> bool {
        self.program.read_only()
    }
}

/// A remote row: `None` if absent, else its value and version.
type RemoteRow = Option<(Vec<u8>, u64)>;

/// What the leader knows of remote partitions at the transaction's position.
#[derive(Debug, Default)]
pub(crate) struct View {
    pub rows: HashMap<(u16, u64), RemoteRow>,
    pub scans: HashMap<(u16, u64, u64), Vec<RangeRow>>,
}

impl View {
    pub fn add_rows(&mut self, rows: Vec<Row>) {
        for r in rows {
            self.rows
                .insert((r.table, r.key), r.value.map(|v| (v, r.version)));
        }
    }

    pub fn add_scans(&mut self, scans: Vec<ScanRows>) {
        for s in scans {
            self.scans.insert((s.table, s.lo, s.hi), s.rows);
        }
    }
}

/// Why a [`Split`] run could not finish.
#[derive(Debug, Default)]
pub(crate) struct Blocked {
    /// On-demand reads, by owner.
    pub reads: BTreeMap<u16, Vec<Read>>,
    /// A partition that is not a participant.
    pub outside: Option<u16>,
    /// A local key a pipelined multi-partition transaction this node passed still holds (the
    /// run waits for its outcome: `super::node`).
    pub held: bool,
}

/// A buffered write: whether the key was present before the transaction (if it looked), and
/// its value now (`None`: deleted).
pub(crate) type Staged = (Option<bool>, Option<Vec<u8>>);

/// How a buffered write installs (`None`: an insert the transaction deleted again).
pub(crate) fn staged_op(table: u16, key: u64, staged: &Staged) -> Option<WriteOp> {
    Some(match staged {
        (Some(false), Some(v)) => WriteOp::Insert(table, key, v.clone()),
        (_, Some(v)) => WriteOp::Put(table, key, v.clone()),
        (Some(false), None) => return None,
        (_, None) => WriteOp::Delete(table, key),
    })
}

/// The leader's `TxOps` for a multi-partition transaction (module docs).
pub(crate) struct Split<'a, E> {
    pub engine: &'a E,
    pub routing: &'a Routing,
    pub me: u16,
    pub participants: &'a [u16],
    pub view: &'a View,
    /// Local keys held by pipelined multi-partition transactions whose writes are not
    /// installed here yet.
    pub held: Option<&'a KeySet>,
    pub blocked: Blocked,
    /// What the run read, at the transaction's position (for the history): every base value
    /// (local or remote) with its version, and the scans' ranges.
    pub reads: Vec<ReadEvent>,
    pub scans: Vec<ScanEvent>,
    writes: BTreeMap<(u16, u64), Staged>,
    buf: Vec<u8>,
}

impl<'a, E: PartitionEngine> Split<'a, E> {
    pub fn new(
        engine: &'a E,
        routing: &'a Routing,
        me: u16,
        participants: &'a [u16],
        view: &'a View,
    ) -> Self {
        Self {
            engine,
            routing,
            me,
            participants,
            view,
            held: None,
            blocked: Blocked::default(),
            reads: Vec::new(),
            scans: Vec::new(),
            writes: BTreeMap::new(),
            buf: Vec::new(),
        }
    }

    /// Whether the run needs more (reads or a restart).
    pub fn is_blocked(&self) -> bool {
        self.blocked.outside.is_some() || !self.blocked.reads.is_empty() || self.blocked.held
    }

    /// Stops the run at a held local key (`Blocked::held`).
    fn check_held(&mut self, table: TableId, lo: u64, hi: u64) -> TxResult<()> {
        if self.held.is_some_and(|h| touches(h, table, lo, hi)) {
            self.blocked.held = true;
            return Err(Self::pending());
        }
        Ok(())
    }

    fn pending() -> TxError {
        TxError::user_abort("waiting for a remote read")
    }

    /// Notes a read of `row` (absent rows at version 0, as the read sets carry them).
    fn note(&mut self, table: TableId, key: u64, row: Option<(Vec<u8>, u64)>) -> Option<Vec<u8>> {
        self.reads.push(ReadEvent {
            table,
            key,
            version: row.as_ref().map_or(0, |r| r.1),
            present: row.is_some(),
        });
        row.map(|r| r.0)
    }

    /// The value before this transaction's own writes.
    fn base(&mut self, table: TableId, key: u64) -> TxResult<Option<Vec<u8>>> {
        match locate(self.routing, self.me, self.participants, table, key)? {
            Loc::Local => {
                self.check_held(table, key, key)?;
                let row = self.engine.committed(table, key)?;
                Ok(self.note(table, key, row))
            }
            Loc::Remote(p) => match self.view.rows.get(&(table.0, key)) {
                Some(v) => {
                    let row = v.clone();
                    Ok(self.note(table, key, row))
                }
                None => {
                    let r = Read::Key {
                        table: table.0,
                        key,
                    };
                    let list = self.blocked.reads.entry(p).or_default();
                    if !list.contains(&r) {
                        list.push(r);
                    }
                    Err(Self::pending())
                }
            },
            Loc::Outside(p) => {
                self.blocked.outside = Some(p);
                Err(outside())
            }
        }
    }

    /// The value the program sees: its own write, else the base.
    fn current(&mut self, table: TableId, key: u64) -> TxResult<Option<Vec<u8>>> {
        if let Some((_, v)) = self.writes.get(&(table.0, key)) {
            return Ok(v.clone());
        }
        self.base(table, key)
    }

    fn stage(&mut self, table: TableId, key: u64, before: Option<bool>, now: Option<Vec<u8>>) {
        let e = self.writes.entry((table.0, key)).or_insert((before, None));
        e.1 = now;
    }

    fn check_value(&self, table: TableId, value: &[u8]) -> TxResult<()> {
        let vs = self.engine.schema().tables()[table.0 as usize].value_size;
        if value.len() != vs {
            return Err(Error::ValueSize {
                table: table.0,
                expected: vs,
                got: value.len(),
            }
            .into());
        }
        Ok(())
    }

    /// The buffered writes, by the node that installs them (`FollowsHome` rows at the leader).
    pub fn writes_by_node(&self) -> TxResult<BTreeMap<u16, Vec<WriteOp>>> {
        let mut out: BTreeMap<u16, Vec<WriteOp>> = BTreeMap::new();
        for (&(table, key), staged) in &self.writes {
            let t = TableId(table);
            let node = match self.routing.placement(t) {
                Placement::Partitioned => self.routing.owner(t, key)?,
                Placement::FollowsHome => self.me,
                Placement::Replicated => {
                    return Err(Error::invalid(
                        "write",
                        format!("table {table} key {key:#x}"),
                        "replicated tables are read-only in a cluster",
                    )
                    .into());
                }
            };
            if let Some(op) = staged_op(table, key, staged) {
                out.entry(node).or_default().push(op);
            }
        }
        Ok(out)
    }
}

impl<E: PartitionEngine> TxOps for Split<'_, E> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        match self.current(table, key)? {
            Some(v) => {
                self.buf = v;
                Ok(Some(&self.buf))
            }
            None => Ok(None),
        }
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.check_value(table, value)?;
        match locate(self.routing, self.me, self.participants, table, key)? {
            Loc::Outside(p) => {
                self.blocked.outside = Some(p);
                return Err(outside());
            }
            Loc::Local => self.check_held(table, key, key)?,
            Loc::Remote(_) => {}
        }
        self.stage(table, key, None, Some(value.to_vec()));
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        let Some(mut v) = self.current(table, key)? else {
            return Ok(false);
        };
        f(&mut v);
        self.stage(table, key, Some(true), Some(v));
        Ok(true)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.check_value(table, value)?;
        let follows = self.routing.placement(table) == Placement::FollowsHome;
        if !follows && self.current(table, key)?.is_some() {
            return Ok(false);
        }
        self.stage(table, key, Some(false), Some(value.to_vec()));
        Ok(true)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        if self.current(table, key)?.is_none() {
            return Ok(false);
        }
        self.stage(table, key, Some(true), None);
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        // (key, value, version read: none for the program's own write)
        let mut rows: Vec<(u64, Option<Vec<u8>>, Option<u64>)> =
            match locate_range(self.routing, self.me, self.participants, table, lo, hi)? {
                Loc::Local => {
                    self.check_held(table, lo, hi)?;
                    let mut out = Vec::new();
                    self.engine.committed_range(table, lo, hi, &mut out)?;
                    out.into_iter()
                        .map(|(k, v, n)| (k, Some(v), Some(n)))
                        .collect()
                }
                Loc::Remote(p) => match self.view.scans.get(&(table.0, lo, hi)) {
                    Some(r) => r
                        .iter()
                        .map(|(k, v, n)| (*k, Some(v.clone()), Some(*n)))
                        .collect(),
                    None => {
                        let r = Read::Scan {
                            table: table.0,
                            lo,
                            hi,
                        };
                        let list = self.blocked.reads.entry(p).or_default();
                        if !list.contains(&r) {
                            list.push(r);
                        }
                        return Err(Self::pending());
                    }
                },
                Loc::Outside(p) => {
                    self.blocked.outside = Some(p);
                    return Err(outside());
                }
            };
        // The program's own writes in the range, merged in key order.
        for (&(t, k), (_, v)) in self.writes.range((table.0, lo)..=(table.0, hi)) {
            debug_assert_eq!(t, table.0);
            match rows.binary_search_by_key(&k, |r| r.0) {
                Ok(i) => (rows[i].1, rows[i].2) = (v.clone(), None),
                Err(i) => rows.insert(i, (k, v.clone(), None)),
            }
        }
        let mut last = hi;
        for (k, v, version) in rows {
            if v.is_some()
                && let Some(version) = version
            {
                self.reads.push(ReadEvent {
                    table,
                    key: k,
                    version,
                    present: true,
                });
            }
            if let Some(v) = v
                && !visit(k, &v)
            {
                last = k;
                break;
            }
        }
        self.scans.push(ScanEvent {
            table,
            lo,
            hi: last,
        });
        Ok(())
    }
}

/// Installs one partition's writes of a multi-partition transaction (module docs).
pub(crate) struct Apply<'a> {
    pub writes: &'a [WriteOp],
    pub kind: &'static str,
}

impl Program for Apply<'_> {
    type Output = ();

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<()> {
        for w in self.writes {
            match w {
                WriteOp::Put(t, k, v) => tx.write(TableId(*t), *k, v)?,
                WriteOp::Insert(t, k, v) => {
                    if !tx.insert(TableId(*t), *k, v)? {
                        return Err(Error::Internal(format!(
                            "cluster: {} inserted table {t} key {k:#x}, present at this partition",
                            self.kind
                        ))
                        .into());
                    }
                }
                WriteOp::Delete(t, k) => {
                    tx.delete(TableId(*t), *k)?;
                }
            }
        }
        Ok(())
    }

    fn declare(&self, out: &mut AccessSet) {
        for w in self.writes {
            let (t, k, a) = match w {
                WriteOp::Put(t, k, _) => (t, k, Access::BlindWrite),
                WriteOp::Insert(t, k, _) => (t, k, Access::Insert),
                WriteOp::Delete(t, k) => (t, k, Access::Delete),
            };
            out.push(TableId(*t), *k, a);
        }
    }

    fn kind(&self) -> &'static str {
        self.kind
    }
}
