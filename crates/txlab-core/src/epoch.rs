//! The epoch manager: a global epoch, per-worker local epochs, and the stable epoch.
//!
//! Silo (Tu et al., SOSP 2013, section 4.2) divides time into epochs: a global epoch `E` advanced
//! periodically (every 40 ms by default), and a local epoch `e_w` per worker, refreshed when the
//! worker starts a transaction. Commit protocols read `E` at their serialization point and put it
//! in the transaction's id; group commit acknowledges a transaction once its epoch is *stable*.
//!
//! Invariants:
//!
//! - `E` only grows. It advances from `E` to `E + 1` only when every *active* worker has
//!   `e_w >= E`, so `E - e_w <= 1` for every active worker (Silo's rule; a worker stuck in a long
//!   transaction holds the epoch back instead of falling arbitrarily far behind).
//! - A worker that is not inside a transaction is *quiescent* and does not hold `E` back.
//! - A transaction that began with local epoch `e_w` commits with an epoch `>= e_w`. Hence once
//!   `E > e` and every active worker has `e_w > e`, no transaction can still commit in epoch `e`:
//!   the stable epoch is `min(E, min active e_w) - 1`.
//!
//! Orderings: this is the store→load (Dekker) handshake between a worker entering an epoch and the
//! advancer (or a caller of `stable`) deciding from the workers' local epochs. It is built from
//! read-modify-writes on the worker's slot instead of fences: a worker publishes `e_w` with a
//! swap (`AcqRel`) and then re-reads `E` (`Acquire`) until the two agree; the advancer (and
//! `stable`) reads `E`, then reads every `e_w` with a read-modify-write that stores the value back
//! (`fetch_add(0)`, `AcqRel`). A slot is written only by these read-modify-writes, by the
//! worker's swaps and by its `exit` store; a read-modify-write reads the last value before it in
//! the slot's modification order. Take a worker's swap of `e` and the advances (or `stable`
//! calls) whose read of the slot comes before it in that order:
//!
//! - those that read it after the worker's last `exit` (or its registration): the swap reads the value the last of
//!   them stored, so its `Release` synchronizes with the swap's `Acquire`; its load of `E`, and
//!   every store of `E` before it (`E` is stored under the slots' lock, after the reads), happen
//!   before the worker's re-read, which sees that `E` or a later one. So the worker enters at
//!   least at the `E` each of them read, and each stored at most one more: `E - e_w <= 1`, and a
//!   `stable` call that missed the worker returned less than the epoch it commits in.
//! - those that read it before that `exit`: they read the worker's previous local epoch `e'`,
//!   and none advanced past `e' + 1`; the worker read `e'` and later `e` from `E` itself, so
//!   `e' <= e` (coherence) and again `E - e_w <= 1`.
//! - those whose read comes after the swap read `e` (or a later value of the slot) and hold `E`
//!   at `e + 1`.
//!
//! Loom models acquire/release read-modify-writes exactly (it treats `SeqCst` accesses as
//! `AcqRel`, which is why none of this rests on `SeqCst`), and its model test below checks
//! `E - e_w <= 1` against two concurrent advances.
//! On x86 the swap is one `xchg` (about 2 ns on the project's EPYC VM, where the `mfence` of a
//! store followed by `fence(SeqCst)` costs about 20 ns); the advancer's read-modify-writes touch
//! each worker's slot line once per advance or `stable` call, off the transaction path.
//!
//! The same manager serves Silo, the NWR protocols' epoch check and group commit, and TicToc/MVTO
//! group commit. Epoch 0 is never used by a transaction (the global epoch starts at 1), so an
//! epoch field of 0 can mean "loaded before any transaction".

use crate::error::Error;
use crate::protocol::sync::{Arc, AtomicBool, AtomicU64, Condvar, Mutex, Ordering};
use crossbeam_utils::CachePadded;
use std::time::Duration;

const QUIESCENT: u64 = u64::MAX;

/// How the global epoch advances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochConfig {
    /// Period of the background advancer; `None` disables it (tests advance by hand with
    /// [`EpochManager::advance`]).
    pub interval: Option<Duration>,
}

impl EpochConfig {
    /// Silo's and the NWR paper's default: 40 ms.
    pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(40);

    /// A background advancer with the given period (must be between 1 µs and 10 s).
    pub fn every(interval: Duration) -> Result<Self, Error> {
        if interval < Duration::from_micros(1) || interval > Duration::from_secs(10) {
            return Err(Error::invalid(
                "epoch interval",
                format!("{interval:?}"),
                "between 1µs and 10s",
            ));
        }
        Ok(Self {
            interval: Some(interval),
        })
    }

    /// No background thread; epochs advance only through [`EpochManager::advance`].
    pub fn manual() -> Self {
        Self { interval: None }
    }
}

impl Default for EpochConfig {
    fn default() -> Self {
        Self {
            interval: Some(Self::DEFAULT_INTERVAL),
        }
    }
}

#[derive(Debug)]
struct Shared {
    global: CachePadded<AtomicU64>,
    slots: Mutex<Vec<Arc<CachePadded<AtomicU64>>>>,
    stop: AtomicBool,
    stop_lock: Mutex<()>,
    stop_cv: Condvar,
}

impl Shared {
    fn advance(&self) -> bool {
        let slots = self.slots.lock().unwrap();
        let e = self.global.load(Ordering::SeqCst);
        if slots.iter().all(|s| {
            let l = read_slot(s);
            l == QUIESCENT || l >= e
        }) {
            // Only this function writes `global`, under the slots lock, so a plain store is a
            // faithful increment.
            self.global.store(e + 1, Ordering::SeqCst);
            true
        } else {
            false
        }
    }

    fn stable(&self) -> u64 {
        let slots = self.slots.lock().unwrap();
        let e = self.global.load(Ordering::SeqCst);
        let min_local = slots
            .iter()
            .map(|s| read_slot(s))
            .min()
            .unwrap_or(QUIESCENT);
        e.min(min_local) - 1
    }
}

/// Reads a worker's local epoch for the advancer or `stable`: a read-modify-write that stores the
/// value back, so that a worker's later swap synchronizes with it (module docs).
#[inline]
fn read_slot(slot: &AtomicU64) -> u64 {
    slot.fetch_add(0, Ordering::AcqRel)
}

/// The global epoch and the registry of workers' local epochs (see the module docs).
#[derive(Debug)]
pub struct EpochManager {
    shared: Arc<Shared>,
    advancer: Option<std::thread::JoinHandle<()>>,
}

impl EpochManager {
    /// A manager; starts the background advancer if `config.interval` is set.
    pub fn new(config: EpochConfig) -> Self {
        let shared = Arc::new(Shared {
            global: CachePadded::new(AtomicU64::new(1)),
            slots: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            stop_lock: Mutex::new(()),
            stop_cv: Condvar::new(),
        });
        let advancer = config.interval.map(|period| {
            let s = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("txlab-epoch".into())
                .spawn(move || {
                    let mut guard = s.stop_lock.lock().unwrap();
                    while !s.stop.load(Ordering::Acquire) {
                        // A timer, not synchronization: the wait ends early only on shutdown.
                        guard = s.stop_cv.wait_timeout(guard, period).unwrap().0;
                        if !s.stop.load(Ordering::Acquire) {
                            s.advance();
                        }
                    }
                })
                .expect("spawning the epoch thread")
        });
        Self { shared, advancer }
    }

    /// The current global epoch `E`.
    #[inline]
    pub fn global(&self) -> u64 {
        self.shared.global.load(Ordering::Acquire)
    }

    /// Advances `E` by one if every active worker has caught up with it; returns whether it did.
    pub fn advance(&self) -> bool {
        self.shared.advance()
    }

    /// The largest epoch in which no transaction can still commit.
    pub fn stable(&self) -> u64 {
        self.shared.stable()
    }

    /// Waits until `epoch` is stable. Without a background advancer it advances epochs itself.
    pub fn wait_stable(&self, epoch: u64) {
        let mut wait = crate::protocol::sync::SpinWait::new();
        while self.stable() < epoch {
            if self.advancer.is_none() {
                self.advance();
            }
            wait.snooze();
        }
    }

    /// Waits until the global epoch is above `epoch` (weaker than [`EpochManager::wait_stable`]:
    /// transactions of `epoch` may still be running). Without a background advancer it advances
    /// epochs itself, which succeeds once no active worker is behind the global epoch.
    pub fn wait_past(&self, epoch: u64) {
        let mut wait = crate::protocol::sync::SpinWait::new();
        while self.global() <= epoch {
            if self.advancer.is_none() {
                self.advance();
            }
            wait.snooze();
        }
    }

    /// Registers a worker; the handle starts quiescent.
    pub fn register(&self) -> EpochHandle {
        let slot = Arc::new(CachePadded::new(AtomicU64::new(QUIESCENT)));
        self.shared.slots.lock().unwrap().push(Arc::clone(&slot));
        EpochHandle {
            shared: Arc::clone(&self.shared),
            slot,
        }
    }

    /// Number of registered workers.
    pub fn participants(&self) -> usize {
        self.shared.slots.lock().unwrap().len()
    }
}

impl Drop for EpochManager {
    fn drop(&mut self) {
        if let Some(h) = self.advancer.take() {
            {
                let _g = self.shared.stop_lock.lock().unwrap();
                self.shared.stop.store(true, Ordering::Release);
                self.shared.stop_cv.notify_all();
            }
            let _ = h.join();
        }
    }
}

/// A worker's local epoch.
#[derive(Debug)]
pub struct EpochHandle {
    shared: Arc<Shared>,
    slot: Arc<CachePadded<AtomicU64>>,
}

impl EpochHandle {
    /// Marks the worker active in the current global epoch and returns it.
    #[inline]
    pub fn enter(&self) -> u64 {
        let mut e = self.shared.global.load(Ordering::Acquire);
        loop {
            // A swap, not a store: the advancer's read-modify-write of the slot and this one
            // are ordered, and whichever is second sees the first (module docs).
            self.slot.swap(e, Ordering::AcqRel);
            let now = self.shared.global.load(Ordering::Acquire);
            if now == e {
                return e;
            }
            e = now;
        }
    }

    /// Marks the worker quiescent (not in a transaction).
    #[inline]
    pub fn exit(&self) {
        self.slot.store(QUIESCENT, Ordering::Release);
    }

    /// The current global epoch (read at a protocol's serialization point).
    #[inline]
    pub fn global(&self) -> u64 {
        self.shared.global.load(Ordering::Acquire)
    }

    /// [`Self::global`] as a `SeqCst` load, for a protocol whose serialization point is in the
    /// single total order `S` of `SeqCst` operations. Every store of the global epoch is `SeqCst`
    /// (only the advancer writes it), so a `SeqCst` load returns the last store before it in `S`:
    /// along `S` these loads never return a smaller epoch. On x86 it is the same `mov` as
    /// [`Self::global`].
    #[inline]
    pub fn global_seq_cst(&self) -> u64 {
        self.shared.global.load(Ordering::SeqCst)
    }

    /// The worker's local epoch, or `None` when quiescent.
    pub fn local(&self) -> Option<u64> {
        let l = self.slot.load(Ordering::Acquire);
        (l != QUIESCENT).then_some(l)
    }
}

impl Drop for EpochHandle {
    fn drop(&mut self) {
        let mut slots = self.shared.slots.lock().unwrap();
        slots.retain(|s| !Arc::ptr_eq(s, &self.slot));
    }
}

#[cfg(all(test, not(any(txlab_loom, txlab_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn the_default_epoch_is_40_ms() {
        assert_eq!(EpochConfig::DEFAULT_INTERVAL, Duration::from_millis(40));
        assert_eq!(
            EpochConfig::default().interval,
            Some(Duration::from_millis(40))
        );
    }

    #[test]
    fn an_active_worker_holds_the_epoch_back_by_at_most_one() {
        let m = EpochManager::new(EpochConfig::manual());
        let w = m.register();
        assert_eq!(m.global(), 1);
        assert_eq!(w.enter(), 1);
        assert!(m.advance(), "worker is in the current epoch");
        assert_eq!(m.global(), 2);
        assert!(!m.advance(), "worker still in epoch 1 must block epoch 3");
        assert_eq!(m.global(), 2);
        assert_eq!(m.stable(), 0);
        w.exit();
        assert!(m.advance());
        assert_eq!(m.global(), 3);
        assert_eq!(m.stable(), 2);
    }

    /// `wait_past` returns once the global epoch is above the one given, advancing manual epochs
    /// itself, even while a worker is active in that epoch (it waits for no transaction).
    #[test]
    fn wait_past_moves_a_manual_epoch_on_past_an_active_worker() {
        let m = EpochManager::new(EpochConfig::manual());
        let w = m.register();
        assert_eq!(w.enter(), 1);
        m.wait_past(1);
        assert_eq!(m.global(), 2);
        m.wait_past(0);
        assert_eq!(m.global(), 2, "already past");
        w.exit();
    }

    #[test]
    fn stable_epoch_waits_for_the_slowest_active_worker() {
        let m = EpochManager::new(EpochConfig::manual());
        let a = m.register();
        let b = m.register();
        a.enter();
        m.advance();
        b.enter(); // b is in epoch 2, a in epoch 1
        assert_eq!(m.stable(), 0);
        a.exit();
        assert_eq!(m.stable(), 1);
        drop(b);
        assert_eq!(m.participants(), 1);
        assert_eq!(m.stable(), 1);
        m.advance();
        assert_eq!(m.stable(), 2);
    }

    #[test]
    fn wait_stable_without_an_advancer_advances_by_itself() {
        let m = EpochManager::new(EpochConfig::manual());
        m.wait_stable(5);
        assert!(m.stable() >= 5);
    }

    #[test]
    fn background_advancer_moves_the_epoch_and_stops_on_drop() {
        let m = EpochManager::new(EpochConfig::every(Duration::from_micros(50)).unwrap());
        let start = m.global();
        // Waits on the advancer's progress (bounded by the test harness's timeout), no sleeps.
        m.wait_stable(start + 3);
        assert!(m.global() > start + 3);
        drop(m);
    }

    #[test]
    fn bad_intervals_are_rejected() {
        assert!(EpochConfig::every(Duration::ZERO).is_err());
        let e = EpochConfig::every(Duration::from_secs(11)).unwrap_err();
        assert!(e.to_string().contains("epoch interval"), "{e}");
    }
}

#[cfg(all(test, txlab_loom))]
mod loom_tests {
    //! `RUSTFLAGS="--cfg txlab_loom -C target-cpu=x86-64-v2" cargo test -p txlab-core --lib --release loom`
    use super::*;
    use crate::protocol::sync::thread;

    /// While a worker is inside a transaction that entered epoch `e`, the global epoch never
    /// exceeds `e + 1` (Silo's `E - e_w <= 1`), whatever the interleaving of `enter` with two
    /// concurrent `advance` calls.
    #[test]
    fn loom_an_active_worker_is_never_two_epochs_behind() {
        loom::model(|| {
            let m = Arc::new(EpochManager::new(EpochConfig::manual()));
            let h = m.register();
            let worker = {
                let m = Arc::clone(&m);
                thread::spawn(move || {
                    let e = h.enter();
                    let g = m.global();
                    assert!(g <= e + 1, "global {g} while active in {e}");
                    h.exit();
                })
            };
            m.advance();
            m.advance();
            worker.join().unwrap();
        });
    }
}
