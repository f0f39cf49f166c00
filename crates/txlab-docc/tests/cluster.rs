//! The multi-partition cluster (`txlab_docc::cluster`) for DOCC and the Calvin-style baseline,
//! on every `txlab-net` driver. Each case runs a scripted input (a fixed number of
//! transactions per node and epoch), so the input log, restarts included, is the same under
//! every delivery order, seed and link latency; every run must
//!
//! - finish on every node, with every node holding the same merged input log, equal to the
//!   reference run's;
//! - leave a merged state equal to `SerialEngine` executing the log's serial order (the
//!   serial-replay oracle; on a mismatch the first differing rows are printed);
//! - pass the workload's consistency conditions (TPC-C's) on the merged state.
//!
//! `step`: proptest delivery orders, drops, duplicates and delays (`TXLAB_PROPTEST_CASES`,
//! default 200; a failure shrinks and prints `TXLAB_STEP_SCHEDULE`). `sim`: seeds 0 to 19
//! (`TXLAB_SIM_SEED` replays one), latency 50 µs to 1 ms, one node cut off for 100 ms.
//! `inproc`: 100 µs links; the partitions' histories, recorded on the sequence clock and merged
//! (`merge_histories`), pass `CheckOptions::strict()` (and a corrupted one fails it); and crash-and-replay: a closed-loop run's recorded log replayed on
//! a cluster stopped mid-run, then on freshly loaded nodes, reaches the first run's state.

use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use txlab_check::digest::StateDigest;
use txlab_check::serial::SerialEngine;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::deterministic::Deterministic;
use txlab_core::partition::{Partitioner, Placement};
use txlab_core::protocol::history::Outcome as HOutcome;
use txlab_core::{Engine, Error, Schema};
use txlab_docc::calvin::{Calvin, CalvinConfig};
use txlab_docc::cluster::inproc::{self, InprocOptions};
use txlab_docc::cluster::{
    Cluster, ClusterLog, ClusterProgram, Feed, LogFeed, NodeConfig, Overlap, PartitionEngine,
    PartitionNode, Pipeline, Routing, WorkloadFeed, merge_histories,
};
use txlab_docc::{Chain, Docc, DoccConfig};
use txlab_net::NodeId;
use txlab_net::inproc::LinkModel;
use txlab_net::sim::{Partition, SimCluster, SimConfig, seeds};
use txlab_net::step::strategy::{Faults, choices};
use txlab_net::step::{Schedule, Source, StepConfig, StepDriver};
use txlab_workload::tpcc::partition::ByWarehouse;
use txlab_workload::{Tpcc, TpccConfig, Workload, Ycsb, YcsbConfig};

fn cases(default: u32) -> u32 {
    std::env::var("TXLAB_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A workload a cluster can run, with its partitioner and each node's clients.
trait Partitioned:
    Workload<Program: ClusterProgram + PartialEq, Generator: Send> + Clone + 'static
{
    fn partitioner(&self, nodes: u16) -> Arc<dyn Partitioner>;
    /// The client threads of node `me`.
    fn threads(&self, me: u16, nodes: u16) -> Vec<usize>;
}

impl Partitioned for Tpcc {
    fn partitioner(&self, nodes: u16) -> Arc<dyn Partitioner> {
        Arc::new(ByWarehouse::new(self.config(), *self.tables(), u32::from(nodes)).unwrap())
    }

    /// Clients whose home warehouse the node owns (TPC-C's generator of thread `t` has home
    /// warehouse `t % W + 1`).
    fn threads(&self, me: u16, nodes: u16) -> Vec<usize> {
        let p = ByWarehouse::new(self.config(), *self.tables(), u32::from(nodes)).unwrap();
        let w = self.config().warehouses as usize;
        (0..2 * w)
            .filter(|t| p.partition_of_warehouse((t % w) as u32 + 1) == u32::from(me))
            .collect()
    }
}

impl Partitioned for Ycsb {
    fn partitioner(&self, nodes: u16) -> Arc<dyn Partitioner> {
        Arc::new(Ycsb::partitioner(self, u32::from(nodes)).unwrap())
    }

    fn threads(&self, me: u16, nodes: u16) -> Vec<usize> {
        vec![usize::from(me), usize::from(me + nodes)]
    }
}

/// TPC-C (full mix; 1 % remote order lines, 15 % remote payments) with one warehouse per node.
fn tpcc(nodes: u16) -> Tpcc {
    Tpcc::new(TpccConfig::tiny(u32::from(nodes))).unwrap()
}

/// YCSB on 8 keys per node, 2 operations per transaction: most transactions cross partitions.
fn ycsb(nodes: u16) -> Ycsb {
    Ycsb::new(YcsbConfig {
        records: 8 * u64::from(nodes),
        ops_per_txn: 2,
        read_ratio: 0.5,
        rmw_ratio: 0.5,
        payload_bytes: 8,
        theta: 0.0,
    })
    .unwrap()
}

/// One scripted run's setup.
#[derive(Clone)]
struct Case<W> {
    workload: W,
    nodes: u16,
    epochs: u32,
    per_epoch: usize,
    workers: usize,
    seed: u64,
    overlap: Overlap,
    pipeline: Pipeline,
}

impl<W: Partitioned> Case<W> {
    fn config(&self) -> NodeConfig {
        NodeConfig {
            epoch: Duration::from_millis(5),
            epochs: self.epochs,
            workers: self.workers,
            retry: Duration::from_millis(20),
            concurrency: 1 << 20,
            keep_log: true,
            overlap: self.overlap,
            pipeline: self.pipeline,
        }
    }

    fn ids(&self) -> Vec<NodeId> {
        (0..self.nodes).map(NodeId).collect()
    }

    /// A loaded cluster.
    fn cluster<E: PartitionEngine>(&self, make: fn(&Schema) -> E) -> Cluster<E> {
        let schema = self.workload.schema();
        let c = Cluster::new(&schema, self.workload.partitioner(self.nodes), |_| {
            Ok(make(&schema))
        })
        .unwrap();
        self.workload.load(&c).unwrap();
        c
    }

    fn feed(&self, me: u16) -> Box<dyn Feed<W::Program>> {
        Box::new(WorkloadFeed::with_threads(
            &self.workload,
            self.workload.threads(me, self.nodes),
            self.seed,
            Some(self.per_epoch),
        ))
    }

    fn nodes<E: PartitionEngine>(&self, c: &Cluster<E>) -> Vec<PartitionNode<E, W::Program>> {
        (0..self.nodes)
            .map(|me| c.node(me, self.config(), self.feed(me)).unwrap())
            .collect()
    }
}

fn docc(schema: &Schema) -> Docc<Chain> {
    Docc::builder()
        .config(DoccConfig {
            workers: 2,
            ..DoccConfig::default()
        })
        .build(schema)
        .unwrap()
}

fn calvin(schema: &Schema) -> Calvin {
    Calvin::builder()
        .config(CalvinConfig {
            workers: 2,
            ..CalvinConfig::default()
        })
        .build(schema)
        .unwrap()
}

/// What a finished run left, checked against itself (module docs). `overlapped` and
/// `overlap_reruns` (transactions run while a multi-partition one was in flight, committed after
/// it or run again) depend on timing and are not compared.
#[derive(Debug, Clone)]
struct Outcome<P> {
    log: ClusterLog<P>,
    digest: StateDigest,
    multi: u64,
    restarts: u64,
    /// Each node's committed, user-aborted and failed transactions.
    ended: Vec<(u64, u64, u64)>,
    overlapped: u64,
    overlap_reruns: u64,
    /// Multi-partition transactions passed by non-leading participants (`Pipeline::On`).
    passed: u64,
    /// Single-partition transactions re-sequenced by the pipeline's fence.
    fenced: u64,
}

impl<P: PartialEq> PartialEq for Outcome<P> {
    fn eq(&self, o: &Self) -> bool {
        (
            &self.log,
            &self.digest,
            self.multi,
            self.restarts,
            &self.ended,
        ) == (&o.log, &o.digest, o.multi, o.restarts, &o.ended)
    }
}

/// How `verify` names a merged state other than the serial replay's.
const NOT_SERIAL: &str = "differs from the serial replay";

/// The module's checks over the nodes a run left and the cluster's merged state.
fn verify<W: Partitioned, E: PartitionEngine>(
    workload: &W,
    cluster: &Cluster<E>,
    nodes: &[&PartitionNode<E, W::Program>],
) -> Result<Outcome<W::Program>, String> {
    for n in nodes {
        if let Some(f) = n.fatal() {
            return Err(f.to_string());
        }
        if !n.done() {
            return Err(format!("node {} did not finish", n.id()));
        }
        let s = n.stats();
        if s.errors != 0 {
            return Err(format!(
                "node {}: {} transactions ended in errors",
                n.id(),
                s.errors
            ));
        }
    }
    let log = nodes[0].log().cloned().unwrap_or_default().trimmed();
    for n in &nodes[1..] {
        if n.log().cloned().unwrap_or_default().trimmed() != log {
            return Err(format!(
                "node {} merged another input log than node 0",
                n.id()
            ));
        }
    }
    let merged = cluster.snapshot().map_err(|e| e.to_string())?;
    let oracle = serial_replay(workload, &log);
    let digest = StateDigest::of_serial(&merged);
    if digest != StateDigest::of_serial(&oracle) {
        return Err(format!(
            "merged state {NOT_SERIAL} of the log ({} entries): {:?}",
            log.len(),
            StateDigest::diff(&merged, &oracle, 5)
        ));
    }
    workload
        .check(&merged)
        .map_err(|e| format!("consistency: {e}"))?;
    Ok(Outcome {
        log,
        digest,
        multi: nodes.iter().map(|n| n.stats().multi_led).sum(),
        restarts: nodes.iter().map(|n| n.stats().restarts).sum(),
        ended: nodes
            .iter()
            .map(|n| {
                let s = n.stats();
                (s.committed, s.user_aborts, s.errors)
            })
            .collect(),
        overlapped: nodes.iter().map(|n| n.stats().overlapped).sum(),
        overlap_reruns: nodes.iter().map(|n| n.stats().overlap_reruns).sum(),
        passed: nodes.iter().map(|n| n.stats().passed).sum(),
        fenced: nodes.iter().map(|n| n.stats().fenced).sum(),
    })
}

/// `SerialEngine` loaded with `workload` and run through `log`'s serial order.
fn serial_replay<W: Partitioned>(workload: &W, log: &ClusterLog<W::Program>) -> SerialEngine {
    let serial = SerialEngine::new(workload.schema());
    workload.load(&serial).unwrap();
    let order: Vec<W::Program> = log.serial_order().into_iter().cloned().collect();
    serial.execute_log(&order, 1).unwrap();
    serial
}

const FAULTS: Faults = Faults {
    drop: true,
    duplicate: true,
    delay: true,
    crash: false,
};

fn run_step<W: Partitioned, E: PartitionEngine>(
    case: &Case<W>,
    make: fn(&Schema) -> E,
    schedule: Schedule,
) -> Result<Outcome<W::Program>, String> {
    run_step_on(case, &case.cluster(make), schedule)
}

/// `run_step` on a loaded `cluster` (whose engines' recorders the caller reads afterwards).
fn run_step_on<W: Partitioned, E: PartitionEngine>(
    case: &Case<W>,
    cluster: &Cluster<E>,
    schedule: Schedule,
) -> Result<Outcome<W::Program>, String> {
    let mut slots: Vec<Option<_>> = case.nodes(cluster).into_iter().map(Some).collect();
    let cfg = StepConfig {
        seed: case.seed,
        max_steps: 200_000,
        ..StepConfig::default()
    };
    let mut d = StepDriver::new(&case.ids(), cfg, |id: NodeId| {
        slots[usize::from(id.0)].take().expect("no restarts")
    })
    .unwrap();
    let report = d
        .run(
            Source::Choices(schedule),
            |_| Ok(()),
            |w| w.nodes().all(|(_, n)| n.done()),
        )
        .map_err(|f| f.to_string())?;
    let w = d.world();
    let nodes: Vec<_> = w.nodes().map(|(_, n)| n).collect();
    verify(&case.workload, cluster, &nodes)
        .map_err(|e| format!("{e}\nreplay: TXLAB_STEP_SCHEDULE='{}'", report.schedule))
}

/// The reference run: the step driver delivering in order.
fn reference<W: Partitioned, E: PartitionEngine>(
    case: &Case<W>,
    make: fn(&Schema) -> E,
) -> Outcome<W::Program> {
    run_step(case, make, Schedule(Vec::new())).unwrap()
}

fn step_property<W: Partitioned, E: PartitionEngine>(
    case: &Case<W>,
    make: fn(&Schema) -> E,
    n: u32,
) {
    let want = reference(case, make);
    if let Some(s) = txlab_net::step::schedule_from_env() {
        let got = run_step(case, make, s.unwrap()).unwrap();
        assert_eq!(got, want);
        return;
    }
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&choices(150, FAULTS), |s| {
            let got = run_step(case, make, s).map_err(TestCaseError::fail)?;
            if got != want {
                return Err(TestCaseError::fail(format!(
                    "another outcome than delivering in order: digest {:?} vs {:?}, {} vs {} \
                     log entries",
                    got.digest,
                    want.digest,
                    got.log.len(),
                    want.log.len()
                )));
            }
            Ok(())
        })
        .unwrap();
}

fn tpcc_case(nodes: u16) -> Case<Tpcc> {
    Case {
        workload: tpcc(nodes),
        nodes,
        epochs: 3,
        per_epoch: 6,
        workers: 2,
        seed: 7,
        overlap: Overlap::On,
        pipeline: Pipeline::Off,
    }
}

fn ycsb_case(nodes: u16) -> Case<Ycsb> {
    Case {
        workload: ycsb(nodes),
        nodes,
        epochs: 3,
        per_epoch: 3,
        workers: 2,
        seed: 11,
        overlap: Overlap::On,
        pipeline: Pipeline::Off,
    }
}

/// `case` with the pipeline (`Pipeline::On`) instead of overlap.
fn pipelined<W: Clone>(case: Case<W>) -> Case<W> {
    Case {
        overlap: Overlap::Off,
        pipeline: Pipeline::On,
        ..case
    }
}

#[test]
fn reference_runs_cross_partitions_and_match_the_serial_replay() {
    let mut restarts = 0;
    for nodes in [2, 3] {
        let y = reference(&ycsb_case(nodes), docc);
        assert!(
            y.multi > 0,
            "YCSB on {nodes} nodes ran no multi-partition transaction"
        );
        assert_eq!(y.log.len(), 3 * 3 * usize::from(nodes));
        let t = reference(&tpcc_case(nodes), docc);
        assert!(
            t.multi > 0,
            "TPC-C on {nodes} nodes ran no multi-partition transaction"
        );
        restarts += t.restarts;
        assert_eq!(
            t.log.len(),
            3 * 6 * usize::from(nodes) + t.restarts as usize
        );
        // Calvin's partitions give the same state for the same log.
        assert_eq!(reference(&ycsb_case(nodes), calvin).digest, y.digest);
        assert_eq!(reference(&tpcc_case(nodes), calvin).digest, t.digest);
    }
    // Payments by last name at a remote warehouse reach keys they do not declare: those
    // attempts are re-sequenced with the partition hinted.
    assert!(restarts > 0, "no restart was exercised");
}

/// Overlap (`txlab_docc::cluster::overlap`) runs transactions ahead of a multi-partition one in
/// flight, and the outcome is the one the nodes reach when they wait: the same log, digest and
/// per-node counts of committed, user-aborted and failed transactions, for both engines and both
/// workloads, with 1 and 2 workers; some window transactions commit from the window and some
/// are found invalid and run again at their position.
#[test]
fn overlap_runs_ahead_and_reaches_the_state_of_waiting() {
    fn both<W: Partitioned, E: PartitionEngine>(
        case: &Case<W>,
        make: fn(&Schema) -> E,
    ) -> (u64, u64) {
        let on = reference(case, make);
        let off = reference(
            &Case {
                overlap: Overlap::Off,
                ..case.clone()
            },
            make,
        );
        assert_eq!(on, off, "{} on {} nodes", case.workload.name(), case.nodes);
        assert_eq!((off.overlapped, off.overlap_reruns), (0, 0));
        (on.overlapped, on.overlap_reruns)
    }
    let (mut overlapped, mut reruns) = (0, 0);
    for workers in [1, 2] {
        let t = Case {
            epochs: 6,
            per_epoch: 12,
            workers,
            ..tpcc_case(2)
        };
        let y = Case {
            epochs: 6,
            per_epoch: 8,
            workers,
            ..ycsb_case(2)
        };
        for (o, r) in [
            both(&t, docc),
            both(&t, calvin),
            both(&y, docc),
            both(&y, calvin),
        ] {
            overlapped += o;
            reruns += r;
        }
    }
    assert!(
        overlapped > 0,
        "no transaction ran ahead of a multi-partition one"
    );
    assert!(
        reruns > 0,
        "no window transaction was found invalid and run again"
    );
}

/// Scripted TPC-C runs (whose writes depend on what they read: order ids, year-to-date sums)
/// that overlap runs ahead in, over seeds 0 to 7.
fn overlap_tpcc(seed: u64, overlap: Overlap) -> Case<Tpcc> {
    Case {
        epochs: 6,
        per_epoch: 12,
        seed,
        overlap,
        ..tpcc_case(2)
    }
}

/// On how many of seeds 0 to `SEEDS - 1` a mutant was caught: by the serial replay (the run's
/// failure is that the merged state differs from it; a run that fails otherwise, with errors or
/// without finishing, is not counted), by the checker (the partitions' merged history fails
/// `CheckOptions::strict()`).
#[derive(Debug, Default)]
struct Caught {
    /// Seeds the serial replay caught it on.
    replay: u32,
    /// Seeds the checker caught it on.
    checker: u32,
}

const SEEDS: u64 = 16;

/// `Caught` for `mutant` on `base` with seeds 0 to `SEEDS - 1` (the checker only with `history`).
fn catch<E: PartitionEngine>(
    base: &Case<Tpcc>,
    make: fn(&Schema) -> E,
    history: Option<fn(&E) -> History>,
    mutant: Overlap,
) -> Caught {
    let mut caught = Caught::default();
    for seed in 0..SEEDS {
        let case = Case {
            seed,
            overlap: mutant,
            ..base.clone()
        };
        let cluster = case.cluster(make);
        match run_step_on(&case, &cluster, Schedule(Vec::new())) {
            Ok(_) => {}
            Err(e) if e.contains(NOT_SERIAL) => caught.replay += 1,
            // Errors or no progress: a symptom of the mutant, not what this counts.
            Err(_) => {}
        }
        if let Some(history) = history {
            let merged = merge_histories(cluster.engines().iter().map(|e| history(e)));
            if !check(&merged, CheckOptions::strict()).is_serializable() {
                caught.checker += 1;
            }
        }
    }
    caught
}

/// The overlap's check can fail: a window that commits without being validated against the
/// multi-partition transaction's writes (it reads around it), or that commits through the
/// engine at once (before it), gives another state than the serial replay on some of
/// `overlap_tpcc`'s runs, for both engines; the same runs pass without a mutant.
#[test]
fn overlap_mutants_are_caught_by_the_serial_replay() {
    for mutant in [Overlap::SkipValidation, Overlap::CommitEarly] {
        let t = overlap_tpcc(0, mutant);
        let d = catch(&t, docc, None, mutant);
        assert!(d.replay > 0, "{mutant:?} passed on DOCC: {d:?}");
        let c = catch(&t, calvin, None, mutant);
        assert!(c.replay > 0, "{mutant:?} passed on Calvin: {c:?}");
    }
    for seed in 0..SEEDS {
        let case = overlap_tpcc(seed, Overlap::On);
        run_step(&case, docc, Schedule(Vec::new())).unwrap();
        run_step(&case, calvin, Schedule(Vec::new())).unwrap();
    }
}

/// Narrower mutants, each skipping one part of the check, on engines that record histories.
///
/// - `SkipBaseReadCheck` (a window transaction's read from the committed state is not checked
///   against the multi-partition transaction's writes): TPC-C's new-orders read the warehouse row
///   a remote payment updates, and nothing they write depends on its year-to-date sum, so the
///   serial replay misses some runs (some of those end in errors or do not finish); the checker
///   catches it on more runs than the serial replay, since the history records the version each
///   read saw, looked up before that transaction installed (a version looked up later, at
///   commit, would be the one the serial order says, and hide most of them).
/// - `SkipScanCheck` (scanned ranges are not checked): TPC-C's point reads cover most scans
///   (stock-level reads the district before the order lines), so the case has one district of
///   three customers per warehouse, where an order-status scans the orders of the customer a
///   remote new-order just added one for; caught by either oracle.
///
/// Without a mutant, the same recorded runs commit window transactions and pass both oracles.
#[test]
fn narrow_overlap_mutants_are_caught_by_the_checker_or_the_serial_replay() {
    let docc_history: fn(&Docc<Chain, MemoryRecorder>) -> History = |e| e.recorder().take();
    let calvin_history: fn(&Calvin<MemoryRecorder>) -> History = |e| e.recorder().take();
    let m = Overlap::SkipBaseReadCheck;
    let t = overlap_tpcc(0, m);
    let d = catch(&t, docc_recorded, Some(docc_history), m);
    assert!(d.checker > d.replay, "{m:?} on DOCC: {d:?}");
    let c = catch(&t, calvin_recorded, Some(calvin_history), m);
    assert!(c.checker > c.replay, "{m:?} on Calvin: {c:?}");

    let m = Overlap::SkipScanCheck;
    let few_customers = Case {
        workload: Tpcc::new(TpccConfig {
            warehouses: 2,
            districts_per_warehouse: 1,
            customers_per_district: 3,
            items: 1000,
            ..TpccConfig::default()
        })
        .unwrap(),
        ..overlap_tpcc(0, m)
    };
    // Caught on few seeds (2 of 16 per engine), so the bound is over both engines together:
    // a miss on every seed of both would mean the scan check is not what these runs need.
    let d = catch(&few_customers, docc_recorded, Some(docc_history), m);
    let c = catch(&few_customers, calvin_recorded, Some(calvin_history), m);
    assert!(
        d.replay + d.checker + c.replay + c.checker > 0,
        "{m:?}: DOCC {d:?}, Calvin {c:?}"
    );

    let mut overlapped = 0;
    for base in [overlap_tpcc(0, Overlap::On), few_customers] {
        for seed in 0..SEEDS {
            let case = Case {
                seed,
                overlap: Overlap::On,
                ..base.clone()
            };
            let cluster = case.cluster(docc_recorded);
            overlapped += run_step_on(&case, &cluster, Schedule(Vec::new()))
                .unwrap()
                .overlapped;
            let merged = merge_histories(cluster.engines().iter().map(|e| docc_history(e)));
            let report = check(&merged, CheckOptions::strict());
            assert!(report.is_serializable(), "DOCC, seed {seed}:\n{report}");
            let cluster = case.cluster(calvin_recorded);
            overlapped += run_step_on(&case, &cluster, Schedule(Vec::new()))
                .unwrap()
                .overlapped;
            let merged = merge_histories(cluster.engines().iter().map(|e| calvin_history(e)));
            let report = check(&merged, CheckOptions::strict());
            assert!(report.is_serializable(), "Calvin, seed {seed}:\n{report}");
        }
    }
    assert!(overlapped > 0, "no recorded window transaction committed");
}

#[test]
fn docc_ycsb_under_every_step_schedule() {
    step_property(&ycsb_case(2), docc, cases(200));
}

#[test]
fn calvin_ycsb_under_every_step_schedule() {
    step_property(&ycsb_case(3), calvin, cases(200) / 2);
}

#[test]
fn docc_tpcc_under_every_step_schedule() {
    step_property(&tpcc_case(2), docc, cases(200) / 4);
}

#[test]
fn calvin_tpcc_under_every_step_schedule() {
    step_property(&tpcc_case(2), calvin, cases(200) / 4);
}

#[test]
fn pipelined_docc_ycsb_under_every_step_schedule() {
    step_property(&pipelined(ycsb_case(2)), docc, cases(200) / 2);
    step_property(&pipelined(ycsb_case(3)), calvin, cases(200) / 4);
}

#[test]
fn pipelined_docc_tpcc_under_every_step_schedule() {
    step_property(&pipelined(tpcc_case(2)), docc, cases(200) / 4);
}

/// The pipeline (`Pipeline::On`): non-leading participants pass multi-partition transactions
/// without waiting for their outcome, and the runs still match the serial replay of their log
/// (every run's `verify`), for both engines, both workloads, 2 and 3 nodes; some transactions
/// are passed, and some single-partition ones are fenced (re-sequenced) for touching a key a
/// passed one held.
#[test]
fn pipeline_passes_multi_partition_transactions_and_matches_the_serial_replay() {
    let (mut passed, mut fenced) = (0, 0);
    for nodes in [2, 3] {
        for workers in [1, 2] {
            let t = pipelined(Case {
                epochs: 6,
                per_epoch: 12,
                workers,
                ..tpcc_case(nodes)
            });
            let y = pipelined(Case {
                epochs: 6,
                per_epoch: 8,
                workers,
                ..ycsb_case(nodes)
            });
            let counts = |o: Outcome<_>| (o.passed, o.fenced);
            let ycounts = |o: Outcome<_>| (o.passed, o.fenced);
            for (p, f) in [
                counts(reference(&t, docc)),
                ycounts(reference(&y, docc)),
                counts(reference(&t, calvin)),
                ycounts(reference(&y, calvin)),
            ] {
                passed += p;
                fenced += f;
            }
        }
    }
    assert!(passed > 0, "no multi-partition transaction was passed");
    assert!(fenced > 0, "no single-partition transaction was fenced");
}

/// The pipeline's waits and fence can fail: a read set sent while a passed transaction still
/// holds one of its keys (the leader reads a stale remote row: `SkipHeld`), or single-partition
/// transactions that touch a held key without being re-sequenced (`SkipFence`), give another
/// state than the serial replay on some seeds of YCSB's mostly cross-partition runs (with a
/// read-modify-write counter in every value), for DOCC and Calvin; the same runs pass without a
/// mutant.
#[test]
fn pipeline_mutants_are_caught_by_the_serial_replay() {
    fn caught<E: PartitionEngine>(make: fn(&Schema) -> E, pipeline: Pipeline) -> u32 {
        // Values of 24 bytes: a read-modify-write increments a counter (bytes 16..24), so a
        // stale read loses an increment.
        let counting = Ycsb::new(YcsbConfig {
            payload_bytes: 24,
            ..*ycsb(2).config()
        })
        .unwrap();
        let mut caught = 0;
        for seed in 0..SEEDS {
            let case = Case {
                seed,
                pipeline,
                ..pipelined(Case {
                    workload: counting.clone(),
                    epochs: 6,
                    per_epoch: 8,
                    ..ycsb_case(2)
                })
            };
            match run_step(&case, make, Schedule(Vec::new())) {
                Ok(_) => {}
                Err(e) if e.contains(NOT_SERIAL) => caught += 1,
                Err(_) => {}
            }
        }
        caught
    }
    for mutant in [Pipeline::SkipHeld, Pipeline::SkipFence] {
        assert!(caught(docc, mutant) > 0, "{mutant:?} passed on DOCC");
        assert!(caught(calvin, mutant) > 0, "{mutant:?} passed on Calvin");
    }
    assert_eq!(caught(docc, Pipeline::On), 0);
    assert_eq!(caught(calvin, Pipeline::On), 0);
}

fn run_sim<W: Partitioned, E: PartitionEngine>(
    case: &Case<W>,
    make: fn(&Schema) -> E,
    seed: u64,
) -> Result<Outcome<W::Program>, String> {
    let cluster = case.cluster(make);
    let slots: RefCell<Vec<Option<_>>> =
        RefCell::new(case.nodes(&cluster).into_iter().map(Some).collect());
    let cut = NodeId(case.nodes - 1);
    let sim = SimConfig {
        seed,
        min_latency: Duration::from_micros(50),
        max_latency: Duration::from_millis(1),
        partitions: vec![Partition {
            at: Duration::from_millis(7),
            duration: Duration::from_millis(100),
            side_a: vec![cut],
            side_b: case.ids().into_iter().filter(|&i| i != cut).collect(),
        }],
        duration: Duration::from_secs(30),
        ..SimConfig::default()
    };
    let mut c = SimCluster::new(&case.ids(), sim, move |id| {
        slots.borrow_mut()[usize::from(id.0)]
            .take()
            .expect("no restarts")
    })
    .map_err(|e| e.to_string())?;
    c.run_until(|nodes| {
        nodes
            .iter()
            .all(|(_, n)| n.is_some_and(PartitionNode::done))
    })
    .map_err(|e| format!("seed {seed} (TXLAB_SIM_SEED={seed}): {e}"))?;
    c.view(|nodes| {
        let nodes: Vec<_> = nodes.iter().filter_map(|(_, n)| *n).collect();
        verify(&case.workload, &cluster, &nodes)
    })
    .map_err(|e| format!("seed {seed} (TXLAB_SIM_SEED={seed}): {e}"))
}

fn sim_property<W: Partitioned, E: PartitionEngine>(case: &Case<W>, make: fn(&Schema) -> E) {
    let want = reference(case, make);
    for seed in seeds(0..20).unwrap() {
        let got = run_sim(case, make, seed).unwrap();
        assert_eq!(got.digest, want.digest, "seed {seed}");
        assert_eq!(got.log, want.log, "seed {seed}");
    }
}

#[test]
fn docc_under_simulated_latency_and_a_partition() {
    sim_property(&ycsb_case(3), docc);
    sim_property(&tpcc_case(2), docc);
}

#[test]
fn pipelined_under_simulated_latency_and_a_partition() {
    sim_property(&pipelined(ycsb_case(3)), docc);
    sim_property(&pipelined(tpcc_case(2)), docc);
    sim_property(&pipelined(ycsb_case(2)), calvin);
}

#[test]
fn calvin_under_simulated_latency_and_a_partition() {
    sim_property(&ycsb_case(2), calvin);
    sim_property(&tpcc_case(3), calvin);
}

fn inproc_options() -> InprocOptions {
    InprocOptions {
        link: Some(LinkModel {
            latency: Duration::from_micros(100),
            jitter: Duration::from_micros(50),
            seed: 3,
        }),
        timeout: Duration::from_secs(60),
        ..InprocOptions::default()
    }
}

#[test]
fn inproc_links_give_the_same_digest() {
    for case in [tpcc_case(2), tpcc_case(3), pipelined(tpcc_case(2))] {
        let want = reference(&case, docc);
        let cluster = case.cluster(docc);
        let done = inproc::run(case.nodes(&cluster), &inproc_options()).unwrap();
        let nodes: Vec<_> = done.nodes.iter().collect();
        let got = verify(&case.workload, &cluster, &nodes).unwrap();
        assert_eq!(got, want);
    }
}

/// Crash and replay (Calvin's recovery by deterministic replay, no checkpoints): a closed-loop
/// run records its input log; the log replayed on a cluster stopped mid-run is lost with it;
/// replayed on freshly loaded nodes it reaches the first run's state.
fn crash_and_replay<E: PartitionEngine>(make: fn(&Schema) -> E, pipeline: Pipeline) {
    let case = Case {
        pipeline,
        overlap: Overlap::Off,
        ..tpcc_case(2)
    };
    let cfg = NodeConfig {
        epochs: 8,
        concurrency: 16,
        ..case.config()
    };
    let cluster = case.cluster(make);
    let nodes = (0..case.nodes)
        .map(|me| {
            let feed = WorkloadFeed::with_threads(
                &case.workload,
                case.workload.threads(me, case.nodes),
                case.seed,
                None,
            );
            cluster.node(me, cfg, Box::new(feed)).unwrap()
        })
        .collect();
    let first = inproc::run(nodes, &inproc_options()).unwrap();
    let nodes: Vec<_> = first.nodes.iter().collect();
    let want = verify(&case.workload, &cluster, &nodes).unwrap();
    assert!(
        want.log.len() > 16,
        "the closed loop ran {}",
        want.log.len()
    );

    let replay_nodes = |c: &Cluster<E>| -> Vec<PartitionNode<E, <Tpcc as Workload>::Program>> {
        let cfg = NodeConfig {
            epochs: want.log.epochs.len() as u32,
            ..cfg
        };
        (0..case.nodes)
            .map(|me| {
                c.node(me, cfg, Box::new(LogFeed::new(&want.log, me)))
                    .unwrap()
            })
            .collect()
    };
    let crashed = case.cluster(make);
    let stop = InprocOptions {
        stop_after: Some(Duration::from_millis(12)),
        ..inproc_options()
    };
    let cut = inproc::run(replay_nodes(&crashed), &stop).unwrap();
    assert!(
        cut.nodes.iter().any(|n| !n.done()),
        "the crash came after the end"
    );
    drop(cut);
    drop(crashed);

    let rebuilt = case.cluster(make);
    let done = inproc::run(replay_nodes(&rebuilt), &inproc_options()).unwrap();
    let nodes: Vec<_> = done.nodes.iter().collect();
    let got = verify(&case.workload, &rebuilt, &nodes).unwrap();
    assert_eq!(got.digest, want.digest);
    assert_eq!(got.log, want.log);
}

#[test]
fn docc_recovers_by_replaying_the_input_log() {
    crash_and_replay(docc, Pipeline::Off);
    crash_and_replay(docc, Pipeline::On);
}

#[test]
fn calvin_recovers_by_replaying_the_input_log() {
    crash_and_replay(calvin, Pipeline::Off);
}

fn docc_recorded(schema: &Schema) -> Docc<Chain, MemoryRecorder> {
    Docc::builder()
        .config(DoccConfig {
            workers: 2,
            sequence_clock: true,
            ..DoccConfig::default()
        })
        .recorder(Arc::new(MemoryRecorder::new()))
        .build(schema)
        .unwrap()
}

fn calvin_recorded(schema: &Schema) -> Calvin<MemoryRecorder> {
    Calvin::builder()
        .config(CalvinConfig {
            workers: 2,
            sequence_clock: true,
            ..CalvinConfig::default()
        })
        .recorder(Arc::new(MemoryRecorder::new()))
        .build(schema)
        .unwrap()
}

/// A scripted run on `inproc` threads with every partition recording on the sequence clock;
/// returns the partitions' histories merged (`merge_histories`) and the run's routing.
fn recorded_run<W: Partitioned, E: PartitionEngine>(
    case: &Case<W>,
    make: fn(&Schema) -> E,
    history: fn(&E) -> History,
) -> (History, Arc<Routing>) {
    let cluster = case.cluster(make);
    let done = inproc::run(case.nodes(&cluster), &inproc_options()).unwrap();
    let nodes: Vec<_> = done.nodes.iter().collect();
    verify(&case.workload, &cluster, &nodes).unwrap();
    let merged = merge_histories(cluster.engines().iter().map(|e| history(e)));
    (merged, Arc::clone(cluster.routing()))
}

/// The merged history passes `strict()` (equivalence to the serial execution in the global
/// order), and it holds transactions whose writes were installed at two partitions (the merge
/// joined their parts).
fn merged_history_is_strict<W: Partitioned, E: PartitionEngine>(
    case: &Case<W>,
    make: fn(&Schema) -> E,
    history: fn(&E) -> History,
) {
    let (merged, routing) = recorded_run(case, make, history);
    let report = check(&merged, CheckOptions::strict());
    let what = format!("{} on {} nodes", case.workload.name(), case.nodes);
    assert!(report.is_serializable(), "{what}:\n{report}");
    assert!(report.committed > 0, "{what}: nothing committed");
    let spans_two = merged.records().iter().any(|r| {
        let mut owners: Vec<u16> = r
            .writes
            .iter()
            .filter(|w| routing.placement(w.table) == Placement::Partitioned)
            .filter_map(|w| routing.owner(w.table, w.key).ok())
            .collect();
        owners.sort_unstable();
        owners.dedup();
        owners.len() > 1
    });
    assert!(
        spans_two,
        "{what}: no merged record wrote at two partitions"
    );
}

#[test]
fn merged_partition_histories_are_equivalent_to_the_global_order() {
    let docc_history: fn(&Docc<Chain, MemoryRecorder>) -> History = |e| e.recorder().take();
    let calvin_history: fn(&Calvin<MemoryRecorder>) -> History = |e| e.recorder().take();
    merged_history_is_strict(&ycsb_case(3), docc_recorded, docc_history);
    merged_history_is_strict(&tpcc_case(2), docc_recorded, docc_history);
    merged_history_is_strict(&ycsb_case(2), calvin_recorded, calvin_history);
    merged_history_is_strict(&tpcc_case(3), calvin_recorded, calvin_history);
    merged_history_is_strict(&pipelined(ycsb_case(3)), docc_recorded, docc_history);
    merged_history_is_strict(&pipelined(tpcc_case(2)), docc_recorded, docc_history);
    merged_history_is_strict(&pipelined(ycsb_case(2)), calvin_recorded, calvin_history);
}

/// The check can fail: in a valid merged history, move one transaction that read another's
/// write to before that writer (it now ends before the writer begins, yet reads its write).
#[test]
fn the_merged_history_check_catches_a_reader_moved_before_its_writer() {
    let (mut merged, _) = recorded_run(&ycsb_case(2), docc_recorded, |e| e.recorder().take());
    assert!(check(&merged, CheckOptions::strict()).is_serializable());
    let records = merged.records_mut();
    let writers: HashMap<(u16, u64, u64), u64> = records
        .iter()
        .filter(|r| r.outcome == HOutcome::Committed)
        .flat_map(|r| {
            r.writes
                .iter()
                .map(move |w| ((w.table.0, w.key, w.version), r.begin_ns))
        })
        .collect();
    let (reader, writer_begin) = records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.outcome == HOutcome::Committed)
        .find_map(|(i, r)| {
            r.reads
                .iter()
                .find_map(|x| writers.get(&(x.table.0, x.key, x.version)))
                .filter(|&&b| b > 0 && b < r.begin_ns)
                .map(|&b| (i, b))
        })
        .expect("some transaction read another's write");
    records[reader].begin_ns = writer_begin - 1;
    records[reader].end_ns = writer_begin - 1;
    let report = check(&merged, CheckOptions::strict());
    assert!(
        !report.is_serializable(),
        "a reader moved before its writer passed the check"
    );
}

#[test]
fn a_cluster_has_no_interactive_workers_and_refuses_bad_shapes() {
    let c = tpcc_case(2).cluster(docc);
    let Err(e) = c.worker() else {
        panic!("worker() of a cluster must be a misuse")
    };
    assert!(matches!(e, Error::Misuse(_)), "{e}");
    let w = tpcc(2);
    let e = Cluster::new(
        &w.schema(),
        w.partitioner(2),
        |_| -> Result<Docc<Chain>, _> { Err(Error::invalid("workers", 0, "1..=1024")) },
    )
    .unwrap_err();
    assert!(e.to_string().contains("workers = 0"), "{e}");
    let e = c
        .node(
            5,
            NodeConfig::default(),
            Box::new(LogFeed::<<Tpcc as Workload>::Program>::new(
                &ClusterLog::default(),
                5,
            )),
        )
        .unwrap_err();
    assert!(e.to_string().contains("node = 5"), "{e}");
    let both = NodeConfig {
        overlap: Overlap::On,
        pipeline: Pipeline::On,
        ..NodeConfig::default()
    };
    let e = c
        .node(
            0,
            both,
            Box::new(LogFeed::<<Tpcc as Workload>::Program>::new(
                &ClusterLog::default(),
                0,
            )),
        )
        .unwrap_err();
    assert!(e.to_string().contains("not both"), "{e}");
}
