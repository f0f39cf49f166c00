//! A worker's queue of committed deletes waiting to be unlinked from their index, shared by the
//! engines that retire tombstones (`txlab_silo::retire`, `txlab_tictoc::retire`; each module
//! documents what unlinking must preserve for its protocol).
//!
//! Invariants: entries are pushed in commit order, so their epochs do not decrease from front to
//! back, except for entries a retirer found busy and requeued at the back (which only delays
//! them). [`RetireQueue::process`] therefore stops at the first entry that is not old enough.
//! The queue holds no record pointers (records may be freed once unlinked); the engine's retirer
//! looks each key up again under a pinned guard.

use std::collections::VecDeque;

/// Entries handled per transaction begin when the queue is short.
pub const BUDGET: usize = 4;
/// Queue length above which a begin handles [`LONG_BUDGET`] entries.
pub const LONG_QUEUE: usize = 1024;
/// Entries handled per begin when the queue is longer than [`LONG_QUEUE`].
pub const LONG_BUDGET: usize = 64;
/// How many epochs a tombstone waits after its delete before it may be unlinked.
pub const GRACE_EPOCHS: u64 = 2;

/// What a retirer did with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retire {
    /// Unlinked.
    Done,
    /// The key no longer holds this tombstone (rewritten, or already gone): nothing to do.
    Revived,
    /// A committer holds the record locked; try again later (requeued at the back).
    Busy,
}

/// A worker's committed deletes, oldest first (module docs).
#[derive(Debug)]
pub struct RetireQueue<E> {
    entries: VecDeque<E>,
    retired: u64,
    /// `retired` at the last [`RetireQueue::drain_retired`].
    reported: u64,
}

impl<E> Default for RetireQueue<E> {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
            retired: 0,
            reported: 0,
        }
    }
}

impl<E: Copy> RetireQueue<E> {
    /// Entries waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is waiting.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Tombstones unlinked through this queue.
    #[inline]
    pub fn retired(&self) -> u64 {
        self.retired
    }

    /// Reports the tombstones unlinked since the last call to `sink` as the worker counter
    /// `retired_tombstones` (nothing if none), for `Worker::drain_counters`.
    #[inline]
    pub fn drain_retired(&mut self, sink: &mut dyn FnMut(&'static str, u64)) {
        let n = self.retired - self.reported;
        self.reported = self.retired;
        if n > 0 {
            sink("retired_tombstones", n);
        }
    }

    /// Queues a committed delete.
    #[inline]
    pub fn push(&mut self, entry: E) {
        self.entries.push_back(entry);
    }

    /// Hands up to a budget of entries ([`BUDGET`], or [`LONG_BUDGET`] past [`LONG_QUEUE`]) whose
    /// delete epoch (`epoch_of`) is at least `grace` epochs below `global` to `retire`, front
    /// first; stops at the first entry not old enough. Busy entries go to the back.
    pub fn process(
        &mut self,
        global: u64,
        grace: u64,
        epoch_of: impl Fn(&E) -> u64,
        mut retire: impl FnMut(E) -> Retire,
    ) {
        let budget = if self.entries.len() > LONG_QUEUE {
            LONG_BUDGET
        } else {
            BUDGET
        };
        for _ in 0..budget {
            let Some(front) = self.entries.front().copied() else {
                return;
            };
            if global < epoch_of(&front) + grace {
                return;
            }
            self.entries.pop_front();
            match retire(front) {
                Retire::Done => self.retired += 1,
                Retire::Revived => {}
                Retire::Busy => self.entries.push_back(front),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_wait_their_grace_and_busy_ones_go_to_the_back() {
        let mut q = RetireQueue::default();
        for (epoch, key) in [(1u64, 10u64), (1, 11), (2, 12)] {
            q.push((epoch, key));
        }
        let mut seen = Vec::new();
        q.process(
            2,
            GRACE_EPOCHS,
            |e| e.0,
            |e| {
                seen.push(e.1);
                Retire::Done
            },
        );
        assert!(seen.is_empty(), "epoch 1 + 2 > 2: nothing is old enough");
        q.process(
            3,
            GRACE_EPOCHS,
            |e| e.0,
            |e| {
                seen.push(e.1);
                if e.1 == 10 {
                    Retire::Busy
                } else {
                    Retire::Revived
                }
            },
        );
        // 10 is busy (requeued behind 12), 11 revived, then 12 (epoch 2) is not old enough.
        assert_eq!(seen, [10, 11]);
        assert_eq!((q.len(), q.retired()), (2, 0));
        q.process(4, GRACE_EPOCHS, |e| e.0, |_| Retire::Done);
        assert_eq!((q.len(), q.retired()), (0, 2));
    }

    #[test]
    fn a_long_queue_gets_the_long_budget() {
        let mut q = RetireQueue::default();
        for k in 0..(LONG_QUEUE as u64 + 1) {
            q.push(k);
        }
        let mut n = 0;
        q.process(
            10,
            GRACE_EPOCHS,
            |_| 0,
            |_| {
                n += 1;
                Retire::Done
            },
        );
        assert_eq!(n, LONG_BUDGET);
        let mut q = RetireQueue::default();
        for k in 0..10u64 {
            q.push(k);
        }
        q.process(10, GRACE_EPOCHS, |_| 0, |_| Retire::Done);
        assert_eq!(q.retired(), BUDGET as u64);
    }
}
