//! Viral propagation of immediacy across C-edges (§3.1): a deferrable piece with a C-edge to an
//! immediate one becomes immediate, until no C-edge joins an immediate and a deferrable piece.
//!
//! Breadth-first from the declared immediate vertices, in vertex order, so each promotion is
//! recorded with the C-edge that caused it and the promoter is as close as possible to a piece
//! declared immediate. The result is the least fixpoint: every promoted vertex is reachable over
//! C-edges from a declared immediate one, and every such vertex is promoted. After it there are
//! only I-I and D-D C-edges, which is what lets a server label every runtime edge `i` or `d`
//! (§3.2; an `i`–`d` edge at runtime is an internal error).

use super::graph::{EdgeKind, ScGraph};
use std::collections::VecDeque;
use txlab_core::pieces::{PieceKind, TxnProfile};

/// A vertex made immediate by a C-edge from an immediate one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Promotion {
    /// The promoted vertex.
    pub vertex: u32,
    /// The immediate vertex at the other end.
    pub by: u32,
    /// The C-edge.
    pub edge: u32,
}

/// The kind of every vertex after propagation, and the promotions in the order they happened.
pub(crate) fn propagate(g: &ScGraph, profiles: &[TxnProfile]) -> (Vec<PieceKind>, Vec<Promotion>) {
    let mut kind: Vec<PieceKind> = g
        .vertices
        .iter()
        .map(|v| profiles[v.txn].pieces[v.piece].kind)
        .collect();
    let mut queue: VecDeque<u32> = (0..g.vertices.len() as u32)
        .filter(|&v| kind[v as usize] == PieceKind::Immediate)
        .collect();
    let mut promotions = Vec::new();
    while let Some(u) = queue.pop_front() {
        for &(v, e) in &g.adj[u as usize] {
            if g.edges[e as usize].kind == EdgeKind::Conflict
                && kind[v as usize] == PieceKind::Deferrable
            {
                kind[v as usize] = PieceKind::Immediate;
                promotions.push(Promotion {
                    vertex: v,
                    by: u,
                    edge: e,
                });
                queue.push_back(v);
            }
        }
    }
    (kind, promotions)
}
