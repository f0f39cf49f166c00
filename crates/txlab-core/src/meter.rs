//! [`Meter`] and [`Probe`]: how a driver that runs a workload by itself reports what happened to
//! whoever measures it.
//!
//! Engines that are not driven one transaction at a time by the caller's threads (the validator
//! pipeline's clients and processors, thread-aware batching's batch former, a deterministic
//! sequencer with its workers, the client threads of a distributed cluster) run their own loops.
//! They do not keep latency histograms, phases or throughput themselves: they report every
//! transaction's life to a [`Meter`], and the meter decides when to stop issuing, which
//! transactions count and how latency is recorded. The harness's meter implements warm-up, the
//! measured interval and cool-down once for every driver; a crate that runs stand-alone (tests,
//! examples) implements a small meter over a [`RunLimit`](crate::RunLimit).
//!
//! # Protocol
//!
//! 1. Every thread that issues or completes transactions asks the meter for its own [`Probe`]
//!    ([`Meter::probe`]); probes are not shared between threads.
//! 2. Before issuing a transaction, the issuing thread calls [`Probe::issue`]. `None` means stop
//!    issuing; transactions already issued still finish and are reported. `Some(ticket)` stamps
//!    the transaction: the [`Ticket`] records when it was issued and whether it counts. It is
//!    `Copy` and travels with the transaction across threads and queues.
//! 3. Whichever thread learns how the transaction ended reports it once, through its own probe:
//!    [`Probe::committed`], [`Probe::user_aborted`] or [`Probe::abandoned`], after any number of
//!    [`Probe::conflict`] / [`Probe::retried`] reports for its aborted attempts.
//! 4. A ticket's `counted` flag is fixed at issue: a transaction counts iff it was issued in the
//!    measured interval, and then it counts through all its retries even if the interval ends
//!    meanwhile. Latency is measured from [`Ticket::issued`] to the report of the outcome.
//!
//! Engine-wide event counts that are not tied to one transaction (batches formed, time spent
//! assigning) go through [`Probe::count`], which a meter counts only while measuring.

use crate::error::ConflictCause;
use std::time::Instant;

/// The stamp a transaction gets when it is issued ([`Probe::issue`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    issued: Instant,
    counted: bool,
}

impl Ticket {
    /// A ticket issued at `issued`; `counted` says whether its outcome belongs to the
    /// measurement.
    #[inline]
    pub fn new(issued: Instant, counted: bool) -> Self {
        Self { issued, counted }
    }

    /// When the transaction was issued (where its latency starts).
    #[inline]
    pub fn issued(&self) -> Instant {
        self.issued
    }

    /// Whether the transaction's outcome is counted.
    #[inline]
    pub fn counted(&self) -> bool {
        self.counted
    }
}

/// A measurement that drivers report to (module docs).
pub trait Meter: Sync {
    /// One thread's reporting handle.
    type Probe<'m>: Probe
    where
        Self: 'm;

    /// A probe for the calling thread; `thread` numbers the driver's threads from 0 (issuers
    /// first), so reports can be told apart per thread.
    fn probe(&self, thread: usize) -> Self::Probe<'_>;
}

/// One thread's handle on a [`Meter`] (module docs).
pub trait Probe: Send {
    /// Whether to issue another transaction: `Some(ticket)` to issue it, `None` to stop issuing.
    fn issue(&mut self) -> Option<Ticket>;

    /// The transaction committed (its acknowledgement, if any, was given); `kind` is its
    /// `Program::kind()`.
    fn committed(&mut self, ticket: &Ticket, kind: &'static str);

    /// The transaction's program rolled it back; it is finished.
    fn user_aborted(&mut self, ticket: &Ticket);

    /// One attempt of the transaction aborted on a conflict of this cause and will be retried.
    fn conflict(&mut self, ticket: &Ticket, cause: &ConflictCause);

    /// `attempts` attempts of the transaction aborted on conflicts whose causes the driver does
    /// not report one by one (they were retried).
    fn retried(&mut self, ticket: &Ticket, attempts: u64);

    /// The transaction's last attempt aborted on a conflict of this cause and the driver gave the
    /// transaction up instead of retrying it (a retry limit, or a drain that ran out of time); it
    /// is finished. Meters that count abandoned transactions override this; by default it is
    /// reported as one more conflict.
    fn abandoned(&mut self, ticket: &Ticket, cause: &ConflictCause) {
        self.conflict(ticket, cause);
    }

    /// Adds `n` to the engine counter `name` if the meter is measuring.
    fn count(&mut self, name: &'static str, n: u64);
}
