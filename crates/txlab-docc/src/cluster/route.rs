//! Where rows live and who takes part in a transaction: its participants and its leader.
//!
//! - **Owners**: a [`Placement::Partitioned`] key lives at `Partitioner::partition_of`, which
//!   must name a node of the cluster; [`Placement::Replicated`] tables are loaded at every node
//!   and only read; [`Placement::FollowsHome`] rows (insert-only, never read) live where the
//!   transaction that inserts them runs (its leader), and loaded ones at node 0.
//! - **Participants** of `T`: the owners of its declared keys of partitioned tables, plus the
//!   partitions an earlier attempt was found to need (the hints of a restart). The **leader** is
//!   the owner of its first declared partitioned key (else its first hint, else the node whose
//!   sequencer ordered it). The plan is a pure function of the program and the partitioner, so
//!   every node computes the same one without talking.

use std::sync::Arc;
use txlab_core::partition::{Partitioner, Placement};
use txlab_core::{AccessSet, Error, Program, TableId};

/// Routing of a cluster of `nodes` nodes over a partitioner with exactly that many partitions.
#[derive(Clone)]
pub struct Routing {
    partitioner: Arc<dyn Partitioner>,
    nodes: u16,
}

impl std::fmt::Debug for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routing")
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

/// Who takes part in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The participating nodes, ascending, the leader among them.
    pub participants: Vec<u16>,
    /// The node that runs the program.
    pub leader: u16,
}

impl Plan {
    /// Whether `node` takes part.
    pub fn involves(&self, node: u16) -> bool {
        self.participants.binary_search(&node).is_ok()
    }

    /// Whether the transaction runs at one node (the single-node algorithm, unchanged).
    pub fn single(&self) -> bool {
        self.participants.len() == 1
    }
}

impl Routing {
    /// Routing over `partitioner`. Errors: its partition count is not `nodes` (both named), or
    /// `nodes` is outside `1..=255` (the 8 sequencer bits of `Seq`).
    pub fn new(partitioner: Arc<dyn Partitioner>, nodes: u16) -> Result<Self, Error> {
        if nodes == 0 || u32::from(nodes) >= crate::Seq::MAX_SEQUENCERS {
            return Err(Error::invalid(
                "nodes",
                nodes,
                "1..=255 (one sequencer per node, 8 bits of the sequence number)",
            ));
        }
        if partitioner.partitions() != u32::from(nodes) {
            return Err(Error::invalid(
                "partitions",
                partitioner.partitions(),
                format!("one partition per node ({nodes} nodes)"),
            ));
        }
        Ok(Self { partitioner, nodes })
    }

    /// The number of nodes.
    pub fn nodes(&self) -> u16 {
        self.nodes
    }

    /// How `table` is placed.
    pub fn placement(&self, table: TableId) -> Placement {
        self.partitioner.placement(table)
    }

    /// The owner of a key of a partitioned table. Errors: the partitioner's (naming the table
    /// or key), or a partition outside `0..nodes` (named).
    pub fn owner(&self, table: TableId, key: u64) -> Result<u16, Error> {
        let p = self.partitioner.partition_of(table, key)?;
        if p >= u32::from(self.nodes) {
            return Err(Error::invalid(
                "partition",
                p,
                format!(
                    "0..{} (the partitioner placed table {} key {key:#x} outside the cluster)",
                    self.nodes, table.0
                ),
            ));
        }
        Ok(p as u16)
    }

    /// The nodes that hold a loaded row: its owner, every node for a replicated table, node 0
    /// for a table whose rows follow their inserter.
    pub fn holders(&self, table: TableId, key: u64) -> Result<Vec<u16>, Error> {
        match self.placement(table) {
            Placement::Partitioned => Ok(vec![self.owner(table, key)?]),
            Placement::Replicated => Ok((0..self.nodes).collect()),
            Placement::FollowsHome => Ok(vec![0]),
        }
    }

    /// Whether `node`'s copy of a row is the one a merged snapshot reports.
    pub fn reports(&self, node: u16, table: TableId, key: u64) -> bool {
        match self.placement(table) {
            Placement::Partitioned => self.owner(table, key).is_ok_and(|p| p == node),
            Placement::Replicated => node == 0,
            Placement::FollowsHome => true,
        }
    }

    /// The plan of `program` (module docs), `hints` being partitions a restart found it needs
    /// and `origin` the node whose sequencer ordered it.
    pub fn plan<P: Program + ?Sized>(
        &self,
        program: &P,
        hints: &[u16],
        origin: u16,
        scratch: &mut AccessSet,
    ) -> Result<Plan, Error> {
        scratch.clear();
        program.declare(scratch);
        let mut participants = Vec::with_capacity(4);
        for &(table, key, _) in &scratch.accesses {
            if self.placement(table) == Placement::Partitioned {
                participants.push(self.owner(table, key)?);
            }
        }
        let leader = participants
            .first()
            .or(hints.first())
            .copied()
            .unwrap_or(origin);
        participants.extend_from_slice(hints);
        participants.push(leader);
        participants.sort_unstable();
        participants.dedup();
        Ok(Plan {
            participants,
            leader,
        })
    }
}
