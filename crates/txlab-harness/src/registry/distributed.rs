//! The distributed engines of `txlab-rococo` (Mu et al., "Extracting More Concurrency from
//! Distributed Transactions", OSDI 2014): `rococo`, and the baselines `2pl-2pc` and `occ-2pc` on
//! the same servers, pieces and transport. A point is a cluster of `--servers` single-threaded
//! server nodes and `--client-threads` client nodes running `--clients-per-server` closed-loop
//! clients per server, all on `inproc` threads with a `--link-latency-us` one-way link delay.
//!
//! What differs from the interactive engines, in every result field's terms:
//!
//! - **threads**: `--threads` must be 1 (the harness's issuing thread); the cluster's threads
//!   (servers, client nodes and the issuing thread) are what `oversubscribed` compares with the
//!   CPUs. Nothing is pinned.
//! - **latency**: from a client's issue to its coordinator's end of the transaction (both
//!   phases, or every attempt of a baseline), on the issuing thread's clock.
//! - **aborts**: a baseline's aborted attempts are `conflicts` (causes `wound`, `validation`,
//!   `lock`); ROCOCO has none: its commit rate (`1 - abort_rate`) is 1 for read-write types.
//!   A read-only transaction whose rounds never agree is abandoned and counted as a user abort
//!   and as `ro_abandoned`.
//! - **counters**: the nodes' counters over the whole run (`txlab_rococo::counters`): graph
//!   vertices and bytes per commit message (`_mean_x100`, `_p99`), status requests, SCC sizes,
//!   read-only retries, wounds and validation aborts, GC'd vertices and the graph size held;
//!   for `rococo`, the largest server graph sampled every second as `graph_held_tNNNN`
//!   (seconds since the cluster started, warm-up included).
//!
//! Multi-process runs (one node per process over TCP, `txlab cluster --local N`) are
//! `remote`'s (feature `tcp`).
//!
//! With `--check` every transaction is recorded; the merged column-group history is checked
//! for strict serializability and the one-order property, and the merged shards against the
//! workload's invariants. Only TPC-C and YCSB have pieces; TPC-C runs as the scaled variant.

#[cfg(feature = "tcp")]
pub mod remote;

use super::Descriptor;
use crate::driver::{Driven, Driver, measure};
use crate::point::{CheckSummary, EngineParams, PointCtx, PointOutcome};
use crate::runner::RunConfig;
use crate::session::Session;
use crate::workloads::{AnyWorkload, WorkloadKind};
use serde::Serialize;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use txlab_core::{AckMode, Error};
use txlab_rococo::cluster::{LinkModel, MAX_CLIENTS_PER_SERVER};
use txlab_rococo::config::MAX_SERVERS;
use txlab_rococo::{
    MemoryRecording, NoRecording, Params, PiecedWorkload, Recording, RococoCluster, RunOptions,
    RunReport,
};

/// The cluster's parameters (`--servers`, `--clients-per-server`, `--client-threads`,
/// `--link-latency-us`, `--gc-epoch-ms`); other protocols ignore them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClusterParams {
    /// Server nodes, `1..=512`.
    pub servers: u16,
    /// Closed-loop clients per server, `1..=10000`.
    pub clients_per_server: u32,
    /// Client nodes the clients are spread over.
    pub client_threads: u16,
    /// One-way link latency in microseconds (0: none).
    pub link_latency_us: u64,
    /// ROCOCO's GC epoch in milliseconds (0: GC off).
    pub gc_epoch_ms: u64,
}

impl Default for ClusterParams {
    fn default() -> Self {
        Self {
            servers: 2,
            clients_per_server: 10,
            client_threads: 1,
            link_latency_us: 100,
            gc_epoch_ms: 100,
        }
    }
}

const FLAGS: &[&str] = &[
    "--servers",
    "--clients-per-server",
    "--client-threads",
    "--link-latency-us",
];
const ROCOCO_FLAGS: &[&str] = &[
    "--servers",
    "--clients-per-server",
    "--client-threads",
    "--link-latency-us",
    "--gc-epoch-ms",
];

const DISTRIBUTED: Descriptor = Descriptor {
    name: "",
    description: "",
    hidden: false,
    compared: false,
    flags: FLAGS,
    accepts: pieced_only,
    validate,
    run: run_2pl,
};

/// The distributed protocols, in `txlab list` order.
pub const PROTOCOLS: &[Descriptor] = &[
    Descriptor {
        name: "rococo",
        description: "ROCOCO: pieces, dependency tracking and deterministic reordering on servers (OSDI 2014)",
        flags: ROCOCO_FLAGS,
        run: run_rococo,
        ..DISTRIBUTED
    },
    Descriptor {
        name: "2pl-2pc",
        description: "2PL (wound-wait) with 2PC on ROCOCO's servers (its baseline)",
        ..DISTRIBUTED
    },
    Descriptor {
        name: "occ-2pc",
        description: "OCC (validation at prepare) with 2PC on ROCOCO's servers (its baseline)",
        run: run_occ,
        ..DISTRIBUTED
    },
];

fn run_rococo(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    run(txlab_rococo::Protocol::Rococo, w, ctx)
}
fn run_2pl(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    run(txlab_rococo::Protocol::TwoPl, w, ctx)
}
fn run_occ(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    run(txlab_rococo::Protocol::Occ, w, ctx)
}

/// Only the workloads with pieces: TPC-C (either mix, run as the scaled variant) and YCSB.
fn pieced_only(name: &'static str, w: WorkloadKind) -> Result<(), Error> {
    if matches!(
        w,
        WorkloadKind::Ycsb(_) | WorkloadKind::Tpcc | WorkloadKind::TpccNp
    ) {
        return Ok(());
    }
    Err(Error::invalid(
        "--protocol with --workload",
        format!("{name} with {}", w.name()),
        "a workload with pieces (txlab_core::pieces) for the distributed protocols: tpcc or \
         tpcc-np with --tpcc-scaled, or a YCSB preset",
    ))
}

fn validate(threads: usize, p: &EngineParams, _run: &RunConfig) -> Result<(), Error> {
    let c = &p.cluster;
    if threads != 1 {
        return Err(Error::invalid(
            "--threads",
            threads,
            "1 for the distributed protocols (their clients are --clients-per-server and \
             --client-threads)",
        ));
    }
    if !(1..=MAX_SERVERS).contains(&c.servers) {
        return Err(Error::invalid(
            "--servers",
            c.servers,
            format!("1..={MAX_SERVERS}"),
        ));
    }
    if !(1..=MAX_CLIENTS_PER_SERVER).contains(&c.clients_per_server) {
        return Err(Error::invalid(
            "--clients-per-server",
            c.clients_per_server,
            format!("1..={MAX_CLIENTS_PER_SERVER}"),
        ));
    }
    if c.link_latency_us > 1_000_000 {
        return Err(Error::invalid(
            "--link-latency-us",
            c.link_latency_us,
            "0..=1000000",
        ));
    }
    Ok(())
}

fn params(engine: &EngineParams, run: &RunConfig, checked: bool) -> Params {
    let c = &engine.cluster;
    Params {
        gc_epoch: (c.gc_epoch_ms > 0).then(|| Duration::from_millis(c.gc_epoch_ms)),
        checked,
        seed: run.seed,
        ..Params::default()
    }
}

fn options(engine: &EngineParams) -> RunOptions {
    let c = &engine.cluster;
    RunOptions {
        clients_per_server: c.clients_per_server,
        client_threads: c.client_threads,
        link: (c.link_latency_us > 0).then(|| LinkModel {
            latency: Duration::from_micros(c.link_latency_us),
            jitter: Duration::ZERO,
            seed: 1,
        }),
        ..RunOptions::default()
    }
}

fn run(
    protocol: txlab_rococo::Protocol,
    w: &AnyWorkload,
    ctx: &PointCtx<'_>,
) -> Result<PointOutcome, Error> {
    match w {
        AnyWorkload::Tpcc(t) => run_on(protocol, t, ctx),
        AnyWorkload::Ycsb(y) => run_on(protocol, y, ctx),
        _ => Err(Error::Misuse(
            "the distributed protocols run only workloads with pieces",
        )),
    }
}

fn run_on<W: PiecedWorkload + Sync>(
    protocol: txlab_rococo::Protocol,
    workload: &W,
    ctx: &PointCtx<'_>,
) -> Result<PointOutcome, Error> {
    let cluster = RococoCluster::new(
        workload.clone(),
        protocol,
        ctx.engine.cluster.servers,
        params(ctx.engine, ctx.run, ctx.check),
    )?;
    workload.load(&cluster)?;
    measure_cluster(&cluster, workload, options(ctx.engine), ctx, &Inproc)
}

/// Measures `cluster` run by `how`; with `ctx.check`, records every transaction and checks the
/// merged history (strict serializability, one order) and the merged shards' invariants.
fn measure_cluster<W: PiecedWorkload + Sync, H: RunsCluster>(
    cluster: &RococoCluster<W>,
    workload: &W,
    opts: RunOptions,
    ctx: &PointCtx<'_>,
    how: &H,
) -> Result<PointOutcome, Error> {
    let parameters = workload
        .parameters()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    if !ctx.check {
        let driver = ClusterDriver::new(cluster, opts, Arc::new(NoRecording), how);
        let result = measure(&driver, ctx.run)?;
        return Ok(PointOutcome {
            result,
            parameters,
            check: None,
        });
    }
    let rec = Arc::new(MemoryRecording::new());
    let driver = ClusterDriver::new(cluster, opts, Arc::clone(&rec), how);
    let result = measure(&driver, ctx.run)?;
    let checked = txlab_rococo::history::check(rec.take());
    let mut anomalies: Vec<String> = checked
        .report
        .counts
        .iter()
        .map(|(k, n)| format!("{k:?}: {n}"))
        .collect();
    if let Err(v) = &checked.one_order {
        anomalies.push(v.to_string());
    }
    let internal = driver.internal_errors();
    if internal > 0 {
        anomalies.push(format!("internal errors: {internal}"));
    }
    let invariant = cluster
        .snapshot()
        .and_then(|engine| workload.check(&engine))
        .err()
        .map(|e| e.to_string());
    Ok(PointOutcome {
        result,
        parameters,
        check: Some(CheckSummary {
            history_checked: true,
            committed: checked.report.committed,
            anomalies,
            invariant,
        }),
    })
}

/// Where a cluster's nodes run: all on `inproc` threads of this process, or (feature `tcp`)
/// this process is the client node of a multi-process cluster.
trait RunsCluster: Sync {
    /// Calls [`Session::ready`] once every node can take transactions (the warm-up starts
    /// there), then runs until `session` stops issuing; when recording (a checked run), leaves
    /// the servers' final rows in the cluster's shards for the invariant check.
    fn run<W: PiecedWorkload, R: Recording>(
        &self,
        cluster: &RococoCluster<W>,
        opts: &RunOptions,
        recording: Arc<R>,
        session: &Session<'_>,
    ) -> Result<RunReport, Error>;
}

/// Every node on `inproc` threads.
struct Inproc;

impl RunsCluster for Inproc {
    fn run<W: PiecedWorkload, R: Recording>(
        &self,
        cluster: &RococoCluster<W>,
        opts: &RunOptions,
        recording: Arc<R>,
        session: &Session<'_>,
    ) -> Result<RunReport, Error> {
        // Every shard is loaded; the nodes start with the run, on this process's threads.
        session.ready();
        cluster.run_metered(opts, recording, session)
    }
}

/// A cluster's [`Driver`] (module docs).
struct ClusterDriver<'a, W: PiecedWorkload, R: Recording, H: RunsCluster> {
    cluster: &'a RococoCluster<W>,
    opts: RunOptions,
    recording: Arc<R>,
    how: &'a H,
    internal: Mutex<u64>,
}

impl<'a, W: PiecedWorkload, R: Recording, H: RunsCluster> ClusterDriver<'a, W, R, H> {
    fn new(cluster: &'a RococoCluster<W>, opts: RunOptions, recording: Arc<R>, how: &'a H) -> Self {
        Self {
            cluster,
            opts,
            recording,
            how,
            internal: Mutex::new(0),
        }
    }

    fn internal_errors(&self) -> u64 {
        *self.internal.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<W: PiecedWorkload + Sync, R: Recording, H: RunsCluster> Driver for ClusterDriver<'_, W, R, H> {
    fn engine_threads(&self, _cfg: &RunConfig) -> usize {
        usize::from(self.cluster.shared().servers()) + usize::from(self.opts.client_threads) + 1
    }

    fn ack(&self) -> AckMode {
        AckMode::AtCommit
    }

    fn drive(&self, session: &Session<'_>) -> Result<Driven, Error> {
        let report = self.how.run(
            self.cluster,
            &self.opts,
            Arc::clone(&self.recording),
            session,
        )?;
        *self.internal.lock().unwrap_or_else(|p| p.into_inner()) =
            report.counters.internal_errors();
        let mut counters = report.counters.pairs();
        if self.cluster.shared().protocol == txlab_rococo::Protocol::Rococo {
            counters.extend(
                report
                    .graph_held
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &v)| Some((graph_held_name(i)?, v))),
            );
        }
        Ok(Driven {
            cpus: vec![None; session.config().threads],
            counters,
        })
    }
}

/// The most per-second samples of the graph held a result reports (an hour).
const MAX_GRAPH_SAMPLES: usize = 3600;

/// The counter of the `i`-th per-second sample of the graph held, `graph_held_tNNNN` (seconds
/// since the cluster started, warm-up included); `None` past [`MAX_GRAPH_SAMPLES`].
fn graph_held_name(i: usize) -> Option<&'static str> {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            (0..MAX_GRAPH_SAMPLES)
                .map(|i| &*Box::leak(format!("graph_held_t{i:04}").into_boxed_str()))
                .collect()
        })
        .get(i)
        .copied()
}

#[cfg(test)]
mod tests {
    use crate::point::{EngineParams, run_point};
    use crate::registry::Protocol;
    use crate::runner::RunConfig;
    use crate::workloads::{WorkloadKind, WorkloadParams, YcsbKind};
    use std::time::Duration;

    fn run() -> RunConfig {
        RunConfig {
            threads: 1,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(150),
            ..RunConfig::default()
        }
    }

    #[test]
    fn every_distributed_protocol_runs_scaled_tpcc_and_ycsb_checked() {
        let params = WorkloadParams {
            districts: 4,
            district_customers: 100,
            items: 1_000,
            tpcc_scaled: true,
            records: 1_000,
            ..WorkloadParams::default()
        };
        let engine = EngineParams::default();
        for name in ["rococo", "2pl-2pc", "occ-2pc"] {
            let p = Protocol::from_name(name).unwrap();
            for w in [WorkloadKind::Tpcc, WorkloadKind::Ycsb(YcsbKind::A)] {
                let out = run_point(p, w, &params, &engine, &run(), true).unwrap();
                assert!(out.result.commits > 0, "{name} {w:?}");
                let c = out.check.unwrap();
                assert!(c.history_checked && c.passed(), "{name} {w:?}: {c:?}");
                assert!(out.result.counters.contains_key("status_requests"));
                // ROCOCO's graph held, sampled from the start; the baselines have no graph.
                let sampled = out.result.counters.contains_key("graph_held_t0000");
                assert_eq!(sampled, name == "rococo", "{name} {w:?}");
            }
        }
    }

    #[test]
    fn bad_cluster_settings_are_refused_naming_the_flag() {
        let params = WorkloadParams::default();
        let p = Protocol::from_name("rococo").unwrap();
        let ycsb = WorkloadKind::Ycsb(YcsbKind::A);
        let err = |engine: &EngineParams, run: &RunConfig, w| {
            run_point(p, w, &params, engine, run, false)
                .unwrap_err()
                .to_string()
        };
        let mut engine = EngineParams::default();
        engine.cluster.servers = 0;
        assert!(err(&engine, &run(), ycsb).contains("--servers = 0"));
        engine.cluster.servers = 2;
        engine.cluster.clients_per_server = 10_001;
        assert!(err(&engine, &run(), ycsb).contains("--clients-per-server = 10001"));
        let two = RunConfig {
            threads: 2,
            ..run()
        };
        assert!(err(&EngineParams::default(), &two, ycsb).contains("--threads = 2"));
        let e = err(&EngineParams::default(), &run(), WorkloadKind::SmallBank);
        assert!(e.contains("smallbank") && e.contains("pieces"), "{e}");
    }
}
