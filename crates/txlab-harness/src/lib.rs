//! # txlab-harness
//!
//! The measurement harness (the `txlab` command line over it is the `txlab-cli` crate):
//!
//! - [`driver`]: the one [`Driver`](driver::Driver) interface every execution model implements,
//!   and [`measure`](driver::measure), which runs a driver and returns one
//!   [`RunResult`](runner::RunResult);
//! - [`session`]: the measurement itself, once for every driver: phases (warm-up, measured
//!   interval, cool-down), which transactions count, per-thread latency histograms and counts,
//!   pinning; drivers report to it through `txlab_core::protocol::meter`;
//! - [`runner`]: the interactive driver ([`run_workload`](runner::run_workload)) and the run's
//!   configuration and result types;
//! - [`sampling`]: which commits the interactive runner times, and why the percentiles of the
//!   weighted samples stay unbiased;
//! - [`registry`]: the protocols by name, as engine descriptors, one module per family;
//! - [`workloads`]: the workloads by name and their parameters;
//! - [`point`]: [`run_point`](point::run_point), one (protocol, workload, parameters) point,
//!   with `--check` history recording;
//! - [`topology`]: one worker per physical core (or per logical CPU), oversubscription marked;
//! - [`resources`]: `getrusage` snapshots;
//! - [`sweep`]: the cartesian product of a `txlab run`, protocols interleaved round by round;
//! - [`stats`]: medians with bootstrap intervals and per-round ratios between protocols;
//! - [`report`]: `results.csv` (stable schema), `summary.csv`, `results.json`, the summary table;
//! - [`machine`]: CPU model, cores, kernel, git revision for `results.json`;
//! - [`noop`]: an engine and workload that do nothing, to measure the harness's own cost.
//!
//! See `docs/benchmarking.md` in the repository for how to run and read the numbers.

#![warn(missing_docs)]

pub mod driver;
pub mod machine;
pub mod noop;
pub mod point;
pub mod registry;
pub mod report;
pub mod resources;
pub mod runner;
pub mod sampling;
pub mod session;
pub mod stats;
pub mod sweep;
pub mod topology;
pub mod workloads;
