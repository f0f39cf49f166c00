//! One node of a cluster per process (`txlab cluster --local N -- run --protocol docc,calvin
//! ...`, `--transport tcp`): what a node process runs, and what the launcher concludes from the
//! nodes' results. The transport itself is the caller's ([`Host`]: the CLI runs the node over
//! `txlab_net`'s tcp transport), so this crate needs no network.
//!
//! **A node** (`run_node`) builds the workload from the same flags as `txlab run`, loads only
//! its partition ([`Shard`]), sequences its own clients (the same client threads as the
//! in-process cluster's node of that id) until the planned warm-up, measured interval and
//! cool-down are over on its wall clock (counted from its start; at most their length in
//! whole epochs), then marks its batches last and runs until every node has drained what was
//! sequenced (`txlab_docc::cluster::node`: a bounded drain, whatever the epoch length and
//! however far the nodes fell behind the epoch clock). Its JSON result: `committed`
//! (transactions it ran to commit whose end fell in the measured interval, counted from the
//! node's start), `committed_per_s`, `latency_us` (p50/p99 of its clients' transactions,
//! from submission to the end of their execution, the whole run), the node counters of the
//! in-process cluster (`single_partition`, `multi_partition`, ...), `errors`, and with
//! `--check`: `digest`, the [`StateDigest`] of the rows it reports in the merged state, and
//! `check_file`, a JSON file (in the temporary directory) with its partition's history
//! recorded on the sequence clock and, at node 0, the merged input log (every node merges the
//! same one).
//!
//! **The launcher** (`conclude`) adds the nodes' commits up and, with `--check`, runs the
//! in-process cluster's checks (`super::check_merged`) on what the nodes left: their histories
//! merged by rank under `CheckOptions::strict()`, the serial replay of node 0's input log
//! against the sum of the nodes' digests (disjoint shards add up), the workload's invariants,
//! and no transaction ended in an error. It removes the check files.

use super::{
    CheckSummary, Merged, Site, Transport, Until, check_merged, counters, node_config,
    validate_nodes,
};
use crate::point::{EngineParams, PointCtx};
use crate::registry::Protocol;
use crate::runner::RunConfig;
use crate::sweep::SweepSpec;
use crate::workloads::{AnyWorkload, WorkloadKind, WorkloadParams};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;
use txlab_check::History;
use txlab_check::digest::StateDigest;
use txlab_core::partition::Partitioner;
use txlab_core::{Error, Schema};
use txlab_docc::cluster::{
    ClusterLog, ClusterProgram, PartitionEngine, PartitionNode, Progress, Ran, Shard, WorkloadFeed,
};
use txlab_docc::{Chain, InPlace};
use txlab_workload::Workload;

/// Runs one node over the caller's transport (the CLI: `txlab_net`'s tcp transport).
pub trait Host {
    /// Runs `node` until `finished` holds on it; returns it.
    fn run<N: txlab_net::Node>(&self, node: N, finished: fn(&N) -> bool) -> Result<N, String>;
}

/// One run of a cluster of processes: the point every node and the launcher agree on.
#[derive(Debug, Clone)]
pub struct NodePoint {
    protocol: Protocol,
    workload: WorkloadKind,
    params: WorkloadParams,
    engine: EngineParams,
    run: RunConfig,
    check: bool,
    nodes: u16,
}

impl NodePoint {
    /// The one point of `spec` (one protocol, workload, thread count and theta) on `nodes`
    /// nodes, validated as the in-process cluster of that shape is. Errors: more than one
    /// point, a `--nodes` other than `nodes`, and everything `txlab run --nodes` refuses.
    pub fn new(spec: &SweepSpec, nodes: u16) -> Result<Self, Error> {
        let one = |flag: &'static str, n: usize| {
            if n == 1 {
                Ok(())
            } else {
                Err(Error::invalid(
                    flag,
                    format!("{n} values"),
                    "one value per cluster run (`txlab cluster` runs each protocol of a \
                     comma-separated --protocol in turn)",
                ))
            }
        };
        one("--protocol", spec.protocols.len())?;
        one("--workload", spec.workloads.len())?;
        one("--threads", spec.threads.len())?;
        one("--theta", spec.thetas.len())?;
        let mut spec = spec.clone();
        match spec.engine.deterministic.nodes {
            Some(n) if n != nodes => {
                return Err(Error::invalid(
                    "--nodes",
                    n,
                    format!("{nodes}, the cluster's node count (--local {nodes})"),
                ));
            }
            _ => spec.engine.deterministic.nodes = Some(nodes),
        }
        spec.engine.deterministic.transport = Transport::Inproc;
        spec.validate()?;
        validate_nodes(&spec.protocols, &spec.workloads, &spec.params, &spec.engine)?;
        let (protocol, workload) = (spec.protocols[0], spec.workloads[0]);
        if !protocol.reads_flag("--nodes") {
            return Err(Error::invalid(
                "--protocol",
                protocol.name(),
                "docc, docc-snapshot, docc-basic or calvin (one partition node per process)",
            ));
        }
        let mut params = spec.params;
        params.theta = spec.thetas[0];
        let mut engine = spec.engine;
        engine.deterministic.transport = Transport::Tcp;
        Ok(Self {
            protocol,
            workload,
            params,
            engine,
            run: spec.run_config(spec.threads[0], workload),
            check: spec.check,
            nodes,
        })
    }

    fn ctx(&self) -> PointCtx<'_> {
        PointCtx {
            engine: &self.engine,
            run: &self.run,
            check: self.check,
        }
    }

    /// Dispatches on the protocol as the in-process cluster does (`super::docc`/`calvin`).
    fn dispatch<S: Site>(&self, w: &AnyWorkload, site: S) -> Result<S::Out, Error> {
        let ctx = self.ctx();
        match self.protocol.name() {
            "docc" => super::docc::<Chain, S>(w, &ctx, self.nodes, true, site),
            "docc-snapshot" => super::docc::<Chain, S>(w, &ctx, self.nodes, false, site),
            "docc-basic" => super::docc::<InPlace, S>(w, &ctx, self.nodes, false, site),
            _ => super::calvin(w, &ctx, self.nodes, site),
        }
    }
}

/// Runs node `me` of `point` over `host` and returns its JSON result (module docs).
pub fn run_node<H: Host>(point: &NodePoint, me: u16, host: &H) -> Result<Value, Error> {
    if me >= point.nodes {
        return Err(Error::invalid(
            "--id",
            me,
            format!("0..{} (a node of the cluster)", point.nodes),
        ));
    }
    let w = AnyWorkload::new(point.workload, &point.params)?;
    point.dispatch(&w, Process { point, me, host })
}

/// One node in this process (module docs).
struct Process<'a, H> {
    point: &'a NodePoint,
    me: u16,
    host: &'a H,
}

/// What a node leaves for the launcher's checks.
#[derive(Serialize, Deserialize)]
struct CheckFile<P> {
    history: History,
    log: Option<ClusterLog<P>>,
}

impl<H: Host> Site for Process<'_, H> {
    type Out = Value;

    fn run<E, W>(
        self,
        workload: &W,
        partitioner: Arc<dyn Partitioner>,
        clients: Vec<Vec<usize>>,
        make: impl Fn(&Schema) -> Result<E, Error>,
        history: Option<fn(&E) -> History>,
    ) -> Result<Value, Error>
    where
        E: PartitionEngine,
        W: Workload<Program: ClusterProgram, Generator: Send> + Sync + 'static,
    {
        let (p, me) = (self.point, self.me);
        let schema = workload.schema();
        let shard = Shard::new(&schema, partitioner, me, make(&schema)?)?;
        workload.load(&shard)?;
        let threads = clients.into_iter().nth(usize::from(me)).unwrap_or_default();
        let clients = WorkloadFeed::with_threads(workload, threads, p.run.seed, None);
        let start = Instant::now();
        let feed = Until::new(clients, start, &p.run, Arc::default());
        let config = node_config(
            &p.engine,
            &p.run,
            p.check,
            shard.engine().default_pipeline(),
        );
        let mut node = shard.node(config, Box::new(feed))?;
        let (tx, rx) = mpsc::channel();
        node.report_to(tx);
        let window = (start + p.run.warmup, start + p.run.warmup + p.run.duration);
        let counting = std::thread::spawn(move || committed_in(&rx, window));
        let ran = self.host.run(node, PartitionNode::finished);
        let node = ran.map_err(|e| Error::Internal(format!("node {me}: {e}")))?;
        if let Some(f) = node.fatal() {
            return Err(Error::Internal(f.to_string()));
        }
        let stats = node.stats();
        let (p50, p99) = (
            node.latency_us().value_at_quantile(0.5),
            node.latency_us().value_at_quantile(0.99),
        );
        let log = (me == 0).then(|| node.log().cloned()).flatten();
        // The node holds the progress channel's sender: dropping it ends the count.
        drop(node);
        let committed = counting
            .join()
            .map_err(|_| Error::Internal("the commit counter panicked".into()))?;
        let mut out = json!({
            "node": me,
            "protocol": p.protocol.name(),
            "committed": committed,
            "committed_per_s": committed as f64 / p.run.duration.as_secs_f64(),
            "latency_us": { "p50": p50, "p99": p99 },
            "errors": stats.errors,
            "counters": counters(&[stats])
                .into_iter()
                .map(|(k, v)| (k.to_string(), Value::from(v)))
                .collect::<serde_json::Map<_, _>>(),
        });
        if let Some(history) = history {
            let path = std::env::temp_dir()
                .join(format!("txlab-node-{}-{me}-check.json", std::process::id()));
            let file = CheckFile {
                history: history(shard.engine()),
                log,
            };
            write_json(&path, &file)?;
            out["digest"] = shard.digest()?.to_string().into();
            out["check_file"] = path.display().to_string().into();
        }
        Ok(out)
    }
}

/// Transactions reported committed whose report came within `window`.
fn committed_in(rx: &mpsc::Receiver<Progress>, window: (Instant, Instant)) -> u64 {
    let mut n = 0;
    while let Ok(p) = rx.recv() {
        if let Progress::Ran {
            ran: Ran::Committed,
            ..
        } = p
        {
            let at = Instant::now();
            n += u64::from(at >= window.0 && at < window.1);
        }
    }
    n
}

fn write_json<T: Serialize>(path: &std::path::Path, value: &T) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::Internal(format!("write {}: {e}", path.display()));
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut w, value)
        .map_err(|e| Error::Internal(format!("write {}: {e}", path.display())))?;
    std::io::Write::flush(&mut w).map_err(io)
}

/// The launcher's conclusion from every node's result (module docs): `{"committed",
/// "committed_per_s", "check"}`, and whether the check failed (with what it found).
pub fn conclude(point: &NodePoint, nodes: &[Value]) -> Result<(Value, Option<String>), Error> {
    let committed: u64 = nodes.iter().filter_map(|n| n["committed"].as_u64()).sum();
    let mut out = json!({
        "committed": committed,
        "committed_per_s": committed as f64 / point.run.duration.as_secs_f64(),
    });
    let files: Vec<PathBuf> = nodes
        .iter()
        .filter_map(|n| n["check_file"].as_str().map(PathBuf::from))
        .collect();
    if !point.check {
        return Ok((out, None));
    }
    let checked = AnyWorkload::new(point.workload, &point.params).and_then(|w| match &w {
        AnyWorkload::Tpcc(t) => check_nodes(t, nodes, &files),
        AnyWorkload::Ycsb(y) => check_nodes(y, nodes, &files),
        _ => Err(Error::Internal(
            "a cluster ran an unpartitioned workload".into(),
        )),
    });
    for f in &files {
        // A file already gone changes nothing the check found.
        let _ = std::fs::remove_file(f);
    }
    let summary = checked?;
    let failed = (!summary.passed() || committed == 0).then(|| {
        let mut found = summary.anomalies.clone();
        found.extend(summary.invariant.clone());
        if committed == 0 {
            found.push("the measured interval committed nothing".into());
        }
        format!("--check failed: {}", found.join("; "))
    });
    out["check"] = serde_json::to_value(&summary)
        .map_err(|e| Error::Internal(format!("check summary: {e}")))?;
    out["check"]["passed"] = failed.is_none().into();
    Ok((out, failed))
}

/// `super::check_merged` on the nodes' results and check files.
fn check_nodes<W>(workload: &W, nodes: &[Value], files: &[PathBuf]) -> Result<CheckSummary, Error>
where
    W: Workload<Program: ClusterProgram>,
{
    if files.len() != nodes.len() {
        return Err(Error::Internal(format!(
            "{} of {} nodes left a check file",
            files.len(),
            nodes.len()
        )));
    }
    let mut digest = StateDigest::EMPTY;
    for (i, n) in nodes.iter().enumerate() {
        let d = n["digest"]
            .as_str()
            .and_then(|d| u128::from_str_radix(d, 16).ok())
            .ok_or_else(|| Error::Internal(format!("node {i} reported no state digest")))?;
        digest += StateDigest(d);
    }
    let mut histories = Vec::new();
    let mut log = None;
    for f in files {
        let text =
            std::fs::read(f).map_err(|e| Error::Internal(format!("read {}: {e}", f.display())))?;
        let file: CheckFile<W::Program> = serde_json::from_slice(&text)
            .map_err(|e| Error::Internal(format!("read {}: {e}", f.display())))?;
        histories.push(file.history);
        log = log.or(file.log);
    }
    let log = log.ok_or_else(|| Error::Internal("node 0 left no input log".into()))?;
    let errors = nodes.iter().filter_map(|n| n["errors"].as_u64()).sum();
    check_merged(workload, histories, &log, errors, Merged::Digest(digest))
}
