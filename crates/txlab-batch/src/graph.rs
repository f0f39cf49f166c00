//! The dependency graph of a validation batch, built from the transactions' read and write sets.
//!
//! # The validation rule
//!
//! The validator uses backward validation (Kung and Robinson; Ding, Kot, Gehrke, VLDB 2018, §2):
//! the transactions of a batch are validated one after the other, and **a transaction fails if a
//! key it read was written by a transaction of the same batch validated (and so committed) before
//! it**. Such a reader read the value from before the batch, so it must be serialized before the
//! writer. The rule says nothing about two writers of one key: the versioned store installs their
//! writes in validation (timestamp) order, so any order of two writers is fine. A transaction
//! that reads and writes the same key conflicts with nobody because of that alone.
//!
//! # Edge direction
//!
//! For every pair of distinct transactions `r != w` of the batch with `RS(r) ∩ WS(w) ≠ ∅` there
//! is one edge **`r → w`, from the reader to the writer** (the paper's "read-write dependency
//! from `r` to `w`", §2 and §4). An edge `u → v` therefore reads "`u` must be validated before
//! `v`": if `v` were validated first, `u` would have read a key written by a transaction validated
//! before it, and would fail.
//!
//! # Why a topological order is a valid validation order
//!
//! Let `A` be the aborted transactions and order the rest so that for every edge `u → v` between
//! them `u` comes before `v` (a topological order; it exists exactly when the graph without `A`
//! is acyclic, which is what a feedback vertex set guarantees). Take any remaining `t` and any key
//! `k` it read. A remaining `w ≠ t` that writes `k` has the edge `t → w`, so `w` comes *after*
//! `t`: no transaction validated before `t` wrote a key `t` read, and `t` passes. Conversely every
//! valid order must put each reader before each writer of what it read, so the remaining graph
//! must be acyclic: aborting a feedback vertex set is both necessary and sufficient.
//!
//! The paper's §3.2 builds the order "by repeatedly committing a transaction whose node has no
//! outgoing edge". With the edge direction above, such a node must be *last* among the remaining
//! ones (everything it depends on points into it), so that sentence describes filling the order
//! from the back. [`reorder()`](crate::reorder()) fills it from the front instead: Kahn's algorithm, starting
//! with the nodes that have no incoming edge (nobody else needs to come before them).
//!
//! # Building
//!
//! [`GraphBuilder`] puts every write into a hash table (`foldhash`; see [`crate::pipeline`] for
//! why not SipHash) from key to the list of its writers, then
//! probes it with every read (§4): a read can find at most `|B|` writers, so building costs
//! `O(|B|² + |R| + |W|)`. Duplicate edges (a reader reading several keys of one writer) are
//! dropped with a per-writer stamp. The graph is stored in compressed sparse row form, once by
//! successors and once by predecessors; a graph of at most 64 nodes (the paper's batches hold
//! 40) also keeps its adjacency matrix as one `u64` row per node, the form the FVS algorithms'
//! bit-set residual graph starts from ([`crate::residual`]). All buffers, including the hash
//! table, are kept across batches: after [`GraphBuilder::reset`] a batch no larger than earlier
//! ones allocates nothing.

use crate::residual::BITSET_MAX_NODES;
use foldhash::HashMap;
use std::hash::Hash;
use txlab_core::Error;

/// Largest number of transactions in one graph (node ids are stored as `u32`).
pub const MAX_NODES: usize = (u32::MAX - 1) as usize;

/// Marks "no entry" in the builder's linked writer lists and stamps.
const NONE: u32 = u32::MAX;

/// A directed graph over transactions `0..n` in compressed sparse row form, both directions.
///
/// Invariants: no self-loops, no parallel edges, successor and predecessor lists sorted
/// ascending, and `v ∈ successors(u)` exactly when `u ∈ predecessors(v)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DependencyGraph {
    nodes: usize,
    out_offsets: Vec<u32>,
    out_targets: Vec<u32>,
    in_offsets: Vec<u32>,
    in_sources: Vec<u32>,
    /// For graphs of at most [`BITSET_MAX_NODES`] nodes, bit `w` of `succ_bits[v]` is set when
    /// `v → w` (an adjacency matrix, one `u64` per row); empty for larger graphs.
    succ_bits: Vec<u64>,
    /// The transpose: bit `u` of `pred_bits[v]` is set when `u → v`.
    pred_bits: Vec<u64>,
}

impl DependencyGraph {
    /// An empty graph (no nodes).
    pub fn new() -> Self {
        Self::default()
    }

    /// A graph over nodes `0..nodes` with the given edges `(from, to)`. Duplicate edges are
    /// merged. Errors: more than [`MAX_NODES`] nodes, an endpoint `>= nodes`, or a self-loop
    /// (a transaction never depends on itself).
    pub fn from_edges(nodes: usize, edges: &[(usize, usize)]) -> Result<Self, Error> {
        let mut graph = Self::new();
        graph.set_edges(nodes, edges)?;
        Ok(graph)
    }

    /// Replaces this graph's contents by `nodes` and `edges`, reusing its buffers (the same
    /// checks as [`DependencyGraph::from_edges`]).
    pub fn set_edges(&mut self, nodes: usize, edges: &[(usize, usize)]) -> Result<(), Error> {
        check_node_count(nodes)?;
        let mut pairs = Vec::with_capacity(edges.len());
        for &(from, to) in edges {
            for end in [from, to] {
                if end >= nodes {
                    return Err(Error::invalid(
                        "edge endpoint",
                        end,
                        format!("a node id in 0..{nodes}"),
                    ));
                }
            }
            if from == to {
                return Err(Error::invalid(
                    "edge",
                    format!("({from}, {to})"),
                    "two distinct nodes (a transaction never depends on itself)",
                ));
            }
            pairs.push((from as u32, to as u32));
        }
        pairs.sort_unstable();
        pairs.dedup();
        self.set_from_pairs(nodes, &pairs);
        Ok(())
    }

    /// Fills the CSR arrays from duplicate-free, self-loop-free pairs (a counting sort by row,
    /// then every row sorted).
    fn set_from_pairs(&mut self, nodes: usize, pairs: &[(u32, u32)]) {
        self.nodes = nodes;
        fill_csr(
            nodes,
            pairs.iter().map(|&(u, v)| (u, v)),
            pairs.len(),
            &mut self.out_offsets,
            &mut self.out_targets,
        );
        fill_csr(
            nodes,
            pairs.iter().map(|&(u, v)| (v, u)),
            pairs.len(),
            &mut self.in_offsets,
            &mut self.in_sources,
        );
        self.succ_bits.clear();
        self.pred_bits.clear();
        if nodes <= BITSET_MAX_NODES {
            self.succ_bits.resize(nodes, 0);
            self.pred_bits.resize(nodes, 0);
            for &(u, v) in pairs {
                self.succ_bits[u as usize] |= 1u64 << v;
                self.pred_bits[v as usize] |= 1u64 << u;
            }
        }
    }

    /// Number of nodes (transactions).
    pub fn node_count(&self) -> usize {
        self.nodes
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.out_targets.len()
    }

    /// The nodes `v` with an edge `node → v` (they must be validated after `node`), ascending.
    /// Panics if `node >= node_count()` (an indexing bug, like slice indexing).
    #[inline]
    pub fn successors(&self, node: usize) -> &[u32] {
        let (start, end) = (self.out_offsets[node], self.out_offsets[node + 1]);
        &self.out_targets[start as usize..end as usize]
    }

    /// The nodes `u` with an edge `u → node` (they must be validated before `node`), ascending.
    /// Panics if `node >= node_count()`.
    #[inline]
    pub fn predecessors(&self, node: usize) -> &[u32] {
        let (start, end) = (self.in_offsets[node], self.in_offsets[node + 1]);
        &self.in_sources[start as usize..end as usize]
    }

    /// The adjacency matrix as bit rows `(successors, predecessors)`, one `u64` per node, for
    /// graphs of at most [`BITSET_MAX_NODES`] nodes (what the bit-set [`Residual`] starts from);
    /// `None` for larger graphs.
    ///
    /// [`Residual`]: crate::residual::Residual
    #[inline]
    pub(crate) fn bit_rows(&self) -> Option<(&[u64], &[u64])> {
        (self.nodes <= BITSET_MAX_NODES).then_some((&self.succ_bits[..], &self.pred_bits[..]))
    }

    /// `(in_degree, out_degree)` of every node, in node order (one pass over the offsets, no
    /// per-node bounds checks: what the degree-record [`Residual`] starts from).
    ///
    /// [`Residual`]: crate::residual::Residual
    #[inline]
    pub(crate) fn degrees(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.in_offsets
            .windows(2)
            .zip(self.out_offsets.windows(2))
            .map(|(i, o)| (i[1] - i[0], o[1] - o[0]))
    }

    /// Number of successors of `node`.
    #[inline]
    pub fn out_degree(&self, node: usize) -> usize {
        (self.out_offsets[node + 1] - self.out_offsets[node]) as usize
    }

    /// Number of predecessors of `node`.
    #[inline]
    pub fn in_degree(&self, node: usize) -> usize {
        (self.in_offsets[node + 1] - self.in_offsets[node]) as usize
    }

    /// Whether the edge `from → to` exists (binary search).
    pub fn has_edge(&self, from: usize, to: usize) -> bool {
        from < self.nodes
            && to < self.nodes
            && self.successors(from).binary_search(&(to as u32)).is_ok()
    }

    /// All edges `(from, to)`, by source then target.
    pub fn edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.nodes).flat_map(move |u| self.successors(u).iter().map(move |&v| (u, v as usize)))
    }
}

/// Arbitrary graphs of 1 to 64 nodes (the bit-set range of [`crate::residual`]) with up to 256
/// edge draws: endpoints taken modulo the node count, self-loops dropped. For property tests.
#[cfg(test)]
pub(crate) fn small_graphs() -> impl proptest::strategy::Strategy<Value = DependencyGraph> {
    use proptest::prelude::*;
    (
        1usize..=64,
        proptest::collection::vec((0usize..64, 0usize..64), 0..256),
    )
        .prop_map(|(nodes, pairs)| {
            let edges: Vec<_> = pairs
                .iter()
                .map(|&(u, v)| (u % nodes, v % nodes))
                .filter(|(u, v)| u != v)
                .collect();
            DependencyGraph::from_edges(nodes, &edges).expect("endpoints are in range")
        })
}

fn check_node_count(nodes: usize) -> Result<(), Error> {
    if nodes > MAX_NODES {
        return Err(Error::invalid(
            "batch size",
            nodes,
            format!("at most {MAX_NODES} transactions per graph"),
        ));
    }
    Ok(())
}

/// Counting sort of `(key, value)` pairs into `offsets` (length `nodes + 1`) and `values`, each
/// row sorted ascending.
fn fill_csr(
    nodes: usize,
    pairs: impl Iterator<Item = (u32, u32)> + Clone,
    count: usize,
    offsets: &mut Vec<u32>,
    values: &mut Vec<u32>,
) {
    offsets.clear();
    offsets.resize(nodes + 1, 0);
    for (key, _) in pairs.clone() {
        offsets[key as usize + 1] += 1;
    }
    for i in 0..nodes {
        offsets[i + 1] += offsets[i];
    }
    values.clear();
    values.resize(count, 0);
    // `offsets[key]` serves as the insertion cursor of row `key`; afterwards row `key` ends at the
    // old `offsets[key + 1]`, which is where the cursor of row `key` stopped, so shifting the
    // cursors right by one row restores the starts.
    for (key, value) in pairs {
        let slot = &mut offsets[key as usize];
        values[*slot as usize] = value;
        *slot += 1;
    }
    for i in (1..=nodes).rev() {
        offsets[i] = offsets[i - 1];
    }
    offsets[0] = 0;
    for i in 0..nodes {
        values[offsets[i] as usize..offsets[i + 1] as usize].sort_unstable();
    }
}

/// Builds the [`DependencyGraph`] of a batch from read and write sets, reusing its buffers
/// across batches (module docs).
///
/// ```
/// use txlab_batch::graph::GraphBuilder;
/// let mut builder = GraphBuilder::<u64>::new();
/// let t0 = builder.push(&[1], &[2]).unwrap(); // reads 1, writes 2
/// let t1 = builder.push(&[2], &[1]).unwrap(); // reads 2, writes 1
/// let graph = builder.build();
/// // t0 read key 1, which t1 writes: t0 must be validated before t1, and vice versa.
/// assert!(graph.has_edge(t0, t1) && graph.has_edge(t1, t0));
/// ```
#[derive(Debug, Clone)]
pub struct GraphBuilder<K> {
    /// Key → index in `links` of the most recent writer of the key.
    writers: HashMap<K, u32>,
    /// Linked lists of writers: `(transaction, next link or NONE)`.
    links: Vec<(u32, u32)>,
    /// All read keys, transaction after transaction.
    reads: Vec<K>,
    /// `reads[read_ends[t - 1]..read_ends[t]]` are the reads of transaction `t`.
    read_ends: Vec<u32>,
    /// Edges found while probing, `(reader, writer)`.
    pairs: Vec<(u32, u32)>,
    /// `stamp[w] == r` once the edge `r → w` has been recorded (drops duplicates).
    stamp: Vec<u32>,
    graph: DependencyGraph,
}

impl<K> Default for GraphBuilder<K> {
    fn default() -> Self {
        Self {
            writers: HashMap::default(),
            links: Vec::new(),
            reads: Vec::new(),
            read_ends: Vec::new(),
            pairs: Vec::new(),
            stamp: Vec::new(),
            graph: DependencyGraph::new(),
        }
    }
}

impl<K: Hash + Eq + Copy> GraphBuilder<K> {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets the current batch, keeping every buffer's capacity.
    pub fn reset(&mut self) {
        self.writers.clear();
        self.links.clear();
        self.reads.clear();
        self.read_ends.clear();
        self.pairs.clear();
    }

    /// Number of transactions pushed since the last reset.
    pub fn len(&self) -> usize {
        self.read_ends.len()
    }

    /// Whether no transaction was pushed since the last reset.
    pub fn is_empty(&self) -> bool {
        self.read_ends.is_empty()
    }

    /// Adds the next transaction of the batch with its read and write sets (repeated keys are
    /// fine) and returns its node id (`0, 1, 2, ...` in push order). Errors when the batch would
    /// exceed [`MAX_NODES`] transactions or `u32::MAX` reads in total.
    pub fn push(&mut self, reads: &[K], writes: &[K]) -> Result<usize, Error> {
        let txn = self.read_ends.len();
        check_node_count(txn + 1)?;
        let total_reads = self.reads.len() + reads.len();
        if total_reads > u32::MAX as usize {
            return Err(Error::invalid(
                "reads in batch",
                total_reads,
                format!("at most {} reads per batch", u32::MAX),
            ));
        }
        let id = txn as u32;
        for &key in writes {
            let head = self.writers.entry(key).or_insert(NONE);
            // Writers are prepended, so a repeated key of this transaction is at the head.
            if *head != NONE && self.links[*head as usize].0 == id {
                continue;
            }
            self.links.push((id, *head));
            *head = (self.links.len() - 1) as u32;
        }
        self.reads.extend_from_slice(reads);
        self.read_ends.push(total_reads as u32);
        Ok(txn)
    }

    /// Probes the writers' table with every read and returns the batch's graph (module docs).
    /// The graph stays valid until the next call that changes the builder.
    pub fn build(&mut self) -> &DependencyGraph {
        let nodes = self.read_ends.len();
        self.pairs.clear();
        self.stamp.clear();
        self.stamp.resize(nodes, NONE);
        let mut start = 0usize;
        for (reader, &end) in self.read_ends.iter().enumerate() {
            let reader = reader as u32;
            for key in &self.reads[start..end as usize] {
                let Some(&head) = self.writers.get(key) else {
                    continue;
                };
                let mut link = head;
                while link != NONE {
                    let (writer, next) = self.links[link as usize];
                    if writer != reader && self.stamp[writer as usize] != reader {
                        self.stamp[writer as usize] = reader;
                        self.pairs.push((reader, writer));
                    }
                    link = next;
                }
            }
            start = end as usize;
        }
        self.graph.set_from_pairs(nodes, &self.pairs);
        &self.graph
    }

    /// The graph of the last [`GraphBuilder::build`].
    pub fn graph(&self) -> &DependencyGraph {
        &self.graph
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_points_to_writer_and_self_dependencies_are_ignored() {
        let mut b = GraphBuilder::<u64>::new();
        // t0 reads 1 and 2, writes 1 (read-modify-write of 1).
        // t1 reads 3, writes 2 twice.
        // t2 reads 2 and 1, writes 3.
        b.push(&[1, 2], &[1]).unwrap();
        b.push(&[3], &[2, 2]).unwrap();
        b.push(&[2, 1], &[3]).unwrap();
        let g = b.build();
        let edges: Vec<_> = g.edges().collect();
        // t0 read 2 (t1 writes it); t1 read 3 (t2 writes it); t2 read 2 (t1) and 1 (t0).
        assert_eq!(edges, vec![(0, 1), (1, 2), (2, 0), (2, 1)]);
        assert_eq!(g.predecessors(1), &[0, 2]);
        assert_eq!(g.in_degree(0), 1);
        assert_eq!(g.out_degree(2), 2);
        assert!(!g.has_edge(0, 0));
    }

    #[test]
    fn reset_forgets_the_previous_batch() {
        let mut b = GraphBuilder::<u64>::new();
        b.push(&[1], &[2]).unwrap();
        b.push(&[2], &[1]).unwrap();
        assert_eq!(b.build().edge_count(), 2);
        b.reset();
        assert!(b.is_empty());
        b.push(&[1], &[]).unwrap();
        b.push(&[], &[5]).unwrap();
        let g = b.build();
        assert_eq!((g.node_count(), g.edge_count()), (2, 0));
    }

    #[test]
    fn builder_matches_the_quadratic_definition() {
        // A deterministic pseudo-random batch over a small key space (dense conflicts).
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % 12
        };
        let sets: Vec<(Vec<u64>, Vec<u64>)> = (0..30)
            .map(|_| {
                (
                    (0..3).map(|_| next()).collect(),
                    (0..2).map(|_| next()).collect(),
                )
            })
            .collect();
        let mut b = GraphBuilder::new();
        for (r, w) in &sets {
            b.push(r, w).unwrap();
        }
        let g = b.build();
        for (u, (reads, _)) in sets.iter().enumerate() {
            for (v, (_, writes)) in sets.iter().enumerate() {
                let dep = u != v && reads.iter().any(|k| writes.contains(k));
                assert_eq!(g.has_edge(u, v), dep, "edge {u} -> {v}");
            }
        }
    }

    #[test]
    fn bad_edges_are_rejected_with_the_value() {
        let e = DependencyGraph::from_edges(3, &[(0, 3)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("edge endpoint = 3") && e.contains("0..3"), "{e}");
        let e = DependencyGraph::from_edges(3, &[(1, 1)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("(1, 1)"), "{e}");
        let g = DependencyGraph::from_edges(3, &[(0, 1), (0, 1), (2, 0)]).unwrap();
        assert_eq!(g.edges().collect::<Vec<_>>(), vec![(0, 1), (2, 0)]);
    }
}
