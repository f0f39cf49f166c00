//! The sequencer: closed-loop clients submit programs; every epoch the sequencer seals what was
//! submitted into a batch, which fixes its order (Calvin's sequencing layer; the paper's
//! section 2.1). The batches, in order, are the **input log**: replaying it reproduces the run
//! (`Docc::replay`, `Calvin::replay`), and the serial-replay oracle checks a run against it.
//!
//! - **Clients** ([`DriverConfig::clients`] generators, seeded like every other driver's:
//!   `Workload::generator(client, seed)`) keep [`DriverConfig::concurrency`] transactions
//!   outstanding in all. A client whose transaction finished submits its next one at once; the
//!   sequencer picks it up at the next epoch boundary, so a transaction's latency, measured from
//!   its submission to its commit, includes the wait for the epoch to close.
//! - **Batches**: at each epoch boundary the submissions are sealed in submission order, at most
//!   `max_txns` per batch; each batch takes the engine's next epoch (this node's sequencer is
//!   sequencer 0 of the epoch), so `Seq = (epoch, 0, index)`.
//! - **Restarts** (Calvin's reconnaissance, `crate::calvin`): a transaction sent back by the
//!   engine is re-submitted into the next batch with the access set it discovered, marked in the
//!   log as the restart of its earlier entry.
//!
//! A multi-partition cluster (`crate::cluster`) sequences in its sans-IO nodes instead (timers,
//! not a thread): each node seals its own batch of an epoch and every node merges the epoch's
//! batches in sequencer-id order (the `sequencer` field of `Seq`); see `docs/protocols/docc.md`.

use crate::config::{BatchConfig, check_workers};
use crate::seq::Seq;
use std::time::{Duration, Instant};
use txlab_core::Error;
use txlab_core::protocol::meter::{Probe, Ticket};
use txlab_workload::{Generator, Workload};

/// Largest number of outstanding transactions per node.
pub const MAX_CONCURRENCY: usize = 1 << 22;

/// How a driven run submits transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriverConfig {
    /// Transactions outstanding at once (per node; `--concurrency`), `1..=2^22`.
    pub concurrency: usize,
    /// Client generators sharing them, `1..=min(concurrency, 1024)`.
    pub clients: usize,
    /// Seed of the generators.
    pub seed: u64,
    /// Keep the input log (for `replay` and the serial-replay oracle).
    pub keep_log: bool,
}

impl Default for DriverConfig {
    /// 4,096 outstanding transactions from 16 clients, seed 42, no log.
    fn default() -> Self {
        Self {
            concurrency: 4096,
            clients: 16,
            seed: 42,
            keep_log: false,
        }
    }
}

impl DriverConfig {
    /// Checks the configuration: an error naming the value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.concurrency == 0 || self.concurrency > MAX_CONCURRENCY {
            return Err(Error::invalid(
                "concurrency",
                self.concurrency,
                format!("1..={MAX_CONCURRENCY} outstanding transactions per node"),
            ));
        }
        if self.clients == 0 || self.clients > self.concurrency.min(1024) {
            return Err(Error::invalid(
                "clients",
                self.clients,
                format!(
                    "1..={} (at most one per outstanding transaction, and 1024)",
                    self.concurrency.min(1024)
                ),
            ));
        }
        check_workers(self.clients)
    }
}

/// A submitted transaction: the program and who is waiting for it.
#[derive(Debug, Clone)]
pub struct Submission<P> {
    /// The program.
    pub program: P,
    /// The submitting client.
    pub client: u32,
    /// The meter's stamp: when the client submitted it (latency starts here) and whether it
    /// counts.
    pub ticket: Ticket,
    /// Its position `(batch, index)` in the input log, once sealed.
    pub logged_at: (usize, u32),
    /// For a restarted transaction, the log position of the attempt it restarts.
    pub origin: Option<(usize, u32)>,
}

impl<P: txlab_core::Program + Send + Sync> crate::schedule::Job for Submission<P> {
    type P = P;
    #[inline]
    fn program(&self) -> &P {
        &self.program
    }
}

/// One batch of the input log.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedBatch<P> {
    /// The `Seq` of its first transaction (the others follow by index).
    pub first: Seq,
    /// The programs, in order.
    pub programs: Vec<P>,
    /// For each program re-submitted after a restart (Calvin's reconnaissance), its index and
    /// the position `(batch, index)` in the log of the entry it restarts.
    pub restarts: Vec<(u32, (usize, u32))>,
}

/// The input log of a run: its batches in order (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct InputLog<P> {
    /// The batches.
    pub batches: Vec<LoggedBatch<P>>,
}

impl<P> Default for InputLog<P> {
    fn default() -> Self {
        Self {
            batches: Vec::new(),
        }
    }
}

impl<P> InputLog<P> {
    /// Number of programs logged.
    pub fn len(&self) -> usize {
        self.batches.iter().map(|b| b.programs.len()).sum()
    }

    /// Whether nothing was logged.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that the batches' positions strictly increase (`Seq` of each first transaction
    /// above the last of the previous batch) and fit a batch: an error naming the batch.
    pub fn validate(&self) -> Result<(), Error> {
        let mut next = 0u64;
        for (b, batch) in self.batches.iter().enumerate() {
            let first = batch.first.raw();
            if first < next || batch.first.epoch() == 0 {
                return Err(Error::invalid(
                    "input log batch",
                    b,
                    format!(
                        "batch {b} starts at {} but positions must increase (the previous batch \
                         ends below {})",
                        batch.first,
                        Seq::from_raw(next)
                    ),
                ));
            }
            let end = u64::from(batch.first.index()) + batch.programs.len() as u64;
            if end > u64::from(Seq::MAX_BATCH) {
                return Err(Error::invalid(
                    "input log batch",
                    b,
                    format!("batch {b} holds more than 2^24 transactions past its first index"),
                ));
            }
            next = first + batch.programs.len() as u64;
        }
        Ok(())
    }

    /// Every program in log order, restarted entries excluded: the serial order the run is
    /// equivalent to (the serial-replay oracle executes this).
    pub fn serial_order(&self) -> Vec<&P> {
        let restarted: std::collections::HashSet<(usize, u32)> = self
            .batches
            .iter()
            .flat_map(|b| b.restarts.iter().map(|&(_, of)| of))
            .collect();
        self.batches
            .iter()
            .enumerate()
            .flat_map(|(b, batch)| {
                let restarted = &restarted;
                batch
                    .programs
                    .iter()
                    .enumerate()
                    .filter(move |(i, _)| !restarted.contains(&(b, *i as u32)))
                    .map(|(_, p)| p)
            })
            .collect()
    }
}

/// Where sealed batches go (each engine's scheduler).
pub(crate) trait BatchSink<P> {
    /// Prepares a batch's jobs before they are logged (Calvin's reconnaissance).
    fn prepare(&self, _jobs: &mut [Submission<P>]) {}

    /// Takes the next batch; `first` is the `Seq` of its first transaction.
    fn push(&self, first: Seq, jobs: Vec<Submission<P>>) -> Result<(), Error>;
    /// Hands out the next epoch.
    fn next_epoch(&self) -> Result<u32, Error>;
}

/// The sequencer's state during a run (module docs). Jobs are the workload's programs wrapped
/// by `wrap` (DOCC: as they are; Calvin: with room for a prediction). Whether to issue another
/// transaction is the meter's decision (`Probe::issue`, `txlab_core::protocol::meter`).
pub(crate) struct Sequencer<'w, W: Workload, Q> {
    generators: Vec<W::Generator>,
    wrap: fn(W::Program) -> Q,
    /// Clients that may submit right now, with when their last transaction finished.
    ready: Vec<(u32, Instant)>,
    pending: Vec<Submission<Q>>,
    batch: BatchConfig,
    /// The meter said stop.
    stopped: bool,
    pub in_flight: usize,
    started: Instant,
    pub log: Option<InputLog<Q>>,
    _workload: std::marker::PhantomData<&'w W>,
}

impl<'w, W: Workload, Q: Clone> Sequencer<'w, W, Q>
where
    W::Program: Clone,
{
    pub fn new(
        workload: &'w W,
        batch: BatchConfig,
        driver: &DriverConfig,
        wrap: fn(W::Program) -> Q,
    ) -> Result<Self, Error> {
        batch.validate()?;
        driver.validate()?;
        let generators = (0..driver.clients)
            .map(|c| workload.generator(c, driver.seed))
            .collect();
        let started = Instant::now();
        let ready = (0..driver.concurrency)
            .map(|i| ((i % driver.clients) as u32, started))
            .collect();
        Ok(Self {
            generators,
            wrap,
            ready,
            pending: Vec::new(),
            batch,
            stopped: false,
            in_flight: 0,
            started,
            log: driver.keep_log.then(InputLog::default),
            _workload: std::marker::PhantomData,
        })
    }

    /// When the run started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The epoch length.
    pub fn epoch(&self) -> Duration {
        self.batch.epoch
    }

    /// Whether the run is over: the meter said stop and nothing is outstanding.
    pub fn finished(&self) -> bool {
        self.in_flight == 0 && self.pending.is_empty() && self.stopped
    }

    /// A client's transaction finished at `at`: it may submit its next one.
    pub fn completed(&mut self, client: u32, at: Instant) {
        self.in_flight -= 1;
        self.ready.push((client, at));
    }

    /// Re-submits a restarted transaction into the next batch.
    pub fn resubmit(&mut self, s: Submission<Q>) {
        self.pending.push(s);
    }

    /// Generates the ready clients' next programs while the meter issues tickets. A ticket's
    /// latency starts when the client submitted, i.e. when its previous transaction finished,
    /// so it includes the wait for the epoch to close.
    fn generate(&mut self, probe: &mut impl Probe) {
        while let Some(&(client, at)) = self.ready.last() {
            if self.stopped {
                break;
            }
            let Some(ticket) = probe.issue() else {
                self.stopped = true;
                break;
            };
            self.ready.pop();
            let program = (self.wrap)(self.generators[client as usize].next().clone());
            self.pending.push(Submission {
                program,
                client,
                ticket: Ticket::new(at, ticket.counted()),
                logged_at: (0, 0),
                origin: None,
            });
        }
    }

    /// Closes the current epoch: seals the pending submissions into batches of at most
    /// `max_txns` and hands them to `sink`; returns the batches and transactions sealed.
    pub fn seal(
        &mut self,
        sink: &impl BatchSink<Q>,
        probe: &mut impl Probe,
    ) -> Result<(u64, u64), Error> {
        self.generate(probe);
        let (mut batches, mut txns) = (0, 0);
        while !self.pending.is_empty() {
            let n = self.pending.len().min(self.batch.max_txns);
            let mut jobs: Vec<_> = self.pending.drain(..n).collect();
            let first = Seq::new(sink.next_epoch()?, 0, 0)?;
            sink.prepare(&mut jobs);
            if let Some(log) = &mut self.log {
                let at = log.batches.len();
                let mut restarts = Vec::new();
                for (i, job) in jobs.iter_mut().enumerate() {
                    job.logged_at = (at, i as u32);
                    if let Some(of) = job.origin {
                        restarts.push((i as u32, of));
                    }
                }
                log.batches.push(LoggedBatch {
                    first,
                    programs: jobs.iter().map(|s| s.program.clone()).collect(),
                    restarts,
                });
            }
            self.in_flight += jobs.len();
            batches += 1;
            txns += jobs.len() as u64;
            sink.push(first, jobs)?;
        }
        Ok((batches, txns))
    }
}
