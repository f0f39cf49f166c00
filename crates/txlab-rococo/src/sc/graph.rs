//! The SC-graph of §3.1 (after Shasha et al.'s transaction chopping).
//!
//! Vertices: for every included transaction type, two instances; in each instance one vertex per
//! piece, two for a `repeated` piece (Figure 2's interference needs two order lines). Edges:
//!
//! - **S** (sibling) between every two vertices of one instance;
//! - **C** (conflict) between two vertices of different instances (of one type or two) whose
//!   pieces share a `(table, column group)` that at least one of them writes.
//!
//! No two vertices are joined by both kinds (an S-edge stays inside an instance, a C-edge
//! crosses instances), so the graph is simple. Vertices are numbered type by type, instance by
//! instance, piece by piece, copy by copy; edge lists follow that order, which makes every
//! result of the checker deterministic.

use txlab_core::TableId;
use txlab_core::pieces::{ColumnGroup, TxnProfile};

/// One vertex: a copy of a piece in an instance of a transaction type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Vertex {
    /// Index of the type in the profiles.
    pub txn: usize,
    /// Instance, 0 or 1.
    pub instance: u8,
    /// Index of the piece in its type.
    pub piece: usize,
    /// Copy, 0 or 1 (1 only for repeated pieces).
    pub copy: u8,
}

/// S or C.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EdgeKind {
    /// Between siblings.
    Sibling,
    /// Between conflicting pieces of different instances.
    Conflict,
}

/// An undirected edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edge {
    pub a: u32,
    pub b: u32,
    pub kind: EdgeKind,
    /// For a C-edge, the `(table, group)`s both pieces access, one of them writing.
    pub on: Vec<(TableId, ColumnGroup)>,
}

/// The SC-graph with adjacency lists.
#[derive(Debug, Clone)]
pub(crate) struct ScGraph {
    pub vertices: Vec<Vertex>,
    pub edges: Vec<Edge>,
    /// Per vertex: `(neighbour, edge index)`, in edge order.
    pub adj: Vec<Vec<(u32, u32)>>,
}

impl ScGraph {
    /// The SC-graph of the types `included` (indices into `profiles`).
    pub(crate) fn build(profiles: &[TxnProfile], included: &[usize]) -> Self {
        let mut vertices = Vec::new();
        for &txn in included {
            for instance in 0..2u8 {
                for (piece, p) in profiles[txn].pieces.iter().enumerate() {
                    for copy in 0..if p.repeated { 2u8 } else { 1 } {
                        vertices.push(Vertex {
                            txn,
                            instance,
                            piece,
                            copy,
                        });
                    }
                }
            }
        }
        let mut edges = Vec::new();
        for (i, u) in vertices.iter().enumerate() {
            for (j, v) in vertices.iter().enumerate().skip(i + 1) {
                let same_instance = u.txn == v.txn && u.instance == v.instance;
                let (kind, on) = if same_instance {
                    (EdgeKind::Sibling, Vec::new())
                } else {
                    let on = shared_writes(profiles, u, v);
                    if on.is_empty() {
                        continue;
                    }
                    (EdgeKind::Conflict, on)
                };
                edges.push(Edge {
                    a: i as u32,
                    b: j as u32,
                    kind,
                    on,
                });
            }
        }
        let mut adj = vec![Vec::new(); vertices.len()];
        for (e, edge) in edges.iter().enumerate() {
            adj[edge.a as usize].push((edge.b, e as u32));
            adj[edge.b as usize].push((edge.a, e as u32));
        }
        Self {
            vertices,
            edges,
            adj,
        }
    }

    /// The vertices the edges `edges` join, ascending and distinct.
    pub(crate) fn vertices_of(&self, edges: &[u32]) -> Vec<u32> {
        let mut vs: Vec<u32> = edges
            .iter()
            .flat_map(|&e| [self.edges[e as usize].a, self.edges[e as usize].b])
            .collect();
        vs.sort_unstable();
        vs.dedup();
        vs
    }

    /// The end of edge `e` that is not `v`.
    pub(crate) fn other(&self, e: u32, v: u32) -> u32 {
        let edge = &self.edges[e as usize];
        if edge.a == v { edge.b } else { edge.a }
    }

    /// `new_order[1].stock[2]`: type, instance (1 or 2), piece, and the copy of a repeated piece.
    pub(crate) fn label(&self, profiles: &[TxnProfile], v: u32) -> String {
        let x = self.vertices[v as usize];
        let t = &profiles[x.txn];
        let p = &t.pieces[x.piece];
        if p.repeated {
            format!("{}[{}].{}[{}]", t.kind, x.instance + 1, p.name, x.copy + 1)
        } else {
            format!("{}[{}].{}", t.kind, x.instance + 1, p.name)
        }
    }

    /// `stock[2]` or `district`: the piece and copy, without the type and instance.
    pub(crate) fn piece_label(&self, profiles: &[TxnProfile], v: u32) -> String {
        let x = self.vertices[v as usize];
        let p = &profiles[x.txn].pieces[x.piece];
        if p.repeated {
            format!("{}[{}]", p.name, x.copy + 1)
        } else {
            p.name.to_string()
        }
    }
}

/// The `(table, group)`s both pieces access with at least one write, sorted and distinct.
fn shared_writes(profiles: &[TxnProfile], u: &Vertex, v: &Vertex) -> Vec<(TableId, ColumnGroup)> {
    let p = &profiles[u.txn].pieces[u.piece];
    let q = &profiles[v.txn].pieces[v.piece];
    let mut on: Vec<(TableId, ColumnGroup)> = p
        .accesses
        .iter()
        .flat_map(|&(t, g, a)| {
            q.accesses
                .iter()
                .filter(move |&&(t2, g2, a2)| t == t2 && g == g2 && (a.writes() || a2.writes()))
                .map(move |_| (t, g))
        })
        .collect();
    on.sort_unstable();
    on.dedup();
    on
}
