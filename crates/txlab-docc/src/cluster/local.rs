//! [`PartitionEngine`]: what a partition needs of its local engine: run its share of the global
//! order at the given positions (DOCC's or Calvin's single-node algorithm, unchanged), read
//! committed rows for the multi-partition exchange (only while no run is in progress, so the
//! newest committed version is the one at the partition's current position), and record what a
//! multi-partition transaction led here read.
//!
//! Both engines keep their rows in a DOCC store (Calvin's is `docc-basic`'s `InPlace` one), so
//! everything but the run itself is written once, over that store.

use super::node::Pipeline;
use crate::calvin::Calvin;
use crate::engine::Docc;
use crate::layout::Layout;
use crate::pool::{Threads, WorkerPool};
use crate::schedule::Positioned;
use txlab_core::protocol::history::{Outcome, ReadEvent, Recorder, ScanEvent, TxnRecord, txn_id};
use txlab_core::protocol::storage::Index;
use txlab_core::{Engine, Error, Program, TableId, TxResult};

/// The worker id of the records a leader makes of its multi-partition transactions (engines
/// number their own workers from 0).
const LEADER_RECORDS: u32 = 0x00FF_FFFF;

/// A row of a range read: key, value, version.
pub type RangeRow = (u64, Vec<u8>, u64);

mod sealed {
    use super::*;

    /// What differs between the two engines, out of users' reach.
    pub trait Sealed {
        /// The store's record layout.
        type L: Layout;
        /// The recorder.
        type Rec: Recorder;
        /// The DOCC store holding the partition's rows.
        fn store(&self) -> &Docc<Self::L, Self::Rec>;
        /// Threads a run needs besides its workers (Calvin's lock managers).
        fn helpers(&self) -> usize;
        /// Runs `jobs` on `pool`'s threads (a run is in progress).
        fn positioned<P>(
            &self,
            jobs: &[Positioned<'_, P>],
            workers: usize,
            pool: &WorkerPool,
        ) -> Result<Vec<TxResult<P::Output>>, Error>
        where
            P: Program + Sync,
            P::Output: Send;
    }
}

/// A single-node deterministic engine one partition of a cluster runs (module docs). Sealed:
/// DOCC and the Calvin-style baseline.
pub trait PartitionEngine: sealed::Sealed + Engine + 'static {
    /// Threads a run of `workers` workers takes from the partition's pool (Calvin's lock managers
    /// included).
    fn threads_for(&self, workers: usize) -> usize {
        workers + self.helpers()
    }

    /// Runs `jobs` at their positions, in order, exactly as `Deterministic::execute_log` does
    /// (`Seq`s and ranks with gaps), with `workers` workers on `pool`'s threads; one result per
    /// job. Errors: `workers` outside `1..=1024` or more threads than the pool has, interactive
    /// workers alive or another run in progress.
    fn run_at<P>(
        &self,
        jobs: &[Positioned<'_, P>],
        pool: &WorkerPool,
        workers: usize,
    ) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send,
    {
        crate::config::check_workers(workers)?;
        let _run = self.store().begin_run()?;
        self.positioned(jobs, workers, pool)
    }

    /// How a cluster of this engine runs its multi-partition transactions unless told
    /// otherwise: waiting at each, for DOCC and Calvin alike; the pipeline speeds both up and
    /// leaves their ratio where it is (`docs/results/docc.md` and `docs/protocols/docc.md`,
    /// "Pipeline").
    fn default_pipeline(&self) -> Pipeline {
        Pipeline::Off
    }

    /// Records a multi-partition transaction led here, at global rank `rank`: the leader's
    /// reads (its installs at each partition are recorded as that partition's transactions;
    /// `super::merge` joins the parts). Nothing unless the engine records.
    fn record_led(&self, rank: u64, reads: Vec<ReadEvent>, scans: Vec<ScanEvent>, committed: bool) {
        let store = self.store();
        if !<Self::Rec as Recorder>::ENABLED {
            return;
        }
        let (begin_ns, end_ns) = if store.config.sequence_clock {
            (2 * rank, 2 * rank + 1)
        } else {
            let now = store.now_ns();
            (now, now)
        };
        store.recorder.record(TxnRecord {
            id: txn_id(LEADER_RECORDS, rank),
            reads,
            writes: Vec::new(),
            scans,
            outcome: if committed {
                Outcome::Committed
            } else {
                Outcome::UserAborted
            },
            begin_ns,
            end_ns,
        });
    }

    /// The newest committed value and version of a key (`None`: absent).
    fn committed(&self, table: TableId, key: u64) -> Result<Option<(Vec<u8>, u64)>, Error> {
        let store = self.store();
        let guard = crossbeam_epoch::pin();
        let mut buf = vec![0u8; store.tables.value_size(table)?];
        Ok(match store.tables.get(table)?.get(key, &guard)? {
            Some(rec) => {
                let o = <Self::L as Layout>::read(rec, u64::MAX, &mut buf, &guard);
                o.present.then_some((buf, o.version))
            }
            None => None,
        })
    }

    /// Appends every present committed row of `lo..=hi` as `(key, value, version)`, in key
    /// order. Errors: a hash table (it cannot be scanned).
    fn committed_range(
        &self,
        table: TableId,
        lo: u64,
        hi: u64,
        out: &mut Vec<RangeRow>,
    ) -> Result<(), Error> {
        let store = self.store();
        let guard = crossbeam_epoch::pin();
        let mut buf = vec![0u8; store.tables.value_size(table)?];
        store
            .tables
            .get(table)?
            .scan(lo, hi, &guard, &mut |k, rec| {
                let o = <Self::L as Layout>::read(rec, u64::MAX, &mut buf, &guard);
                if o.present {
                    out.push((k, buf.clone(), o.version));
                }
                true
            })
    }
}

/// `Sealed::positioned` as the engine's own `run_positioned` (both engines have one, with the
/// same signature).
macro_rules! positioned_by_run_positioned {
    () => {
        fn positioned<P>(
            &self,
            jobs: &[Positioned<'_, P>],
            workers: usize,
            pool: &WorkerPool,
        ) -> Result<Vec<TxResult<P::Output>>, Error>
        where
            P: Program + Sync,
            P::Output: Send,
        {
            self.run_positioned(jobs, workers, Threads::Pool(pool))
        }
    };
}

impl<L: Layout, Rec: Recorder> sealed::Sealed for Docc<L, Rec> {
    type L = L;
    type Rec = Rec;

    fn store(&self) -> &Docc<L, Rec> {
        self
    }

    fn helpers(&self) -> usize {
        0
    }

    positioned_by_run_positioned!();
}

impl<L: Layout, Rec: Recorder + 'static> PartitionEngine for Docc<L, Rec> {}

impl<Rec: Recorder> sealed::Sealed for Calvin<Rec> {
    type L = crate::layout::InPlace;
    type Rec = Rec;

    fn store(&self) -> &Docc<Self::L, Rec> {
        self.inner()
    }

    fn helpers(&self) -> usize {
        self.config().lock_managers
    }

    positioned_by_run_positioned!();
}

impl<Rec: Recorder + 'static> PartitionEngine for Calvin<Rec> {}

/// Whether `engine` records histories.
pub(crate) fn records<E: PartitionEngine>(_engine: &E) -> bool {
    <E::Rec as Recorder>::ENABLED
}

/// DOCC's waiting chain around the engine run of a window (`super::overlap`). That run's ranks
/// are above every transaction's, so its commits would leave the chain's `done` above the `need`
/// of every later transaction, and none of them would wait for its dependency: `done` is saved
/// before the run and restored after it (`crate::wait::Chain::rewind`).
pub(crate) struct WindowChain(u64);

impl WindowChain {
    /// Saves `done` (no run in progress).
    pub fn save<E: PartitionEngine>(engine: &E) -> Self {
        Self(engine.store().chain.done())
    }

    /// Restores it, after the window's run.
    pub fn restore<E: PartitionEngine>(self, engine: &E) {
        engine.store().chain.rewind(self.0);
    }
}
