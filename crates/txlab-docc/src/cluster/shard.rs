//! [`Shard`]: one node's partition alone, for a cluster that runs one node per process
//! (`txlab cluster --local N -- run --protocol docc ...`). It loads only the rows its node holds
//! (`Routing::holders`), builds that node's [`PartitionNode`], and digests the rows its node
//! reports in the merged state (`Routing::reports`), so the shards' digests add up to the
//! digest of the state [`Cluster::snapshot`](super::Cluster::snapshot) would merge.

use super::local::PartitionEngine;
use super::node::{ClusterProgram, Feed, NodeConfig, PartitionNode};
use super::route::Routing;
use std::sync::Arc;
use txlab_check::digest::StateDigest;
use txlab_core::partition::Partitioner;
use txlab_core::{Engine, Error, Schema, TableId};

/// Node `me`'s partition of a cluster (module docs).
#[derive(Debug)]
pub struct Shard<E: PartitionEngine> {
    schema: Schema,
    routing: Arc<Routing>,
    me: u16,
    engine: Arc<E>,
}

impl<E: PartitionEngine> Shard<E> {
    /// Node `me` of the cluster `partitioner` describes, over `engine` (empty until loaded).
    /// Errors: a partition count outside `1..=255`, `me` not a node of it.
    pub fn new(
        schema: &Schema,
        partitioner: Arc<dyn Partitioner>,
        me: u16,
        engine: E,
    ) -> Result<Self, Error> {
        let nodes = u16::try_from(partitioner.partitions())
            .map_err(|_| Error::invalid("nodes", partitioner.partitions(), "1..=255"))?;
        let routing = Arc::new(Routing::new(partitioner, nodes)?);
        if me >= nodes {
            return Err(Error::invalid(
                "node",
                me,
                format!("0..{nodes} (a node of the cluster)"),
            ));
        }
        Ok(Self {
            schema: schema.clone(),
            routing,
            me,
            engine: Arc::new(engine),
        })
    }

    /// The partition's engine.
    pub fn engine(&self) -> &Arc<E> {
        &self.engine
    }

    /// The node's state machine, sequencing `feed`.
    pub fn node<P: ClusterProgram>(
        &self,
        config: NodeConfig,
        feed: Box<dyn Feed<P>>,
    ) -> Result<PartitionNode<E, P>, Error> {
        PartitionNode::new(
            self.me,
            Arc::clone(&self.engine),
            Arc::clone(&self.routing),
            config,
            feed,
        )
    }

    /// The digest of the rows this node reports in the merged state. Run it while the node does
    /// not run. Errors: a hash table (named).
    pub fn digest(&self) -> Result<StateDigest, Error> {
        let mut d = StateDigest::EMPTY;
        super::reported_rows(
            &*self.engine,
            &self.schema,
            &self.routing,
            self.me,
            |t, k, v| {
                d += StateDigest::row(t, k, v);
                Ok(())
            },
        )?;
        Ok(d)
    }
}

impl<E: PartitionEngine> Engine for Shard<E> {
    type Worker<'e>
        = E::Worker<'e>
    where
        Self: 'e;

    fn name(&self) -> &'static str {
        self.engine.name()
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Always `Error::Misuse`, as for a whole [`Cluster`](super::Cluster).
    fn worker(&self) -> Result<Self::Worker<'_>, Error> {
        Err(Error::Misuse(
            "a DOCC/Calvin shard has no interactive workers: run sequenced programs through its \
             node",
        ))
    }

    /// Loads the row if this node holds it; skips it otherwise.
    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error> {
        if self.routing.holders(table, key)?.contains(&self.me) {
            self.engine.load(table, key, value)?;
        }
        Ok(())
    }
}
