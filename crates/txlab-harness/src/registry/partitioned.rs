//! The deterministic engines across partitions (`--nodes N`): `txlab_docc::cluster`'s
//! [`Cluster`] of `N` partition nodes, each a sequencer and a local engine (DOCC in the mode the
//! protocol names, or the Calvin-style baseline), on `txlab_net::inproc` threads with a
//! `--link-latency-us` one-way delay between nodes. TPC-C is partitioned by warehouse (each
//! node's clients have their home warehouses there), YCSB by key range.
//!
//! **Progress feed.** The nodes run on the transport's threads and report each of their clients'
//! transactions over one channel ([`Progress`]: sealed, resequenced after a restart, ran); the
//! driver's thread owns the session's probe 0, turns each sealed transaction into a ticket and
//! reports its end through it, so latency runs from sealing to the end of the execution (the
//! epoch wait and the cross-node exchange included). Once the planned warm-up, measured interval
//! and cool-down are over on the wall clock, or the session stops issuing, the feeds end: each
//! sequencer marks its batches last and the nodes drain what was sequenced, at most `LAG` epochs
//! of each node's outstanding transactions (`txlab_docc::cluster::node`), however far they fell
//! behind the epoch clock.
//!
//! What differs from the single-node deterministic runs, in every result field's terms:
//!
//! - **threads**: `--threads` workers per node; each node's thread and Calvin's lock managers run
//!   besides them, and `oversubscribed` counts them all. `per_thread_commits` has one entry (the
//!   probe of the driver's thread).
//! - **aborts**: `retries` are the re-sequenced attempts of transactions that touched a
//!   partition outside their participants; DOCC's local validation retries are not visible here.
//! - **counters** (every node summed; each node reports its counters as it seals a batch, so
//!   the measured interval's are exact to within one epoch): `single_partition`,
//!   `multi_partition` (transactions led), `cluster_restarts`, `remote_reads` (on-demand reads
//!   a leader asked for), `read_set_rows`, `retransmits`, `pulls`, `batches`, `segments` (runs of
//!   single-partition transactions through the local engine), `mp_blocked_us` (microseconds from the
//!   handler in which a node reached a multi-partition transaction to the one that finished it:
//!   `NodeStats::mp_blocked_us`), `overlapped` and `overlap_reruns` (single-partition
//!   transactions run while a multi-partition one was in flight, committed after it or run
//!   again at their position) and `windows` (engine runs of such transactions); with the
//!   pipeline (`--pipeline on`: `txlab_docc::cluster::Pipeline`), `passed` (multi-partition
//!   transactions a non-leading participant passed without waiting for the outcome),
//!   `pipeline_restarts` (pipelined ones re-sequenced to run waiting: an on-demand read or an
//!   undeclared remote write) and `fenced` (single-partition transactions re-sequenced for
//!   touching a key a passed one held in their epoch).
//!
//! With `--check` every partition records on the sequence clock and the nodes keep the merged
//! input log; after the run the partitions' histories, merged by rank, must pass
//! `CheckOptions::strict()`, the merged state must equal `SerialEngine` executing the log's
//! serial order, and the workload's invariants must hold on the merged state.
//!
//! [`process`] runs the same nodes one per process (`txlab cluster --local N -- run ...`) and
//! the same checks on what the nodes hand the launcher.

pub mod process;

use super::Protocol;
use super::deterministic::{CLIENTS, calvin_config, docc_config};
use crate::driver::{Driven, Driver};
use crate::point::{CheckSummary, EngineParams, PointCtx, PointOutcome, measure_loaded};
use crate::runner::RunConfig;
use crate::session::Session;
use crate::workloads::{AnyWorkload, WorkloadKind, WorkloadParams};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use txlab_check::digest::StateDigest;
use txlab_check::serial::SerialEngine;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::deterministic::Deterministic;
use txlab_core::partition::Partitioner;
use txlab_core::protocol::meter::{Meter, Probe, Ticket};
use txlab_core::{AckMode, Error, Schema};
use txlab_docc::calvin::Calvin;
use txlab_docc::cluster::inproc::{self, InprocOptions};
use txlab_docc::cluster::{
    Cluster, ClusterLog, ClusterProgram, Feed, NodeConfig, NodeStats, Overlap, PartitionEngine,
    Pipeline, Progress, Ran, Txn, WorkloadFeed, merge_histories,
};
use txlab_docc::{Docc, Layout};
use txlab_net::inproc::LinkModel;
use txlab_workload::tpcc::partition::ByWarehouse;
use txlab_workload::{Tpcc, Workload};

/// The most `--nodes` (one partition per node; a `Seq` has 8 bits of sequencer).
pub const MAX_NODES: u16 = 255;

/// How the nodes talk (`--transport`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Threads of this process, with the emulated link latency.
    #[default]
    Inproc,
    /// One node per process over TCP: `txlab cluster --local N -- run ...`.
    Tcp,
}

/// The workloads a cluster partitions, for the errors.
const PARTITIONED: &str = "tpcc or tpcc-np (by warehouse) or a YCSB preset (by key range)";

/// Checks a sweep's `--nodes` against its protocols and workloads before anything runs: the
/// node count, protocols that cannot be partitioned, and workloads too small for the nodes.
pub fn validate_sweep(
    protocols: &[Protocol],
    workloads: &[WorkloadKind],
    params: &WorkloadParams,
    engine: &EngineParams,
) -> Result<(), Error> {
    if engine.deterministic.transport == Transport::Tcp {
        return Err(Error::invalid(
            "--transport",
            "tcp",
            "inproc for `txlab run`; tcp runs one node per process: `txlab cluster --local N -- \
             run --protocol docc,calvin ...`",
        ));
    }
    validate_nodes(protocols, workloads, params, engine)
}

/// [`validate_sweep`] without the transport: the node count against the protocols and
/// workloads.
fn validate_nodes(
    protocols: &[Protocol],
    workloads: &[WorkloadKind],
    params: &WorkloadParams,
    engine: &EngineParams,
) -> Result<(), Error> {
    let Some(nodes) = engine.deterministic.nodes else {
        return Ok(());
    };
    if !(1..=MAX_NODES).contains(&nodes) {
        return Err(Error::invalid(
            "--nodes",
            nodes,
            format!("1..={MAX_NODES} (one partition per node)"),
        ));
    }
    if nodes > 1
        && let Some(p) = protocols.iter().find(|p| !p.reads_flag("--nodes"))
    {
        return Err(Error::invalid(
            "--protocol with --nodes",
            format!("{p} with --nodes {nodes}"),
            "a protocol that can be partitioned: docc, docc-snapshot, docc-basic or calvin \
             (rococo, 2pl-2pc and occ-2pc take --servers)",
        ));
    }
    if !protocols.iter().any(|p| p.reads_flag("--nodes")) {
        return Ok(());
    }
    for &w in workloads {
        match w {
            WorkloadKind::Tpcc | WorkloadKind::TpccNp => {
                if u32::from(nodes) > params.warehouses {
                    return Err(Error::invalid(
                        "--nodes",
                        nodes,
                        format!(
                            "1..={} (at most one node per warehouse: --warehouses {})",
                            params.warehouses.min(u32::from(MAX_NODES)),
                            params.warehouses
                        ),
                    ));
                }
            }
            WorkloadKind::Ycsb(_) => {
                if u64::from(nodes) > params.records {
                    return Err(Error::invalid(
                        "--nodes",
                        nodes,
                        format!("1..={} (at most one node per record)", params.records),
                    ));
                }
            }
            other => {
                return Err(Error::invalid(
                    "--workload with --nodes",
                    other.name(),
                    PARTITIONED,
                ));
            }
        }
    }
    Ok(())
}

/// `docc`, `docc-snapshot` or `docc-basic` (layout `L`, prefetching `prefetch`) on `--nodes`.
pub(super) fn docc<L: Layout, S: Site>(
    w: &AnyWorkload,
    ctx: &PointCtx<'_>,
    nodes: u16,
    prefetch: bool,
    site: S,
) -> Result<S::Out, Error> {
    let (p, run) = (ctx.engine, ctx.run);
    if ctx.check {
        let make = |s: &Schema| {
            Docc::<L>::builder()
                .config(docc_config(p, run, prefetch, true))
                .recorder(Arc::new(MemoryRecorder::new()))
                .build(s)
        };
        let history: fn(&Docc<L, MemoryRecorder>) -> History = |e| e.recorder().take();
        on_workload(w, nodes, make, Some(history), site)
    } else {
        let make = |s: &Schema| {
            Docc::<L>::builder()
                .config(docc_config(p, run, prefetch, false))
                .build(s)
        };
        on_workload(w, nodes, make, None, site)
    }
}

/// `calvin` on `--nodes`.
pub(super) fn calvin<S: Site>(
    w: &AnyWorkload,
    ctx: &PointCtx<'_>,
    nodes: u16,
    site: S,
) -> Result<S::Out, Error> {
    let (p, run) = (ctx.engine, ctx.run);
    if ctx.check {
        let make = |s: &Schema| {
            Calvin::builder()
                .config(calvin_config(p, run, true))
                .recorder(Arc::new(MemoryRecorder::new()))
                .build(s)
        };
        let history: fn(&Calvin<MemoryRecorder>) -> History = |e| e.recorder().take();
        on_workload(w, nodes, make, Some(history), site)
    } else {
        let make = |s: &Schema| {
            Calvin::builder()
                .config(calvin_config(p, run, false))
                .build(s)
        };
        on_workload(w, nodes, make, None, site)
    }
}

/// Where a cluster's nodes run: all in this process ([`InProcess`]), or one of them
/// (`process::Process`, a node of `txlab cluster`).
pub(super) trait Site {
    /// What a run returns.
    type Out;

    /// Builds and loads the node(s), runs them, and (with a history) checks what it can.
    fn run<E, W>(
        self,
        workload: &W,
        partitioner: Arc<dyn Partitioner>,
        clients: Vec<Vec<usize>>,
        make: impl Fn(&Schema) -> Result<E, Error>,
        history: Option<fn(&E) -> History>,
    ) -> Result<Self::Out, Error>
    where
        E: PartitionEngine,
        W: Workload<Program: ClusterProgram, Generator: Send> + Sync + 'static;
}

/// Every node on threads of this process (`--transport inproc`), measured as one point.
pub(super) struct InProcess<'a>(pub(super) &'a PointCtx<'a>);

impl Site for InProcess<'_> {
    type Out = PointOutcome;

    fn run<E, W>(
        self,
        workload: &W,
        partitioner: Arc<dyn Partitioner>,
        clients: Vec<Vec<usize>>,
        make: impl Fn(&Schema) -> Result<E, Error>,
        history: Option<fn(&E) -> History>,
    ) -> Result<PointOutcome, Error>
    where
        E: PartitionEngine,
        W: Workload<Program: ClusterProgram, Generator: Send> + Sync + 'static,
    {
        run_cluster(workload, partitioner, clients, self.0, make, history)
    }
}

/// The partitioner and each node's client threads of a workload a cluster can run.
fn on_workload<E: PartitionEngine, S: Site>(
    w: &AnyWorkload,
    nodes: u16,
    make: impl Fn(&Schema) -> Result<E, Error>,
    history: Option<fn(&E) -> History>,
    site: S,
) -> Result<S::Out, Error> {
    match w {
        AnyWorkload::Tpcc(t) => {
            let part = ByWarehouse::new(t.config(), *t.tables(), u32::from(nodes))?;
            let clients = tpcc_clients(t, &part, nodes);
            site.run(t, Arc::new(part), clients, make, history)
        }
        AnyWorkload::Ycsb(y) => {
            let part = y.partitioner(u32::from(nodes))?;
            let clients = (0..nodes)
                .map(|me| {
                    (0..CLIENTS)
                        .map(|i| usize::from(me) + i * usize::from(nodes))
                        .collect()
                })
                .collect();
            site.run(y, Arc::new(part), clients, make, history)
        }
        _ => Err(Error::invalid(
            "--workload with --nodes",
            "this workload",
            PARTITIONED,
        )),
    }
}

/// Client threads by node: `CLIENTS` per node, rounded up to the same number per warehouse,
/// each on the node that owns its home warehouse (TPC-C's thread `t` has home `t % W + 1`).
fn tpcc_clients(t: &Tpcc, part: &ByWarehouse, nodes: u16) -> Vec<Vec<usize>> {
    let w = t.config().warehouses as usize;
    let total = (CLIENTS * usize::from(nodes)).div_ceil(w) * w;
    (0..nodes)
        .map(|me| {
            (0..total)
                .filter(|c| part.partition_of_warehouse((c % w) as u32 + 1) == u32::from(me))
                .collect()
        })
        .collect()
}

/// What the driver keeps of a run for the result and the checks.
struct Kept<P> {
    stats: Vec<NodeStats>,
    log: Option<ClusterLog<P>>,
}

/// Builds the cluster, loads it, measures it and (with a history) checks it.
fn run_cluster<E, W>(
    workload: &W,
    partitioner: Arc<dyn Partitioner>,
    clients: Vec<Vec<usize>>,
    ctx: &PointCtx<'_>,
    make: impl Fn(&Schema) -> Result<E, Error>,
    history: Option<fn(&E) -> History>,
) -> Result<PointOutcome, Error>
where
    E: PartitionEngine,
    W: Workload<Program: ClusterProgram, Generator: Send> + Sync + 'static,
{
    let schema = workload.schema();
    let cluster = Cluster::new(&schema, partitioner, |_| make(&schema))?;
    let driver = ClusterDriver {
        cluster: &cluster,
        workload,
        clients,
        config: node_config(
            ctx.engine,
            ctx.run,
            ctx.check,
            cluster.engines()[0].default_pipeline(),
        ),
        link: ctx.engine.cluster.link_latency_us,
        latest: Mutex::new(Vec::new()),
        kept: Mutex::new(None),
    };
    let mut out = measure_loaded(&cluster, workload, &driver, ctx.run, false)?;
    let kept = driver
        .kept
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .ok_or_else(|| Error::Internal("a cluster run kept nothing".into()))?;
    if let Some(history) = history {
        out.check = Some(check_cluster(&cluster, workload, &kept, history)?);
    }
    Ok(out)
}

/// Every node's settings: the planned run in whole epochs, plus one; multi-partition
/// transactions pipelined as `--pipeline` says, else as the engine's `default` (DOCC
/// pipelined, Calvin waiting).
fn node_config(
    engine: &EngineParams,
    run: &RunConfig,
    keep_log: bool,
    default: Pipeline,
) -> NodeConfig {
    let d = &engine.deterministic;
    let pipeline = match d.pipeline {
        Some(true) => Pipeline::On,
        Some(false) => Pipeline::Off,
        None => default,
    };
    let epoch = Duration::from_micros(d.batch_epoch_us);
    let planned = run.warmup + run.duration + run.cooldown;
    let epochs = planned.as_nanos().div_ceil(epoch.as_nanos()) + 1;
    NodeConfig {
        epoch,
        epochs: u32::try_from(epochs).unwrap_or(u32::MAX),
        workers: run.threads,
        retry: Duration::from_millis(20),
        concurrency: d.concurrency,
        keep_log,
        overlap: Overlap::Off,
        pipeline,
    }
}

/// A sequencer's clients until the planned run is over on the wall clock (`end`: the start
/// plus warm-up, measured interval and cool-down) or the session stops issuing (`stop`),
/// whichever comes first; then the feed has ended ([`Feed::ended`]) and the nodes drain what
/// they sequenced (module docs).
struct Until<W: Workload> {
    feed: WorkloadFeed<W>,
    end: Instant,
    stop: Arc<AtomicBool>,
}

impl<W: Workload> Until<W> {
    fn new(feed: WorkloadFeed<W>, start: Instant, run: &RunConfig, stop: Arc<AtomicBool>) -> Self {
        Self {
            feed,
            end: start + run.warmup + run.duration + run.cooldown,
            stop,
        }
    }
}

impl<W> Feed<W::Program> for Until<W>
where
    W: Workload<Generator: Send, Program: Clone + Send>,
{
    fn next(&mut self, epoch: u32, free: usize) -> Vec<Txn<W::Program>> {
        self.feed.next(epoch, free)
    }

    fn ended(&self, _epoch: u32) -> bool {
        self.stop.load(Ordering::Relaxed) || Instant::now() >= self.end
    }
}

/// The cluster's [`Driver`] (module docs).
struct ClusterDriver<'a, E: PartitionEngine, W: Workload> {
    cluster: &'a Cluster<E>,
    workload: &'a W,
    clients: Vec<Vec<usize>>,
    config: NodeConfig,
    link: u64,
    /// Every node's latest counters (`Progress::Stats`).
    latest: Mutex<Vec<NodeStats>>,
    kept: Mutex<Option<Kept<W::Program>>>,
}

impl<E, W> Driver for ClusterDriver<'_, E, W>
where
    E: PartitionEngine,
    W: Workload<Program: ClusterProgram, Generator: Send> + Sync + 'static,
{
    fn engine_threads(&self, _cfg: &RunConfig) -> usize {
        let per_node = self.cluster.engines()[0].threads_for(self.config.workers) + 1;
        self.cluster.engines().len() * per_node
    }

    fn ack(&self) -> AckMode {
        AckMode::AtCommit
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        counters(&self.latest.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn drive(&self, session: &Session<'_>) -> Result<Driven, Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let mut nodes = Vec::with_capacity(self.clients.len());
        let start = Instant::now();
        for (me, threads) in self.clients.iter().enumerate() {
            let clients = WorkloadFeed::with_threads(
                self.workload,
                threads.iter().copied(),
                session.config().seed,
                None,
            );
            let feed = Until::new(clients, start, session.config(), Arc::clone(&stop));
            let mut node = self.cluster.node(me as u16, self.config, Box::new(feed))?;
            node.report_to(tx.clone());
            nodes.push(node);
        }
        drop(tx);
        let planned = self.config.epoch * self.config.epochs;
        let options = InprocOptions {
            link: (self.link > 0).then(|| LinkModel {
                latency: Duration::from_micros(self.link),
                jitter: Duration::ZERO,
                seed: session.config().seed,
            }),
            // The planned run, then as long again to drain.
            timeout: 2 * planned + Duration::from_secs(10),
            ..InprocOptions::default()
        };
        let ran = std::thread::scope(|s| {
            let nodes = s.spawn(move || {
                // The nodes (and their senders) are dropped here, which ends `follow`.
                inproc::run(nodes, &options).map(|done| Kept {
                    stats: done.nodes.iter().map(|n| n.stats()).collect(),
                    log: done.nodes[0].log().cloned(),
                })
            });
            session.ready();
            follow(session, &rx, &stop, &self.latest);
            nodes
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })?;
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(ran);
        Ok(Driven {
            cpus: vec![None; session.config().threads],
            counters: Vec::new(),
        })
    }
}

/// Reports the nodes' [`Progress`] through probe 0 until every node is gone (module docs).
fn follow(
    session: &Session<'_>,
    rx: &mpsc::Receiver<Progress>,
    stop: &AtomicBool,
    latest: &Mutex<Vec<NodeStats>>,
) {
    let mut probe = session.probe(0);
    let mut tickets: HashMap<u64, Ticket> = HashMap::new();
    while let Ok(p) = rx.recv() {
        match p {
            Progress::Stats { node, stats } => {
                let mut latest = latest.lock().unwrap_or_else(|e| e.into_inner());
                let n = usize::from(node);
                if latest.len() <= n {
                    latest.resize(n + 1, NodeStats::default());
                }
                latest[n] = stats;
            }
            Progress::Submitted { seq } => {
                let ticket = probe.issue().unwrap_or_else(|| {
                    stop.store(true, Ordering::Relaxed);
                    Ticket::new(Instant::now(), false)
                });
                tickets.insert(seq, ticket);
            }
            Progress::Resequenced { from, to } => {
                if let Some(t) = tickets.remove(&from) {
                    tickets.insert(to, t);
                }
            }
            Progress::Ran { seq, kind, ran } => match ran {
                Ran::Restarted => {
                    if let Some(t) = tickets.get(&seq) {
                        probe.retried(t, 1);
                    }
                }
                Ran::Committed => {
                    if let Some(t) = tickets.remove(&seq) {
                        probe.committed(&t, kind);
                    }
                }
                Ran::UserAborted | Ran::Failed => {
                    if let Some(t) = tickets.remove(&seq) {
                        probe.user_aborted(&t);
                    }
                }
            },
        }
    }
}

/// The nodes' counters summed (module docs).
fn counters(stats: &[NodeStats]) -> Vec<(&'static str, u64)> {
    let sum = |f: fn(&NodeStats) -> u64| stats.iter().map(f).sum::<u64>();
    vec![
        ("single_partition", sum(|s| s.single)),
        ("multi_partition", sum(|s| s.multi_led)),
        ("cluster_restarts", sum(|s| s.restarts)),
        ("remote_reads", sum(|s| s.remote_reads)),
        ("read_set_rows", sum(|s| s.read_set_rows)),
        ("retransmits", sum(|s| s.retransmits)),
        ("pulls", sum(|s| s.pulls)),
        ("batches", sum(|s| s.batches)),
        ("segments", sum(|s| s.segments)),
        ("mp_blocked_us", sum(|s| s.mp_blocked_us)),
        ("overlapped", sum(|s| s.overlapped)),
        ("overlap_reruns", sum(|s| s.overlap_reruns)),
        ("windows", sum(|s| s.windows)),
        ("passed", sum(|s| s.passed)),
        ("pipeline_restarts", sum(|s| s.pipeline_restarts)),
        ("fenced", sum(|s| s.fenced)),
    ]
}

/// The checks of a recorded run (module docs).
fn check_cluster<E, W>(
    cluster: &Cluster<E>,
    workload: &W,
    kept: &Kept<W::Program>,
    history: fn(&E) -> History,
) -> Result<CheckSummary, Error>
where
    E: PartitionEngine,
    W: Workload<Program: ClusterProgram>,
{
    let log = kept
        .log
        .as_ref()
        .ok_or_else(|| Error::Internal("a checked cluster run kept no input log".into()))?;
    check_merged(
        workload,
        cluster.engines().iter().map(|e| history(e)),
        log,
        kept.stats.iter().map(|s| s.errors).sum(),
        Merged::State(cluster.snapshot()?),
    )
}

/// The state a check compares with the serial replay: the merged rows (in-process), or the sum
/// of the shards' digests (one node per process; `StateDigest` adds up over disjoint shards).
enum Merged {
    State(SerialEngine),
    Digest(StateDigest),
}

/// The checks of a cluster run, from its partitions' histories, its input log, the count of
/// transactions that ended in errors, and its merged state (module docs). With only the
/// merged state's digest, the invariants are checked on the serial replay's state, which the
/// equal digest proves to be the merged one (a differing digest already fails the run).
fn check_merged<W: Workload<Program: ClusterProgram>>(
    workload: &W,
    histories: impl IntoIterator<Item = History>,
    log: &ClusterLog<W::Program>,
    errors: u64,
    merged: Merged,
) -> Result<CheckSummary, Error> {
    let report = check(&merge_histories(histories), CheckOptions::strict());
    let mut anomalies: Vec<String> = report
        .counts
        .iter()
        .map(|(k, n)| format!("{k:?}: {n}"))
        .collect();
    if errors > 0 {
        anomalies.push(format!("{errors} transactions ended in errors"));
    }
    let serial = SerialEngine::new(workload.schema());
    workload.load(&serial)?;
    let order: Vec<W::Program> = log.serial_order().into_iter().cloned().collect();
    serial.execute_log(&order, 1)?;
    let expected = StateDigest::of_serial(&serial);
    let differs = |got: StateDigest, rows: String| {
        format!(
            "serial replay: the merged state differs from the serial execution of the input log \
             ({} transactions; digest {got}, serial {expected}){rows}",
            order.len()
        )
    };
    let invariant = match &merged {
        Merged::State(m) => {
            let got = StateDigest::of_serial(m);
            if got != expected {
                let rows = StateDigest::diff(m, &serial, 3);
                anomalies.push(differs(got, format!("; first rows: {rows:?}")));
            }
            workload.check(m)
        }
        Merged::Digest(got) => {
            if *got != expected {
                anomalies.push(differs(*got, String::new()));
            }
            workload.check(&serial)
        }
    };
    Ok(CheckSummary {
        history_checked: true,
        committed: report.committed,
        anomalies,
        invariant: invariant.err().map(|e| e.to_string()),
    })
}
