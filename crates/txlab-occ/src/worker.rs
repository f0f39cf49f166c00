//! A worker: one thread's handle on an engine, owning the sets its transactions reuse, its local
//! epoch, its crossbeam-epoch handle (so several workers can live on one thread), its queue of
//! committed deletes and the protocol's per-worker state.

use crate::protocol::{Protocol, RetireEntry};
use crate::sets::Sets;
use crate::txn::Txn;
use txlab_core::Error;
use txlab_core::epoch::EpochHandle;
use txlab_core::retire_queue::RetireQueue;

/// One thread's handle on engine `P` (module docs). Its transactions are [`Txn`]s.
#[derive(Debug)]
pub struct Worker<'e, P: Protocol> {
    /// The engine.
    pub engine: &'e P,
    /// The worker's local epoch.
    pub epoch: EpochHandle,
    /// The worker's crossbeam-epoch participant.
    pub handle: crossbeam_epoch::LocalHandle,
    /// The sets its transactions use.
    pub sets: Sets<P>,
    /// Committed deletes waiting to be unlinked.
    pub retire: RetireQueue<RetireEntry>,
    /// The protocol's per-worker state.
    pub state: P::WorkerState,
}

impl<'e, P: Protocol> Worker<'e, P> {
    /// A new worker of `engine` (`Engine::worker`).
    pub fn new(engine: &'e P) -> Result<Self, Error> {
        let shell = engine.shell();
        let id = shell.next_worker_id()?;
        Ok(Self {
            engine,
            epoch: shell.epochs.register(),
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
