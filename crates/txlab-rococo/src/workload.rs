//! What a workload needs to run on ROCOCO's servers: pieces ([`PieceProfiles`], [`Pieced`]),
//! programs that cross the network (serde), and a [`Partitioner`] placing its rows on the
//! servers. TPC-C (scaled, [`ByDistrict`]) and YCSB (key ranges) implement it here.
//!
//! [`Routing`] maps a piece instance to the server that runs it: the partition owning its
//! routing key, which must be a server of the cluster.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use std::sync::Arc;
use txlab_core::partition::{Partitioner, Placement};
use txlab_core::pieces::{PieceProfiles, PieceRef, Pieced};
use txlab_core::{Error, Program, TableId};
use txlab_workload::tpcc::partition::ByDistrict;
use txlab_workload::{Tpcc, Workload, Ycsb};

/// A transaction program that runs as pieces on ROCOCO's servers.
pub trait PieceProgram:
    Pieced + Program<Output = ()> + Clone + Serialize + DeserializeOwned + Send + Sync + Debug + 'static
{
}

impl<T> PieceProgram for T where
    T: Pieced
        + Program<Output = ()>
        + Clone
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + Debug
        + 'static
{
}

/// A workload ROCOCO's servers can run (module docs).
pub trait PiecedWorkload:
    Workload<Program: PieceProgram> + PieceProfiles + Clone + Debug + 'static
{
    /// The placement of the rows on `servers` servers.
    fn partitioner(&self, servers: u32) -> Result<Arc<dyn Partitioner>, Error>;
}

impl PiecedWorkload for Tpcc {
    fn partitioner(&self, servers: u32) -> Result<Arc<dyn Partitioner>, Error> {
        Ok(Arc::new(ByDistrict::new(
            self.config(),
            *self.tables(),
            servers,
        )?))
    }
}

impl PiecedWorkload for Ycsb {
    fn partitioner(&self, servers: u32) -> Result<Arc<dyn Partitioner>, Error> {
        Ok(Arc::new(Ycsb::partitioner(self, servers)?))
    }
}

/// Where pieces and rows go (module docs).
#[derive(Clone)]
pub struct Routing {
    partitioner: Arc<dyn Partitioner>,
    servers: u16,
}

impl Debug for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routing")
            .field("servers", &self.servers)
            .finish_non_exhaustive()
    }
}

impl Routing {
    /// Routing over `partitioner`, whose partitions must be exactly the `servers` servers.
    pub fn new(partitioner: Arc<dyn Partitioner>, servers: u16) -> Result<Self, Error> {
        if partitioner.partitions() != u32::from(servers) {
            return Err(Error::invalid(
                "partitions",
                partitioner.partitions(),
                format!("one per server ({servers})"),
            ));
        }
        Ok(Self {
            partitioner,
            servers,
        })
    }

    /// The number of servers.
    pub fn servers(&self) -> u16 {
        self.servers
    }

    /// The server that runs piece instance `p` (the owner of its routing key). An error names
    /// the piece and why its key has no server.
    pub fn server_of(&self, kind: &str, p: PieceRef) -> Result<u16, Error> {
        let owner = self
            .partitioner
            .partition_of(p.route_table, p.route_key)
            .map_err(|e| {
                Error::invalid(
                    "routing key",
                    format!("{kind} piece {} key {:#x}", p.piece, p.route_key),
                    format!("a key whose partition is a server: {e}"),
                )
            })?;
        u16::try_from(owner)
            .ok()
            .filter(|&s| s < self.servers)
            .ok_or_else(|| {
                Error::invalid(
                    "routing key",
                    format!("{kind} piece {} key {:#x}", p.piece, p.route_key),
                    format!(
                        "a key placed on one of the {} servers (partition {owner})",
                        self.servers
                    ),
                )
            })
    }

    /// The servers that hold `(table, key)`: its owner, every server for a replicated table,
    /// server 0 for rows that follow their inserter (initial rows of such tables).
    pub fn holders(&self, table: TableId, key: u64) -> Result<Vec<u16>, Error> {
        match self.partitioner.placement(table) {
            Placement::Partitioned => {
                let p = self.partitioner.partition_of(table, key)?;
                Ok(vec![p as u16])
            }
            Placement::Replicated => Ok((0..self.servers).collect()),
            Placement::FollowsHome => Ok(vec![0]),
        }
    }

    /// Whether server `s` is the one that reports `(table, key)` in a merged snapshot.
    pub fn reports(&self, s: u16, table: TableId, key: u64) -> bool {
        match self.partitioner.placement(table) {
            Placement::Partitioned => self
                .partitioner
                .partition_of(table, key)
                .is_ok_and(|p| p == u32::from(s)),
            Placement::Replicated => s == 0,
            Placement::FollowsHome => true,
        }
    }
}
