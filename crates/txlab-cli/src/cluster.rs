//! The deterministic engines as `txlab cluster`/`txlab node` protocols: one partition node per
//! process over `txlab_net`'s tcp transport (`docs/distribution.md`).
//!
//! `txlab cluster --local N -- run --protocol docc,calvin --workload tpcc --warehouses 2
//! [--check]` launches N processes per protocol. The run flags are `txlab run`'s, parsed by
//! the same parser: the launcher validates them and writes them into the cluster file
//! (`[workload] args`), every node parses them from there, and the point they describe is run
//! by `txlab_harness::registry::partitioned::process`.

use crate::RunArgs;
use serde_json::Value;
use std::time::Duration;
use txlab_harness::registry::partitioned::process::{self, Host, NodePoint};
use txlab_net::NodeId;
use txlab_net::cluster::ClusterFile;
use txlab_net::cluster::cli::{ClusterProtocol, Concluded, Flags};

/// A deterministic protocol, one partition node per process.
#[derive(Debug, Clone, Copy)]
pub struct Partitioned(pub &'static str);

/// The four: `docc`, `docc-snapshot`, `docc-basic`, `calvin`.
pub const PARTITIONED: [Partitioned; 4] = [
    Partitioned("docc"),
    Partitioned("docc-snapshot"),
    Partitioned("docc-basic"),
    Partitioned("calvin"),
];

/// The point `args` (`txlab run` flags) describe on a cluster of `nodes`.
fn point(args: &[String], nodes: u16) -> Result<NodePoint, String> {
    let run = RunArgs::parse_run_flags(args)?;
    NodePoint::new(&run.spec(), nodes).map_err(|e| e.to_string())
}

/// `txlab_net::cluster::run_node` as the harness's [`Host`].
struct Tcp<'a> {
    cluster: &'a ClusterFile,
    id: NodeId,
    git_revision: &'a str,
    timeout: Duration,
}

impl Host for Tcp<'_> {
    fn run<N: txlab_net::Node>(&self, node: N, finished: fn(&N) -> bool) -> Result<N, String> {
        txlab_net::cluster::run_node(
            self.cluster,
            self.id,
            self.git_revision,
            node,
            finished,
            self.timeout,
        )
        .map(|(node, _)| node)
        .map_err(|e| e.to_string())
    }
}

/// The cluster's node count (every node checks the run flags against it).
fn nodes_of(cluster: &ClusterFile) -> Result<u16, String> {
    u16::try_from(cluster.nodes.len()).map_err(|_| "more than 65535 nodes".to_string())
}

impl ClusterProtocol for Partitioned {
    fn name(&self) -> &'static str {
        self.0
    }

    fn workload(&self, run: &Flags) -> Result<toml::Table, String> {
        // `--local N` is not among the run flags: the launcher checks them on `--nodes` or one
        // node (valid for every workload); every node checks them on the cluster's node count.
        point(&run.to_args(), run.number("nodes", 1)?).map_err(|e| format!("run flags: {e}"))?;
        Ok(run.to_workload())
    }

    fn run_node(
        &self,
        cluster: &ClusterFile,
        id: NodeId,
        git_revision: &str,
        timeout: Duration,
    ) -> Result<Value, String> {
        let args = Flags::from_workload(cluster)?;
        let point = point(&args, nodes_of(cluster)?)?;
        let host = Tcp {
            cluster,
            id,
            git_revision,
            timeout,
        };
        process::run_node(&point, id.0, &host).map_err(|e| e.to_string())
    }

    fn conclude(&self, run: &Flags, nodes: &[Value]) -> Result<Concluded, String> {
        let n = u16::try_from(nodes.len()).map_err(|_| "more than 65535 nodes".to_string())?;
        let point = point(&run.to_args(), n)?;
        let (result, failed) = process::conclude(&point, nodes).map_err(|e| e.to_string())?;
        Ok(Concluded { result, failed })
    }
}
