//! # txlab-harness
//!
//! The measurement harness and the `txlab` command line:
//!
//! - [`batch`]: the OCC-batching engines (`batch-*` pipeline modes, `silo-ta`) through their
//!   own drivers, their statistics converted to the runner's result;
//! - [`runner`]: [`run_workload`](runner::run_workload) drives an [`Engine`](txlab_core::Engine)
//!   with a [`Workload`](txlab_workload::Workload) on pinned threads for a warmed-up, timed
//!   interval and returns throughput, abort rates by cause, latency percentiles (optionally until
//!   epoch-stable acknowledgement), protocol counters, CPU time and peak RSS;
//! - [`topology`]: one worker per physical core (or per logical CPU), oversubscription marked;
//! - [`resources`]: `getrusage` snapshots;
//! - [`registry`]: the protocols and workloads by name, and [`run_point`](registry::run_point),
//!   where concrete engine and workload types meet (with `--check` history recording);
//! - [`sweep`]: the cartesian product of a `txlab run` with its progress bar;
//! - [`report`]: `results.csv` (stable schema), `results.json`, the summary table;
//! - [`machine`]: CPU model, cores, kernel, git revision for `results.json`;
//! - [`plot`]: SVG/PNG charts from a results directory;
//! - [`cli`]: the clap command line (`run`, `list`, `compare`, `plot`) and its exit codes;
//! - [`noop`]: an engine and workload that do nothing, to measure the harness's own cost.
//!
//! See `docs/benchmarking.md` in the repository for how to run and read the numbers.

pub mod batch;
pub mod cli;
pub mod machine;
pub mod noop;
pub mod plot;
pub mod registry;
pub mod report;
pub mod resources;
pub mod runner;
pub mod sweep;
pub mod topology;
