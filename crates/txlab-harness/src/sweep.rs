//! A sweep: the cartesian product protocols × workloads × thetas × threads × repeats, run one
//! point after the other and reported to a progress callback before each.
//!
//! Repeats are *rounds*, and protocols are the innermost loop: round 0 takes the (workload,
//! theta, threads) points in order and runs protocol A, then B, then C at each before the next
//! point, then round 1 does the same with the protocols rotated by one (BCA), round 2 by two
//! (CAB), and so on (ABC BCA CAB at every point, not AAABBBCCC), so a slow phase of a noisy host
//! hits the protocols of a point alike and per-round ratios between protocols compare runs made
//! side by side ([`crate::stats`]). The rotation gives every protocol every position within a
//! round equally often (over a multiple of the protocol count of rounds), so an effect of the
//! position itself spreads over every protocol's rounds instead of favouring the first
//! protocol's (on the 2-core VM the first build of a `compare --builds` round measured 5–8 %
//! faster than the later builds on the same code path, `docs/results/batch.md`).
//!
//! Each point builds a fresh engine and loads the workload, so runs do not share state (peak RSS
//! is the exception: the kernel's high-water mark only grows within a process).

use crate::point::{EngineParams, PointOutcome, run_point};
use crate::registry::Protocol;
use crate::report::RunRecord;
use crate::resources::{human_bytes, memory_limit};
use crate::runner::{MIN_HISTORY_BOUND, RunConfig};
use crate::topology::Placement;
use crate::workloads::{AnyWorkload, WorkloadKind, WorkloadParams};
use serde::Serialize;
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
    /// Repeats (rounds) of every point.
    pub repeat: u32,
    /// The protocol the others' throughput is divided by, per round, in the summary.
    pub baseline: Option<Protocol>,
    /// The baseline's thread count the ratios divide by (`None`: each point's own), one of
    /// `threads` (`report::summarize_against`).
    pub baseline_threads: Option<usize>,
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

/// `items` in round `round`'s order: starting at item `round mod len`, wrapping around (module
/// docs: every item takes every position within a round equally often).
pub fn rotated<T>(items: &[T], round: u32) -> impl Iterator<Item = &T> {
    let start = if items.is_empty() {
        0
    } else {
        round as usize % items.len()
    };
    items[start..].iter().chain(&items[..start])
}

impl SweepSpec {
    /// The points in run order: round by round, protocols innermost and rotated by the round
    /// (module docs).
    pub fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for repeat in 0..self.repeat {
            for &workload in &self.workloads {
                let thetas: Vec<Option<f64>> = if workload.has_theta() {
                    self.thetas.iter().copied().map(Some).collect()
                } else {
                    vec![None]
                };
                for &theta in &thetas {
                    for &threads in &self.threads {
                        for &protocol in rotated(&self.protocols, repeat) {
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
        if let Some(b) = self.baseline.filter(|b| !self.protocols.contains(b)) {
            return Err(Error::invalid(
                "--baseline",
                b.name(),
                format!(
                    "one of the protocols of the run ({})",
                    self.protocols
                        .iter()
                        .map(|p| p.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if let Some(t) = self.baseline_threads.filter(|t| !self.threads.contains(t)) {
            return Err(Error::invalid(
                "--baseline-threads",
                t,
                format!("one of the thread counts of the run ({:?})", self.threads),
            ));
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
        let limit = memory_limit();
        for &w in &self.workloads {
            let built = AnyWorkload::new(w, &self.params);
            if let (Ok(built), Some(limit)) = (built, limit) {
                let needs = built.table_bytes();
                if needs > limit {
                    return Err(Error::invalid(
                        "workload parameters",
                        format!(
                            "{} needing at least {} for its tables",
                            w.name(),
                            human_bytes(needs)
                        ),
                        format!(
                            "a configuration that fits the {} this process may use (the smaller \
                             of MemAvailable and the address-space limit); lower {}",
                            human_bytes(limit),
                            w.flags()
                                .iter()
                                .filter(|f| **f != "--theta")
                                .copied()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
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
        crate::registry::partitioned::validate_sweep(
            &self.protocols,
            &self.workloads,
            &self.params,
            &self.engine,
        )?;
        for &threads in &self.threads {
            let run = self.run_config(threads, WorkloadKind::Noop);
            run.validate()?;
            for &p in &self.protocols {
                p.validate(threads, &self.engine, &run)?;
            }
        }
        Ok(())
    }

    /// The run configuration of a point with `threads` threads on `workload`.
    pub fn run_config(&self, threads: usize, workload: WorkloadKind) -> RunConfig {
        RunConfig {
            history_bound: self.check.then(|| {
                let tables =
                    AnyWorkload::new(workload, &self.params).map_or(0, |w| w.table_bytes());
                let limit = memory_limit().map(|l| l.saturating_sub(tables));
                history_bound(workload, &self.params, limit)
            }),
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

/// Memory a `--check` run needs per recorded attempt (its record in the history and its share
/// of the checker's graph and indexes), about 1.7 times the peak resident set's measured growth
/// over an unchecked run: 2.4 KiB for a 10-operation YCSB-A transaction, 19 KiB
/// for a full-mix TPC-C one (Stock-Level and Order-Status read hundreds of rows).
fn history_bytes_per_attempt(workload: WorkloadKind, params: &WorkloadParams) -> u64 {
    match workload {
        WorkloadKind::Tpcc | WorkloadKind::TpccNp => 32 << 10,
        WorkloadKind::Ycsb(_) => 512 + 384 * params.ops_per_txn as u64,
        WorkloadKind::Micro => 512 + 384 * (params.reads + params.writes) as u64,
        _ => 4 << 10,
    }
}

/// The history bound ([`RunConfig::history_bound`]) of a `--check` run: its history and check
/// may take half of `limit`, the memory this process may use beside its tables (the other half
/// is the process's own and the engine's), and never fewer than [`MIN_HISTORY_BOUND`] attempts.
pub fn history_bound(workload: WorkloadKind, params: &WorkloadParams, limit: Option<u64>) -> u64 {
    let budget = limit.unwrap_or(8 << 30) / 2;
    (budget / history_bytes_per_attempt(workload, params)).max(MIN_HISTORY_BOUND)
}

impl SweepSpec {
    /// Checks the flags given on the command line (`--batch-size`, ...) against the protocols
    /// and workloads of the sweep: a workload flag that no workload of the sweep reads is an error
    /// naming the flag and what it applies to (it would change the sweep's points); a protocol
    /// flag that no protocol of the sweep reads, or a flag only some of them read, gives a note
    /// (returned) saying where it is ignored.
    pub fn applicability(&self, given: &[&str]) -> Result<Vec<String>, Error> {
        let mut notes = Vec::new();
        for &given in given {
            // The flag as a descriptor or workload names it (a static name for the error).
            let Some(&flag) = Protocol::all()
                .flat_map(|p| p.descriptor().flags.iter())
                .chain(WorkloadKind::ALL.iter().flat_map(|w| w.flags().iter()))
                .find(|f| **f == given)
            else {
                continue;
            };
            let readers: Vec<&str> = Protocol::all()
                .filter(|p| p.reads_flag(flag))
                .map(|p| p.name())
                .collect();
            let (users, all_users, kind): (Vec<&str>, Vec<&str>, &str) = if !readers.is_empty() {
                let users = self
                    .protocols
                    .iter()
                    .filter(|p| p.reads_flag(flag))
                    .map(|p| p.name())
                    .collect();
                (users, readers, "protocol")
            } else {
                let users = self
                    .workloads
                    .iter()
                    .filter(|w| w.flags().contains(&flag))
                    .map(|w| w.name())
                    .collect();
                let all = WorkloadKind::visible()
                    .filter(|w| w.flags().contains(&flag))
                    .map(|w| w.name())
                    .collect();
                (users, all, "workload")
            };
            let others: Vec<&str> = if kind == "protocol" {
                self.protocols
                    .iter()
                    .map(|p| p.name())
                    .filter(|n| !users.contains(n))
                    .collect()
            } else {
                self.workloads
                    .iter()
                    .map(|w| w.name())
                    .filter(|n| !users.contains(n))
                    .collect()
            };
            if users.is_empty() && kind == "protocol" {
                // An engine parameter no chosen protocol reads changes nothing about the run;
                // scripted sweeps pass one set of engine flags to every protocol they name.
                notes.push(format!(
                    "{flag} is ignored: none of {} reads it (read by {})",
                    others.join(", "),
                    all_users.join(", ")
                ));
                continue;
            }
            if users.is_empty() {
                return Err(Error::invalid(
                    flag,
                    format!("given with {}", others.join(", ")),
                    format!(
                        "a {kind} that reads it: {} (leave the flag out otherwise)",
                        all_users.join(", ")
                    ),
                ));
            }
            if !others.is_empty() {
                notes.push(format!(
                    "{flag} applies to {} only, not to {}",
                    users.join(", "),
                    others.join(", ")
                ));
            }
        }
        Ok(notes)
    }
}

/// Where a sweep stands, reported before each point.
#[derive(Debug, Clone, PartialEq)]
pub struct Step<'a> {
    /// Points finished so far.
    pub done: usize,
    /// Points in the sweep.
    pub total: usize,
    /// The point about to run.
    pub point: &'a Point,
    /// Rounds (repeats) in the sweep.
    pub rounds: u32,
}

impl Point {
    /// `protocol workload threads=N theta=T`, for progress messages.
    pub fn label(&self) -> String {
        format!(
            "{} {} threads={} theta={}",
            self.protocol.name(),
            self.workload.name(),
            self.threads,
            self.theta.map_or_else(|| "-".into(), |t| t.to_string()),
        )
    }
}

/// Runs every point, calling `progress` before each; stops at the first error. Returns the
/// records in run order.
pub fn run_sweep(
    spec: &SweepSpec,
    progress: &mut dyn FnMut(&Step<'_>),
) -> Result<Vec<RunRecord>, Error> {
    spec.validate()?;
    let points = spec.points();
    let mut records = Vec::with_capacity(points.len());
    for (done, p) in points.iter().enumerate() {
        progress(&Step {
            done,
            total: points.len(),
            point: p,
            rounds: spec.repeat,
        });
        let params = WorkloadParams {
            theta: p.theta.unwrap_or(0.0),
            ..spec.params
        };
        let out = run_point(
            p.protocol,
            p.workload,
            &params,
            &spec.engine,
            &spec.run_config(p.threads, p.workload),
            spec.check,
        )?;
        records.push(spec.record(p, out));
    }
    Ok(records)
}

impl SweepSpec {
    /// The record of point `p`'s outcome.
    pub fn record(&self, p: &Point, out: PointOutcome) -> RunRecord {
        RunRecord {
            protocol: p.protocol.name().into(),
            workload: p.workload.name().into(),
            threads: p.threads,
            theta: p.theta,
            repeat: p.repeat,
            seed: self.seed,
            parameters: out.parameters.into_iter().collect(),
            result: out.result,
            check: out.check,
        }
    }
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
            baseline: None,
            baseline_threads: None,
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
    fn workload_flags_no_workload_reads_are_refused_and_ignored_ones_noted() {
        let mut s = spec();
        s.workloads = vec![WorkloadKind::Ycsb(YcsbKind::A)];
        let notes = s.applicability(&["--batch-size"]).unwrap();
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("--batch-size is ignored")
                && notes[0].contains("none of silo")
                && notes[0].contains("batch-base"),
            "{notes:?}"
        );
        assert!(
            s.applicability(&["--epoch-ms", "--records", "--threads"])
                .unwrap()
                .is_empty()
        );
        let e = s.applicability(&["--warehouses"]).unwrap_err().to_string();
        assert!(e.contains("--warehouses") && e.contains("tpcc"), "{e}");
        s.workloads = vec![WorkloadKind::Tpcc];
        let e = s.applicability(&["--theta"]).unwrap_err().to_string();
        assert!(
            e.contains("--theta") && e.contains("given with tpcc"),
            "{e}"
        );
        s.workloads = vec![WorkloadKind::Tpcc, WorkloadKind::SmallBank];
        let notes = s.applicability(&["--theta"]).unwrap();
        assert_eq!(notes, ["--theta applies to smallbank only, not to tpcc"]);
        s.protocols.push(Protocol::from_name("batch-vc").unwrap());
        let notes = s.applicability(&["--policy"]).unwrap();
        assert!(notes[0].contains("batch-vc only, not to silo"), "{notes:?}");
    }

    #[test]
    fn tables_beyond_memory_are_refused_before_loading_and_check_runs_are_capped() {
        let mut s = spec();
        s.workloads = vec![WorkloadKind::Ycsb(YcsbKind::A)];
        s.params.records = 100_000;
        s.params.payload = 1 << 20;
        let e = s.validate().unwrap_err().to_string();
        assert!(
            e.contains("ycsb-a needing at least") && e.contains("--payload"),
            "{e}"
        );
        s.params.payload = 100;
        s.workloads = vec![WorkloadKind::Tpcc];
        s.params.warehouses = 60_000;
        s.params.districts = 10;
        let e = s.validate().unwrap_err().to_string();
        assert!(
            e.contains("tpcc needing") && e.contains("--warehouses"),
            "{e}"
        );
        let params = WorkloadParams::default();
        assert_eq!(
            history_bound(WorkloadKind::SmallBank, &params, Some(8 << 30)),
            1 << 20
        );
        assert_eq!(
            history_bound(WorkloadKind::Tpcc, &params, Some(1 << 20)),
            MIN_HISTORY_BOUND
        );
    }

    #[test]
    fn each_round_rotates_the_protocols_so_each_takes_each_position_equally_often() {
        let names = ["silo", "tictoc", "mvto"];
        let spec = SweepSpec {
            protocols: names
                .iter()
                .map(|n| Protocol::from_name(n).unwrap())
                .collect(),
            workloads: vec![WorkloadKind::Noop],
            threads: vec![1, 2],
            repeat: 6,
            ..spec()
        };
        let pts = spec.points();
        assert_eq!(pts.len(), 6 * 2 * 3);
        // Within one round and point the protocols run side by side, rotated by the round.
        for (i, chunk) in pts.chunks(3).enumerate() {
            let round = (i / 2) as u32;
            assert!(
                chunk
                    .iter()
                    .all(|p| p.repeat == round && p.threads == chunk[0].threads)
            );
            let order: Vec<&str> = chunk.iter().map(|p| p.protocol.name()).collect();
            let start = round as usize % 3;
            let expected: Vec<&str> = names[start..]
                .iter()
                .chain(&names[..start])
                .copied()
                .collect();
            assert_eq!(order, expected, "round {round}");
        }
        // Over the six rounds each protocol is first, second and third twice at each point.
        for name in names {
            let mut positions = [0; 3];
            for chunk in pts.chunks(3).filter(|c| c[0].threads == 1) {
                positions[chunk
                    .iter()
                    .position(|p| p.protocol.name() == name)
                    .unwrap()] += 1;
            }
            assert_eq!(positions, [2, 2, 2], "{name}");
        }
        assert_eq!(rotated::<u8>(&[], 3).count(), 0);
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
        let mut steps = 0;
        let recs = run_sweep(&s, &mut |step| {
            assert_eq!(step.done, steps);
            steps += 1;
        })
        .unwrap();
        assert_eq!(steps, recs.len());
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
