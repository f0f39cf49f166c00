//! [`Driver`]: the one interface through which the harness runs every execution model, and
//! [`measure`], which turns a driver's run into one [`RunResult`].
//!
//! A driver runs a loaded workload on its engine for as long as the [`Session`] issues
//! transactions, on threads it starts itself, and reports every transaction through
//! `txlab_core::protocol::meter` probes obtained from the session. It owns nothing of the measurement:
//! phases (warm-up, measured interval, cool-down), which transactions count, latency histograms,
//! CPU time, peak RSS and pinning live in [`crate::session`], once. Each execution model is one
//! implementation:
//!
//! | execution model | driver | threads issuing through probes |
//! | --- | --- | --- |
//! | interactive (Silo, TicToc, MVTO, NWR variants) | [`crate::runner::Interactive`] | `threads` pinned workers, each running its transactions begin to commit |
//! | validator pipeline (`batch-*`) | `Pipeline::run_metered` (txlab-batch) | the pipeline's clients; processors, storage workers and the validator run besides them |
//! | thread-aware batching (`silo-ta`) | `ThreadAware::run_metered` (txlab-batch) | `threads` workers, which also form the batches |
//! | deterministic (a sequencer with N workers) | the engine's `run_metered` | the sequencer issues each logged transaction; the worker that executes it reports the outcome |
//! | distributed (N server nodes plus client threads) | the cluster's `run_metered` | the client threads issue and report; the nodes run besides them |
//!
//! Why the engines' own loops stay in their crates and the measurement lives here: how clients,
//! processors, batch formers or sequencers hand transactions around *is* the protocol (the
//! pipeline's concurrency level, thread-aware batching's assignment), so it cannot be written
//! once; what is measured about a transaction (when it was issued, whether it counts, when it
//! ended and how) is the same for all of them, so it is written once, here, and every execution
//! model's numbers mean the same thing. The engine crates only call probes
//! (`txlab_core::protocol::meter`) and need no histogram of their own for the harness; their stand-alone
//! `run` methods are a [`RunLimit`](txlab_core::RunLimit) meter over the same loops.
//!
//! Engine counters that are not tied to one thread (the pipeline validator's aborts by stage)
//! come from [`Driver::counters`], sampled by the coordinator at both ends of the measured
//! interval; per-thread ones go through `Probe::count`.

use crate::runner::{RunConfig, RunResult};
use crate::session::Session;
use txlab_core::{AckMode, Error};

/// An execution model's way of running a loaded workload (module docs).
pub trait Driver: Sync {
    /// Every thread the engine runs during the measurement (issuers and helpers), to mark an
    /// oversubscribed run.
    fn engine_threads(&self, cfg: &RunConfig) -> usize;

    /// When commits are acknowledged (and so where latency ends).
    fn ack(&self) -> AckMode;

    /// The engine's cumulative counters; the result reports their growth over the measured
    /// interval (none by default).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// Runs until `session` stops issuing, reporting through its probes; calls
    /// [`Session::ready`] once its threads are started.
    fn drive(&self, session: &Session<'_>) -> Result<Driven, Error>;
}

/// What a [`Driver::drive`] returns besides what it reported through the probes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Driven {
    /// The CPU each issuing thread was pinned to (`None` where it was not pinned), one per
    /// `RunConfig::threads`.
    pub cpus: Vec<Option<usize>>,
    /// Engine counters over the whole run (maxima such as the pipeline's `peak_live`).
    pub counters: Vec<(&'static str, u64)>,
}

/// Runs `driver` as `cfg` says and measures it (module docs).
pub fn measure<D: Driver>(driver: &D, cfg: &RunConfig) -> Result<RunResult, Error> {
    cfg.validate()?;
    let session = Session::new(cfg, cfg.threads)?;
    let (driven, timing) = std::thread::scope(|s| {
        let session = &session;
        let handle = s.spawn(move || {
            let r = driver.drive(session);
            if r.is_err() {
                session.fail();
            }
            session.driver_done();
            r
        });
        let timing = session.coordinate(|| driver.counters());
        let driven = handle
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (driven, timing)
    });
    session.result(timing?, driver.ack(), driven?, driver.engine_threads(cfg))
}
