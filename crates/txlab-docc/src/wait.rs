//! The waiting phase (Algorithm 1 lines 9 to 11): `T_N` waits until its dependency `T_{N-dep}`
//! has committed, with a bounded spin, then parks until the committer wakes it.
//!
//! **The chain.** Transactions that others wait for (every transaction in the basic algorithm;
//! only read-write ones with snapshots, section 3.2) commit one after another in the order, so
//! one counter says how far they got: [`Chain::done`] is `rank + 1` of the last one committed,
//! `rank` being a transaction's position in the engine's order (dense, unlike `Seq`). `T_N`
//! waits for `done >= need`, `need` being its dependency's rank plus one (0 for none).
//!
//! **Parking** (so oversubscribed runs do not burn the dependency's CPU): a waiter that spun for
//! a while publishes its `need` in its slot and counts itself parked, then re-checks `done` and
//! sleeps on its slot's condition variable; a committer stores `done`, then, if anyone is parked,
//! wakes every slot whose `need` it satisfied. All four accesses are `SeqCst` (the store-load
//! pattern of Dekker's algorithm): either the waiter's re-check sees the new `done`, or the
//! committer sees the waiter's `need`. The wake-up sets a token under the slot's mutex, so a
//! wake-up that comes before the sleep is not lost.

use crossbeam_utils::CachePadded;
use txlab_core::protocol::sync::{AtomicU64, AtomicUsize, Condvar, IgnorePoison, Mutex, Ordering};

/// How far the chain of committed transactions got (module docs).
#[derive(Debug, Default)]
pub(crate) struct Chain {
    done: CachePadded<AtomicU64>,
}

impl Chain {
    /// Whether every chain transaction below `need - 1` has committed.
    #[inline]
    pub fn reached(&self, need: u64) -> bool {
        self.done.load(Ordering::Acquire) >= need
    }

    /// Publishes that the chain transaction of rank `rank` committed.
    #[inline]
    pub fn publish(&self, rank: u64) {
        self.done.store(rank + 1, Ordering::SeqCst);
    }

    /// `done` now (no run may be in progress: it moves while one is).
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::SeqCst)
    }

    /// Sets `done` back to a value `done()` returned. `done` only grows within a run, but a run
    /// on ranks above every transaction's (a cluster's overlap window) leaves it above every later
    /// `need`, so the caller restores what it saved before that run; no run may be in progress
    /// and no worker waiting.
    pub fn rewind(&self, done: u64) {
        self.done.store(done, Ordering::SeqCst);
    }

    #[inline]
    fn load_seq_cst(&self) -> u64 {
        self.done.load(Ordering::SeqCst)
    }
}

#[derive(Debug)]
struct Slot {
    need: AtomicU64,
    token: Mutex<bool>,
    wake: Condvar,
    /// The raw `Seq` of the job this worker holds or is claiming, or [`IDLE`].
    running: AtomicU64,
}

impl Default for Slot {
    fn default() -> Self {
        Self {
            need: AtomicU64::new(0),
            token: Mutex::new(false),
            wake: Condvar::new(),
            running: AtomicU64::new(IDLE),
        }
    }
}

/// A worker holding no job and not claiming one.
pub(crate) const IDLE: u64 = u64::MAX;

/// The parking slots of one run's workers (module docs).
#[derive(Debug)]
pub(crate) struct Waiters {
    slots: Box<[CachePadded<Slot>]>,
    parked: AtomicUsize,
}

/// Spin rounds before parking (each round spins 32 times; under shuttle each round yields).
const SPIN_ROUNDS: u32 = 64;
/// Yields after spinning, before parking.
const YIELD_ROUNDS: u32 = 8;

impl Waiters {
    /// Slots for `workers` workers.
    pub fn new(workers: usize) -> Self {
        Self {
            slots: (0..workers)
                .map(|_| CachePadded::new(Slot::default()))
                .collect(),
            parked: AtomicUsize::new(0),
        }
    }

    /// Waits as worker `me` until `chain` reached `need`; returns whether it had to wait at all.
    pub fn wait(&self, me: usize, chain: &Chain, need: u64) -> bool {
        if chain.reached(need) {
            return false;
        }
        for round in 0..SPIN_ROUNDS + YIELD_ROUNDS {
            #[cfg(not(any(txlab_loom, txlab_shuttle)))]
            if round < SPIN_ROUNDS {
                for _ in 0..32 {
                    std::hint::spin_loop();
                }
            } else {
                std::thread::yield_now();
            }
            #[cfg(any(txlab_loom, txlab_shuttle))]
            {
                let _ = round;
                txlab_core::protocol::sync::thread::yield_now();
            }
            if chain.reached(need) {
                return true;
            }
        }
        let slot = &self.slots[me];
        slot.need.store(need, Ordering::SeqCst);
        self.parked.fetch_add(1, Ordering::SeqCst);
        while chain.load_seq_cst() < need {
            let mut token = slot.token.lock().ignore_poison();
            while !*token {
                token = slot.wake.wait(token).ignore_poison();
            }
            *token = false;
        }
        slot.need.store(0, Ordering::SeqCst);
        self.parked.fetch_sub(1, Ordering::SeqCst);
        true
    }

    /// Publishes what worker `me` holds: the raw `Seq` of a job it holds or is about to claim
    /// (set before the claim, so a committer that reads it after its own later claim sees it:
    /// `crate::schedule`), or [`IDLE`].
    #[inline]
    pub fn set_running(&self, me: usize, running: u64) {
        self.slots[me].running.store(running, Ordering::SeqCst);
    }

    /// The bounds of the running jobs, descending and deduplicated, into `out`.
    pub fn bounds(&self, out: &mut Vec<u64>) {
        out.clear();
        for slot in self.slots.iter() {
            match slot.running.load(Ordering::SeqCst) {
                IDLE => {}
                seq => out.push(seq),
            }
        }
        out.sort_unstable_by(|a, b| b.cmp(a));
        out.dedup();
    }

    /// Wakes every parked worker waiting for at most `done` (call after `Chain::publish`).
    pub fn wake(&self, done: u64) {
        if self.parked.load(Ordering::SeqCst) == 0 {
            return;
        }
        for slot in self.slots.iter() {
            let need = slot.need.load(Ordering::SeqCst);
            if need != 0 && need <= done {
                *slot.token.lock().ignore_poison() = true;
                slot.wake.notify_one();
            }
        }
    }
}

#[cfg(all(test, not(any(txlab_loom, txlab_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_returns_once_the_publish_it_needs_is_done() {
        let chain = Chain::default();
        let waiters = Waiters::new(2);
        assert!(!waiters.wait(0, &chain, 0), "need 0 never waits");
        std::thread::scope(|s| {
            let t = s.spawn(|| waiters.wait(1, &chain, 3));
            // Publish ranks 0, 1, 2 one by one; the waiter needs rank 2 (done = 3).
            // Whether the waiter is still spinning, already parked or not started yet, it
            // returns once rank 2 is published.
            for rank in 0..3 {
                chain.publish(rank);
                waiters.wake(rank + 1);
            }
            t.join().unwrap();
        });
        assert!(chain.reached(3));
    }

    #[test]
    fn a_waiter_parked_before_the_publish_wakes_up() {
        let chain = Chain::default();
        let waiters = Waiters::new(1);
        std::thread::scope(|s| {
            let t = s.spawn(|| waiters.wait(0, &chain, 1));
            // Wait until the waiter has parked (its slot shows its need), then publish.
            while waiters.slots[0].need.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            chain.publish(0);
            waiters.wake(1);
            assert!(t.join().unwrap());
        });
    }
}
