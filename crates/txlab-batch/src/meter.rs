//! [`LimitMeter`]: the stand-alone [`Meter`] behind [`Pipeline::run`](crate::Pipeline::run) and
//! [`ThreadAware::run`](crate::ThreadAware::run).
//!
//! Both engines run their own loops and report every transaction to a [`Meter`]
//! (`txlab_core::protocol::meter`); the harness passes its own meter (`run_metered`), which owns warm-up,
//! cool-down and the latency histograms of every txlab measurement. This crate's `run` methods
//! are the stand-alone form for tests, examples and embedders without the harness: every
//! transaction issued before the [`RunLimit`] counts, and latency is kept in microseconds.

use hdrhistogram::Histogram;
use std::time::{Duration, Instant};
use txlab_core::protocol::meter::{Meter, Probe, Ticket};
use txlab_core::protocol::sync::{AtomicU64, IgnorePoison, Mutex, Ordering};
use txlab_core::{ConflictCause, Error, RunLimit};

/// Latencies above this many microseconds (one minute) are recorded as this.
const MAX_LATENCY_US: u64 = 60_000_000;

/// What a [`LimitMeter`] collected over a run.
#[derive(Debug, Clone)]
pub(crate) struct Totals {
    pub(crate) committed: u64,
    pub(crate) user_aborts: u64,
    pub(crate) conflicts: u64,
    pub(crate) abandoned: u64,
    pub(crate) counters: Vec<(&'static str, u64)>,
    pub(crate) latency_us: Histogram<u64>,
}

impl Totals {
    fn new() -> Result<Self, Error> {
        Ok(Self {
            committed: 0,
            user_aborts: 0,
            conflicts: 0,
            abandoned: 0,
            counters: Vec::new(),
            latency_us: Histogram::new_with_bounds(1, MAX_LATENCY_US, 3)
                .map_err(|e| Error::Internal(format!("latency histogram: {e}")))?,
        })
    }

    /// The counter `name`'s total (0 if never counted).
    pub(crate) fn counter(&self, name: &str) -> u64 {
        self.counters
            .iter()
            .find(|c| c.0 == name)
            .map_or(0, |c| c.1)
    }

    fn add_counter(&mut self, name: &'static str, n: u64) {
        match self.counters.iter_mut().find(|c| c.0 == name) {
            Some(c) => c.1 += n,
            None => self.counters.push((name, n)),
        }
    }

    fn merge(&mut self, other: &Totals) {
        self.committed += other.committed;
        self.user_aborts += other.user_aborts;
        self.conflicts += other.conflicts;
        self.abandoned += other.abandoned;
        for &(name, n) in &other.counters {
            self.add_counter(name, n);
        }
        // Same bounds on both sides: adding cannot fail.
        let _ = self.latency_us.add(&other.latency_us);
    }
}

/// Issues transactions until a [`RunLimit`] and counts all of them (module docs).
#[derive(Debug)]
pub(crate) struct LimitMeter {
    limit: RunLimit,
    started: Instant,
    issued: AtomicU64,
    totals: Mutex<Totals>,
}

impl LimitMeter {
    /// A meter for `limit` (validated); its clock starts now.
    pub(crate) fn new(limit: RunLimit) -> Result<Self, Error> {
        Ok(Self {
            limit: limit.validate()?,
            started: Instant::now(),
            issued: AtomicU64::new(0),
            totals: Mutex::new(Totals::new()?),
        })
    }

    /// Time since the meter was created.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Everything reported by the probes dropped so far.
    pub(crate) fn totals(&self) -> Totals {
        self.totals.lock().ignore_poison().clone()
    }
}

/// One thread's handle on a [`LimitMeter`]; its counts join the meter's when it is dropped.
#[derive(Debug)]
pub(crate) struct LimitProbe<'m> {
    meter: &'m LimitMeter,
    local: Totals,
}

impl Meter for LimitMeter {
    type Probe<'m> = LimitProbe<'m>;

    fn probe(&self, _thread: usize) -> LimitProbe<'_> {
        let local = Totals {
            latency_us: Histogram::new_from(&self.totals.lock().ignore_poison().latency_us),
            counters: Vec::new(),
            committed: 0,
            user_aborts: 0,
            conflicts: 0,
            abandoned: 0,
        };
        LimitProbe { meter: self, local }
    }
}

impl Probe for LimitProbe<'_> {
    fn issue(&mut self) -> Option<Ticket> {
        let go = match self.meter.limit {
            RunLimit::Transactions(n) => self.meter.issued.fetch_add(1, Ordering::Relaxed) < n,
            RunLimit::Duration(d) => self.meter.started.elapsed() < d,
        };
        go.then(|| Ticket::new(Instant::now(), true))
    }

    fn committed(&mut self, ticket: &Ticket, _kind: &'static str) {
        self.local.committed += 1;
        let us = ticket.issued().elapsed().as_micros() as u64;
        self.local.latency_us.saturating_record(us.max(1));
    }

    fn user_aborted(&mut self, _ticket: &Ticket) {
        self.local.user_aborts += 1;
    }

    fn conflict(&mut self, _ticket: &Ticket, _cause: &ConflictCause) {
        self.local.conflicts += 1;
    }

    fn retried(&mut self, _ticket: &Ticket, attempts: u64) {
        self.local.conflicts += attempts;
    }

    fn abandoned(&mut self, _ticket: &Ticket, _cause: &ConflictCause) {
        self.local.conflicts += 1;
        self.local.abandoned += 1;
    }

    fn count(&mut self, name: &'static str, n: u64) {
        self.local.add_counter(name, n);
    }
}

impl Drop for LimitProbe<'_> {
    fn drop(&mut self) {
        self.meter.totals.lock().ignore_poison().merge(&self.local);
    }
}
