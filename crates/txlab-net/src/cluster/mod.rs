//! Processes and hosts (feature `tcp`): the cluster file ([`ClusterFile`]), running one node of
//! it in this process ([`run_node`]), and the local launcher that starts a whole cluster as child
//! processes on loopback ([`launch_local`]).
//!
//! Across real hosts: build the same revision on every host, copy the same `cluster.toml` (with
//! each node's reachable `host:port`), and start `txlab node --cluster cluster.toml --id K` on
//! each. The handshake refuses peers whose protocol, wire version, git revision or cluster-file
//! digest differ, naming both values.

pub mod cli;
mod file;
mod launch;

pub use file::{ClusterFile, NodeSpec};
pub use launch::{
    LAUNCHED_ENV, LaunchReport, LocalLaunch, NodeOutput, ReservedPort, launch_local, watch_parent,
};

use std::time::Duration;

use crate::error::NetError;
use crate::metrics::NetMetrics;
use crate::node::{Node, NodeId};
use crate::tcp::{Identity, TcpConfig, TcpNode};

/// Runs node `id` of `cluster` in this process until `finished` holds on it (or `timeout`), then
/// stops it and returns it with its counters. `git_revision` goes into the handshake.
pub fn run_node<N: Node>(
    cluster: &ClusterFile,
    id: NodeId,
    git_revision: &str,
    node: N,
    finished: impl Fn(&N) -> bool + Send + 'static,
    timeout: Duration,
) -> Result<(N, NetMetrics), NetError> {
    let running = start_node(cluster, id, git_revision, node)?;
    let waited = running.wait_until(timeout, finished);
    let stopped = running.stop()?;
    if let Some(f) = stopped.fatal {
        return Err(f);
    }
    waited?;
    Ok((stopped.node, stopped.metrics))
}

/// Starts node `id` of `cluster` in this process and returns it running, for a caller that
/// drives it from outside (through [`TcpNode::transport`]) before stopping it.
pub fn start_node<N: Node>(
    cluster: &ClusterFile,
    id: NodeId,
    git_revision: &str,
    node: N,
) -> Result<TcpNode<N>, NetError> {
    cluster.node(id)?;
    let identity = Identity {
        protocol: cluster.protocol.clone(),
        git_revision: git_revision.to_string(),
        cluster_digest: cluster.digest.clone(),
    };
    let mut config = TcpConfig::new(id, cluster.peers(), identity);
    config.seed = cluster.seed;
    TcpNode::start(config, node)
}
