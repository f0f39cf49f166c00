//! [`PartitionEngine`]: what a partition needs of its local engine: run its share of the global
//! order at the given positions (DOCC's or Calvin's single-node algorithm, unchanged), and read
//! committed rows for the multi-partition exchange (only while no run is in progress, so the
//! newest committed version is the one at the partition's current position).

use crate::calvin::Calvin;
use crate::engine::Docc;
use crate::layout::Layout;
use crate::pool::WorkerPool;
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
    pub trait Sealed {}
}

/// A single-node deterministic engine one partition of a cluster runs (module docs). Sealed:
/// DOCC and the Calvin-style baseline.
pub trait PartitionEngine: sealed::Sealed + Engine + 'static {
    /// Threads a run of `workers` workers takes from the partition's pool (Calvin's lock managers
    /// included).
    fn threads_for(&self, workers: usize) -> usize;

    /// Runs `jobs` at their positions, in order, with `workers` workers on `pool`'s threads; one
    /// result per job.
    fn run_at<P>(
        &self,
        jobs: &[Positioned<'_, P>],
        pool: &WorkerPool,
        workers: usize,
    ) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send;

    /// Records a multi-partition transaction led here, at global rank `rank`: the leader's
    /// reads (its installs at each partition are recorded as that partition's transactions;
    /// `super::merge` joins the parts). Nothing unless the engine records.
    fn record_led(&self, rank: u64, reads: Vec<ReadEvent>, scans: Vec<ScanEvent>, committed: bool);

    /// The newest committed value and version of a key (`None`: absent).
    fn committed(&self, table: TableId, key: u64) -> Result<Option<(Vec<u8>, u64)>, Error>;

    /// Appends every present committed row of `lo..=hi` as `(key, value, version)`, in key
    /// order. Errors: a hash table (it cannot be scanned).
    fn committed_range(
        &self,
        table: TableId,
        lo: u64,
        hi: u64,
        out: &mut Vec<RangeRow>,
    ) -> Result<(), Error>;
}

impl<L: Layout, Rec: Recorder> Docc<L, Rec> {
    fn record_reads(
        &self,
        rank: u64,
        reads: Vec<ReadEvent>,
        scans: Vec<ScanEvent>,
        committed: bool,
    ) {
        if !Rec::ENABLED {
            return;
        }
        let (begin_ns, end_ns) = if self.config.sequence_clock {
            (2 * rank, 2 * rank + 1)
        } else {
            let now = self.now_ns();
            (now, now)
        };
        self.recorder.record(TxnRecord {
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

    fn newest(&self, table: TableId, key: u64) -> Result<Option<(Vec<u8>, u64)>, Error> {
        let guard = crossbeam_epoch::pin();
        let mut buf = vec![0u8; self.tables.value_size(table)?];
        Ok(match self.tables.get(table)?.get(key, &guard)? {
            Some(rec) => {
                let o = L::read(rec, u64::MAX, &mut buf, &guard);
                o.present.then_some((buf, o.version))
            }
            None => None,
        })
    }

    fn newest_range(
        &self,
        table: TableId,
        lo: u64,
        hi: u64,
        out: &mut Vec<RangeRow>,
    ) -> Result<(), Error> {
        let guard = crossbeam_epoch::pin();
        let mut buf = vec![0u8; self.tables.value_size(table)?];
        self.tables.get(table)?.scan(lo, hi, &guard, &mut |k, rec| {
            let o = L::read(rec, u64::MAX, &mut buf, &guard);
            if o.present {
                out.push((k, buf.clone(), o.version));
            }
            true
        })
    }
}

impl<L: Layout, Rec: Recorder> sealed::Sealed for Docc<L, Rec> {}

impl<L: Layout, Rec: Recorder + 'static> PartitionEngine for Docc<L, Rec> {
    fn threads_for(&self, workers: usize) -> usize {
        workers
    }

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
        self.execute_positioned(jobs, pool, workers)
    }

    fn record_led(&self, rank: u64, reads: Vec<ReadEvent>, scans: Vec<ScanEvent>, committed: bool) {
        self.record_reads(rank, reads, scans, committed);
    }

    fn committed(&self, table: TableId, key: u64) -> Result<Option<(Vec<u8>, u64)>, Error> {
        self.newest(table, key)
    }

    fn committed_range(
        &self,
        table: TableId,
        lo: u64,
        hi: u64,
        out: &mut Vec<RangeRow>,
    ) -> Result<(), Error> {
        self.newest_range(table, lo, hi, out)
    }
}

impl<Rec: Recorder> sealed::Sealed for Calvin<Rec> {}

impl<Rec: Recorder + 'static> PartitionEngine for Calvin<Rec> {
    fn threads_for(&self, workers: usize) -> usize {
        Calvin::threads_for(self, workers)
    }

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
        self.execute_positioned(jobs, pool, workers)
    }

    fn record_led(&self, rank: u64, reads: Vec<ReadEvent>, scans: Vec<ScanEvent>, committed: bool) {
        self.inner().record_reads(rank, reads, scans, committed);
    }

    fn committed(&self, table: TableId, key: u64) -> Result<Option<(Vec<u8>, u64)>, Error> {
        self.inner().newest(table, key)
    }

    fn committed_range(
        &self,
        table: TableId,
        lo: u64,
        hi: u64,
        out: &mut Vec<RangeRow>,
    ) -> Result<(), Error> {
        self.inner().newest_range(table, lo, hi, out)
    }
}
