//! A Calvin-style deterministic-locking baseline (A. Thomson, T. Diamond, S.-C. Weng, K. Ren,
//! P. Shao, D. J. Abadi, "Calvin: Fast Distributed Transactions for Partitioned Database
//! Systems", SIGMOD 2012), on the same sequencer, batches, driver and `InPlace` storage as DOCC,
//! so the two differ only in local concurrency control (the DOCC paper built DOCC on Calvin's
//! codebase for the same reason).
//!
//! ```text
//! sequencer  seal the epoch's submissions (crate::sequencer); run reconnaissance on dependent
//!            programs (crate::recon) and log the prediction with the program; compute each
//!            transaction's lock set (locks) and admit it to its lock managers in order
//! lock mgr   queue the requests behind earlier ones, grant in sequence order; a transaction
//!            with every lock granted goes to the workers
//! worker     run the program against the records directly (they are locked), every access
//!            checked against the lock set (Guarded); install the writes with version Seq, unlink
//!            deleted records at once (the exclusive lock keeps everyone else away), release
//!            through the lock managers
//! restart    an access outside the lock set (a wrong prediction) aborts the attempt, releases,
//!            and re-sequences the transaction with the keys it discovered (`ollp_restarts`);
//!            from its third restart on it runs as a barrier (below); at most 16 restarts, then
//!            Error::Invariant naming the program kind and key
//! ```
//!
//! **Barriers.** Reconnaissance runs when a batch is sealed, before the batch executes; a
//! program whose keys depend on data that every few transactions change (TPC-C's StockLevel
//! reads the stocks of the last 20 orders' items) can be predicted wrong again and again. A
//! transaction that restarted [`BARRIER_AFTER`] times is admitted only once every earlier
//! transaction has finished, with reconnaissance on exactly the state it will see; it stalls the
//! pipeline while it waits, which is the price of knowing lock sets in advance. The flag is part
//! of the logged input, so a replay makes the same exact prediction. Only a program whose keys do
//! not follow from the state (a nondeterministic one) reaches the limit.
//!
//! `Deterministic::execute_log` must reproduce the serial execution in log order, so a
//! transaction cannot be re-sequenced there: it runs reconnaissance for a dependent program once
//! every earlier transaction has finished, on exactly the state the program will see, so the
//! prediction is exact and nothing restarts (dependent programs are barriers; the driver's
//! pipelined reconnaissance is what the benchmarks measure). An access outside an exact or
//! declared set there is a program that declares wrongly: `Error::Invariant`.
//!
//! The interactive entry point (`Engine::worker`) is DOCC's over the same storage (sequence at
//! commit, `crate::interactive`), for loading, checking and digests; an interactive Calvin is not
//! Calvin (lock sets must be known before execution), so it does not join the correctness kit.

mod locks;
mod run;

use crate::config::{BatchConfig, DoccConfig, check_workers};
use crate::engine::Docc;
use crate::layout::InPlace;
use locks::LockReq;
use std::sync::atomic::{AtomicUsize, Ordering};
use txlab_core::protocol::assemble::{Assemble, Builder};
use txlab_core::protocol::history::{NoRecorder, Recorder};
use txlab_core::protocol::sync::Arc;
use txlab_core::{Engine, Error, Schema, TableId};
use txlab_storage::Tables;

/// Most reconnaissance restarts of one transaction.
pub const MAX_RESTARTS: u32 = 16;
/// Restarts after which a transaction runs as a barrier (module docs).
pub const BARRIER_AFTER: u32 = 2;

/// Calvin's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CalvinConfig {
    /// Worker threads of a driven run, `1..=1024`.
    pub workers: usize,
    /// Lock-manager threads (`--lock-managers`), `1..=workers` (Calvin and the paper use 1).
    pub lock_managers: usize,
    /// Epoch batches of a driven run.
    pub batch: BatchConfig,
    /// Record histories on the logical clock (as `DoccConfig::sequence_clock`).
    pub sequence_clock: bool,
    /// Ordered tables are locked in stripes of `2^lock_stripe_shift` consecutive keys
    /// (`locks::LockSpace`), `0..=63`.
    pub lock_stripe_shift: u32,
    /// Test-only fault injection (`Mutation::CalvinGrantOutOfOrder`, `CalvinSkipLock`).
    #[cfg(feature = "mutation")]
    pub mutation: Option<crate::config::Mutation>,
}

impl Default for CalvinConfig {
    fn default() -> Self {
        Self {
            workers: 1,
            lock_managers: 1,
            batch: BatchConfig::default(),
            sequence_clock: false,
            lock_stripe_shift: DEFAULT_LOCK_STRIPE_SHIFT,
            #[cfg(feature = "mutation")]
            mutation: None,
        }
    }
}

/// Default [`CalvinConfig::lock_stripe_shift`]: stripes of 1,024 keys.
pub const DEFAULT_LOCK_STRIPE_SHIFT: u32 = 10;

impl CalvinConfig {
    /// Checks the configuration: an error naming the value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        check_workers(self.workers)?;
        if self.lock_managers == 0 || self.lock_managers > self.workers {
            return Err(Error::invalid(
                "lock_managers",
                self.lock_managers,
                format!("1..={} (at most one per worker)", self.workers),
            ));
        }
        if self.lock_stripe_shift > 63 {
            return Err(Error::invalid(
                "lock_stripe_shift",
                self.lock_stripe_shift,
                "0..=63 (stripes of 2^shift keys)",
            ));
        }
        self.batch.validate()
    }

    fn docc(&self) -> DoccConfig {
        DoccConfig {
            workers: self.workers,
            prefetch: false,
            batch: self.batch,
            sequence_clock: self.sequence_clock,
            #[cfg(feature = "mutation")]
            mutation: self.mutation,
        }
    }
}

/// A Calvin-style database (module docs).
#[derive(Debug)]
pub struct Calvin<Rec: Recorder = NoRecorder> {
    db: Docc<InPlace, Rec>,
    config: CalvinConfig,
    space: locks::LockSpace,
    stats: std::sync::Mutex<CalvinStats>,
    /// Nanoseconds the lock managers spent handling messages, live (summed over managers).
    busy_ns: std::sync::atomic::AtomicU64,
}

impl Calvin<NoRecorder> {
    /// The one way to build a Calvin engine: `.config(..)`, `.recorder(..)` to record
    /// histories, then `.build(&schema)`.
    pub fn builder() -> Builder<Self> {
        Builder::new()
    }
}

impl Assemble for Calvin<NoRecorder> {
    type Config = CalvinConfig;
    type Tables = std::convert::Infallible;
    type Engine<Rec: Recorder> = Calvin<Rec>;

    fn assemble<Rec: Recorder>(
        schema: &Schema,
        tables: Option<std::convert::Infallible>,
        config: CalvinConfig,
        recorder: Arc<Rec>,
    ) -> Result<Calvin<Rec>, Error> {
        if let Some(never) = tables {
            match never {}
        }
        Calvin::with_recorder(schema, config, recorder)
    }
}

impl<Rec: Recorder> Calvin<Rec> {
    /// A database whose transactions are recorded by `recorder`.
    fn with_recorder(
        schema: &Schema,
        config: CalvinConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        config.validate()?;
        let db = Docc::builder()
            .config(config.docc())
            .recorder(recorder)
            .build(schema)?;
        Ok(Self {
            space: locks::LockSpace::new(&db.tables, config.lock_stripe_shift),
            db,
            config,
            stats: std::sync::Mutex::new(CalvinStats::default()),
            busy_ns: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &CalvinConfig {
        &self.config
    }

    /// The recorder.
    pub fn recorder(&self) -> &Arc<Rec> {
        self.db.recorder()
    }

    #[inline]
    /// The engine over the same storage (reads of committed state, `crate::cluster`).
    pub(crate) fn inner(&self) -> &Docc<InPlace, Rec> {
        &self.db
    }

    fn tables(&self) -> &Tables<crate::layout::InPlaceRecord> {
        &self.db.tables
    }
}

impl<Rec: Recorder> Engine for Calvin<Rec> {
    type Worker<'e>
        = crate::interactive::DoccWorker<'e, InPlace, Rec>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        "calvin"
    }

    fn schema(&self) -> &Schema {
        self.db.schema()
    }

    /// DOCC's interactive worker over the same storage (module docs).
    fn worker(&self) -> Result<Self::Worker<'_>, Error> {
        self.db.worker()
    }

    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        self.db.load(table, key, value)
    }
}

/// A sequenced transaction on its way through the lock managers and a worker.
pub(crate) struct CalvinTxn<J> {
    pub job: J,
    pub rank: u64,
    pub seq: u64,
    /// The full lock set, sorted by manager then key (the guard checks against it).
    pub locks: Vec<LockReq>,
    /// Per manager: `(manager, start, end)` of the locks it acquires.
    ranges: Vec<(usize, usize, usize)>,
    /// Locks not granted yet.
    missing: AtomicUsize,
}

impl<J> CalvinTxn<J> {
    /// A transaction acquiring `locks[..acquire]` (all of them, except under the test-only
    /// `CalvinSkipLock` mutant), split over `managers`.
    pub fn new(
        job: J,
        rank: u64,
        seq: u64,
        locks: Vec<LockReq>,
        acquire: usize,
        managers: usize,
    ) -> Self {
        let mut ranges: Vec<(usize, usize, usize)> = Vec::new();
        for (i, r) in locks[..acquire].iter().enumerate() {
            let m = locks::manager_of(&r.key, managers);
            match ranges.last_mut() {
                Some(last) if last.0 == m => last.2 = i + 1,
                _ => ranges.push((m, i, i + 1)),
            }
        }
        Self {
            job,
            rank,
            seq,
            locks,
            ranges,
            missing: AtomicUsize::new(acquire),
        }
    }

    /// The requests manager `m` handles.
    pub fn requests(&self, m: usize) -> &[LockReq] {
        self.ranges
            .iter()
            .find(|r| r.0 == m)
            .map_or(&[], |&(_, a, b)| &self.locks[a..b])
    }

    /// The managers this transaction is admitted to.
    pub fn managers(&self) -> impl Iterator<Item = usize> + '_ {
        self.ranges.iter().map(|r| r.0)
    }

    /// Counts `n` granted locks; `true` if they were the last.
    pub fn grant(&self, n: usize) -> bool {
        self.missing.fetch_sub(n, Ordering::AcqRel) == n
    }

    /// Whether the transaction needs no lock at all.
    pub fn lock_free(&self) -> bool {
        self.ranges.is_empty()
    }
}

pub use run::CalvinStats;
