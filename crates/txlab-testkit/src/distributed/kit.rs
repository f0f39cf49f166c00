//! The distributed correctness kit: one test body for `rococo`, `2pl-2pc` and `occ-2pc` on the
//! `step` and `sim` drivers ([`every_protocol_under_every_schedule`], [`every_protocol_every_seed`]). A case is a workload, a protocol, a cluster shape and a quota of
//! transactions per client slot; [`verify`] checks what the run left behind:
//!
//! - no node hit a fatal error, every internal-error counter is zero, every client finished
//!   its quota;
//! - every transaction was recorded once, and the merged column-group history is strictly
//!   serializable (`CheckOptions::strict()`) with the one-order property
//!   (`txlab_rococo::history::check`);
//! - the shards, merged, pass the workload's consistency conditions (`Workload::check`).
//!
//! `TXLAB_PROPTEST_CASES` sets the proptest case counts; the proptest seed is fixed, so CI runs
//! the same cases every time, and `TXLAB_SEED=N` (or `TXLAB_SEED=random`) explores others (a
//! failure names its seed). `TXLAB_STEP_SCHEDULE` replays one step schedule, `TXLAB_SIM_SEED`
//! one simulation seed.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;
use txlab_net::NodeId;
use txlab_net::sim::{Crash, Partition, SimCluster, SimConfig, seeds};
use txlab_net::step::strategy::{Faults, choices};
use txlab_net::step::{Schedule, Source, StepConfig, StepDriver, World};
use txlab_rococo::client::Issue;
use txlab_rococo::cluster::{merge_shards, node_factory};
use txlab_rococo::counters::Counters;
use txlab_rococo::{MemoryRecording, Params, PiecedWorkload, Protocol, RococoCluster, RococoNode};
use txlab_workload::{Tpcc, TpccConfig, Ycsb, YcsbConfig};

/// The node type of every case.
pub type Node<W> = RococoNode<W, MemoryRecording>;

/// Proptest cases: `TXLAB_PROPTEST_CASES`, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("TXLAB_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The default proptest seed (module docs).
const SEED: u64 = 0x726f_636f_636f;

/// A proptest runner of `cases` cases (`max_shrink_iters` as given) seeded from `TXLAB_SEED`
/// (a number, or `random` for a fresh one), else from a fixed seed; returns the seed to print.
pub fn runner(cases: u32, max_shrink_iters: u32) -> (TestRunner, u64) {
    let seed = match std::env::var("TXLAB_SEED").as_deref() {
        Ok("random") => {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        }
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("TXLAB_SEED={s:?}: accepted: a u64 or `random`")),
        Err(_) => SEED,
    };
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        max_shrink_iters,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    (TestRunner::new_with_rng(config, rng), seed)
}

/// One run's setup.
#[derive(Debug, Clone)]
pub struct Case<W> {
    /// The workload.
    pub workload: W,
    /// The protocol.
    pub protocol: Protocol,
    /// Servers (node ids `0..servers`; client nodes follow).
    pub servers: u16,
    /// Client slots per client node.
    pub clients: Vec<Vec<u32>>,
    /// Transactions per slot.
    pub quota: u64,
    /// The run's parameters.
    pub params: Params,
}

impl<W: PiecedWorkload> Case<W> {
    fn nodes(&self) -> Vec<NodeId> {
        (0..self.servers + self.clients.len() as u16)
            .map(NodeId)
            .collect()
    }

    fn expected(&self) -> usize {
        self.clients.iter().map(Vec::len).sum::<usize>() * self.quota as usize
    }

    /// A loaded cluster and its node factory.
    fn build(
        &self,
    ) -> (
        RococoCluster<W>,
        impl FnMut(NodeId) -> Node<W> + Send + 'static,
        Arc<MemoryRecording>,
    ) {
        let cluster = RococoCluster::new(
            self.workload.clone(),
            self.protocol,
            self.servers,
            self.params.clone(),
        )
        .unwrap();
        self.workload.load(&cluster).unwrap();
        let shards = cluster.take_shards().unwrap();
        let rec = Arc::new(MemoryRecording::new());
        let factory = node_factory(
            Arc::clone(cluster.shared()),
            shards,
            self.clients.clone(),
            Issue::Quota(self.quota),
            Arc::clone(&rec),
        );
        (cluster, factory, rec)
    }
}

/// Pieced YCSB on `records` hot keys, 2 operations per transaction, half of them reads.
pub fn hot_ycsb(records: u64) -> Ycsb {
    Ycsb::new(YcsbConfig {
        records,
        ops_per_txn: 2,
        read_ratio: 0.5,
        rmw_ratio: 0.5,
        payload_bytes: 8,
        theta: 0.0,
    })
    .unwrap()
}

/// Scaled TPC-C: one warehouse of `districts` districts of 100 customers, `items` items.
pub fn small_tpcc(districts: u32, items: u32) -> Tpcc {
    Tpcc::new(TpccConfig {
        districts_per_warehouse: districts,
        customers_per_district: 100,
        items,
        scaled: true,
        ..TpccConfig::tiny(1)
    })
    .unwrap()
}

/// Params for a checked, recorded test run.
pub fn params(seed: u64) -> Params {
    Params {
        seed,
        checked: true,
        ..Params::default()
    }
}

/// Whether `n` hit a fatal error (the run stops; [`verify`] reports it).
fn fatal<W: PiecedWorkload>(n: &Node<W>) -> bool {
    match n {
        RococoNode::Client(c) => c.fatal().is_some(),
        RococoNode::Server(s) => s.fatal().is_some(),
    }
}

/// What a passing run counted.
#[derive(Debug, Default)]
pub struct Summary {
    /// Every node's counters, merged.
    pub counters: Counters,
    /// Transactions committed.
    pub committed: usize,
}

/// The kit's checks (module docs) over the nodes a run left.
pub fn verify<'a, W: PiecedWorkload>(
    case: &Case<W>,
    cluster: &RococoCluster<W>,
    nodes: impl IntoIterator<Item = (NodeId, Option<&'a Node<W>>)>,
    rec: &MemoryRecording,
) -> Result<Summary, String> {
    let mut counters = Counters::default();
    let mut shards = Vec::new();
    for (id, node) in nodes {
        match node.ok_or_else(|| format!("{id} is down at the end"))? {
            RococoNode::Server(s) => {
                if let Some(f) = s.fatal() {
                    return Err(f.to_string());
                }
                counters.merge(&s.counters());
                shards.push((s.id(), s.shard()));
            }
            RococoNode::Client(c) => {
                if let Some(f) = c.fatal() {
                    return Err(format!("{id}: {f}"));
                }
                if !c.done() {
                    return Err(format!("{id} did not finish ({} active)", c.active()));
                }
                counters.merge(c.counters());
            }
        }
    }
    if counters.internal_errors() != 0 {
        let c = &counters;
        return Err(format!(
            "internal errors: gc_status_errors {} scc_mismatches {} mixed_edges {} i_cycles {} \
             status_errors {}",
            c.gc_status_errors, c.scc_mismatches, c.mixed_edges, c.i_cycles, c.status_errors
        ));
    }
    let recorded = rec.take();
    if recorded.len() != case.expected() {
        return Err(format!(
            "{} transactions recorded, {} expected",
            recorded.len(),
            case.expected()
        ));
    }
    let committed = recorded
        .iter()
        .filter(|(r, _)| r.outcome == txlab_core::protocol::history::Outcome::Committed)
        .count();
    let checked = txlab_rococo::history::check(recorded);
    if !checked.report.is_serializable() {
        return Err(format!("not strictly serializable: {:?}", checked.report));
    }
    if let Err(v) = checked.one_order {
        return Err(v.to_string());
    }
    let schema = case.workload.schema();
    let engine = merge_shards(cluster.shared(), &schema, shards).map_err(|e| e.to_string())?;
    case.workload
        .check(&engine)
        .map_err(|e| format!("consistency: {e}"))?;
    Ok(Summary {
        counters,
        committed,
    })
}

/// Runs `case` on the step driver under `schedule` (then drained in order), and verifies it.
/// The error carries the replayable schedule.
pub fn run_step<W: PiecedWorkload>(case: &Case<W>, schedule: Schedule) -> Result<Summary, String> {
    let (cluster, factory, rec) = case.build();
    let cfg = StepConfig {
        seed: case.params.seed,
        max_steps: 200_000,
        ..StepConfig::default()
    };
    let mut d = StepDriver::new(&case.nodes(), cfg, factory).unwrap();
    let done = |w: &World<Node<W>>| {
        w.nodes().all(|(_, n)| match n {
            RococoNode::Client(c) => c.done(),
            RococoNode::Server(s) => s.quiescent(),
        }) || w.nodes().any(|(_, n)| fatal(n))
    };
    let report = d
        .run(Source::Choices(schedule), |_| Ok(()), done)
        .map_err(|f| f.to_string())?;
    let w = d.world();
    let nodes = w.ids().iter().map(|&id| (id, w.node(id)));
    verify(case, &cluster, nodes, &rec)
        .map_err(|e| format!("{e}\nreplay: TXLAB_STEP_SCHEDULE='{}'", report.schedule))
}

/// Runs `case` on the turmoil simulation with `sim`, and verifies it.
pub fn run_sim<W: PiecedWorkload>(case: &Case<W>, sim: SimConfig) -> Result<Summary, String> {
    let seed = sim.seed;
    let (cluster, factory, rec) = case.build();
    let factory = RefCell::new(factory);
    let mut c = SimCluster::new(&case.nodes(), sim, move |id| (factory.borrow_mut())(id))
        .map_err(|e| e.to_string())?;
    c.run_until(|nodes| {
        nodes.iter().all(|(_, n)| match n {
            Some(RococoNode::Client(c)) => c.done(),
            Some(RococoNode::Server(s)) => s.quiescent(),
            None => false,
        }) || nodes.iter().any(|(_, n)| n.is_some_and(fatal))
    })
    .map_err(|e| format!("seed {seed} (TXLAB_SIM_SEED={seed}): {e}"))?;
    c.view(|nodes| verify(case, &cluster, nodes.iter().copied(), &rec))
        .map_err(|e| format!("seed {seed} (TXLAB_SIM_SEED={seed}): {e}"))
}

// ---- the step driver: every protocol under proptest schedules, shrunk and replayable ----

/// Message faults of the schedules; crashes are left to the simulation (server recovery is out
/// of scope).
pub const FAULTS: Faults = Faults {
    drop: true,
    duplicate: true,
    delay: true,
    crash: false,
};

/// A case's shape: `(keys or districts, servers, seed)`.
pub type Shape = (u64, u16, u64);

/// Builds the case of a family (`ycsb`, `tpcc`, ...) for a protocol and a shape.
pub type MakeCase<W> = fn(Protocol, Shape) -> Case<W>;

/// A case spec as printed on failure: `<family> <protocol> <keys|districts> <servers> <seed>`.
fn parse_case(spec: &str) -> (String, Protocol, Shape) {
    let f: Vec<&str> = spec.split_whitespace().collect();
    let usage = "TXLAB_STEP_CASE='<family> <protocol> <n> <servers> <seed>'";
    assert_eq!(f.len(), 5, "{usage}, got {spec:?}");
    let num = |s: &str| -> u64 {
        s.parse()
            .unwrap_or_else(|_| panic!("{usage}, got {spec:?}"))
    };
    let protocol = Protocol::from_name(f[1]).unwrap_or_else(|e| panic!("{e}"));
    (
        f[0].to_string(),
        protocol,
        (num(f[2]), num(f[3]) as u16, num(f[4])),
    )
}

/// Runs case `spec` (`TXLAB_STEP_CASE` syntax) of the family `make` builds under `schedule`,
/// panicking with the kit's error.
pub fn run_spec<W: PiecedWorkload>(make: MakeCase<W>, spec: &str, schedule: &str) {
    let (_, protocol, shape) = parse_case(spec);
    let schedule: Schedule = schedule.parse().unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = run_step(&make(protocol, shape), schedule) {
        panic!("{spec}: {e}");
    }
}

/// Replays `TXLAB_STEP_CASE` / `TXLAB_STEP_SCHEDULE` if both are set (running it if it names
/// `family`); whether they were set.
fn replay<W: PiecedWorkload>(family: &str, make: MakeCase<W>) -> bool {
    let (Ok(case), Ok(schedule)) = (
        std::env::var("TXLAB_STEP_CASE"),
        std::env::var("TXLAB_STEP_SCHEDULE"),
    ) else {
        return false;
    };
    if parse_case(&case).0 == family {
        run_spec(make, &case, &schedule);
    }
    true
}

/// The step-driver property for every protocol: `n` proptest cases of a shape from `shapes`
/// and a schedule of up to 150 choices with [`FAULTS`], each run and [`verify`]d. A failure
/// shrinks to a minimal schedule and panics with `TXLAB_SEED` and the `TXLAB_STEP_CASE` /
/// `TXLAB_STEP_SCHEDULE` that replay it (when both are set, only that case runs).
pub fn every_protocol_under_every_schedule<W: PiecedWorkload>(
    family: &str,
    make: MakeCase<W>,
    shapes: impl Strategy<Value = Shape>,
    n: u32,
) {
    if replay(family, make) {
        return;
    }
    for protocol in Protocol::ALL {
        let (mut runner, seed) = runner(n, Config::default().max_shrink_iters);
        let r = runner.run(
            &(&shapes, choices(150, FAULTS)),
            |(shape, s): (Shape, Schedule)| {
                run_step(&make(protocol, shape), s).map(drop).map_err(|e| {
                    TestCaseError::fail(format!(
                        "{e}\nTXLAB_STEP_CASE='{family} {} {} {} {}'",
                        protocol.name(),
                        shape.0,
                        shape.1,
                        shape.2
                    ))
                })
            },
        );
        if let Err(e) = r {
            panic!("{} (TXLAB_SEED={seed}): {e}", protocol.name());
        }
    }
}

// ---- the sim driver: partitions, a coordinator crash, seeds 0 to 19 ----

/// The simulation every protocol runs: latency 50 µs to 2 ms, a 100 ms partition between client
/// node 2 and server 0 at 2 ms, one between servers 0 and 1 at 6 ms (while commits and status
/// requests are in flight), and client node 3 crashing at 4 ms and bouncing 50 ms later.
pub fn partitions_and_a_crash(seed: u64) -> SimConfig {
    let ms = Duration::from_millis;
    SimConfig {
        seed,
        min_latency: Duration::from_micros(50),
        max_latency: ms(2),
        partitions: vec![
            Partition {
                at: ms(2),
                duration: ms(100),
                side_a: vec![NodeId(2)],
                side_b: vec![NodeId(0)],
            },
            Partition {
                at: ms(6),
                duration: ms(100),
                side_a: vec![NodeId(0)],
                side_b: vec![NodeId(1)],
            },
        ],
        crashes: vec![Crash {
            at: ms(4),
            node: NodeId(3),
            restart_after: ms(50),
        }],
        duration: Duration::from_secs(30),
        ..SimConfig::default()
    }
}

/// Params for a simulated run: coordinators log their requests (§3.5), requests are resent
/// after 20 ms, GC every 10 ms.
pub fn sim_params(seed: u64) -> Params {
    Params {
        log_requests: true,
        retransmit: Duration::from_millis(20),
        gc_epoch: Some(Duration::from_millis(10)),
        ..params(seed)
    }
}

/// The sim-driver property for every protocol: `workload` on 2 servers and 2 client nodes of 2
/// slots, 4 transactions each, through [`partitions_and_a_crash`] for every seed of
/// `TXLAB_SIM_SEED` (else 0 to 19); every check of [`verify`] holds and something commits.
pub fn every_protocol_every_seed<W: PiecedWorkload>(workload: W) {
    for protocol in Protocol::ALL {
        for seed in seeds(0..20).unwrap_or_else(|e| panic!("{e}")) {
            let case = Case {
                workload: workload.clone(),
                protocol,
                servers: 2,
                clients: vec![vec![0, 1], vec![2, 3]],
                quota: 4,
                params: sim_params(seed),
            };
            let s = run_sim(&case, partitions_and_a_crash(seed))
                .unwrap_or_else(|e| panic!("{}: {e}", protocol.name()));
            assert!(
                s.committed > 0,
                "{}: seed {seed}: nothing committed",
                protocol.name()
            );
        }
    }
}
