//! [`Pipeline::run`]: transaction clients and processors driving a workload through the
//! pipeline, and the [`RunStats`] they report.
//!
//! Clients (§5.1) keep the system at its concurrency level: client `c` of `n` keeps up to its
//! share of [`PipelineConfig::concurrency`](super::PipelineConfig) transactions in flight,
//! hands each new one to a processor (round-robin) and waits only for completions. Latency is
//! measured by the client, from submission to the commit decision, restarts included.
//!
//! A run is bounded by a transaction count (tests) or a duration (measurements); in both cases
//! every submitted transaction finishes before `run` returns.

use super::engine::Pipeline;
use super::processor::{Completion, Finished, ProcessorCounters, ProcessorEvent, processor};
use super::validator::ValidatorSnapshot;
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};
use txlab_core::Error;
use txlab_core::history::Recorder;
use txlab_core::sync::mpsc::channel;
use txlab_core::sync::{AtomicU64, Ordering};
use txlab_workload::{Generator, Workload};

pub use txlab_core::RunLimit;

/// What a run measured.
#[derive(Debug, Clone)]
pub struct RunStats {
    /// The batching mode's name.
    pub mode: &'static str,
    /// Wall-clock time from the first submission to the last completion.
    pub elapsed: Duration,
    /// Transactions committed.
    pub committed: u64,
    /// Transactions the program rolled back itself.
    pub user_aborts: u64,
    /// Attempts the validator aborted (each was restarted).
    pub restarts: u64,
    /// Most transactions live in one processor at once.
    pub peak_live: usize,
    /// The validator's counters over the run.
    pub validator: ValidatorSnapshot,
    /// Latency (microseconds) from submission to the commit decision, committed transactions.
    pub latency_us: Histogram<u64>,
}

impl RunStats {
    /// Committed transactions per second.
    pub fn throughput(&self) -> f64 {
        self.committed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Mean latency in microseconds.
    pub fn mean_latency_us(&self) -> f64 {
        self.latency_us.mean()
    }

    /// Latency at `percentile` (0..=100) in microseconds.
    pub fn latency_percentile_us(&self, percentile: f64) -> u64 {
        self.latency_us.value_at_percentile(percentile)
    }

    /// Aborted attempts per committed transaction.
    pub fn abort_rate(&self) -> f64 {
        self.restarts as f64 / self.committed.max(1) as f64
    }

    /// Transactions one reordering worker (or, in the single-thread layout, the validator
    /// thread) processes per second of its busy time (pre-validation, graph and reordering);
    /// `None` if nothing was reordered. Busy time is wall-clock time, so a worker descheduled
    /// mid-batch counts as busy: compare rates within one layout and machine.
    pub fn reorder_rate(&self) -> Option<f64> {
        (self.validator.reorder_ns > 0).then(|| {
            self.validator.reordered_txns as f64 / (self.validator.reorder_ns as f64 / 1e9)
        })
    }
}

#[derive(Debug)]
struct ClientResult {
    committed: u64,
    user_aborts: u64,
    latency_us: Histogram<u64>,
    error: Option<Error>,
}

fn new_histogram() -> Result<Histogram<u64>, Error> {
    Histogram::new_with_bounds(1, 60_000_000, 3)
        .map_err(|e| Error::Internal(format!("latency histogram: {e}")))
}

impl<Rec: Recorder> Pipeline<Rec> {
    /// Runs `workload`'s transactions (generators seeded with `seed`) through the pipeline with
    /// the configured clients, processors and concurrency until `limit` (module docs). The
    /// workload must already be loaded ([`Workload::load`] on this engine).
    pub fn run<W>(&self, workload: &W, limit: RunLimit, seed: u64) -> Result<RunStats, Error>
    where
        W: Workload,
        W::Program: Clone + Send + 'static,
    {
        limit.validate()?;
        let config = self.config;
        let before = self.shared.counters.snapshot();
        let issued = AtomicU64::new(0);
        let started = Instant::now();
        let deadline = match limit {
            RunLimit::Duration(d) => Some(started + d),
            RunLimit::Transactions(_) => None,
        };
        let may_issue = || match limit {
            RunLimit::Transactions(n) => issued.fetch_add(1, Ordering::Relaxed) < n,
            RunLimit::Duration(_) => deadline.is_some_and(|d| Instant::now() < d),
        };

        let mut processor_queues = Vec::new();
        let mut processor_inboxes = Vec::new();
        for _ in 0..config.processors {
            let (tx, rx) = channel::<ProcessorEvent<W::Program>>();
            processor_queues.push(tx);
            processor_inboxes.push(rx);
        }
        let mut client_queues = Vec::new();
        let mut client_inboxes = Vec::new();
        for _ in 0..config.clients {
            let (tx, rx) = channel::<Completion>();
            client_queues.push(tx);
            client_inboxes.push(rx);
        }

        let (client_results, processor_results) = std::thread::scope(|scope| {
            let client_queues = &client_queues;
            let processors: Vec<_> = processor_inboxes
                .into_iter()
                .zip(processor_queues.iter())
                .map(|(inbox, own)| {
                    let own = own.clone();
                    scope.spawn(move || processor(self, inbox, own, client_queues))
                })
                .collect();
            let clients: Vec<_> = client_inboxes
                .into_iter()
                .enumerate()
                .map(|(c, inbox)| {
                    let share = config.concurrency / config.clients
                        + usize::from(c < config.concurrency % config.clients);
                    let queues = processor_queues.clone();
                    let may_issue = &may_issue;
                    let mut generator = workload.generator(c, seed);
                    scope.spawn(move || -> Result<ClientResult, Error> {
                        let mut result = ClientResult {
                            committed: 0,
                            user_aborts: 0,
                            latency_us: new_histogram()?,
                            error: None,
                        };
                        let mut in_flight = 0usize;
                        let mut stopping = false;
                        let mut next = c;
                        loop {
                            while !stopping && in_flight < share {
                                if !may_issue() {
                                    stopping = true;
                                    break;
                                }
                                let program = generator.next().clone();
                                next = (next + 1) % queues.len();
                                queues[next]
                                    .send(ProcessorEvent::New {
                                        client: c,
                                        program,
                                        submitted: Instant::now(),
                                    })
                                    .map_err(|_| {
                                        Error::Internal("a processor has stopped".into())
                                    })?;
                                in_flight += 1;
                            }
                            if in_flight == 0 {
                                break;
                            }
                            let done = inbox.recv().map_err(|_| {
                                Error::Internal("processors stopped before answering".into())
                            })?;
                            in_flight -= 1;
                            match done.finished {
                                Finished::Committed => {
                                    result.committed += 1;
                                    let us = done.submitted.elapsed().as_micros() as u64;
                                    result.latency_us.saturating_record(us.max(1));
                                }
                                Finished::UserAborted => result.user_aborts += 1,
                                Finished::Failed(e) => {
                                    result.error.get_or_insert(e);
                                    stopping = true;
                                }
                            }
                        }
                        Ok(result)
                    })
                })
                .collect();
            let client_results: Vec<_> = clients
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::Internal("a client thread panicked".into())))
                })
                .collect();
            for q in &processor_queues {
                let _ = q.send(ProcessorEvent::Stop);
            }
            let processor_results: Vec<Result<ProcessorCounters, Error>> = processors
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::Internal("a processor thread panicked".into()))
                    })
                })
                .collect();
            (client_results, processor_results)
        });
        let elapsed = started.elapsed();
        let mut stats = RunStats {
            mode: config.mode.name(),
            elapsed,
            committed: 0,
            user_aborts: 0,
            restarts: 0,
            peak_live: 0,
            validator: self.shared.counters.snapshot().since(&before),
            latency_us: new_histogram()?,
        };
        for p in processor_results {
            let p = p?;
            stats.restarts += p.restarts;
            stats.peak_live = stats.peak_live.max(p.peak_live);
        }
        for c in client_results {
            let c = c?;
            if let Some(e) = c.error {
                return Err(e);
            }
            stats.committed += c.committed;
            stats.user_aborts += c.user_aborts;
            stats
                .latency_us
                .add(&c.latency_us)
                .map_err(|e| Error::Internal(format!("latency histogram: {e}")))?;
        }
        Ok(stats)
    }
}
