//! The offline SC-graph checker of ROCOCO (Mu et al., OSDI 2014, §3.1), automated.
//!
//! The paper's authors annotated their profiles by hand and checked them by hand; here the check
//! runs on the [`TxnProfile`]s a workload declares ([`PieceProfiles`]) and prints its evidence.
//!
//! 1. **Validate** the profiles ([`ProfileError`]): `inputs_from` naming a later, deferrable or
//!    unknown piece or forming a cycle, unknown tables or groups, a read-only type that writes.
//! 2. **Build** the SC-graph (`graph`): two instances of every read-write type (read-only types
//!    use the 2-round protocol of §4.1 and are left out unless
//!    [`ScOptions::include_read_only`]), two copies of every repeated piece, S-edges between
//!    siblings, C-edges between pieces of different instances that share a `(table, group)`
//!    one of them writes.
//! 3. **Propagate immediacy** virally over C-edges (`immediacy`), reporting every promotion
//!    with the edge that caused it.
//! 4. **Find unreorderable SC-cycles exactly** (`cycles`): one exists iff a biconnected
//!    component (`blocks`) of the S-edges plus the I–I C-edges holds both kinds of edge; for
//!    each such block, a shortest witness cycle and the merge the paper proposes (the cycle's
//!    pieces of one transaction merged into one).
//! 5. **Compare**: the verdict for every pair of types, and the same analysis under plain
//!    transaction chopping (every C-edge counts).
//!
//! A workload the checker rejects is refused at start-up ([`ScReport::require_safe`]): merged
//! pieces (§4.2) are not executed.

mod blocks;
mod cycles;
pub mod examples;
mod graph;
mod immediacy;
mod names;
mod report;
mod validate;

#[cfg(test)]
mod tests;

pub use report::{
    ChoppingReport, CycleReport, CycleStep, MergeProposal, PairReport, PairVerdict, PieceSummary,
    PromotionReport, ScReport,
};
pub use validate::{ProfileError, ProfileErrors};

use cycles::Cycle;
use graph::{EdgeKind, ScGraph};
use names::Names;
use std::collections::BTreeSet;
use txlab_core::pieces::{ColumnGroup, PieceKind, PieceProfiles, TableLayout, TxnProfile};

/// What to analyse.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScOptions {
    /// Put read-only types into the graph as ordinary ones (shows why ROCOCO needs its
    /// read-only protocol).
    pub include_read_only: bool,
}

/// Checks a workload's profiles ([`analyze`] on its profiles and tables).
pub fn report<W: PieceProfiles + ?Sized>(
    workload: &W,
    opts: ScOptions,
) -> Result<ScReport, ProfileErrors> {
    analyze(&workload.profiles(), &workload.table_layouts(), opts)
}

/// Checks `profiles` over the tables `tables` (module docs).
pub fn analyze(
    profiles: &[TxnProfile],
    tables: &[TableLayout],
    opts: ScOptions,
) -> Result<ScReport, ProfileErrors> {
    let errors = validate::validate(profiles, tables);
    if !errors.is_empty() {
        return Err(ProfileErrors(errors));
    }
    let included: Vec<usize> = (0..profiles.len())
        .filter(|&t| opts.include_read_only || !profiles[t].read_only)
        .collect();
    let g = ScGraph::build(profiles, &included);
    let (kinds, promotions) = immediacy::propagate(&g, profiles);
    let ctx = Ctx {
        g: &g,
        profiles,
        names: Names::new(tables),
        kinds: &kinds,
    };
    let immediate = |e: u32| {
        let edge = &g.edges[e as usize];
        edge.kind == EdgeKind::Sibling
            || (kinds[edge.a as usize] == PieceKind::Immediate
                && kinds[edge.b as usize] == PieceKind::Immediate)
    };
    let unreorderable = ctx.forbidden_cycles(&immediate, false);
    let chopping = ctx.forbidden_cycles(&|_| true, true);
    let c_count = |class: PieceKind| {
        g.edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Conflict && kinds[e.a as usize] == class)
            .count()
    };
    Ok(ScReport {
        included: included.iter().map(|&t| profiles[t].kind.into()).collect(),
        excluded_read_only: (0..profiles.len())
            .filter(|t| !included.contains(t))
            .map(|t| profiles[t].kind.into())
            .collect(),
        vertices: g.vertices.len(),
        s_edges: g
            .edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Sibling)
            .count(),
        c_edges_ii: c_count(PieceKind::Immediate),
        c_edges_dd: c_count(PieceKind::Deferrable),
        pieces: ctx.pieces(&included),
        promotions: ctx.promotions(&promotions),
        pairs: ctx.pairs(&included, &immediate, false),
        chopping: ChoppingReport {
            blocks_with_sc_cycles: chopping.len(),
            witness: chopping.into_iter().next(),
            pairs: ctx.pairs(&included, &|_| true, true),
        },
        unreorderable,
        never_written: never_written(profiles, &included, tables, &ctx.names),
    })
}

/// What the report builders share.
struct Ctx<'a> {
    g: &'a ScGraph,
    profiles: &'a [TxnProfile],
    names: Names<'a>,
    kinds: &'a [PieceKind],
}

impl Ctx<'_> {
    fn label(&self, v: u32) -> String {
        self.g.label(self.profiles, v)
    }

    fn on(&self, e: u32) -> Vec<String> {
        self.g.edges[e as usize]
            .on
            .iter()
            .map(|&(t, grp)| self.names.group(t, grp))
            .collect()
    }

    /// One report per block of the subgraph `keep` holding both S- and C-edges.
    fn forbidden_cycles(&self, keep: &dyn Fn(u32) -> bool, chopping: bool) -> Vec<CycleReport> {
        blocks::blocks(self.g, keep)
            .into_iter()
            .filter(|b| cycles::mixed(self.g, b))
            .filter_map(|b| {
                let cycle = cycles::shortest_sc_cycle(self.g, &b)?;
                Some(self.cycle_report(&b, &cycle, chopping))
            })
            .collect()
    }

    fn cycle_report(&self, block: &[u32], cycle: &Cycle, chopping: bool) -> CycleReport {
        let steps = cycle
            .vertices
            .iter()
            .zip(&cycle.edges)
            .map(|(&v, &e)| CycleStep {
                vertex: self.label(v),
                edge: self.edge_label(e, chopping),
            })
            .collect();
        CycleReport {
            block_vertices: self.g.vertices_of(block).len(),
            block_edges: block.len(),
            cycle: steps,
            merge: self.merges(cycle),
        }
    }

    fn edge_label(&self, e: u32, chopping: bool) -> String {
        let edge = &self.g.edges[e as usize];
        if edge.kind == EdgeKind::Sibling {
            return "S".into();
        }
        let on = self.on(e).join(", ");
        if chopping {
            return format!("C on {on}");
        }
        let k = self.kinds[edge.a as usize].letter();
        format!("C {k}-{k} on {on}")
    }

    /// For every transaction type, its pieces on the cycle that lie in an instance the cycle
    /// visits at two or more vertices (joined by the cycle's S-edges): merged, they remove it.
    fn merges(&self, cycle: &Cycle) -> Vec<MergeProposal> {
        let mut out: Vec<MergeProposal> = Vec::new();
        for &v in &cycle.vertices {
            let x = self.g.vertices[v as usize];
            let siblings = cycle
                .vertices
                .iter()
                .filter(|&&u| {
                    let y = self.g.vertices[u as usize];
                    (y.txn, y.instance) == (x.txn, x.instance)
                })
                .count();
            if siblings < 2 {
                continue;
            }
            let txn = self.profiles[x.txn].kind;
            let piece = self.g.piece_label(self.profiles, v);
            match out.iter_mut().find(|m| m.txn == txn) {
                Some(m) if !m.pieces.contains(&piece) => m.pieces.push(piece),
                Some(_) => {}
                None => out.push(MergeProposal {
                    txn: txn.into(),
                    pieces: vec![piece],
                }),
            }
        }
        out
    }

    fn pieces(&self, included: &[usize]) -> Vec<PieceSummary> {
        let mut out = Vec::new();
        for &t in included {
            for (i, p) in self.profiles[t].pieces.iter().enumerate() {
                let effective = self
                    .g
                    .vertices
                    .iter()
                    .position(|v| v.txn == t && v.piece == i)
                    .map_or(p.kind, |v| self.kinds[v]);
                out.push(PieceSummary {
                    txn: self.profiles[t].kind.into(),
                    piece: p.name.into(),
                    declared: p.kind.letter(),
                    effective: effective.letter(),
                    repeated: p.repeated,
                });
            }
        }
        out
    }

    /// The first promotion of each piece (the graph is symmetric in instances and copies).
    fn promotions(&self, promotions: &[immediacy::Promotion]) -> Vec<PromotionReport> {
        let mut seen = BTreeSet::new();
        promotions
            .iter()
            .filter(|p| {
                let v = self.g.vertices[p.vertex as usize];
                seen.insert((v.txn, v.piece))
            })
            .map(|p| PromotionReport {
                promoted: self.label(p.vertex),
                by: self.label(p.by),
                on: self.on(p.edge),
            })
            .collect()
    }

    /// The verdict for every pair of types: C-edges between them by class, and whether a block
    /// of the subgraph restricted to their vertices holds a forbidden cycle through both.
    fn pairs(
        &self,
        included: &[usize],
        keep: &dyn Fn(u32) -> bool,
        chopping: bool,
    ) -> Vec<PairReport> {
        let g = self.g;
        let mut out = Vec::new();
        for (i, &a) in included.iter().enumerate() {
            for &b in &included[i..] {
                let of = |v: u32| g.vertices[v as usize].txn;
                let between = |e: &graph::Edge| {
                    e.kind == EdgeKind::Conflict
                        && ((of(e.a) == a && of(e.b) == b) || (of(e.a) == b && of(e.b) == a))
                };
                let count = |class: Option<PieceKind>| {
                    g.edges
                        .iter()
                        .filter(|e| {
                            between(e) && class.is_none_or(|k| self.kinds[e.a as usize] == k)
                        })
                        .count()
                };
                let (ii, dd) = if chopping {
                    (count(None), 0)
                } else {
                    (
                        count(Some(PieceKind::Immediate)),
                        count(Some(PieceKind::Deferrable)),
                    )
                };
                let verdict = if ii + dd == 0 {
                    PairVerdict::NoConflict
                } else if self.pair_unsafe(a, b, keep) {
                    PairVerdict::Unsafe
                } else {
                    PairVerdict::Safe
                };
                out.push(PairReport {
                    a: self.profiles[a].kind.into(),
                    b: self.profiles[b].kind.into(),
                    c_edges_ii: ii,
                    c_edges_dd: dd,
                    verdict,
                });
            }
        }
        out
    }

    fn pair_unsafe(&self, a: usize, b: usize, keep: &dyn Fn(u32) -> bool) -> bool {
        let g = self.g;
        let of = |v: u32| g.vertices[v as usize].txn;
        let inside = |e: u32| {
            let edge = &g.edges[e as usize];
            keep(e) && [a, b].contains(&of(edge.a)) && [a, b].contains(&of(edge.b))
        };
        blocks::blocks(g, inside).iter().any(|block| {
            cycles::mixed(g, block)
                && [a, b].iter().all(|&t| {
                    block
                        .iter()
                        .any(|&e| of(g.edges[e as usize].a) == t || of(g.edges[e as usize].b) == t)
                })
        })
    }
}

/// The `(table, group)`s of the layout that no included type writes.
fn never_written(
    profiles: &[TxnProfile],
    included: &[usize],
    tables: &[TableLayout],
    names: &Names<'_>,
) -> Vec<String> {
    let written: BTreeSet<_> = included
        .iter()
        .flat_map(|&t| &profiles[t].pieces)
        .flat_map(|p| &p.accesses)
        .filter(|a| a.2.writes())
        .map(|a| (a.0, a.1))
        .collect();
    tables
        .iter()
        .flat_map(|l| l.all_groups().map(move |g: ColumnGroup| (l.table, g)))
        .filter(|tg| !written.contains(tg))
        .map(|(t, g)| names.group(t, g))
        .collect()
}
