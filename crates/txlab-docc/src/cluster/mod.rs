//! DOCC and the Calvin-style baseline across partitions, over `txlab-net`, both on one exchange
//! (`docs/protocols/docc.md`, "Multi-partition").
//!
//! [`Cluster<E>`] is `N` partitions, each a local engine `E` ([`DoccCluster`]: DOCC with snapshots
//! and prefetching; [`CalvinCluster`]: the Calvin-style baseline) holding the rows a
//! [`Partitioner`] assigns it. As an [`Engine`] it only loads (rows routed to their owners;
//! `worker()` is `Error::Misuse`: interactive transactions are single-node). Its runs are
//! [`PartitionNode`]s (sans-IO state machines, the same for both engines: one copy of the
//! sequencer, the merge and the exchange) on any `txlab-net` driver; [`Cluster::snapshot`] merges
//! the partitions into a `SerialEngine` for `Workload::check` and `StateDigest`.
//!
//! - [`route`]: owners, participants and the leader;
//! - [`msg`]: the messages and the cluster's input log ([`ClusterLog`]);
//! - [`node`]: the partition node (sequencer, merge, execution, exchange);
//! - [`local`]: what a partition needs of its engine ([`PartitionEngine`]);
//! - `ops`: single-partition transactions confined to one partition, the leader's `TxOps`,
//!   installing a partition's share of the writes;
//! - [`overlap`]: single-partition transactions run while a multi-partition one is in flight,
//!   committed after it;
//! - [`merge`]: the partitions' histories merged into the cluster's, for the checker;
//! - [`feed`]: a sequencer's clients;
//! - [`progress`]: a node's reports to a measuring driver;
//! - [`inproc`]: threaded runs (benchmarks, the crash-and-replay test);
//! - [`Shard`]: one node's partition alone, for a cluster of one node per process.

pub mod feed;
pub mod inproc;
pub mod local;
pub mod merge;
pub mod msg;
pub mod node;
mod ops;
pub mod overlap;
pub mod progress;
pub mod route;
mod shard;

pub use feed::WorkloadFeed;
pub use local::PartitionEngine;
pub use merge::merge_histories;
pub use msg::{ClusterLog, Msg, Txn};
pub use node::{
    ClusterProgram, Feed, LAG, LogFeed, NodeConfig, NodeStats, PartitionNode, Pipeline,
};
pub use overlap::Overlap;
pub use progress::{Progress, Ran};
pub use route::{Plan, Routing};
pub use shard::Shard;

use crate::calvin::Calvin;
use crate::engine::Docc;
use crate::layout::Chain;
use std::sync::Arc;
use txlab_check::serial::SerialEngine;
use txlab_core::partition::Partitioner;
use txlab_core::protocol::history::NoRecorder;
use txlab_core::{Engine, Error, Schema, TableId};

/// DOCC (snapshots and prefetching retry) on every partition.
pub type DoccCluster<Rec = NoRecorder> = Cluster<Docc<Chain, Rec>>;
/// The Calvin-style baseline on every partition.
pub type CalvinCluster<Rec = NoRecorder> = Cluster<Calvin<Rec>>;

/// A partitioned database (module docs).
#[derive(Debug)]
pub struct Cluster<E: PartitionEngine> {
    schema: Schema,
    routing: Arc<Routing>,
    engines: Vec<Arc<E>>,
}

impl<E: PartitionEngine> Cluster<E> {
    /// `partitioner.partitions()` empty partitions, each an engine made by `make`. Errors: a
    /// partition count outside `1..=255`, and `make`'s.
    pub fn new(
        schema: &Schema,
        partitioner: Arc<dyn Partitioner>,
        make: impl Fn(u16) -> Result<E, Error>,
    ) -> Result<Self, Error> {
        let nodes = u16::try_from(partitioner.partitions())
            .map_err(|_| Error::invalid("nodes", partitioner.partitions(), "1..=255"))?;
        let routing = Arc::new(Routing::new(partitioner, nodes)?);
        let engines = (0..nodes)
            .map(|n| make(n).map(Arc::new))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            schema: schema.clone(),
            routing,
            engines,
        })
    }

    /// The routing.
    pub fn routing(&self) -> &Arc<Routing> {
        &self.routing
    }

    /// The partitions' engines, by node.
    pub fn engines(&self) -> &[Arc<E>] {
        &self.engines
    }

    /// Node `me`'s state machine over its partition, sequencing `feed`.
    pub fn node<P: ClusterProgram>(
        &self,
        me: u16,
        config: NodeConfig,
        feed: Box<dyn Feed<P>>,
    ) -> Result<PartitionNode<E, P>, Error> {
        let engine = self
            .engines
            .get(usize::from(me))
            .ok_or_else(|| Error::invalid("node", me, format!("0..{}", self.engines.len())))?;
        PartitionNode::new(
            me,
            Arc::clone(engine),
            Arc::clone(&self.routing),
            config,
            feed,
        )
    }

    /// Every partition's rows merged into one serial engine (each row from its owner; a
    /// replicated table's from node 0). Run it while no node runs. Errors: a hash table (it
    /// cannot be enumerated, named).
    pub fn snapshot(&self) -> Result<SerialEngine, Error> {
        let merged = SerialEngine::new(self.schema.clone());
        for (n, engine) in self.engines.iter().enumerate() {
            reported_rows(
                &**engine,
                &self.schema,
                &self.routing,
                n as u16,
                |t, k, v| merged.insert_raw(t, k, v),
            )?;
        }
        Ok(merged)
    }
}

/// Calls `f` on every row node `n` reports in a merged state (`Routing::reports`: its own
/// rows; a replicated table's at node 0 only). Errors: a hash table (named), and `f`'s.
fn reported_rows<E: PartitionEngine>(
    engine: &E,
    schema: &Schema,
    routing: &Routing,
    n: u16,
    mut f: impl FnMut(TableId, u64, &[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut rows = Vec::new();
    for t in 0..schema.tables().len() {
        let table = TableId(t as u16);
        rows.clear();
        engine
            .committed_range(table, 0, u64::MAX, &mut rows)
            .map_err(|e| match e {
                Error::ScanUnsupported { .. } => Error::invalid(
                    "table",
                    format!("'{}' (id {t})", schema.tables()[t].name),
                    "a cluster snapshot enumerates dense and ordered tables; a hash table \
                     cannot be enumerated",
                ),
                e => e,
            })?;
        for (key, value, _) in &rows {
            if routing.reports(n, table, *key) {
                f(table, *key, value)?;
            }
        }
    }
    Ok(())
}

impl<E: PartitionEngine> Engine for Cluster<E> {
    type Worker<'e>
        = E::Worker<'e>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        self.engines[0].name()
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Always `Error::Misuse`: interactive transactions are single-node; a cluster runs
    /// sequenced programs through its nodes.
    fn worker(&self) -> Result<Self::Worker<'_>, Error> {
        Err(Error::Misuse(
            "a DOCC/Calvin cluster has no interactive workers: run sequenced programs through \
             its nodes, and read the merged state with Cluster::snapshot",
        ))
    }

    /// Loads the row at every node that holds it (its owner; every node for a replicated
    /// table; node 0 for rows that follow their inserter).
    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        for n in self.routing.holders(table, key)? {
            self.engines[usize::from(n)].load(table, key, value)?;
        }
        Ok(())
    }
}
