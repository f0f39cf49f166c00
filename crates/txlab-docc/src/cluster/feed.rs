//! [`WorkloadFeed`]: a sequencer's clients, the workload's generators.
//!
//! Node `me` of `n` runs the generators of client threads `me, me + n, me + 2n, ...` (client
//! numbers unique in the cluster, so generated keys that carry the client, such as TPC-C's
//! HISTORY keys, never collide), or the threads a workload maps to the node's own partition
//! ([`WorkloadFeed::with_threads`]: TPC-C clients whose home warehouse the node owns).
//!
//! - **Scripted** (`per_epoch: Some(k)`): `k` transactions every epoch whatever finished, so the
//!   input is the same under every transport and timing (tests).
//! - **Closed loop** (`None`): as many as the node's clients have room for (`free`).

use super::msg::Txn;
use super::node::Feed;
use txlab_workload::{Generator, Workload};

/// A sequencer's clients (module docs).
pub struct WorkloadFeed<W: Workload> {
    generators: Vec<W::Generator>,
    next: usize,
    per_epoch: Option<usize>,
}

impl<W: Workload> std::fmt::Debug for WorkloadFeed<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadFeed")
            .field("clients", &self.generators.len())
            .field("per_epoch", &self.per_epoch)
            .finish()
    }
}

impl<W: Workload> WorkloadFeed<W> {
    /// `clients` generators of node `me` of `nodes` (threads `me + i * nodes`), seeded `seed`.
    pub fn new(
        workload: &W,
        me: u16,
        nodes: u16,
        clients: usize,
        seed: u64,
        per_epoch: Option<usize>,
    ) -> Self {
        let threads = (0..clients.max(1)).map(|i| usize::from(me) + i * usize::from(nodes));
        Self::with_threads(workload, threads, seed, per_epoch)
    }

    /// The generators of client threads `threads`, seeded `seed`.
    pub fn with_threads(
        workload: &W,
        threads: impl IntoIterator<Item = usize>,
        seed: u64,
        per_epoch: Option<usize>,
    ) -> Self {
        Self {
            generators: threads
                .into_iter()
                .map(|t| workload.generator(t, seed))
                .collect(),
            next: 0,
            per_epoch,
        }
    }
}

impl<W> Feed<W::Program> for WorkloadFeed<W>
where
    W: Workload,
    W::Generator: Send,
    W::Program: Clone + Send,
{
    fn next(&mut self, _epoch: u32, free: usize) -> Vec<Txn<W::Program>> {
        if self.generators.is_empty() {
            return Vec::new();
        }
        let n = self.per_epoch.unwrap_or(free);
        (0..n)
            .map(|_| {
                let g = self.next % self.generators.len();
                self.next += 1;
                Txn::new(self.generators[g].next().clone())
            })
            .collect()
    }
}
