//! A sweep: the cartesian product protocols × workloads × thetas × threads × repeats, run one
//! point after the other, with a progress bar (hidden when stdout is not a terminal).
//!
//! Each point builds a fresh engine and loads the workload, so runs do not share state (peak RSS
//! is the exception: the kernel's high-water mark only grows within a process).

use crate::point::{EngineParams, run_point};
use crate::registry::Protocol;
use crate::report::RunRecord;
use crate::runner::RunConfig;
use crate::topology::Placement;
use crate::workloads::{WorkloadKind, WorkloadParams};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::IsTerminal;
use std::time::Duration;
use txlab_core::Error;

/// Everything a sweep varies and fixes (serialized into `results.json` as `config`).
#[derive(Debug, Clone, Serialize)]
pub struct SweepSpec {
    /// Protocols, in order.
    pub protocols: Vec<Protocol>,
    /// Workloads, in order.
    pub workloads: Vec<WorkloadKind>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Zipf skews (ignored by workloads without one).
    pub thetas: Vec<f64>,
    /// Repeats of every point.
    pub repeat: u32,
    /// Warm-up per run (serialized in seconds).
    #[serde(serialize_with = "crate::point::ser_secs")]
    pub warmup: Duration,
    /// Measured interval per run (serialized in seconds).
    #[serde(serialize_with = "crate::point::ser_secs")]
    pub duration: Duration,
    /// Cool-down after each run's measured interval (serialized in seconds).
    #[serde(serialize_with = "crate::point::ser_secs")]
    pub cooldown: Duration,
    /// Generator seed (the same for every repeat: repeats measure noise, not seeds).
    pub seed: u64,
    /// Use hyperthreads instead of one worker per physical core.
    pub hyperthreads: bool,
    /// Workload parameters (theta is overridden per point).
    pub params: WorkloadParams,
    /// Engine parameters.
    pub engine: EngineParams,
    /// Record and check histories and workload invariants.
    pub check: bool,
}

/// One point of the product.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Protocol.
    pub protocol: Protocol,
    /// Workload.
    pub workload: WorkloadKind,
    /// Zipf skew (None for workloads without one).
    pub theta: Option<f64>,
    /// Threads.
    pub threads: usize,
    /// Repeat index.
    pub repeat: u32,
}

impl SweepSpec {
    /// The points in run order.
    pub fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for &protocol in &self.protocols {
            for &workload in &self.workloads {
                let thetas: Vec<Option<f64>> = if workload.has_theta() {
                    self.thetas.iter().copied().map(Some).collect()
                } else {
                    vec![None]
                };
                for &theta in &thetas {
                    for &threads in &self.threads {
                        for repeat in 0..self.repeat {
                            out.push(Point {
                                protocol,
                                workload,
                                theta,
                                threads,
                                repeat,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// Checks every workload can be built with every theta, every protocol can run every
    /// workload, and flags that only apply to some workloads have one to apply to (before
    /// anything runs).
    pub fn validate(&self) -> Result<(), Error> {
        for &p in &self.protocols {
            for &w in &self.workloads {
                p.accepts(w)?;
            }
        }
        if self.params.tpcc_scaled && !self.workloads.iter().any(|w| w.is_tpcc()) {
            return Err(Error::invalid(
                "--tpcc-scaled",
                "true",
                format!(
                    "only with a TPC-C workload (--workload tpcc or tpcc-np); this sweep runs {}",
                    self.workloads
                        .iter()
                        .map(|w| w.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        for &w in &self.workloads {
            for &theta in &self.thetas {
                crate::workloads::validate_workload(
                    w,
                    &WorkloadParams {
                        theta,
                        ..self.params
                    },
                )
                .map_err(|e| {
                    Error::invalid(
                        "workload parameters",
                        format!("{} with theta {theta}", w.name()),
                        format!(
                            "{e} (set by --records, --ops-per-txn, --payload, --customers, \
                             --reads, --writes, --theta, --warehouses, --districts, \
                             --district-customers, --items)"
                        ),
                    )
                })?;
            }
        }
        for &threads in &self.threads {
            let run = self.run_config(threads);
            run.validate()?;
            for &p in &self.protocols {
                p.validate(threads, &self.engine, &run)?;
            }
        }
        Ok(())
    }

    fn run_config(&self, threads: usize) -> RunConfig {
        RunConfig {
            threads,
            warmup: self.warmup,
            duration: self.duration,
            cooldown: self.cooldown,
            seed: self.seed,
            placement: if self.hyperthreads {
                Placement::Hyperthreads
            } else {
                Placement::PhysicalCores
            },
            ..RunConfig::default()
        }
    }
}

fn progress_bar(len: u64) -> ProgressBar {
    if !std::io::stdout().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta} {msg}")
    {
        bar.set_style(style);
    }
    bar
}

/// Runs every point; stops at the first error. Returns the records in run order.
pub fn run_sweep(spec: &SweepSpec) -> Result<Vec<RunRecord>, Error> {
    spec.validate()?;
    let points = spec.points();
    let bar = progress_bar(points.len() as u64);
    let mut records = Vec::with_capacity(points.len());
    for p in points {
        bar.set_message(format!(
            "{} {} threads={} theta={} repeat={}",
            p.protocol.name(),
            p.workload.name(),
            p.threads,
            p.theta.map_or_else(|| "-".into(), |t| t.to_string()),
            p.repeat
        ));
        let params = WorkloadParams {
            theta: p.theta.unwrap_or(0.0),
            ..spec.params
        };
        let out = run_point(
            p.protocol,
            p.workload,
            &params,
            &spec.engine,
            &spec.run_config(p.threads),
            spec.check,
        )
        .inspect_err(|_| bar.abandon())?;
        records.push(RunRecord {
            protocol: p.protocol.name().into(),
            workload: p.workload.name().into(),
            threads: p.threads,
            theta: p.theta,
            repeat: p.repeat,
            seed: spec.seed,
            parameters: out.parameters.into_iter().collect(),
            result: out.result,
            check: out.check,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::YcsbKind;

    fn spec() -> SweepSpec {
        SweepSpec {
            protocols: vec![Protocol::from_name("silo").unwrap()],
            workloads: vec![WorkloadKind::Noop, WorkloadKind::Ycsb(YcsbKind::C)],
            threads: vec![1, 2],
            thetas: vec![0.0, 0.9],
            repeat: 2,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(10),
            cooldown: Duration::from_millis(1),
            seed: 7,
            hyperthreads: false,
            params: WorkloadParams {
                records: 100,
                ..WorkloadParams::default()
            },
            engine: EngineParams {
                epoch: Duration::from_millis(1),
                ack: txlab_core::AckMode::AtCommit,
                ..EngineParams::default()
            },
            check: false,
        }
    }

    #[test]
    fn the_product_skips_theta_for_workloads_without_one() {
        let pts = spec().points();
        // noop: 1 theta × 2 threads × 2 repeats; ycsb-c: 2 × 2 × 2.
        assert_eq!(pts.len(), 4 + 8);
        assert!(
            pts.iter()
                .filter(|p| p.workload == WorkloadKind::Noop)
                .all(|p| p.theta.is_none())
        );
    }

    #[test]
    fn a_sweep_produces_one_record_per_point() {
        let s = spec();
        let recs = run_sweep(&s).unwrap();
        assert_eq!(recs.len(), s.points().len());
        // Each run is 10 ms: on a loaded 2-core machine one of them may commit nothing, so only
        // the sum is required to be positive.
        assert!(recs.iter().map(|r| r.result.commits).sum::<u64>() > 0);
        assert!(recs.iter().all(|r| r.result.elapsed_s >= 0.01));
        assert_eq!(recs[0].workload, "noop");
        assert_eq!(recs[0].protocol, "silo");
        assert_eq!(recs.last().unwrap().workload, "ycsb-c");
        assert_eq!(recs.last().unwrap().theta, Some(0.9));
    }
}
