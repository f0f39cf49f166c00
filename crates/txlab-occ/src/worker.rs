//! A worker: one thread's handle on an engine, owning the sets its transactions reuse, its local
//! epoch, its crossbeam-epoch handle (so several workers can live on one thread), its queue of
//! committed deletes and the protocol's per-worker state.
//!
//! **The anchor guard.** Pinning a crossbeam-epoch participant that holds no guard costs a full
//! barrier (`lock cmpxchg` on x86) and, every 128 pins, a collection attempt. A worker therefore
//! keeps one guard, its *anchor*, pinned from its first transaction until it is dropped, and each
//! transaction pins its own guard on top of it, which only counts. What the anchor must not do is
//! hold the global epoch back: at every begin, with no transaction guard alive, it is re-pinned
//! to the current global epoch (`Guard::repin`: a `Release` store when the epoch moved, nothing
//! otherwise), and every [`FLUSH_EVERY`] begins its thread-local garbage is handed over and a
//! collection attempted (`Guard::flush`, what a pin from zero does every 128 pins), as long as
//! the worker may have garbage: for [`FLUSHES_AFTER_WRITE`] flushes after a transaction that wrote
//! or a begin that retired tombstones. Only those defer destruction (unlinked records, versions,
//! index nodes); a read-only transaction never does.
//!
//! **Why read-only workers do not flush.** A collection attempt (`Global::collect`) reads every
//! participant's epoch, stores the global epoch when it advances it, and pops the global garbage
//! queue: lines of shared memory that every other worker's re-pin reads and writes. With `n`
//! workers each attempting every 128 begins, the global epoch moves every `128 / n` begins of a
//! worker, and each move costs every worker a cache miss on it at its next re-pin, plus a miss
//! on its own epoch word at the next attempt of another worker. Nothing of this is needed when no
//! one has garbage, and a worker that holds none leaves the advancing to those that do (the
//! epoch still follows every re-pin). It costs nothing on one core and grows with the core
//! count: the per-transaction shared writes of a read-only workload are exactly these.
//!
//! Invariants that make this sound: a transaction's record and version pointers are obtained
//! under its own guard and the sets are cleared before that guard is dropped (`crate::sets`), so
//! no pointer survives into the time between transactions, when only the anchor is pinned; a
//! re-pin happens only then. A participant that stays pinned (at an older epoch, until its
//! `Release` store is seen) only delays reclamation, never frees early. The cost of the scheme:
//! an idle worker keeps the epoch of its last transaction pinned, so memory unlinked meanwhile
//! (tombstones, MVTO versions) is reclaimed once it begins again or is dropped; drop workers that
//! stay idle long.

use crate::protocol::{Protocol, RetireEntry};
use crate::sets::Sets;
use crate::txn::Txn;
use txlab_core::Error;
use txlab_core::protocol::epoch::EpochHandle;
use txlab_core::protocol::retire_queue::RetireQueue;

/// One thread's handle on engine `P` (module docs). Its transactions are [`Txn`]s.
#[derive(Debug)]
pub struct Worker<'e, P: Protocol> {
    /// The engine.
    pub engine: &'e P,
    /// The worker's local epoch.
    pub epoch: EpochHandle,
    /// The worker's anchor guard (module docs), pinned from its first transaction on.
    anchor: Option<crossbeam_epoch::Guard>,
    /// Begins since the anchor last flushed.
    since_flush: u32,
    /// Flushes still owed since the last transaction that wrote or retired (module docs).
    pub(crate) owed_flushes: u8,
    /// The worker's crossbeam-epoch participant.
    pub handle: crossbeam_epoch::LocalHandle,
    /// The sets its transactions use.
    pub sets: Sets<P>,
    /// Committed deletes waiting to be unlinked.
    pub retire: RetireQueue<RetireEntry>,
    /// The protocol's per-worker state.
    pub state: P::WorkerState,
}

/// Begins between two flushes of the anchor guard's garbage (module docs).
pub const FLUSH_EVERY: u32 = 128;

/// Flushes of the anchor after the last transaction that may have deferred garbage: its bag is
/// handed over by the first, and freed once the global epoch has moved twice past it, which the
/// collection attempts of the next two bring about where no other worker does.
pub const FLUSHES_AFTER_WRITE: u8 = 3;

impl<'e, P: Protocol> Worker<'e, P> {
    /// A guard for a new transaction, pinned on top of the anchor (module docs).
    #[inline]
    pub(crate) fn pin(&mut self) -> crossbeam_epoch::Guard {
        match &mut self.anchor {
            Some(anchor) => {
                anchor.repin();
                self.since_flush = self.since_flush.saturating_add(1);
                if self.since_flush >= FLUSH_EVERY && self.owed_flushes > 0 {
                    self.since_flush = 0;
                    self.owed_flushes -= 1;
                    anchor.flush();
                }
            }
            None => self.anchor = Some(self.handle.pin()),
        }
        self.handle.pin()
    }

    /// A new worker of `engine` (`Engine::worker`).
    pub fn new(engine: &'e P) -> Result<Self, Error> {
        let shell = engine.shell();
        let id = shell.next_worker_id()?;
        Ok(Self {
            engine,
            epoch: shell.epochs.register(),
            anchor: None,
            since_flush: 0,
            owed_flushes: 0,
            handle: crossbeam_epoch::default_collector().register(),
            sets: Sets::new(id),
            retire: RetireQueue::default(),
            state: engine.worker_state(id),
        })
    }

    /// Number of committed deletes this worker has queued and not yet unlinked. Tests use it to
    /// drive and observe retirement.
    #[doc(hidden)]
    pub fn retire_backlog(&self) -> usize {
        self.retire.len()
    }

    /// Number of deleted records this worker has unlinked from their index.
    #[doc(hidden)]
    pub fn retired_count(&self) -> u64 {
        self.retire.retired()
    }
}

impl<'e, P: Protocol> txlab_core::Worker for Worker<'e, P> {
    type Txn<'w>
        = Txn<'w, 'e, P>
    where
        Self: 'w;

    #[inline]
    fn begin(&mut self) -> Txn<'_, 'e, P> {
        Txn::begin(self)
    }

    fn id(&self) -> u32 {
        self.sets.id
    }

    /// The protocol's counters, then `retired_tombstones` (deleted records unlinked since the
    /// last drain).
    fn drain_counters(&mut self, sink: &mut dyn FnMut(&'static str, u64)) {
        P::drain_counters(self, sink);
        self.retire.drain_retired(sink);
    }
}

impl<P: Protocol> Drop for Worker<'_, P> {
    fn drop(&mut self) {
        P::drop_worker(self);
    }
}
