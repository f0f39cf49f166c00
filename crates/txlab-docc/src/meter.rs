//! [`RunMeter`]: the stand-alone `txlab_core::protocol::meter::Meter` behind
//! `StandAlone::run` of DOCC and Calvin (the harness passes its own meter to `run_metered`, which owns warm-up,
//! cool-down and latency histograms). Every transaction issued before the [`RunLimit`] counts;
//! latency is kept in microseconds, commits by transaction type, and the engines' per-thread
//! counters (`Probe::count`) by name.

use crate::driver::{KindStats, new_histogram};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use txlab_core::protocol::meter::{Meter, Probe, Ticket};
use txlab_core::protocol::sync::{AtomicU64, Ordering};
use txlab_core::{ConflictCause, Error, RunLimit};

/// What the probes of a [`RunMeter`] reported.
#[derive(Debug, Clone)]
pub(crate) struct Totals {
    pub committed: u64,
    pub user_aborts: u64,
    pub retries: u64,
    pub by_kind: BTreeMap<&'static str, KindStats>,
    pub counters: BTreeMap<&'static str, u64>,
    pub latency_us: Histogram<u64>,
}

impl Totals {
    fn new() -> Result<Self, Error> {
        Ok(Self {
            committed: 0,
            user_aborts: 0,
            retries: 0,
            by_kind: BTreeMap::new(),
            counters: BTreeMap::new(),
            latency_us: new_histogram()?,
        })
    }

    fn merge(&mut self, o: &Totals) {
        self.committed += o.committed;
        self.user_aborts += o.user_aborts;
        self.retries += o.retries;
        for (k, s) in &o.by_kind {
            let e = self.by_kind.entry(k).or_default();
            e.committed += s.committed;
            e.user_aborts += s.user_aborts;
            e.restarts += s.restarts;
        }
        for (k, n) in &o.counters {
            *self.counters.entry(k).or_default() += n;
        }
        // Same bounds on both sides: adding cannot fail.
        let _ = self.latency_us.add(&o.latency_us);
    }
}

/// Issues transactions until a [`RunLimit`] and counts all of them (module docs).
#[derive(Debug)]
pub(crate) struct RunMeter {
    limit: RunLimit,
    started: Instant,
    issued: AtomicU64,
    totals: Mutex<Totals>,
}

impl RunMeter {
    pub fn new(limit: RunLimit) -> Result<Self, Error> {
        Ok(Self {
            limit: limit.validate()?,
            started: Instant::now(),
            issued: AtomicU64::new(0),
            totals: Mutex::new(Totals::new()?),
        })
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Everything reported by the probes dropped so far.
    pub fn totals(&self) -> Totals {
        self.totals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// One thread's handle on a [`RunMeter`]; its counts join the meter's when it is dropped.
#[derive(Debug)]
pub(crate) struct RunProbe<'m> {
    meter: &'m RunMeter,
    local: Totals,
}

impl Meter for RunMeter {
    type Probe<'m> = RunProbe<'m>;

    fn probe(&self, _thread: usize) -> RunProbe<'_> {
        let latency_us = Histogram::new_from(
            &self
                .totals
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .latency_us,
        );
        RunProbe {
            meter: self,
            local: Totals {
                committed: 0,
                user_aborts: 0,
                retries: 0,
                by_kind: BTreeMap::new(),
                counters: BTreeMap::new(),
                latency_us,
            },
        }
    }
}

impl Probe for RunProbe<'_> {
    fn issue(&mut self) -> Option<Ticket> {
        let go = match self.meter.limit {
            RunLimit::Transactions(n) => self.meter.issued.fetch_add(1, Ordering::Relaxed) < n,
            RunLimit::Duration(d) => self.meter.started.elapsed() < d,
        };
        go.then(|| Ticket::new(Instant::now(), true))
    }

    fn committed(&mut self, ticket: &Ticket, kind: &'static str) {
        self.local.committed += 1;
        self.local.by_kind.entry(kind).or_default().committed += 1;
        let us = ticket.issued().elapsed().as_micros() as u64;
        self.local.latency_us.saturating_record(us.max(1));
    }

    fn user_aborted(&mut self, _ticket: &Ticket) {
        self.local.user_aborts += 1;
    }

    fn conflict(&mut self, _ticket: &Ticket, _cause: &ConflictCause) {
        self.local.retries += 1;
    }

    fn retried(&mut self, _ticket: &Ticket, attempts: u64) {
        self.local.retries += attempts;
    }

    fn count(&mut self, name: &'static str, n: u64) {
        *self.local.counters.entry(name).or_default() += n;
    }
}

impl Drop for RunProbe<'_> {
    fn drop(&mut self) {
        self.meter
            .totals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .merge(&self.local);
    }
}
