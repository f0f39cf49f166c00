//! The one place every atomic, lock and thread primitive of the workspace is imported from.
//!
//! Normal builds re-export `std` (plus `portable_atomic::AtomicU128`, which `std` lacks on stable).
//! Building with `RUSTFLAGS="--cfg txlab_shuttle"` swaps in [shuttle]'s randomized-scheduler
//! primitives, and `--cfg txlab_loom` swaps in [loom]'s model-checked ones, so the same protocol
//! code runs under both checkers without edits (the pattern of crossbeam's `primitive` module and
//! tokio's `loom/` directory).
//!
//! loom has no 128-bit atomic; under loom [`AtomicU128`] is emulated by a mutex around a `u128`,
//! which keeps the semantics (every operation is atomic) but not lock-freedom.
//!
//! [shuttle]: https://docs.rs/shuttle
//! [loom]: https://docs.rs/loom

#[cfg(not(any(txlab_loom, txlab_shuttle)))]
mod imp {
    pub use portable_atomic::AtomicU128;
    pub use std::hint::spin_loop;
    pub use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};
    pub use std::sync::mpsc;
    pub use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
    pub use std::thread;
}

#[cfg(txlab_shuttle)]
mod imp {
    pub use portable_atomic::AtomicU128;
    pub use shuttle::hint::spin_loop;
    pub use shuttle::sync::atomic::{
        AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
    };
    pub use shuttle::sync::mpsc;
    pub use shuttle::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
    pub use shuttle::thread;
}

#[cfg(txlab_loom)]
mod imp {
    pub use loom::hint::spin_loop;
    pub use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};
    pub use loom::sync::mpsc;
    pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
    pub use loom::thread;

    /// A 128-bit atomic emulated by a loom mutex (loom has no native one).
    #[derive(Debug, Default)]
    pub struct AtomicU128(loom::sync::Mutex<u128>);

    impl AtomicU128 {
        pub fn new(v: u128) -> Self {
            Self(loom::sync::Mutex::new(v))
        }
        pub fn load(&self, _o: Ordering) -> u128 {
            *self.0.lock().unwrap()
        }
        pub fn store(&self, v: u128, _o: Ordering) {
            *self.0.lock().unwrap() = v;
        }
        pub fn compare_exchange(
            &self,
            current: u128,
            new: u128,
            _s: Ordering,
            _f: Ordering,
        ) -> Result<u128, u128> {
            let mut g = self.0.lock().unwrap();
            if *g == current {
                *g = new;
                Ok(current)
            } else {
                Err(*g)
            }
        }
        pub fn is_lock_free() -> bool {
            false
        }
    }
}

pub use imp::*;

/// Takes the guard out of a lock result whether or not the lock is poisoned.
///
/// A lock is poisoned when a thread panicked while holding it; that panic already fails the
/// run or test that thread belongs to. The locks this is used on guard data that is consistent
/// at every unlock (maps, queues), so the next holder may go on. Works for `std`, shuttle and
/// loom, which all return `std::sync::LockResult`.
pub trait IgnorePoison<G> {
    /// The guard, poisoned or not.
    fn ignore_poison(self) -> G;
}

impl<G> IgnorePoison<G> for std::sync::LockResult<G> {
    #[inline]
    fn ignore_poison(self) -> G {
        self.unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Bounded exponential spinning for wait loops (a lock bit, a seqlock version).
///
/// Normal builds spin `2^step` times (up to 64) and then yield the time slice, like
/// `crossbeam_utils::Backoff::snooze`. Under shuttle or loom every call yields to the model
/// checker's scheduler, so a thread waiting on another one lets it run (a plain spin would never
/// be preempted and would hang the model).
#[derive(Debug, Default)]
pub struct SpinWait {
    step: u32,
}

impl SpinWait {
    /// A fresh wait.
    pub fn new() -> Self {
        Self { step: 0 }
    }

    /// Waits a little longer than last time.
    #[inline]
    pub fn snooze(&mut self) {
        #[cfg(not(any(txlab_loom, txlab_shuttle)))]
        {
            if self.step <= 6 {
                for _ in 0..1u32 << self.step {
                    std::hint::spin_loop();
                }
            } else {
                std::thread::yield_now();
            }
        }
        #[cfg(any(txlab_loom, txlab_shuttle))]
        {
            thread::yield_now();
        }
        self.step = (self.step + 1).min(10);
    }

    /// How many times [`snooze`](Self::snooze) was called (saturating at 10).
    pub fn steps(&self) -> u32 {
        self.step
    }
}

/// Returns whether 128-bit atomics are lock-free on this machine (a native `cmpxchg16b`).
///
/// [`AtomicU128`] builds on every target. On x86_64 where `cmpxchg16b` is not enabled at compile
/// time (a dependent project's default build), portable-atomic detects it at run time (`cpuid`,
/// once) and falls back to a lock only on a CPU without it; this returns that answer. Building
/// with `-C target-cpu=x86-64-v2` or later (the workspace's `.cargo/config.toml`) makes the
/// answer a compile-time `true` and lets the compiler inline the CAS: an optional speed-up, not
/// a requirement. Protocols that rely on a lock-free 128-bit CAS (the NWR pivot object) check
/// this at start-up and refuse to start where it is `false`.
pub fn atomic_u128_is_lock_free() -> bool {
    AtomicU128::is_lock_free()
}

#[cfg(test)]
mod tests {
    #[cfg(all(target_arch = "x86_64", not(any(txlab_loom, txlab_shuttle))))]
    #[test]
    fn atomic_u128_is_lock_free_exactly_where_the_cpu_has_cmpxchg16b() {
        // With or without a target-cpu flag, the CAS is lock-free on a CPU with cmpxchg16b
        // (compile-time or run-time detection; only portable-atomic's
        // `portable_atomic_no_outline_atomics` cfg turns the latter off). If this fails, 128-bit
        // CASes silently became a spin lock.
        assert_eq!(
            super::atomic_u128_is_lock_free(),
            std::arch::is_x86_feature_detected!("cmpxchg16b")
        );
    }
}
