//! Calvin's deterministic locking: lock sets, and the lock managers that grant them strictly in
//! sequence order (Thomson et al., SIGMOD 2012, section 3.2; the DOCC paper's section 2.1).
//!
//! **Lock sets** come from the program's declared keys (or its reconnaissance prediction,
//! `crate::recon`): one lock per key on dense and hash tables; on ordered tables one lock per
//! stripe of `2^lock_stripe_shift` consecutive keys hashed onto 256 stripes ([`LockSpace`], the
//! `PhantomStripes` scheme with Calvin's own width), so a scan locks the stripes covering its
//! range (shared) and an insert or delete locks its key's stripe (exclusive). A key that is
//! written (any access but a read) is locked exclusively, otherwise shared. Stripe granularity
//! keeps a NewOrder whose predicted order id is a few behind the real one inside its locked
//! stripes; the default width (`2^10` keys: 64 orders' order lines) is wider than the ordered
//! index's own phantom stripes (`2^6` keys: 4 orders' order lines), which a prediction made one
//! epoch early misses most of the time.
//!
//! **Lock managers** (`lock_managers = k`, each a thread): lock keys are partitioned over the
//! managers by hash (as the Aria repository's Calvin does for `k > 1`). A transaction is admitted
//! to every manager owning one of its locks, in sequence order (each manager's inbox is FIFO);
//! each manager queues its requests behind earlier ones (first come, first served per lock, which
//! is sequence order) and grants what is compatible. A transaction whose last lock is granted is
//! handed to the workers; a worker that finishes sends a release to the same managers, which
//! grant the next waiters. Deadlock cannot happen: every queue is in sequence order, so the
//! oldest unfinished transaction is at the head of all its queues.

use crate::calvin::CalvinTxn;
use crate::layout::InPlaceRecord;
use crate::recon::Prediction;
use foldhash::HashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use txlab_core::protocol::storage::{Index, PhantomStripes};
use txlab_core::{IndexKind, TableId};
use txlab_storage::Tables;

/// What a lock covers: a key, or a phantom stripe of an ordered table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct LockKey {
    pub table: u16,
    pub stripe: bool,
    pub id: u64,
}

/// Shared or exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Shared,
    Exclusive,
}

/// One lock of a transaction's set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LockReq {
    pub key: LockKey,
    pub mode: Mode,
}

/// The manager owning `key` among `managers`.
#[inline]
pub(crate) fn manager_of(key: &LockKey, managers: usize) -> usize {
    if managers == 1 {
        return 0;
    }
    let h = (key.id ^ (u64::from(key.table) << 48) ^ u64::from(key.stripe))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h >> 32) % managers as u64) as usize
}

/// Where locks live: per ordered table, stripes of `2^shift` consecutive keys (hashed onto
/// `PhantomStripes::STRIPES`), wider than the index's own phantom stripes by default so that a
/// prediction a few keys off (NewOrder's order id: 16 order-line keys per order) stays inside its
/// locked stripe; per key on dense and hash tables.
#[derive(Debug)]
pub(crate) struct LockSpace {
    tables: Box<[TableLocks]>,
}

#[derive(Debug)]
enum TableLocks {
    Keys,
    Dense { capacity: u64 },
    Stripes(PhantomStripes),
}

impl LockSpace {
    /// The lock space of `tables`, ordered tables striped by `2^shift` keys.
    pub fn new(tables: &Tables<InPlaceRecord>, shift: u32) -> Self {
        let tables = tables
            .iter()
            .map(|(_, index)| match index.kind() {
                IndexKind::Ordered => TableLocks::Stripes(PhantomStripes::new(shift)),
                IndexKind::Dense { capacity } => TableLocks::Dense { capacity },
                _ if index.phantom_stripes().is_some() => {
                    TableLocks::Stripes(PhantomStripes::new(shift))
                }
                _ => TableLocks::Keys,
            })
            .collect();
        Self { tables }
    }

    /// The lock covering a point access of `(table, key)`.
    #[inline]
    pub fn point(&self, table: TableId, key: u64) -> LockKey {
        match self.tables.get(usize::from(table.0)) {
            Some(TableLocks::Stripes(stripes)) => LockKey {
                table: table.0,
                stripe: true,
                id: u64::from(stripes.stripe_of(key)),
            },
            _ => LockKey {
                table: table.0,
                stripe: false,
                id: key,
            },
        }
    }

    /// Calls `f` with every lock a scan of `lo..=hi` of `table` needs (shared).
    pub fn scan(&self, table: TableId, lo: u64, hi: u64, mut f: impl FnMut(LockKey)) {
        match self.tables.get(usize::from(table.0)) {
            Some(TableLocks::Stripes(stripes)) => stripes.for_range(lo, hi, |s| {
                f(LockKey {
                    table: table.0,
                    stripe: true,
                    id: u64::from(s),
                })
            }),
            Some(TableLocks::Dense { capacity }) if lo < *capacity => {
                for key in lo..=hi.min(capacity - 1) {
                    f(LockKey {
                        table: table.0,
                        stripe: false,
                        id: key,
                    });
                }
            }
            _ => {}
        }
    }

    /// The lock set of `prediction` (module docs), sorted by manager then key, one request per
    /// lock (exclusive where any access writes).
    pub fn lock_set(&self, prediction: &Prediction, managers: usize, out: &mut Vec<LockReq>) {
        out.clear();
        for &(table, key, access) in &prediction.accesses.accesses {
            let mode = if access.writes() {
                Mode::Exclusive
            } else {
                Mode::Shared
            };
            out.push(LockReq {
                key: self.point(table, key),
                mode,
            });
        }
        for s in &prediction.scans {
            self.scan(s.table, s.lo, s.hi, |key| {
                out.push(LockReq {
                    key,
                    mode: Mode::Shared,
                })
            });
        }
        out.sort_unstable_by_key(|r| (manager_of(&r.key, managers), r.key));
        out.dedup_by(|later, kept| {
            if later.key == kept.key {
                if later.mode == Mode::Exclusive {
                    kept.mode = Mode::Exclusive;
                }
                true
            } else {
                false
            }
        });
    }
}

/// Whether `set` (sorted by [`lock_set`]) holds `key` in a mode that allows `mode`.
pub(crate) fn covers(set: &[LockReq], key: LockKey, mode: Mode, managers: usize) -> bool {
    let probe = (manager_of(&key, managers), key);
    match set.binary_search_by_key(&probe, |r| (manager_of(&r.key, managers), r.key)) {
        Ok(i) => mode == Mode::Shared || set[i].mode == Mode::Exclusive,
        Err(_) => false,
    }
}

/// One lock's state: holders and the queue behind them (sequence order).
struct Queue<J> {
    exclusive: u32,
    shared: u32,
    waiting: VecDeque<(Arc<CalvinTxn<J>>, Mode)>,
}

impl<J> Queue<J> {
    fn new() -> Self {
        Self {
            exclusive: 0,
            shared: 0,
            waiting: VecDeque::new(),
        }
    }

    #[inline]
    fn compatible(&self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => self.exclusive == 0,
            Mode::Exclusive => self.exclusive == 0 && self.shared == 0,
        }
    }

    #[inline]
    fn hold(&mut self, mode: Mode) {
        match mode {
            Mode::Shared => self.shared += 1,
            Mode::Exclusive => self.exclusive += 1,
        }
    }

    #[inline]
    fn release(&mut self, mode: Mode) {
        match mode {
            Mode::Shared => self.shared -= 1,
            Mode::Exclusive => self.exclusive -= 1,
        }
    }

    fn is_free(&self) -> bool {
        self.exclusive == 0 && self.shared == 0 && self.waiting.is_empty()
    }
}

/// What a lock manager is told.
pub(crate) enum Msg<J> {
    /// Queue the transaction's locks owned by this manager (in sequence order of arrival).
    Admit(Arc<CalvinTxn<J>>),
    /// The transaction finished: release its locks owned by this manager.
    Release(Arc<CalvinTxn<J>>),
    /// No more messages.
    Stop,
}

/// One lock manager's table (module docs). Single-threaded: only its thread touches it.
pub(crate) struct LockManager<J> {
    me: usize,
    locks: HashMap<LockKey, Queue<J>>,
    /// Test-only: grant one lock of every fourth transaction without queueing.
    grant_out_of_order: bool,
}

impl<J> LockManager<J> {
    pub fn new(me: usize, grant_out_of_order: bool) -> Self {
        Self {
            me,
            locks: HashMap::default(),
            grant_out_of_order,
        }
    }

    /// Handles one message; `ready` receives every transaction whose last lock was granted, and
    /// `busy_ns` the time spent. Returns `false` on `Stop`.
    pub fn handle(
        &mut self,
        msg: Msg<J>,
        ready: &mut impl FnMut(Arc<CalvinTxn<J>>),
        busy_ns: &AtomicU64,
    ) -> bool {
        let start = Instant::now();
        let go_on = match msg {
            Msg::Admit(txn) => {
                self.admit(txn, ready);
                true
            }
            Msg::Release(txn) => {
                self.release(&txn, ready);
                true
            }
            Msg::Stop => false,
        };
        busy_ns.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        go_on
    }

    fn admit(&mut self, txn: Arc<CalvinTxn<J>>, ready: &mut impl FnMut(Arc<CalvinTxn<J>>)) {
        let mut granted = 0;
        let cheat = self.grant_out_of_order && txn.rank.is_multiple_of(4);
        for (n, req) in txn.requests(self.me).iter().enumerate() {
            let q = self.locks.entry(req.key).or_insert_with(Queue::new);
            if (q.waiting.is_empty() && q.compatible(req.mode)) || (cheat && n == 0) {
                q.hold(req.mode);
                granted += 1;
            } else {
                q.waiting.push_back((Arc::clone(&txn), req.mode));
            }
        }
        if granted > 0 && txn.grant(granted) {
            ready(txn);
        }
    }

    fn release(&mut self, txn: &CalvinTxn<J>, ready: &mut impl FnMut(Arc<CalvinTxn<J>>)) {
        for req in txn.requests(self.me) {
            let Some(q) = self.locks.get_mut(&req.key) else {
                continue;
            };
            q.release(req.mode);
            while let Some((_, mode)) = q.waiting.front() {
                if !q.compatible(*mode) {
                    break;
                }
                let (next, mode) = q.waiting.pop_front().expect("front exists");
                q.hold(mode);
                if next.grant(1) {
                    ready(next);
                }
            }
            if q.is_free() {
                self.locks.remove(&req.key);
            }
        }
    }
}
