//! Thread-aware batching (Ding, Kot, Gehrke, VLDB 2018, §4.2) over a decentralized engine:
//! `silo-ta`, Silo driven by `txlab-batch`'s [`ThreadAware`] wrapper, whose workers form batches
//! and run conflicting transactions of a batch on one thread.
//!
//! What differs from the interactive engines, in every result field's terms: `--threads` is the
//! wrapper's worker count (no other thread runs), pinned as the interactive workers are (worker
//! `i` on the placement's CPU `i`); latency runs from the batch's formation to the commit,
//! retries included, and commits are acknowledged at commit (`ack` is `commit`: Silo's epoch
//! acknowledgement is not waited for); conflicts are reported per attempt with their causes,
//! retried with the same backoff, and a transaction past the retry policy's `max_attempts` is
//! `abandoned`. The counters (over the measured interval): `batches`, `form_ns` (generating and
//! declaring the batches' transactions), `assign_ns` (the assignment), `wait_ns` (transactions'
//! time queued between their batch's formation and the start of their share) and
//! `stolen_shares`; divided by `commits` they are the per-transaction costs.

use super::Descriptor;
use super::interactive::occ_config;
use crate::driver::{Driven, Driver};
use crate::point::{EngineParams, PointCtx, PointOutcome, measure_loaded, with_history_check};
use crate::runner::{MAX_THREADS, RunConfig};
use crate::session::Session;
use crate::workloads::{AnyWorkload, WorkloadVisitor};
use txlab_batch::{ThreadAware, ThreadAwareConfig};
use txlab_check::MemoryRecorder;
use txlab_core::protocol::sync::Arc;
use txlab_core::{AckMode, Engine, Error};
use txlab_silo::Silo;
use txlab_workload::Workload;

/// The thread-aware protocols.
pub const PROTOCOLS: &[Descriptor] = &[Descriptor {
    name: "silo-ta",
    description: "Silo with thread-aware batching: conflicting transactions run on one thread (VLDB 2018 §4.2)",
    hidden: false,
    compared: false,
    flags: &["--epoch-ms"],
    accepts: Descriptor::any_workload,
    validate,
    run: silo_ta,
}];

/// Thread-aware batching with the paper's batch of 4 transactions per thread (§5.6).
fn config(threads: usize, run: &RunConfig) -> ThreadAwareConfig {
    let mut c = ThreadAwareConfig::new(threads);
    c.retry = run.retry;
    c
}

fn validate(threads: usize, _: &EngineParams, run: &RunConfig) -> Result<(), Error> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(Error::invalid(
            "--threads",
            threads,
            format!("1..={MAX_THREADS}"),
        ));
    }
    config(threads, run).validate()
}

fn silo_ta(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    w.visit(Visit { ctx })
}

struct Visit<'a> {
    ctx: &'a PointCtx<'a>,
}

impl WorkloadVisitor for Visit<'_> {
    type Output = Result<PointOutcome, Error>;

    fn visit<W>(self, workload: &W) -> Self::Output
    where
        W: Workload + Sync,
        W::Program: Clone + Send + 'static,
    {
        let (run, check) = (self.ctx.run, self.ctx.check);
        let silo = occ_config::<Silo>(self.ctx.engine)?;
        let schema = workload.schema();
        if check {
            let recorder = Arc::new(MemoryRecorder::new());
            let engine = Silo::builder()
                .config(silo)
                .recorder(Arc::clone(&recorder))
                .build(&schema)?;
            let wrapper = ThreadAware::new(engine, config(run.threads, run))?;
            let driver = TaDriver {
                wrapper: &wrapper,
                workload,
            };
            let out = measure_loaded(wrapper.engine(), workload, &driver, run, true)?;
            Ok(with_history_check(out, &recorder))
        } else {
            let wrapper = ThreadAware::new(
                Silo::builder().config(silo).build(&schema)?,
                config(run.threads, run),
            )?;
            let driver = TaDriver {
                wrapper: &wrapper,
                workload,
            };
            measure_loaded(wrapper.engine(), workload, &driver, run, false)
        }
    }
}

/// Thread-aware batching's [`Driver`] (module docs).
struct TaDriver<'a, E: Engine, W> {
    wrapper: &'a ThreadAware<E>,
    workload: &'a W,
}

impl<E, W> Driver for TaDriver<'_, E, W>
where
    E: Engine,
    W: Workload,
    W::Program: Clone + Send,
{
    fn engine_threads(&self, cfg: &RunConfig) -> usize {
        cfg.threads
    }

    fn ack(&self) -> AckMode {
        AckMode::AtCommit
    }

    fn drive(&self, session: &Session<'_>) -> Result<Driven, Error> {
        session.ready();
        let cfg = session.config();
        let cpus = self
            .wrapper
            .run_metered(self.workload, cfg.seed, session, |i| session.pin(i))?;
        Ok(Driven {
            cpus,
            counters: Vec::new(),
        })
    }
}
