//! One process of a multi-process cluster (feature `tcp`; `txlab cluster --local N -- run
//! --protocol rococo ...`): nodes `0..N-1` of the cluster file are the servers, node `N-1` the
//! client (`txlab_rococo::remote`). A server process loads its shard and serves until released;
//! the client process waits until every server has loaded its shard and every link is up (at
//! most `--timeout-s`), starts the warm-up only then, and measures exactly as `txlab run` does (the same `measure_cluster`: the
//! same meter, result fields and, with `--check`, the same history, one-order and invariant
//! checks, on the history its coordinators recorded and on the shards the servers sent back).
//!
//! The emulated link latency does not apply (the link is real), and the client process has one
//! client node (`--client-threads 1`).

use super::{RunsCluster, measure_cluster, options, params};
use crate::point::{EngineParams, PointCtx, PointOutcome};
use crate::registry::Protocol;
use crate::runner::RunConfig;
use crate::session::Session;
use crate::workloads::{AnyWorkload, WorkloadKind, WorkloadParams};
use std::sync::Arc;
use txlab_core::Error;
use txlab_rococo::remote::Remote;
use txlab_rococo::{
    MemoryRecording, NoRecording, Params, PiecedWorkload, Recording, RococoCluster, RunOptions,
    RunReport,
};

/// What one process of the cluster did.
#[derive(Debug, Clone)]
pub enum RemoteOutcome {
    /// A server: its counters (`txlab_rococo::counters`) and its transport's.
    Server(Vec<(String, u64)>),
    /// The client: the measurement and, with `check`, what the checks found.
    Client(Box<PointOutcome>),
}

/// Runs this process's node of `remote` (module docs); `tweak` adjusts the cluster's
/// parameters (tests switch a mutant on).
#[allow(clippy::too_many_arguments)]
pub fn run_remote(
    protocol: Protocol,
    workload: WorkloadKind,
    params: &WorkloadParams,
    engine: &EngineParams,
    run: &RunConfig,
    check: bool,
    remote: &Remote,
    tweak: &dyn Fn(&mut Params),
) -> Result<RemoteOutcome, Error> {
    protocol.accepts(workload)?;
    protocol.validate(run.threads, engine, run)?;
    let servers = remote.servers()?;
    if engine.cluster.servers != servers {
        return Err(Error::invalid(
            "--servers",
            engine.cluster.servers,
            format!(
                "{servers}: the cluster's nodes less the client node ({} nodes)",
                servers + 1
            ),
        ));
    }
    if engine.cluster.client_threads != 1 {
        return Err(Error::invalid(
            "--client-threads",
            engine.cluster.client_threads,
            "1 in a multi-process cluster (its client process runs one client node)",
        ));
    }
    let p = txlab_rococo::Protocol::from_name(protocol.name())?;
    let ctx = PointCtx { engine, run, check };
    match AnyWorkload::new(workload, params)? {
        AnyWorkload::Tpcc(t) => run_node(p, &t, &ctx, remote, tweak),
        AnyWorkload::Ycsb(y) => run_node(p, &y, &ctx, remote, tweak),
        _ => Err(Error::Misuse(
            "the distributed protocols run only workloads with pieces",
        )),
    }
}

fn run_node<W: PiecedWorkload + Sync>(
    protocol: txlab_rococo::Protocol,
    workload: &W,
    ctx: &PointCtx<'_>,
    remote: &Remote,
    tweak: &dyn Fn(&mut Params),
) -> Result<RemoteOutcome, Error> {
    let mut p = params(ctx.engine, ctx.run, ctx.check);
    tweak(&mut p);
    let cluster = RococoCluster::new(workload.clone(), protocol, remote.servers()?, p)?;
    if remote.is_client()? {
        let opts = RunOptions {
            link: None,
            ..options(ctx.engine)
        };
        let out = measure_cluster(&cluster, workload, opts, ctx, &Client(remote))?;
        return Ok(RemoteOutcome::Client(Box::new(out)));
    }
    let cluster = cluster.loading_only(remote.id.0);
    workload.load(&cluster)?;
    let served = if ctx.check {
        cluster.serve::<MemoryRecording>(remote)?
    } else {
        cluster.serve::<NoRecording>(remote)?
    };
    let mut counters: Vec<(String, u64)> = served
        .counters
        .pairs()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    counters.extend(
        served
            .net
            .counters()
            .into_iter()
            .filter(|(k, _)| !k.starts_with("net.link.") && !k.starts_with("net.node.")),
    );
    Ok(RemoteOutcome::Server(counters))
}

/// This process is the client node of `remote`.
struct Client<'a>(&'a Remote);

impl RunsCluster for Client<'_> {
    fn run<W: PiecedWorkload, R: Recording>(
        &self,
        cluster: &RococoCluster<W>,
        opts: &RunOptions,
        recording: Arc<R>,
        session: &Session<'_>,
    ) -> Result<RunReport, Error> {
        // The warm-up starts once every server has loaded its shard and its links are up.
        cluster.run_client(self.0, opts, recording, session, R::ENABLED, || {
            session.ready()
        })
    }
}
