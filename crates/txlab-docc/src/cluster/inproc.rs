//! Threaded cluster runs on `txlab_net::inproc` (one thread per node, or fewer), with an
//! emulated link latency: the benchmarks' and the crash-and-replay test's driver.
//!
//! A driver module: it reads the wall clock (the nodes themselves never do).

use super::local::PartitionEngine;
use super::node::{ClusterProgram, PartitionNode};
use std::time::{Duration, Instant};
use txlab_core::Error;
use txlab_net::NodeId;
use txlab_net::inproc::{InprocCluster, InprocConfig, LinkModel};
use txlab_net::metrics::NetMetrics;

/// How an `inproc` run is laid out.
#[derive(Debug, Clone, Default)]
pub struct InprocOptions {
    /// One-way latency between nodes.
    pub link: Option<LinkModel>,
    /// Threads the nodes share (0: one per node).
    pub threads: usize,
    /// Round-trip every message through the wire codec.
    pub encode: bool,
    /// Stop with an error if the nodes are not done by then.
    pub timeout: Duration,
    /// Stop after this long instead, done or not (the crash-and-replay test's "crash").
    pub stop_after: Option<Duration>,
}

/// What an `inproc` run left.
#[derive(Debug)]
pub struct Finished<E: PartitionEngine, P: ClusterProgram> {
    /// The nodes, by id.
    pub nodes: Vec<PartitionNode<E, P>>,
    /// The transport's counters.
    pub net: NetMetrics,
    /// Wall-clock time from start to the last node done.
    pub elapsed: Duration,
}

/// Runs `nodes` until every one is done (or `stop_after`). Errors: a node that reported a fatal
/// error (named), the timeout, or a transport error.
pub fn run<E: PartitionEngine, P: ClusterProgram>(
    nodes: Vec<PartitionNode<E, P>>,
    options: &InprocOptions,
) -> Result<Finished<E, P>, Error> {
    let ids: Vec<NodeId> = nodes.iter().map(|n| NodeId(n.id())).collect();
    let mut slots: Vec<Option<PartitionNode<E, P>>> = nodes.into_iter().map(Some).collect();
    let net = |e: txlab_net::NetError| Error::Internal(format!("inproc cluster: {e}"));
    let config = InprocConfig {
        threads: options.threads,
        link: options.link,
        encode: options.encode,
        ..InprocConfig::default()
    };
    #[allow(clippy::disallowed_methods)]
    let start = Instant::now();
    let cluster = InprocCluster::start(&ids, config, |id| {
        slots[usize::from(id.0)]
            .take()
            .expect("the cluster builds each node once")
    })
    .map_err(net)?;
    let waited = match options.stop_after {
        Some(after) => cluster
            .wait_until(after, |n: &PartitionNode<E, P>| n.fatal().is_some())
            .or(Ok(())),
        None => cluster.wait_until(options.timeout, PartitionNode::done),
    };
    let elapsed = start.elapsed();
    let stopped = cluster.stop().map_err(net)?;
    waited.map_err(net)?;
    let mut nodes: Vec<PartitionNode<E, P>> = stopped.nodes.into_iter().map(|(_, n)| n).collect();
    nodes.sort_by_key(PartitionNode::id);
    if let Some(f) = nodes.iter().find_map(PartitionNode::fatal) {
        return Err(Error::Internal(f.to_string()));
    }
    Ok(Finished {
        nodes,
        net: stopped.metrics,
        elapsed,
    })
}
