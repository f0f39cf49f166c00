//! The DOCC engine: tables of a layout's records, the chain of committed transactions, the
//! committer's state, the order's clock and the run lock.

use crate::commit::{Committer, GcCounters};
use crate::config::DoccConfig;
use crate::layout::{Chain, InPlace, Layout};
use crate::seq::Seq;
use crate::stats::DoccStats;
use crate::wait;
use txlab_core::protocol::assemble::{Assemble, Builder};
use txlab_core::protocol::history::{NoRecorder, Recorder, RetiredTags};
use txlab_core::protocol::storage::Index;
use txlab_core::protocol::sync::{
    Arc, AtomicU32, AtomicU64, IgnorePoison, Mutex, MutexGuard, Ordering,
};
use txlab_core::{Engine, Error, Schema, TableId};
use txlab_storage::Tables;

/// `docc-basic`: the paper's basic algorithm (section 3.1), one version per record.
pub type DoccBasic<Rec = NoRecorder> = Docc<InPlace, Rec>;
/// `docc-snapshot` (prefetch off) or `docc` (prefetch on, the paper's default): multi-version
/// snapshots (section 3.2), prefetching retry (section 3.3).
pub type DoccSnapshot<Rec = NoRecorder> = Docc<Chain, Rec>;

/// Which of the three modes an engine runs (its CLI name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoccMode {
    /// `docc-basic`: `Docc<InPlace>`.
    Basic,
    /// `docc-snapshot`: `Docc<Chain>` without prefetching.
    Snapshot,
    /// `docc`: `Docc<Chain>` with prefetching retry.
    Full,
}

impl DoccMode {
    /// The engine name.
    pub fn name(self) -> &'static str {
        match self {
            DoccMode::Basic => "docc-basic",
            DoccMode::Snapshot => "docc-snapshot",
            DoccMode::Full => "docc",
        }
    }
}

/// Who holds the engine: interactive workers, or one deterministic run (they exclude each
/// other; the interactive path is not deterministic, `crate::interactive`).
#[derive(Debug, Default)]
struct RunState {
    workers: usize,
    deterministic: bool,
}

/// A DOCC database (crate docs). `L` is the record layout, `Rec` the history recorder
/// ([`NoRecorder`] compiles recording out).
#[derive(Debug)]
pub struct Docc<L: Layout, Rec: Recorder = NoRecorder> {
    schema: Schema,
    pub(crate) tables: Tables<L::Record>,
    pub(crate) config: DoccConfig,
    pub(crate) recorder: Arc<Rec>,
    pub(crate) retired_tags: RetiredTags,
    /// How far the chain of committed transactions got (the waiting phase).
    pub(crate) chain: wait::Chain,
    /// The committer's state, handed from one committer to the next.
    pub(crate) committer: Mutex<Committer>,
    /// Ranks handed out (dense positions in the order, across runs and interactive commits).
    pub(crate) next_rank: AtomicU64,
    /// The next unused epoch (epoch 0 is the loaded state).
    next_epoch: AtomicU32,
    run_state: Mutex<RunState>,
    pub(crate) stats: Mutex<DoccStats>,
    pub(crate) next_worker: AtomicU32,
}

impl<L: Layout> Docc<L, NoRecorder> {
    /// The one way to build a DOCC engine: `.config(..)`, `.recorder(..)` to record histories,
    /// `.tables(..)` for tables built by the caller (e.g. a user's own index for some tables,
    /// `Tables::with_custom`), then `.build(&schema)`. Errors: an invalid configuration,
    /// prefetching without the `Chain` layout, or tables that do not fit the schema.
    pub fn builder() -> Builder<Self> {
        Builder::new()
    }
}

impl<L: Layout> Assemble for Docc<L, NoRecorder> {
    type Config = DoccConfig;
    type Tables = Tables<L::Record>;
    type Engine<Rec: Recorder> = Docc<L, Rec>;

    fn assemble<Rec: Recorder>(
        schema: &Schema,
        tables: Option<Tables<L::Record>>,
        config: DoccConfig,
        recorder: Arc<Rec>,
    ) -> Result<Docc<L, Rec>, Error> {
        let tables = match tables {
            Some(tables) => tables,
            None => Tables::new(schema)?,
        };
        Docc::with_tables(schema, tables, config, recorder)
    }
}

impl<L: Layout, Rec: Recorder> Docc<L, Rec> {
    /// A database over tables built by the caller (e.g. a user's own index for some tables,
    /// `Tables::with_custom`).
    ///
    /// Errors: an invalid configuration, prefetching without the `Chain` layout, or tables that
    /// do not fit `schema`.
    fn with_tables(
        schema: &Schema,
        tables: Tables<L::Record>,
        config: DoccConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        config.validate()?;
        if config.prefetch && !L::SNAPSHOT {
            return Err(Error::invalid(
                "prefetch",
                true,
                "prefetching retry reaches records through placeholders: it needs the Chain \
                 layout (docc); the in-place layout is docc-basic",
            ));
        }
        tables.check_schema(schema)?;
        Ok(Self {
            schema: schema.clone(),
            tables,
            config,
            recorder,
            retired_tags: RetiredTags::default(),
            chain: wait::Chain::default(),
            committer: Mutex::new(Committer::default()),
            next_rank: AtomicU64::new(0),
            next_epoch: AtomicU32::new(1),
            run_state: Mutex::new(RunState::default()),
            stats: Mutex::new(DoccStats::default()),
            next_worker: AtomicU32::new(0),
        })
    }

    /// Which mode this engine runs.
    pub fn mode(&self) -> DoccMode {
        match (L::SNAPSHOT, self.config.prefetch) {
            (false, _) => DoccMode::Basic,
            (true, false) => DoccMode::Snapshot,
            (true, true) => DoccMode::Full,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &DoccConfig {
        &self.config
    }

    /// The recorder.
    pub fn recorder(&self) -> &Arc<Rec> {
        &self.recorder
    }

    /// Counters accumulated over every run so far.
    pub fn stats(&self) -> DoccStats {
        self.stats.lock().ignore_poison().clone()
    }

    /// Garbage-collection counters so far.
    pub fn gc(&self) -> GcCounters {
        self.committer.lock().ignore_poison().gc
    }

    /// The largest number of versions any record of `table` holds, and the number of records
    /// its index maps (tests of garbage collection; run it while no transaction runs).
    pub fn version_census(&self, table: TableId) -> Result<(usize, usize), Error> {
        let guard = crossbeam_epoch::pin();
        let index = self.tables.get(table)?;
        let (mut most, mut records) = (0, 0);
        let mut count = |rec: &L::Record| {
            most = most.max(L::versions(rec, &guard));
            records += 1;
        };
        match index.scan(0, u64::MAX, &guard, &mut |_, r| {
            count(r);
            true
        }) {
            Ok(()) => {}
            Err(Error::ScanUnsupported { .. }) => {
                return Err(Error::invalid(
                    "table",
                    table.0,
                    "a version census scans the table: a dense or ordered one",
                ));
            }
            Err(e) => return Err(e),
        }
        Ok((most, records))
    }

    /// Hands out `n` consecutive epochs; returns the first.
    pub(crate) fn take_epochs(&self, n: u32) -> Result<u32, Error> {
        let first = self.next_epoch.fetch_add(n, Ordering::Relaxed);
        if u64::from(first) + u64::from(n) > u64::from(Seq::MAX_EPOCH) + 1 {
            return Err(Error::invalid(
                "epoch",
                u64::from(first) + u64::from(n) - 1,
                format!(
                    "at most {} epochs per engine (records keep three flag bits beside the \
                     version)",
                    Seq::MAX_EPOCH
                ),
            ));
        }
        Ok(first)
    }

    /// Makes sure epochs `first..=last` (a replayed log's) are above every epoch this engine
    /// handed out, and moves the clock past them.
    pub(crate) fn reserve_epochs(&self, first: u32, last: u32) -> Result<(), Error> {
        let next = self.next_epoch.load(Ordering::Relaxed);
        if first < next {
            return Err(Error::invalid(
                "input log epoch",
                first,
                format!(
                    "a log replayed on this engine must start at epoch {next} or later (this \
                     engine already used the earlier ones; replay on a freshly loaded engine)"
                ),
            ));
        }
        self.next_epoch
            .fetch_max(last.saturating_add(1), Ordering::Relaxed);
        Ok(())
    }

    /// Hands out `n` consecutive ranks; returns the first.
    #[inline]
    pub(crate) fn take_ranks(&self, n: u64) -> u64 {
        self.next_rank.fetch_add(n, Ordering::Relaxed)
    }

    pub(crate) fn committer(&self) -> MutexGuard<'_, Committer> {
        self.committer.lock().ignore_poison()
    }

    /// Starts a deterministic run: refused while interactive workers exist or another run is
    /// going on. The run ends when the returned guard drops.
    pub(crate) fn begin_run(&self) -> Result<RunGuard<'_, L, Rec>, Error> {
        let mut s = self.run_state.lock().ignore_poison();
        if s.deterministic {
            return Err(Error::Misuse(
                "another deterministic run is in progress on this engine",
            ));
        }
        if s.workers > 0 {
            return Err(Error::Misuse(
                "a deterministic run cannot start while interactive workers of this engine \
                 exist (drop them first)",
            ));
        }
        s.deterministic = true;
        // Interactive commits after this run continue in a later epoch than its batches.
        self.committer().interactive = None;
        Ok(RunGuard { engine: self })
    }

    /// Registers an interactive worker: refused during a deterministic run.
    pub(crate) fn enter_interactive(&self) -> Result<(), Error> {
        let mut s = self.run_state.lock().ignore_poison();
        if s.deterministic {
            return Err(Error::Misuse(
                "interactive workers cannot be created during a deterministic run",
            ));
        }
        s.workers += 1;
        Ok(())
    }

    pub(crate) fn leave_interactive(&self) {
        self.run_state.lock().ignore_poison().workers -= 1;
    }

    /// Merges a worker's counters into the engine's.
    pub(crate) fn merge_stats(&self, s: &DoccStats) {
        self.stats.lock().ignore_poison().merge(s);
    }

    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        if Rec::ENABLED {
            self.recorder.now_ns()
        } else {
            0
        }
    }
}

/// The running deterministic run (`Docc::begin_run`).
#[derive(Debug)]
pub(crate) struct RunGuard<'e, L: Layout, Rec: Recorder> {
    engine: &'e Docc<L, Rec>,
}

impl<L: Layout, Rec: Recorder> Drop for RunGuard<'_, L, Rec> {
    /// Nothing runs any more: every queued tombstone retires, then the engine is free.
    fn drop(&mut self) {
        let engine = self.engine;
        let guard = crossbeam_epoch::pin();
        let tags = Rec::ENABLED.then_some(&engine.retired_tags);
        engine
            .committer()
            .retire_all::<L>(&engine.tables, &guard, tags);
        engine.run_state.lock().ignore_poison().deterministic = false;
    }
}

impl<L: Layout, Rec: Recorder> Engine for Docc<L, Rec> {
    type Worker<'e>
        = crate::interactive::DoccWorker<'e, L, Rec>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        self.mode().name()
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// An interactive worker ("sequence at commit", `crate::interactive`; not deterministic).
    /// Errors during a deterministic run.
    fn worker(&self) -> Result<Self::Worker<'_>, Error> {
        crate::interactive::DoccWorker::new(self)
    }

    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        let vs = self.tables.value_size(table)?;
        if value.len() != vs {
            return Err(Error::ValueSize {
                table: table.0,
                expected: vs,
                got: value.len(),
            });
        }
        let guard = crossbeam_epoch::pin();
        let entry = self.tables.get(table)?.get_or_insert(key, &guard)?;
        L::load(entry.record, value, &guard);
        Ok(())
    }
}
