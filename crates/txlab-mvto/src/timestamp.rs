//! Timestamps: Cicada's per-thread clocks ("multi-clock"), epoch-prefixed for group commit.
//!
//! ```text
//!  63              40 39                 16 15            0
//! +------------------+---------------------+---------------+
//! |  epoch (24)      |  counter (24)       |  worker (16)  |
//! +------------------+---------------------+---------------+
//!  \___________ clock (48) _______________/
//! ```
//!
//! - **Per-worker clocks** (Cicada, Lim et al. SIGMOD 2017, §3.1): a worker's timestamp is its
//!   48-bit *clock* followed by its worker id. No shared counter is touched on the begin path.
//! - **Unique**: worker ids are unique among an engine's workers (never reused), and a worker's
//!   clock strictly increases from one transaction to the next, so no two transactions of one
//!   engine share a timestamp. Every version of a key therefore has its own `wts`.
//! - **Monotone per worker**: the clock of the next transaction is
//!   `max(clock + 1, epoch << 24, slot floor)`, always greater than the previous one.
//! - **Loose synchronization**: a worker advances its clock to at least the clock of every
//!   timestamp it observes (versions it reads, read timestamps that made it abort), and every
//!   `clock_sync_interval` transactions reads one other worker's clock and advances to at least it
//!   (Cicada's one-sided synchronization). Recomputing the GC horizon also raises lagging idle
//!   workers' floors (below).
//! - **Epoch prefix** (the NWR paper §6.1.1 extends Cicada's timestamps with epochs for group
//!   commit): the clock of a transaction is at least `epoch << 24` where `epoch` is the global
//!   epoch at begin. A transaction acknowledged once the epoch in its timestamp is stable precedes
//!   (in timestamp order, hence in the serial order) every transaction that begins afterwards,
//!   because that one begins in a later epoch. So `AckMode::EpochStable` gives strict
//!   serializability; `AckMode::AtCommit` gives serializability only (Cicada's clocks alone give
//!   causal consistency). The counter carrying into the epoch field (2^24 transactions of one
//!   worker in one epoch; 2^23 with the NWR reserve below) keeps timestamps monotone; MVTO+NWR
//!   never carries: a worker whose clock used up its epoch waits for the next one
//!   (`LocalClock::begin`, `crate::head`); `CommitInfo.epoch` is the timestamp's epoch
//!   field, so acknowledgement still waits long enough. Epochs beyond 2^24 (7.7 days at 40 ms)
//!   are clamped, which keeps serializability but loses the real-time guarantee, until a
//!   clamped clock runs out of counter values: then the clock leaves its 48 bits and timestamps
//!   wrap (a limit of this layout, `docs/protocols/mvto.md`, "Known limitations").
//! - **NWR reserve**: MVTO+NWR (`crate::nwr`) passes [`NWR_RESERVED`] to `LocalClock::begin`,
//!   which raises a clock whose counter field is below `2^23` to counter `2^23` of the same
//!   epoch, so no timestamp of epoch `e` falls below [`epoch_start`]`(e)` and the tags between
//!   `e << 40` and it stay free for omitted writes. Plain MVTO passes 0 (no change).
//!
//! **Slots and the GC horizon.** Every worker publishes one word: while a transaction runs, its
//! clock with the `ACTIVE` bit; while idle, a *floor* below which its next clock cannot fall.
//! Each slot's value only grows (begin moves floor → active clock ≥ floor by CAS; end stores
//! `clock + 1`; the horizon computation raises idle floors by CAS). Hence the minimum over all
//! slots, read one slot at a time, is a lower bound on the timestamp of every transaction that is
//! active at or after the read: the *horizon*, which only grows. New workers start at the current
//! horizon (registration and horizon computation serialize on the registry lock). The garbage
//! collector (`crate::gc`) may drop every version that no transaction with a timestamp at or
//! above the horizon can see.

use crossbeam_utils::CachePadded;
use txlab_core::protocol::sync::{Arc, AtomicU64, Ordering, RwLock, fence};

/// Bits of the worker id.
pub const WORKER_BITS: u32 = 16;
/// Most workers one engine may create.
pub const MAX_WORKERS: u64 = 1 << WORKER_BITS;
/// Bits of the per-epoch counter.
pub const COUNTER_BITS: u32 = 24;
/// Position of the epoch field in a timestamp.
pub const EPOCH_SHIFT: u32 = WORKER_BITS + COUNTER_BITS;
/// Largest epoch the timestamp can carry (later epochs are clamped to it).
pub const MAX_EPOCH: u64 = (1 << (64 - EPOCH_SHIFT)) - 1;

const WORKER_MASK: u64 = MAX_WORKERS - 1;
const COUNTER_MASK: u64 = (1 << COUNTER_BITS) - 1;

/// MVTO+NWR keeps the lower half of every epoch's counter range free: its clocks start each
/// epoch at counter `2^23`, so the timestamps of epoch `e` are at least [`epoch_start`]`(e)` and
/// the tags `e << 40 | 1 .. epoch_start(e)` are free for the recorded order of omitted writes
/// (`crate::nwr`). Plain MVTO reserves nothing.
pub const NWR_RESERVED: u64 = 1 << (COUNTER_BITS - 1);

/// The smallest timestamp an MVTO+NWR transaction of `epoch` can have (module docs of
/// `crate::nwr`: versions with a smaller `wts` are *pre-epoch* for it).
#[inline]
pub const fn epoch_start(epoch: u64) -> u64 {
    make(epoch_floor(epoch) | NWR_RESERVED, 0)
}
const ACTIVE: u64 = 1;

/// The timestamp of clock `clock` on worker `worker`.
#[inline]
pub const fn make(clock: u64, worker: u32) -> u64 {
    (clock << WORKER_BITS) | worker as u64
}

/// The clock part of a timestamp.
#[inline]
pub const fn clock_of(ts: u64) -> u64 {
    ts >> WORKER_BITS
}

/// The epoch field of a timestamp (what `CommitInfo::epoch` reports).
#[inline]
pub const fn epoch_of(ts: u64) -> u64 {
    ts >> EPOCH_SHIFT
}

/// The smallest clock a transaction beginning in `epoch` may use.
#[inline]
pub const fn epoch_floor(epoch: u64) -> u64 {
    let e = if epoch > MAX_EPOCH { MAX_EPOCH } else { epoch };
    e << COUNTER_BITS
}

#[inline]
const fn floor_of(word: u64) -> u64 {
    word & !WORKER_MASK
}

/// The registry of worker clock slots and the GC horizon (module docs).
#[derive(Debug)]
pub(crate) struct Clocks {
    slots: RwLock<Vec<Arc<CachePadded<AtomicU64>>>>,
    horizon: CachePadded<AtomicU64>,
}

impl Clocks {
    pub fn new() -> Self {
        Self {
            slots: RwLock::new(Vec::new()),
            horizon: CachePadded::new(AtomicU64::new(0)),
        }
    }

    /// The current horizon: no active or future transaction has a smaller timestamp.
    #[inline]
    pub fn horizon(&self) -> u64 {
        self.horizon.load(Ordering::Acquire)
    }

    /// Registers worker `id`, starting at the current horizon.
    pub fn register(&self, id: u32) -> LocalClock {
        let mut slots = self.slots.write().unwrap_or_else(|e| e.into_inner());
        let start = clock_of(self.horizon.load(Ordering::Acquire));
        let slot = Arc::new(CachePadded::new(AtomicU64::new(start << WORKER_BITS)));
        slots.push(Arc::clone(&slot));
        LocalClock {
            slot,
            clock: start,
            id,
            since_sync: 0,
            sync_cursor: id as usize,
        }
    }

    fn deregister(&self, slot: &Arc<CachePadded<AtomicU64>>) {
        let mut slots = self.slots.write().unwrap_or_else(|e| e.into_inner());
        slots.retain(|s| !Arc::ptr_eq(s, slot));
    }

    /// Recomputes the horizon (module docs) and returns it.
    pub fn refresh_horizon(&self) -> u64 {
        let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
        // Pass 1: the oldest active transaction, or the newest floor if none is active.
        let mut oldest_active = u64::MAX;
        let mut newest = 0;
        for s in slots.iter() {
            let w = s.load(Ordering::SeqCst);
            if w & ACTIVE != 0 {
                oldest_active = oldest_active.min(floor_of(w));
            }
            newest = newest.max(floor_of(w));
        }
        let target = if oldest_active == u64::MAX {
            newest
        } else {
            oldest_active
        };
        // Pass 2: raise idle floors lagging behind the target, so an idle worker does not hold
        // garbage collection back (and its clock catches up: one-sided synchronization).
        for s in slots.iter() {
            let mut w = s.load(Ordering::SeqCst);
            while w & ACTIVE == 0 && floor_of(w) < target {
                match s.compare_exchange(w, target, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => break,
                    Err(now) => w = now,
                }
            }
        }
        // Pass 3: the minimum of the (monotone) slots is a lower bound on every current and
        // future timestamp.
        let min = slots
            .iter()
            .map(|s| floor_of(s.load(Ordering::SeqCst)))
            .min()
            .unwrap_or(0);
        self.horizon.fetch_max(min, Ordering::AcqRel);
        self.horizon.load(Ordering::Acquire)
    }

    /// Records, in `into`, every slot whose transaction is active now, with its word, after a
    /// `SeqCst` fence (the version pool's grace period, `crate::pool`). `into` keeps its capacity,
    /// so a warmed-up worker's snapshots do not allocate.
    pub fn snapshot(&self, into: &mut Vec<(Slot, u64)>) {
        into.clear();
        fence(Ordering::SeqCst);
        let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
        for s in slots.iter() {
            let w = s.load(Ordering::SeqCst);
            if w & ACTIVE != 0 {
                into.push((Arc::clone(s), w));
            }
        }
    }

    /// An active slot for a walk of version lists outside any transaction (diagnostics): while
    /// the returned value lives, snapshots see it active (`crate::pool`).
    pub fn hold(&self) -> Held<'_> {
        let mut slots = self.slots.write().unwrap_or_else(|e| e.into_inner());
        let floor = floor_of(self.horizon.load(Ordering::Acquire));
        let slot = Arc::new(CachePadded::new(AtomicU64::new(floor | ACTIVE)));
        slots.push(Arc::clone(&slot));
        Held { clocks: self, slot }
    }

    /// Every `interval`-th call of a worker: its clock catches up with another worker's floor.
    fn sync_one(&self, local: &mut LocalClock) {
        let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
        if slots.is_empty() {
            return;
        }
        local.sync_cursor = (local.sync_cursor + 1) % slots.len();
        let other = clock_of(floor_of(slots[local.sync_cursor].load(Ordering::Acquire)));
        local.clock = local.clock.max(other.saturating_sub(1));
    }
}

/// A worker's published slot.
pub(crate) type Slot = Arc<CachePadded<AtomicU64>>;

/// Whether every transaction recorded in `snap` ([`Clocks::snapshot`]) has ended: its slot's
/// word has changed (a slot's word never repeats: an active word carries a clock the next
/// transaction exceeds). The `Acquire` load of a changed word reads that transaction's end (a
/// `SeqCst` store) or a later write, so everything it did happens-before what follows.
pub(crate) fn passed(snap: &[(Slot, u64)]) -> bool {
    snap.iter().all(|(s, w)| s.load(Ordering::Acquire) != *w)
}

/// An active slot held for a diagnostic walk ([`Clocks::hold`]); dropping it removes the slot.
#[derive(Debug)]
pub(crate) struct Held<'a> {
    clocks: &'a Clocks,
    slot: Slot,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.clocks.deregister(&self.slot);
    }
}

/// One worker's clock (module docs). Dropping it does not deregister; call
/// [`LocalClock::deregister`] (the worker does on drop).
#[derive(Debug)]
pub(crate) struct LocalClock {
    slot: Arc<CachePadded<AtomicU64>>,
    /// The clock of the last transaction begun (or the starting floor).
    clock: u64,
    id: u32,
    since_sync: u32,
    sync_cursor: usize,
}

impl LocalClock {
    /// Starts a transaction in `epoch`: picks its timestamp and publishes it as active.
    /// `reserved` (0 for plain MVTO) is the number of counter values kept free at the start of
    /// every epoch: the clock's counter field is raised to at least it ([`NWR_RESERVED`]).
    ///
    /// With `reserved != 0` (MVTO+NWR) the timestamp's epoch field must be `epoch` itself: `None`
    /// when the worker's clock has used up `epoch`'s counter range (about 2^23 transactions of
    /// the fastest worker in one epoch), so that the next clock would carry into a later epoch;
    /// nothing is published then, and the caller waits for the next epoch (`crate::txn`). The
    /// read-and-omit marks' encoding needs every timestamp's epoch to be at most the global epoch
    /// (`crate::head`). At clamped epochs ([`MAX_EPOCH`] and beyond) it runs on as plain MVTO
    /// does, and a clock that runs out of counter values there wraps (module docs).
    #[inline]
    pub fn begin(
        &mut self,
        clocks: &Clocks,
        epoch: u64,
        sync_interval: u32,
        reserved: u64,
    ) -> Option<u64> {
        self.since_sync += 1;
        if self.since_sync >= sync_interval {
            self.since_sync = 0;
            clocks.sync_one(self);
        }
        let mut w = self.slot.load(Ordering::SeqCst);
        loop {
            debug_assert_eq!(w & ACTIVE, 0, "a worker runs one transaction at a time");
            let mut c = (self.clock + 1)
                .max(clock_of(floor_of(w)))
                .max(epoch_floor(epoch));
            if reserved != 0 && c & COUNTER_MASK < reserved {
                c = (c & !COUNTER_MASK) | reserved;
            }
            if reserved != 0 && epoch < MAX_EPOCH && c >> COUNTER_BITS > epoch {
                return None;
            }
            match self.slot.compare_exchange(
                w,
                (c << WORKER_BITS) | ACTIVE,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => {
                    self.clock = c;
                    return Some(make(c, self.id));
                }
                Err(now) => w = now,
            }
        }
    }

    /// Tests: puts the clock at the last counter value of `epoch`, as if the worker had used up
    /// the epoch's range.
    #[cfg(test)]
    pub(crate) fn exhaust(&mut self, epoch: u64) {
        self.clock = epoch_floor(epoch) | COUNTER_MASK;
    }

    /// Advances the clock past an observed timestamp (Cicada's loose synchronization). Takes
    /// effect from the next transaction.
    #[inline]
    pub fn observe(&mut self, ts: u64) {
        self.clock = self.clock.max(clock_of(ts));
    }

    /// Ends the transaction: publishes the floor of the next one. `Release` is enough: whoever
    /// acts on the end (a horizon computation, a pool snapshot found passed, `crate::pool`) reads
    /// the word with an `Acquire` or `SeqCst` load and so sees everything the transaction did;
    /// no one needs the end ordered before a later load of this worker (a `SeqCst` store is an
    /// `xchg`, a full barrier, on x86). Only idle words are raised by others (by CAS), so the
    /// store overwrites nothing but this worker's own active word.
    #[inline]
    pub fn end(&mut self) {
        self.slot
            .store((self.clock + 1) << WORKER_BITS, Ordering::Release);
    }

    /// Removes the slot from the registry.
    pub fn deregister(&self, clocks: &Clocks) {
        clocks.deregister(&self.slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MVTO+NWR clock that used up its epoch's counter range refuses to begin (and publishes
    /// nothing) instead of carrying into the next epoch; plain MVTO carries. Once the worker
    /// enters the next epoch it begins there.
    #[test]
    fn an_nwr_clock_never_carries_into_a_later_epoch() {
        let clocks = Clocks::new();
        let mut w = clocks.register(0);
        w.clock = epoch_floor(3) | COUNTER_MASK;
        let before = w.slot.load(Ordering::SeqCst);
        assert_eq!(w.begin(&clocks, 3, 1_000, NWR_RESERVED), None);
        assert_eq!(w.slot.load(Ordering::SeqCst), before, "nothing published");
        let t = w
            .begin(&clocks, 4, 1_000, NWR_RESERVED)
            .expect("the next epoch has room");
        assert_eq!(epoch_of(t), 4);
        assert!(t >= epoch_start(4));
        w.end();

        // The exhausted worker's floor (the next epoch's first clock) spreads to an idle worker
        // through the horizon computation: that one refuses epoch 3 too.
        let mut a = clocks.register(2);
        let mut b = clocks.register(3);
        a.clock = epoch_floor(3) | COUNTER_MASK;
        assert_eq!(a.begin(&clocks, 3, 1_000, NWR_RESERVED), None);
        a.end();
        clocks.refresh_horizon();
        assert_eq!(b.begin(&clocks, 3, 1_000, NWR_RESERVED), None);
        let t = b
            .begin(&clocks, 4, 1_000, NWR_RESERVED)
            .expect("room in epoch 4");
        assert_eq!(epoch_of(t), 4);
        b.end();

        let mut p = clocks.register(1);
        p.clock = epoch_floor(3) | COUNTER_MASK;
        let t = p
            .begin(&clocks, 3, 1_000, 0)
            .expect("plain MVTO always begins");
        assert_eq!(epoch_of(t), 4, "plain MVTO carries");
        p.end();
    }

    #[test]
    fn timestamps_are_unique_and_monotone_per_worker() {
        let clocks = Clocks::new();
        let mut a = clocks.register(0);
        let mut b = clocks.register(1);
        let mut seen = std::collections::HashSet::new();
        let (mut last_a, mut last_b) = (0, 0);
        for i in 0..100 {
            let ta = a
                .begin(&clocks, 1, 8, 0)
                .expect("plain clocks always begin");
            assert!(ta > last_a);
            last_a = ta;
            a.end();
            if i % 3 == 0 {
                let tb = b
                    .begin(&clocks, 1, 8, 0)
                    .expect("plain clocks always begin");
                assert!(tb > last_b);
                last_b = tb;
                b.observe(ta);
                b.end();
                assert!(seen.insert(tb));
            }
            assert!(seen.insert(ta));
            assert_eq!(ta & WORKER_MASK, 0);
        }
        // b observed a's timestamps: its next one is above a's last.
        assert!(
            b.begin(&clocks, 1, 1000, 0)
                .expect("plain clocks always begin")
                > last_a
        );
        b.end();
    }

    #[test]
    fn the_epoch_prefix_orders_transactions_of_later_epochs_after() {
        let clocks = Clocks::new();
        let mut a = clocks.register(0);
        let t1 = a
            .begin(&clocks, 1, 8, 0)
            .expect("plain clocks always begin");
        a.end();
        assert_eq!(epoch_of(t1), 1);
        let t2 = a
            .begin(&clocks, 3, 8, 0)
            .expect("plain clocks always begin");
        a.end();
        assert_eq!(epoch_of(t2), 3);
        assert!(t2 > t1);
    }

    #[test]
    fn the_nwr_reserve_keeps_the_start_of_each_epoch_free() {
        let clocks = Clocks::new();
        let mut a = clocks.register(7);
        let t1 = a
            .begin(&clocks, 1, 1000, NWR_RESERVED)
            .expect("room in the epoch");
        a.end();
        assert_eq!(t1, epoch_start(1) | 7);
        let t2 = a
            .begin(&clocks, 1, 1000, NWR_RESERVED)
            .expect("room in the epoch");
        a.end();
        assert_eq!(
            t2,
            t1 + (1 << WORKER_BITS),
            "the reserve does not slow the clock down"
        );
        let t3 = a
            .begin(&clocks, 2, 1000, NWR_RESERVED)
            .expect("room in the epoch");
        a.end();
        assert_eq!((epoch_of(t3), t3), (2, epoch_start(2) | 7));
        // A counter that would carry into the next epoch refuses instead
        // (`an_nwr_clock_never_carries_into_a_later_epoch`); in that epoch it lands above its
        // reserved range.
        a.clock = epoch_floor(3) - 1;
        assert_eq!(a.begin(&clocks, 2, 1000, NWR_RESERVED), None);
        let t4 = a
            .begin(&clocks, 3, 1000, NWR_RESERVED)
            .expect("room in the epoch");
        a.end();
        assert_eq!(t4, epoch_start(3) | 7);
        a.deregister(&clocks);
    }

    #[test]
    fn the_horizon_waits_for_the_oldest_active_transaction_but_not_for_idle_workers() {
        let clocks = Clocks::new();
        let mut a = clocks.register(0);
        let mut idle = clocks.register(1);
        let mut busy = clocks.register(2);
        let old = busy
            .begin(&clocks, 1, 1000, 0)
            .expect("plain clocks always begin");
        for _ in 0..10 {
            a.begin(&clocks, 1, 1000, 0)
                .expect("plain clocks always begin");
            a.end();
        }
        let h = clocks.refresh_horizon();
        assert!(
            h <= old,
            "horizon {h:#x} above the active timestamp {old:#x}"
        );
        assert_eq!(clock_of(h), clock_of(old));
        busy.end();
        let h2 = clocks.refresh_horizon();
        assert!(h2 > old, "the idle workers were raised: {h2:#x}");
        // The idle worker's next timestamp respects the horizon.
        let t = idle
            .begin(&clocks, 1, 1000, 0)
            .expect("plain clocks always begin");
        assert!(t >= h2);
        idle.end();
        // A new worker starts at the horizon.
        let mut late = clocks.register(3);
        assert!(
            late.begin(&clocks, 1, 1000, 0)
                .expect("plain clocks always begin")
                >= h2
        );
        late.end();
        for c in [&a, &idle, &busy, &late] {
            c.deregister(&clocks);
        }
    }
}
