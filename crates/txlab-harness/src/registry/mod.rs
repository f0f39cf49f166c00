//! The registry: every protocol the harness can run, as a list of [`Descriptor`]s, one module per
//! family of engines.
//!
//! A descriptor says everything the harness and the CLI need about one protocol: its name and
//! description, whether `txlab list` and `txlab compare` show it, the engine flags it reads
//! (the CLI refuses a flag no protocol of the run reads), which workloads it accepts, how its
//! parameters are validated before anything runs, and how a point is built and driven
//! ([`Descriptor::run`], which builds the engine, with a history recorder under `--check`, loads
//! the workload and measures it through its [`Driver`](crate::driver::Driver)).
//!
//! | family | module | protocols |
//! | --- | --- | --- |
//! | interactive OCC engines | [`interactive`] | `silo`, `tictoc`, `mvto` and their NWR variants |
//! | OCC-batching validator pipeline | [`pipeline`] | `batch-base`, `batch-batch`, `batch-sr`, `batch-vc`, `batch-srvc` |
//! | thread-aware batching | [`thread_aware`] | `silo-ta` |
//! | distributed, pieces on servers (ROCOCO and its 2PC baselines) | [`distributed`] | `rococo`, `2pl-2pc`, `occ-2pc` |
//! | deterministic (a sequencer and workers) | [`deterministic`] | `docc`, `docc-snapshot`, `docc-basic`, `calvin` |
//! | ... across partitions (`--nodes N`) | [`partitioned`] | the same four |
//! | the harness's own cost | [`noop`] | `noop` (hidden) |
//!
//! Adding a protocol to a family adds its build function and one line to the family's list;
//! adding a family adds a module with its list and one line to [`FAMILIES`]. Nothing else
//! matches on protocols.
//!
//! Hidden entries (`noop`) exist for measuring the harness itself: `txlab list` does not show
//! them, but `--protocol noop --workload noop` runs them. With the test-only cargo feature
//! `mutants` (off by default; it turns on `txlab-silo`'s `mutation` fault injection, which normal
//! builds compile out), the hidden protocol `silo-mutant-skip-read-validation` (Silo committing
//! without validating its read set) also exists, so tests can show that `txlab run --check`
//! fails on a really broken engine.

pub mod deterministic;
pub mod distributed;
pub mod interactive;
pub mod noop;
pub mod partitioned;
pub mod pipeline;
pub mod thread_aware;

use crate::point::{EngineParams, PointCtx, PointOutcome};
use crate::runner::RunConfig;
use crate::workloads::{AnyWorkload, WorkloadKind};
use serde::Serialize;
use txlab_core::Error;

/// One protocol (module docs).
#[derive(Debug)]
pub struct Descriptor {
    /// The CLI name.
    pub name: &'static str,
    /// One line for `txlab list`.
    pub description: &'static str,
    /// Left out of `txlab list` and of the unknown-name error's suggestions.
    pub hidden: bool,
    /// Run by `txlab compare` (the interactive engines).
    pub compared: bool,
    /// The engine flags this protocol reads (`--epoch-ms`, `--batch-size`, ...).
    pub flags: &'static [&'static str],
    /// Whether it can run a workload; the error names both and says why not.
    pub accepts: fn(&'static str, WorkloadKind) -> Result<(), Error>,
    /// Checks the engine parameters and the run at `threads` before anything runs; the error
    /// names the flag.
    pub validate: fn(usize, &EngineParams, &RunConfig) -> Result<(), Error>,
    /// Builds the engine, loads `workload`, measures it and (under `--check`) checks it.
    pub run: fn(&AnyWorkload, &PointCtx<'_>) -> Result<PointOutcome, Error>,
}

impl Descriptor {
    /// A descriptor's `accepts` for protocols that run every workload.
    pub fn any_workload(_: &'static str, _: WorkloadKind) -> Result<(), Error> {
        Ok(())
    }

    /// A descriptor's `validate` for protocols with nothing to check beyond the run itself.
    pub fn nothing_to_validate(_: usize, _: &EngineParams, _: &RunConfig) -> Result<(), Error> {
        Ok(())
    }
}

/// Every family's protocols, in `txlab list` order: one line per family.
pub const FAMILIES: &[&[Descriptor]] = &[
    interactive::PROTOCOLS,
    pipeline::PROTOCOLS,
    thread_aware::PROTOCOLS,
    distributed::PROTOCOLS,
    deterministic::PROTOCOLS,
    noop::PROTOCOLS,
    #[cfg(feature = "mutants")]
    interactive::MUTANTS,
];

/// A protocol of the registry: a handle on its [`Descriptor`], compared by name.
#[derive(Clone, Copy)]
pub struct Protocol(&'static Descriptor);

impl Protocol {
    /// Every protocol, hidden ones included.
    pub fn all() -> impl Iterator<Item = Protocol> {
        FAMILIES.iter().flat_map(|f| f.iter()).map(Protocol)
    }

    /// The protocols `txlab list` shows.
    pub fn visible() -> impl Iterator<Item = Protocol> {
        Self::all().filter(|p| !p.hidden())
    }

    /// The protocols `txlab compare` runs.
    pub fn compared() -> impl Iterator<Item = Protocol> {
        Self::all().filter(|p| p.0.compared)
    }

    /// Parses a CLI name; the error lists the visible names.
    pub fn from_name(name: &str) -> Result<Protocol, Error> {
        Self::all().find(|p| p.name() == name).ok_or_else(|| {
            Error::invalid(
                "protocol",
                name,
                format!(
                    "one of {}",
                    Self::visible()
                        .map(Self::name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })
    }

    /// The descriptor.
    pub fn descriptor(self) -> &'static Descriptor {
        self.0
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// One line for `txlab list`.
    pub fn description(self) -> &'static str {
        self.0.description
    }

    /// Whether `txlab list` leaves it out.
    pub fn hidden(self) -> bool {
        self.0.hidden
    }

    /// Whether `txlab compare` runs it.
    pub fn is_compared(self) -> bool {
        self.0.compared
    }

    /// Whether it reads the engine flag `flag`.
    pub fn reads_flag(self, flag: &str) -> bool {
        self.0.flags.contains(&flag)
    }

    /// Whether it can run `workload` (the error says why not).
    pub fn accepts(self, workload: WorkloadKind) -> Result<(), Error> {
        (self.0.accepts)(self.0.name, workload)
    }

    /// Checks the engine parameters at `threads` (the error names the flag).
    pub fn validate(
        self,
        threads: usize,
        engine: &EngineParams,
        run: &RunConfig,
    ) -> Result<(), Error> {
        (self.0.validate)(threads, engine, run)
    }
}

impl PartialEq for Protocol {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Protocol {}

impl std::hash::Hash for Protocol {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl PartialOrd for Protocol {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Protocol {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl std::fmt::Debug for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Protocol {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_round_trip_and_unknown_names_list_the_choices() {
        let mut seen = HashSet::new();
        for p in Protocol::all() {
            assert!(seen.insert(p.name()), "{} registered twice", p.name());
            assert_eq!(Protocol::from_name(p.name()).unwrap(), p);
            assert!(!p.description().is_empty());
        }
        for w in WorkloadKind::ALL {
            assert_eq!(WorkloadKind::from_name(w.name()).unwrap(), w);
        }
        let e = Protocol::from_name("2pl").unwrap_err().to_string();
        assert!(e.contains("protocol = 2pl") && e.contains("silo"), "{e}");
        assert!(
            !e.contains("noop"),
            "hidden protocols are not advertised: {e}"
        );
        let e = WorkloadKind::from_name("tpch").unwrap_err().to_string();
        assert!(e.contains("workload = tpch") && e.contains("ycsb-a") && e.contains("tpcc"));
    }

    #[test]
    fn compare_runs_the_nine_interactive_protocols() {
        let names: Vec<&str> = Protocol::compared().map(Protocol::name).collect();
        assert_eq!(
            names,
            [
                "silo",
                "tictoc",
                "mvto",
                "silo-nwr",
                "silo-nwr-single",
                "tictoc-nwr",
                "tictoc-nwr-single",
                "mvto-nwr",
                "mvto-nwr-single"
            ]
        );
        assert_eq!(Protocol::visible().count(), 22);
    }
}
