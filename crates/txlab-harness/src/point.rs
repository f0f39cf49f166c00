//! One point of a sweep: [`run_point`] builds the workload, hands it to the protocol's
//! [`Descriptor`](crate::registry::Descriptor), and returns the measurement with the workload's
//! parameters and, under `--check`, what the checks found ([`PointOutcome`]).
//!
//! The helpers every family shares live here: [`measure_loaded`] (load, drive, collect the
//! workload's parameters and check its invariants) and [`with_history_check`] (check a
//! recorded history for serializability anomalies).

use crate::driver::{Driver, measure};
use crate::registry::Protocol;
use crate::registry::deterministic::DeterministicParams;
use crate::registry::distributed::ClusterParams;
use crate::registry::pipeline::BatchParams;
use crate::runner::{RunConfig, RunResult};
use crate::workloads::{AnyWorkload, WorkloadKind, WorkloadParams};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::{AckMode, Engine, Error};
use txlab_workload::Workload;

/// Engine parameters shared by the CLI flags (each protocol reads the ones its descriptor
/// names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EngineParams {
    /// Epoch length (Silo's global epoch advance period); serialized in seconds.
    #[serde(serialize_with = "ser_secs")]
    pub epoch: Duration,
    /// Acknowledge at commit or once the epoch is stable.
    #[serde(serialize_with = "ser_ack")]
    pub ack: AckMode,
    /// The batching engines' parameters (`batch-*`).
    pub batch: BatchParams,
    /// The distributed engines' cluster (`rococo`, `2pl-2pc`, `occ-2pc`).
    pub cluster: ClusterParams,
    /// The deterministic engines' parameters (`docc*`, `calvin`).
    pub deterministic: DeterministicParams,
}

/// Serializes a duration as fractional seconds.
pub fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn ser_ack<S: serde::Serializer>(a: &AckMode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(ack_name(*a))
}

/// `commit` or `epoch`.
pub fn ack_name(a: AckMode) -> &'static str {
    match a {
        AckMode::AtCommit => "commit",
        _ => "epoch",
    }
}

impl Default for EngineParams {
    fn default() -> Self {
        Self {
            epoch: EpochConfig::DEFAULT_INTERVAL,
            ack: AckMode::EpochStable,
            batch: BatchParams::default(),
            cluster: ClusterParams::default(),
            deterministic: DeterministicParams::default(),
        }
    }
}

/// What `--check` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSummary {
    /// Whether the history checker recorded the run (protocols without recording only check the
    /// workload's invariants).
    pub history_checked: bool,
    /// Committed transactions in the checked history.
    pub committed: usize,
    /// Anomalies found, as `kind: count` lines; empty when serializable.
    pub anomalies: Vec<String>,
    /// The workload's invariant violation, if any.
    pub invariant: Option<String>,
}

impl CheckSummary {
    /// Whether the run passed.
    pub fn passed(&self) -> bool {
        self.anomalies.is_empty() && self.invariant.is_none()
    }
}

/// The result of [`run_point`].
#[derive(Debug, Clone)]
pub struct PointOutcome {
    /// The measurement.
    pub result: RunResult,
    /// The workload's parameters as it reports them.
    pub parameters: Vec<(String, String)>,
    /// Present iff checking was asked for.
    pub check: Option<CheckSummary>,
}

/// What a descriptor's `run` gets besides the workload.
#[derive(Debug, Clone, Copy)]
pub struct PointCtx<'a> {
    /// The engine parameters.
    pub engine: &'a EngineParams,
    /// The run's configuration.
    pub run: &'a RunConfig,
    /// Record and check the history and the workload's invariants.
    pub check: bool,
}

/// Builds, loads and runs one point; with `check`, records the history (where the protocol
/// supports it), checks it for serializability anomalies and checks the workload's invariants.
pub fn run_point(
    protocol: Protocol,
    workload: WorkloadKind,
    params: &WorkloadParams,
    engine: &EngineParams,
    run: &RunConfig,
    check: bool,
) -> Result<PointOutcome, Error> {
    protocol.accepts(workload)?;
    protocol.validate(run.threads, engine, run)?;
    let w = AnyWorkload::new(workload, params)?;
    let ctx = PointCtx { engine, run, check };
    (protocol.descriptor().run)(&w, &ctx)
}

/// Loads `workload` into `engine`, measures `driver` on it and, with `check`, checks the
/// workload's invariants afterwards (the history check, if any, is [`with_history_check`]'s).
pub fn measure_loaded<E, W, D>(
    engine: &E,
    workload: &W,
    driver: &D,
    run: &RunConfig,
    check: bool,
) -> Result<PointOutcome, Error>
where
    E: Engine,
    W: Workload,
    D: Driver,
{
    workload.load(engine)?;
    let mut result = measure(driver, run)?;
    result.name_tables(&workload.schema());
    let parameters = workload
        .parameters()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let check = check.then(|| CheckSummary {
        history_checked: false,
        committed: 0,
        anomalies: Vec::new(),
        invariant: workload.check(engine).err().map(|e| e.to_string()),
    });
    Ok(PointOutcome {
        result,
        parameters,
        check,
    })
}

/// Checks the recorded history for serializability anomalies and adds the finding to `out`.
pub fn with_history_check(mut out: PointOutcome, recorder: &MemoryRecorder) -> PointOutcome {
    let report = check(&recorder.take(), CheckOptions::serializable());
    if let Some(c) = out.check.as_mut() {
        c.history_checked = true;
        c.committed = report.committed;
        c.anomalies = report
            .counts
            .iter()
            .map(|(k, n)| format!("{k:?}: {n}"))
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::deterministic::DeterministicParams;
    use crate::registry::pipeline::BatchParams;
    use crate::workloads::{YcsbKind, validate_workload};

    #[test]
    fn every_protocol_runs_ycsb_and_smallbank_with_checking() {
        let params = WorkloadParams {
            records: 1000,
            customers: 100,
            audit: true,
            ..Default::default()
        };
        let engine = EngineParams {
            epoch: Duration::from_millis(1),
            ack: AckMode::EpochStable,
            // Small batches and few live transactions keep the checked histories short.
            batch: BatchParams {
                batch_size: 8,
                concurrency: 32,
                reorder_workers: 1,
                ..BatchParams::default()
            },
            deterministic: DeterministicParams {
                batch_epoch_us: 500,
                concurrency: 32,
                ..DeterministicParams::default()
            },
            ..EngineParams::default()
        };
        let run = RunConfig {
            threads: 2,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(100),
            ..RunConfig::default()
        };
        // Every visible protocol that runs these workloads, the batching engines (their own
        // drivers) included; the distributed ones run only workloads with pieces.
        let protocols: Vec<Protocol> = Protocol::visible()
            .filter(|p| p.accepts(WorkloadKind::SmallBank).is_ok())
            .collect();
        assert_eq!(protocols.len(), 19);
        for p in protocols {
            for w in [WorkloadKind::Ycsb(YcsbKind::A), WorkloadKind::SmallBank] {
                let out = run_point(p, w, &params, &engine, &run, true).unwrap();
                assert!(out.result.commits > 0, "{p:?} {w:?}");
                let c = out.check.unwrap();
                assert!(
                    c.history_checked && c.committed as u64 >= out.result.commits,
                    "{p:?} {w:?}: {c:?}"
                );
                assert!(c.passed(), "{p:?} {w:?}: {c:?}");
                assert!(out.parameters.iter().any(|(k, _)| k == "theta"));
                let r = &out.result;
                assert_eq!(r.threads, 2);
                assert!(r.elapsed_s >= 0.1, "{p:?} {w:?}: {}", r.elapsed_s);
                assert!(r.throughput_tps > 0.0 && r.latency.p50_us > 0.0);
                assert!(
                    r.latency.p50_us <= r.latency.p99_us && r.latency.p99_us <= r.latency.max_us
                );
                assert_eq!(
                    r.latency_ns.len(),
                    r.commits,
                    "{p:?} {w:?}: one sample per commit"
                );
            }
        }
    }

    #[test]
    fn tpcc_runs_on_every_protocol_with_its_consistency_conditions_checked() {
        let params = WorkloadParams {
            warehouses: 2,
            items: 1_000,
            district_customers: 100,
            ..Default::default()
        };
        // Group commit (1 ms epochs), so the NWR variants actually try their rule.
        let engine = EngineParams {
            epoch: Duration::from_millis(1),
            ack: AckMode::EpochStable,
            ..EngineParams::default()
        };
        let run = RunConfig {
            threads: 2,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(150),
            ..RunConfig::default()
        };
        for p in Protocol::compared() {
            for w in [WorkloadKind::Tpcc, WorkloadKind::TpccNp] {
                let out = run_point(p, w, &params, &engine, &run, true).unwrap();
                assert!(out.result.commits > 0, "{p:?} {w:?}");
                let c = out.check.unwrap();
                assert!(c.history_checked && c.passed(), "{p:?} {w:?}: {c:?}");
                assert!(
                    out.parameters
                        .iter()
                        .any(|(k, v)| k == "warehouses" && v == "2")
                );
            }
        }
    }

    /// One home warehouse per worker: no worker inserts into or deletes from another worker's
    /// districts, and every scan TPC-C runs stays in one district, so no attempt may fail phantom
    /// validation. Phantom stripes shared across districts fail it (the false cross-warehouse
    /// aborts): the count is by table, and it adds up to the conflicts.
    #[test]
    fn tpcc_with_a_home_warehouse_per_worker_has_no_phantom_aborts() {
        let params = WorkloadParams {
            warehouses: 2,
            items: 1_000,
            district_customers: 100,
            ..Default::default()
        };
        let engine = EngineParams {
            ack: AckMode::AtCommit,
            ..EngineParams::default()
        };
        let run = RunConfig {
            threads: 2,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(300),
            ..RunConfig::default()
        };
        for name in ["silo", "tictoc", "mvto"] {
            let p = Protocol::from_name(name).unwrap();
            let r = run_point(p, WorkloadKind::Tpcc, &params, &engine, &run, false)
                .unwrap()
                .result;
            assert!(r.commits > 0, "{name}");
            assert_eq!(
                r.conflicts_by_table.values().sum::<u64>(),
                r.conflicts,
                "{name}: {:?}",
                r.conflicts_by_table
            );
            assert!(
                r.conflicts_by_table
                    .keys()
                    .all(|k| !k.starts_with("phantom_validation@") && !k.contains("@#")),
                "{name}: {:?}",
                r.conflicts_by_table
            );
        }
    }

    #[test]
    fn batching_engines_warm_up_and_report_their_counters() {
        let params = WorkloadParams {
            records: 1000,
            theta: 0.9,
            ..Default::default()
        };
        let engine = EngineParams {
            ack: AckMode::AtCommit,
            ..EngineParams::default()
        };
        let run = RunConfig {
            threads: 2,
            warmup: Duration::from_millis(30),
            duration: Duration::from_millis(60),
            ..RunConfig::default()
        };
        let out = run_point(
            Protocol::from_name("batch-srvc").unwrap(),
            WorkloadKind::Micro,
            &params,
            &engine,
            &run,
            false,
        )
        .unwrap();
        let r = &out.result;
        assert!(r.commits > 0 && out.check.is_none());
        assert!(r.counters["batches"] > 0, "{:?}", r.counters);
        assert!(r.counters.contains_key("validation_aborts"));
        assert_eq!(r.retries, r.conflicts);
        let out = run_point(
            Protocol::from_name("silo-ta").unwrap(),
            WorkloadKind::Micro,
            &params,
            &engine,
            &run,
            false,
        )
        .unwrap();
        assert!(out.result.counters["batches"] > 0);
        // Bad batching parameters are refused before anything runs, naming the flag.
        let bad = EngineParams {
            batch: BatchParams {
                batch_size: 0,
                ..BatchParams::default()
            },
            ..EngineParams::default()
        };
        let e = run_point(
            Protocol::from_name("batch-base").unwrap(),
            WorkloadKind::Micro,
            &params,
            &bad,
            &run,
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("--batch-size = 0"), "{e}");
    }

    #[test]
    fn bad_workload_parameters_are_reported_before_running() {
        let params = WorkloadParams {
            records: 0,
            ..Default::default()
        };
        let e = validate_workload(WorkloadKind::Ycsb(YcsbKind::A), &params).unwrap_err();
        assert!(e.to_string().contains("records"), "{e}");
        let params = WorkloadParams {
            theta: 11.0,
            ..Default::default()
        };
        assert!(validate_workload(WorkloadKind::SmallBank, &params).is_err());
    }
}
