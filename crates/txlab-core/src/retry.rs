//! [`run`]: execute a transaction closure, retrying conflicts with bounded exponential backoff.
//!
//! **The closure may run more than once.** It must not have side effects outside the transaction
//! that would be wrong to repeat (or must undo them itself). Only [`TxError::Conflict`] is
//! retried; a user abort or a real error ends the loop at once and is returned.
//!
//! To abort from inside the closure, return `Err(TxError::user_abort(reason))`.
//!
//! The closure receives `&mut dyn TxOps`: a closure bound over the worker's generic transaction
//! type (`for<'t> FnMut(&mut W::Txn<'t>)`) would force `W: 'static` (a current limitation of
//! generic associated types in higher-ranked bounds), and one virtual call per operation is
//! negligible next to a transaction. Hot loops (the harness) call `begin`/`commit` directly and
//! keep static dispatch.

use crate::error::{Error, TxError, TxResult};
use crate::txn::{CommitInfo, Transaction, TxOps, Worker};

/// How [`run`] retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Give up after this many attempts (`None`: retry forever).
    pub max_attempts: Option<u32>,
    /// Spin iterations after the first conflict; doubled after each further conflict.
    pub initial_spins: u32,
    /// Cap on spin iterations; past it the worker also yields its time slice.
    pub max_spins: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: None,
            initial_spins: 16,
            max_spins: 1 << 14,
        }
    }
}

impl RetryPolicy {
    /// At most `n` attempts (`n >= 1`).
    pub fn attempts(n: u32) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::invalid("max_attempts", n, "at least 1"));
        }
        Ok(Self {
            max_attempts: Some(n),
            ..Self::default()
        })
    }

    /// No backoff at all (for tests that want immediate retries).
    pub fn no_backoff() -> Self {
        Self {
            max_attempts: None,
            initial_spins: 0,
            max_spins: 0,
        }
    }
}

/// The result of a successful [`run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed<T> {
    /// What the closure returned on the attempt that committed.
    pub value: T,
    /// What the commit reported.
    pub info: CommitInfo,
    /// Attempts made (1 if the first one committed).
    pub attempts: u32,
}

/// Bounded exponential backoff with jitter (a spin phase, then yields).
#[derive(Debug)]
pub struct Backoff {
    spins: u32,
    policy: RetryPolicy,
    seed: u64,
}

impl Backoff {
    /// A backoff following `policy`; `seed` decorrelates workers.
    pub fn new(policy: RetryPolicy, seed: u64) -> Self {
        Self {
            spins: policy.initial_spins,
            policy,
            seed: seed | 1,
        }
    }

    /// Waits once and grows the next wait.
    pub fn wait(&mut self) {
        let yields = self.spins >= self.policy.max_spins && self.spins > 0;
        for _ in 0..self.next_spins() {
            crate::protocol::sync::spin_loop();
        }
        if yields {
            crate::protocol::sync::thread::yield_now();
        }
    }

    /// The next wait as a number of spin iterations (jittered between half the current wait
    /// and all of it), growing the wait after it as [`wait`](Self::wait) does, without
    /// waiting: for state machines that must not block, which turn it into a timer.
    pub fn next_spins(&mut self) -> u32 {
        if self.spins == 0 {
            return 0;
        }
        // xorshift jitter: wait between spins/2 and spins.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let n = self.spins / 2 + (self.seed % (self.spins as u64 / 2 + 1)) as u32;
        self.spins = (self.spins.saturating_mul(2)).min(self.policy.max_spins.max(1));
        n
    }

    /// Back to the first wait.
    pub fn reset(&mut self) {
        self.spins = self.policy.initial_spins;
    }
}

/// Runs `body` in a transaction of `worker`, committing it; retries on conflict (see module docs).
pub fn run<W, T, F>(worker: &mut W, policy: RetryPolicy, mut body: F) -> TxResult<Committed<T>>
where
    W: Worker,
    F: FnMut(&mut dyn TxOps) -> TxResult<T>,
{
    let mut backoff = Backoff::new(policy, 0x9E37_79B9 ^ worker.id() as u64);
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let mut tx = worker.begin();
        let result = match body(&mut tx) {
            Ok(value) => tx.commit().map(|info| Committed {
                value,
                info,
                attempts,
            }),
            Err(e) => {
                tx.abort();
                Err(e)
            }
        };
        match result {
            Ok(c) => return Ok(c),
            Err(TxError::Conflict(c)) => {
                if policy.max_attempts.is_some_and(|m| attempts >= m) {
                    return Err(TxError::Conflict(c));
                }
                backoff.wait();
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_spins_is_jittered_within_the_wait_and_grows_to_the_cap() {
        let policy = RetryPolicy {
            max_attempts: None,
            initial_spins: 16,
            max_spins: 64,
        };
        let mut b = Backoff::new(policy, 7);
        let waits: Vec<u32> = (0..5).map(|_| b.next_spins()).collect();
        for (w, cap) in waits.iter().zip([16, 32, 64, 64, 64]) {
            assert!((cap / 2..=cap).contains(w), "{waits:?}");
        }
        b.reset();
        assert!(b.next_spins() <= 16);
        assert_eq!(Backoff::new(RetryPolicy::no_backoff(), 1).next_spins(), 0);
    }
}
