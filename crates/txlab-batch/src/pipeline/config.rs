//! The pipeline's configuration: the batching mode (the paper's §5.3 modes), the batch size, the
//! concurrency level, and how many threads run each component.

use crate::fvs::{Algorithm, Refinement};
use std::time::Duration;
use txlab_core::Error;

/// Largest accepted batch size (storage and validator batches).
pub const MAX_BATCH_SIZE: usize = 1 << 16;
/// Largest accepted concurrency level (live transactions in the whole system).
pub const MAX_CONCURRENCY: usize = 1 << 20;
/// Largest accepted number of threads for any one component.
pub const MAX_COMPONENT_THREADS: usize = 256;
/// Largest accepted drain bound ([`PipelineConfig::drain`]).
pub const MAX_DRAIN: Duration = Duration::from_secs(3600);

/// The batching mode (Ding, Kot, Gehrke, VLDB 2018, §5.3).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// No batching anywhere: every storage request and every validation request is handled on
    /// its own, and the batch preparation and reordering stages are skipped.
    Base,
    /// Batching at the storage and the validator, without reordering: storage requests are
    /// served in arrival order, batches are validated in arrival order.
    Batch,
    /// Storage batching with reordering (per batch, the highest-version write of each key is
    /// applied before any read is served); the validator validates one request at a time.
    Sr,
    /// Validator batching with reordering (pre-validation, feedback vertex set, topological
    /// validation order); the storage serves one request at a time.
    Vc,
    /// Both storage and validator batching with reordering.
    Srvc,
}

impl Mode {
    /// Every mode, in the paper's order.
    pub const ALL: [Mode; 5] = [Mode::Base, Mode::Batch, Mode::Sr, Mode::Vc, Mode::Srvc];

    /// The paper's short name (`base`, `batch`, `sr`, `vc`, `srvc`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Base => "base",
            Mode::Batch => "batch",
            Mode::Sr => "sr",
            Mode::Vc => "vc",
            Mode::Srvc => "srvc",
        }
    }

    /// Parses a short name; the error lists the accepted names.
    pub fn parse(name: &str) -> Result<Mode, Error> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| Error::invalid("mode", name, "one of base, batch, sr, vc, srvc"))
    }

    /// How the storage handles requests in this mode.
    pub fn storage(self) -> StorageBatching {
        match self {
            Mode::Base | Mode::Vc => StorageBatching::Off,
            Mode::Batch => StorageBatching::ArrivalOrder,
            Mode::Sr | Mode::Srvc => StorageBatching::WritesFirst,
        }
    }

    /// How the validator handles requests in this mode.
    pub fn validator(self) -> ValidatorBatching {
        match self {
            Mode::Base | Mode::Sr => ValidatorBatching::Off,
            Mode::Batch => ValidatorBatching::ArrivalOrder,
            Mode::Vc | Mode::Srvc => ValidatorBatching::Reorder,
        }
    }
}

/// The reordering workers' policy: which transactions of a dependency cycle enter the feedback
/// vertex set (Ding, Kot, Gehrke, VLDB 2018, §4.2 and §5.5). Restart counts travel with every
/// validation request, so `rct` and `rdeg` see how often each transaction was already aborted.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReorderPolicy {
    /// Largest in-degree × out-degree first: maximizes commits (the paper's default, "mc" in
    /// §5.5).
    #[default]
    ProdDegree,
    /// Fewest restarts first, ties by prod-degree (§5.5 "rct").
    Rct,
    /// Largest `in × out / 2^restarts` first (§5.5 "rdeg").
    Rdeg,
}

impl ReorderPolicy {
    /// Every policy.
    pub const ALL: [ReorderPolicy; 3] = [
        ReorderPolicy::ProdDegree,
        ReorderPolicy::Rct,
        ReorderPolicy::Rdeg,
    ];

    /// The short name (`prod`, `rct`, `rdeg`).
    pub fn name(self) -> &'static str {
        match self {
            ReorderPolicy::ProdDegree => "prod",
            ReorderPolicy::Rct => "rct",
            ReorderPolicy::Rdeg => "rdeg",
        }
    }

    /// The paper's label in §5.5 (`mc`, `rct`, `rdeg`).
    pub fn paper_name(self) -> &'static str {
        match self {
            ReorderPolicy::ProdDegree => "mc",
            ReorderPolicy::Rct => "rct",
            ReorderPolicy::Rdeg => "rdeg",
        }
    }

    /// Parses `prod` (or its paper alias `mc`), `rct` or `rdeg`; the error lists them.
    pub fn parse(name: &str) -> Result<ReorderPolicy, Error> {
        match name {
            "prod" | "mc" => Ok(ReorderPolicy::ProdDegree),
            "rct" => Ok(ReorderPolicy::Rct),
            "rdeg" => Ok(ReorderPolicy::Rdeg),
            _ => Err(Error::invalid(
                "policy",
                name,
                "one of prod (alias mc), rct, rdeg",
            )),
        }
    }
}

/// Which storage worker a processor's storage request goes to.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StorageRouting {
    /// Every key belongs to one storage worker (a hash partition); a request touching several
    /// partitions is split. A processor's requests on one key then reach the storage in the
    /// order the processor sent them, so a transaction restarted after another one's commit
    /// reads that commit's writes (module docs of `processor`).
    #[default]
    ByKey,
    /// Whole requests go to the storage workers in turn. A restarted transaction's read may
    /// overtake, on another worker, the write of the commit that aborted it, read the old
    /// version and abort again (kept to measure that effect).
    RoundRobin,
}

/// In which order a processor handles the events waiting in its queue.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProcessorScheduling {
    /// Commit decisions (whose writes go to the storage) before abort decisions (whose restarts
    /// read) before read replies and new transactions (module docs of `processor`).
    #[default]
    WritePhaseFirst,
    /// Strictly in arrival order (kept to measure the effect).
    ArrivalOrder,
}

/// How a storage worker handles its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StorageBatching {
    /// One request at a time.
    Off,
    /// Up to a batch of requests at a time, in arrival order.
    ArrivalOrder,
    /// Up to a batch at a time: the highest-version write of every key first, then the reads
    /// (§3.1).
    WritesFirst,
}

/// How the validator handles validation requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValidatorBatching {
    /// Each request goes straight to the validation worker.
    Off,
    /// Batches are validated in arrival order (no pre-validation, no reordering).
    ArrivalOrder,
    /// Batches are pre-validated, reordered by a feedback vertex set algorithm, then validated
    /// in that order (§3.2, appendix A).
    Reorder,
}

/// How the pipeline engine runs (defaults: the paper's §5.1 setup scaled to a small machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PipelineConfig {
    /// The batching mode (default [`Mode::Srvc`]).
    pub mode: Mode,
    /// Requests per storage batch and transactions per validator batch, `1..=65536`
    /// (default 40, the paper's).
    pub batch_size: usize,
    /// Largest number of live transactions in the system during a run, `1..=2^20`
    /// (default 300, the paper's).
    pub concurrency: usize,
    /// Transaction client threads, `1..=256` (default 2, the paper's).
    pub clients: usize,
    /// Processor threads, each multiplexing many live transactions, `1..=256` (default 1).
    pub processors: usize,
    /// Storage worker threads, `1..=256` (default 2, the paper's).
    pub storage_workers: usize,
    /// Transaction reordering worker threads, `0..=256` (default 4, the paper's). With 0, the
    /// *single-thread layout*: the validation worker forms, reorders and validates each batch
    /// itself, with no thread hop between the stages (modes `batch`, `vc`, `srvc`; `base` and
    /// `sr` have no batch stages and run the same either way). Meant for small machines, where
    /// the stages' threads only take turns on the same cores.
    pub reorder_workers: usize,
    /// The feedback vertex set algorithm (default sort-based greedy with multi factor 2 under
    /// the prod-degree policy, the paper's default).
    pub algorithm: Algorithm,
    /// The reordering policy (default [`ReorderPolicy::ProdDegree`], the paper's "mc").
    pub policy: ReorderPolicy,
    /// The pass over the algorithm's feedback vertex set (default [`Refinement::None`], the
    /// paper's algorithms as printed; [`Refinement::Minimal`] keeps every transaction that
    /// closes no cycle).
    pub refinement: Refinement,
    /// How storage requests are spread over the storage workers (default
    /// [`StorageRouting::ByKey`]).
    pub storage_routing: StorageRouting,
    /// How processors order the events waiting in their queues (default
    /// [`ProcessorScheduling::WritePhaseFirst`]).
    pub processor_scheduling: ProcessorScheduling,
    /// How long the clients wait, once they stop issuing, for their transactions in flight to
    /// commit (default 1 s, at most [`MAX_DRAIN`]). After it, a transaction whose attempt the
    /// validator aborts is abandoned (reported through `Probe::abandoned`) instead of restarted,
    /// so every run ends one pass through the queues after this bound, whatever the contention.
    pub drain: Duration,
    /// Seeds the random policies of the reordering workers.
    pub seed: u64,
    /// Test-only fault injection.
    #[cfg(feature = "mutation")]
    pub mutation: Option<Mutation>,
}

/// A mutation that breaks one of the validator's checks (feature `mutation`, tests only).
#[cfg(feature = "mutation")]
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// The validation worker commits without checking read versions against the cache.
    SkipFinalValidation,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            mode: Mode::Srvc,
            batch_size: 40,
            concurrency: 300,
            clients: 2,
            processors: 1,
            storage_workers: 2,
            reorder_workers: 4,
            algorithm: Algorithm::SortGreedy { multi: 2 },
            policy: ReorderPolicy::ProdDegree,
            refinement: Refinement::None,
            storage_routing: StorageRouting::ByKey,
            processor_scheduling: ProcessorScheduling::WritePhaseFirst,
            drain: Duration::from_secs(1),
            seed: 0x5EED,
            #[cfg(feature = "mutation")]
            mutation: None,
        }
    }
}

fn in_range(name: &'static str, value: usize, max: usize) -> Result<(), Error> {
    if value == 0 || value > max {
        return Err(Error::invalid(name, value, format!("1..={max}")));
    }
    Ok(())
}

impl PipelineConfig {
    /// The defaults with another mode.
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the batch size.
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// Sets the concurrency level.
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Sets the thread layout: clients, processors, storage workers, reordering workers.
    pub fn with_threads(
        mut self,
        clients: usize,
        processors: usize,
        storage_workers: usize,
        reorder_workers: usize,
    ) -> Self {
        self.clients = clients;
        self.processors = processors;
        self.storage_workers = storage_workers;
        self.reorder_workers = reorder_workers;
        self
    }

    /// Sets the feedback vertex set algorithm.
    pub fn with_algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// Sets the pass over the feedback vertex set ([`Refinement`]).
    pub fn with_refinement(mut self, refinement: Refinement) -> Self {
        self.refinement = refinement;
        self
    }

    /// Sets the reordering policy.
    pub fn with_policy(mut self, policy: ReorderPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets how storage requests are spread over the storage workers.
    pub fn with_storage_routing(mut self, routing: StorageRouting) -> Self {
        self.storage_routing = routing;
        self
    }

    /// Sets how processors order the events waiting in their queues.
    pub fn with_processor_scheduling(mut self, scheduling: ProcessorScheduling) -> Self {
        self.processor_scheduling = scheduling;
        self
    }

    /// Sets the drain bound ([`PipelineConfig::drain`]).
    pub fn with_drain(mut self, drain: Duration) -> Self {
        self.drain = drain;
        self
    }

    /// Sets a mutation (tests only).
    #[cfg(feature = "mutation")]
    pub fn with_mutation(mut self, mutation: Mutation) -> Self {
        self.mutation = Some(mutation);
        self
    }

    /// Checks every field; the error names the field, its value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        in_range("batch_size", self.batch_size, MAX_BATCH_SIZE)?;
        in_range("concurrency", self.concurrency, MAX_CONCURRENCY)?;
        in_range("clients", self.clients, MAX_COMPONENT_THREADS)?;
        in_range("processors", self.processors, MAX_COMPONENT_THREADS)?;
        in_range(
            "storage_workers",
            self.storage_workers,
            MAX_COMPONENT_THREADS,
        )?;
        if self.reorder_workers > MAX_COMPONENT_THREADS {
            return Err(Error::invalid(
                "reorder_workers",
                self.reorder_workers,
                format!("0..={MAX_COMPONENT_THREADS} (0: the single-thread layout)"),
            ));
        }
        if self.drain > MAX_DRAIN {
            return Err(Error::invalid(
                "drain",
                format!("{:?}", self.drain),
                format!("at most {MAX_DRAIN:?}"),
            ));
        }
        if self.clients > self.concurrency {
            return Err(Error::invalid(
                "clients",
                self.clients,
                format!(
                    "at most the concurrency level ({}), so every client may have a transaction in flight",
                    self.concurrency
                ),
            ));
        }
        self.algorithm.validate()?;
        if matches!(self.algorithm, Algorithm::Exact { .. }) {
            return Err(Error::invalid(
                "algorithm",
                self.algorithm,
                "a heuristic (the exact search fails on hard batches, which would stall the pipeline)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_named_with_their_range() {
        let rejection = |config: PipelineConfig| config.validate().unwrap_err().to_string();
        let e = rejection(PipelineConfig::default().with_batch_size(0));
        assert!(
            e.contains("batch_size = 0") && e.contains("1..=65536"),
            "{e}"
        );
        let e = rejection(PipelineConfig::default().with_threads(2, 1, 0, 1));
        assert!(e.contains("storage_workers = 0"), "{e}");
        let e = rejection(PipelineConfig::default().with_threads(2, 1, 2, 257));
        assert!(
            e.contains("reorder_workers = 257") && e.contains("0..=256"),
            "{e}"
        );
        assert!(
            PipelineConfig::default()
                .with_threads(2, 1, 2, 0)
                .validate()
                .is_ok()
        );
        let e = rejection(PipelineConfig::default().with_concurrency(1));
        assert!(e.contains("clients = 2"), "{e}");
        let e = Mode::parse("fast").unwrap_err().to_string();
        assert!(e.contains("mode = fast") && e.contains("srvc"), "{e}");
        assert!(PipelineConfig::default().validate().is_ok());
    }

    #[test]
    fn policies_parse_with_the_papers_alias() {
        assert_eq!(
            ReorderPolicy::parse("mc").unwrap(),
            ReorderPolicy::ProdDegree
        );
        for p in ReorderPolicy::ALL {
            assert_eq!(ReorderPolicy::parse(p.name()).unwrap(), p);
        }
        let e = ReorderPolicy::parse("fifo").unwrap_err().to_string();
        assert!(e.contains("policy = fifo") && e.contains("rdeg"), "{e}");
    }

    #[test]
    fn modes_map_to_the_papers_components() {
        assert_eq!(Mode::parse("sr").unwrap(), Mode::Sr);
        assert_eq!(Mode::Sr.storage(), StorageBatching::WritesFirst);
        assert_eq!(Mode::Sr.validator(), ValidatorBatching::Off);
        assert_eq!(Mode::Vc.storage(), StorageBatching::Off);
        assert_eq!(Mode::Vc.validator(), ValidatorBatching::Reorder);
        assert_eq!(Mode::Batch.validator(), ValidatorBatching::ArrivalOrder);
        assert_eq!(Mode::Base.storage(), StorageBatching::Off);
    }
}
