//! [`ScReport`]: what the checker found, as data (serialized to JSON) and as text.

use serde::Serialize;
use std::fmt::{self, Write as _};

/// A piece's kind as declared and after immediacy propagation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PieceSummary {
    /// The transaction type.
    pub txn: String,
    /// The piece.
    pub piece: String,
    /// `I` or `D` as declared.
    pub declared: char,
    /// `I` or `D` after propagation.
    pub effective: char,
    /// Whether the piece is repeated.
    pub repeated: bool,
}

/// A piece made immediate by a C-edge (reported once per piece, for the first vertex promoted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromotionReport {
    /// The promoted vertex.
    pub promoted: String,
    /// The immediate vertex at the other end of the C-edge.
    pub by: String,
    /// What the two pieces share (`table.group`), one of them writing.
    pub on: Vec<String>,
}

/// One step of a cycle: a vertex and the edge to the next vertex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CycleStep {
    /// The vertex (`type[instance].piece[copy]`).
    pub vertex: String,
    /// `S`, `C I-I on ...` or `C D-D on ...` (chopping: `C on ...`).
    pub edge: String,
}

/// The pieces of one transaction type the paper proposes to merge into one (§3.1, §4.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MergeProposal {
    /// The transaction type.
    pub txn: String,
    /// Its pieces on the cycle (with the copy for repeated ones).
    pub pieces: Vec<String>,
}

/// A block of the graph holding a forbidden cycle, with a shortest witness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CycleReport {
    /// Vertices in the block.
    pub block_vertices: usize,
    /// Edges in the block.
    pub block_edges: usize,
    /// A shortest forbidden cycle of the block.
    pub cycle: Vec<CycleStep>,
    /// The merges that remove this cycle.
    pub merge: Vec<MergeProposal>,
}

/// How two transaction types interact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairVerdict {
    /// No C-edge between them.
    NoConflict,
    /// They conflict, and no forbidden cycle involves both (ROCOCO: every SC-cycle through them
    /// has a D-D edge; chopping: no SC-cycle).
    Safe,
    /// A forbidden cycle involves both.
    Unsafe,
}

/// One cell of the pairwise matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairReport {
    /// First type.
    pub a: String,
    /// Second type (may equal `a`: two instances of one type).
    pub b: String,
    /// I-I C-edges between them (chopping: all C-edges).
    pub c_edges_ii: usize,
    /// D-D C-edges between them (chopping: 0).
    pub c_edges_dd: usize,
    /// The verdict.
    pub verdict: PairVerdict,
}

/// Plain transaction chopping (every C-edge counts; no I/D), for comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChoppingReport {
    /// Blocks holding an SC-cycle.
    pub blocks_with_sc_cycles: usize,
    /// A shortest SC-cycle of the first such block.
    pub witness: Option<CycleReport>,
    /// The pairwise matrix under chopping.
    pub pairs: Vec<PairReport>,
}

/// The checker's verdict on a workload's profiles (module docs of [`super`]).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScReport {
    /// Transaction types in the SC-graph.
    pub included: Vec<String>,
    /// Read-only types left out (they use the 2-round read-only protocol, §4.1).
    pub excluded_read_only: Vec<String>,
    /// Vertices of the SC-graph.
    pub vertices: usize,
    /// S-edges.
    pub s_edges: usize,
    /// I-I C-edges after propagation.
    pub c_edges_ii: usize,
    /// D-D C-edges after propagation.
    pub c_edges_dd: usize,
    /// Every piece of the included types.
    pub pieces: Vec<PieceSummary>,
    /// Promotions, in the order propagation made them.
    pub promotions: Vec<PromotionReport>,
    /// One entry per block holding an unreorderable SC-cycle.
    pub unreorderable: Vec<CycleReport>,
    /// Every pair of included types.
    pub pairs: Vec<PairReport>,
    /// The same graph under plain chopping.
    pub chopping: ChoppingReport,
    /// `table.group`s that no included type writes (they never conflict; servers need not track
    /// their readers).
    pub never_written: Vec<String>,
}

impl ScReport {
    /// Whether ROCOCO can always reorder: no unreorderable SC-cycle.
    pub fn is_safe(&self) -> bool {
        self.unreorderable.is_empty()
    }

    /// `profiles` (the ones this report analysed) with every piece's kind replaced by its
    /// effective one: immediacy is viral (§3.1), so a promoted piece runs as immediate, and the
    /// servers label every runtime edge between two pieces of the same effective kind.
    pub fn effective_profiles(
        &self,
        profiles: &[txlab_core::pieces::TxnProfile],
    ) -> Vec<txlab_core::pieces::TxnProfile> {
        use txlab_core::pieces::PieceKind;
        let mut out = profiles.to_vec();
        for t in &mut out {
            for p in &mut t.pieces {
                let promoted = self
                    .pieces
                    .iter()
                    .any(|s| s.txn == t.kind && s.piece == p.name && s.effective != s.declared);
                if promoted {
                    p.kind = PieceKind::Immediate;
                }
            }
        }
        out
    }

    /// `Ok` when safe; otherwise the error a server or cluster refuses to start with, carrying
    /// the cycles and the proposed merges.
    pub fn require_safe(&self) -> Result<(), txlab_core::Error> {
        if self.is_safe() {
            return Ok(());
        }
        let mut s = String::from(
            "profiles without unreorderable SC-cycles (merged pieces are not executed):",
        );
        for c in &self.unreorderable {
            s.push_str("\n  ");
            write_cycle(&mut s, &c.cycle);
            for m in &c.merge {
                let _ = write!(s, "\n    merge {}: {}", m.txn, m.pieces.join(" + "));
            }
        }
        Err(txlab_core::Error::invalid(
            "piece profiles",
            format!("{} unreorderable SC-cycles", self.unreorderable.len()),
            s,
        ))
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

fn write_cycle(s: &mut String, cycle: &[CycleStep]) {
    for step in cycle {
        let _ = write!(s, "{} --{}--> ", step.vertex, step.edge);
    }
    if let Some(first) = cycle.first() {
        s.push_str(&first.vertex);
    }
}

fn write_pairs(f: &mut fmt::Formatter<'_>, pairs: &[PairReport], chopping: bool) -> fmt::Result {
    let width = pairs
        .iter()
        .map(|p| p.a.len() + p.b.len())
        .max()
        .unwrap_or(0)
        + 5;
    for p in pairs {
        let verdict = match (p.verdict, chopping) {
            (PairVerdict::NoConflict, _) => "no conflict",
            (PairVerdict::Safe, false) => "reorderable",
            (PairVerdict::Unsafe, false) => "UNREORDERABLE",
            (PairVerdict::Safe, true) => "no SC-cycle",
            (PairVerdict::Unsafe, true) => "SC-cycle",
        };
        let name = format!("{} x {}", p.a, p.b);
        if chopping {
            writeln!(f, "  {name:<width$} C {:>3}  {verdict}", p.c_edges_ii)?;
        } else {
            writeln!(
                f,
                "  {name:<width$} I-I {:>3}  D-D {:>3}  {verdict}",
                p.c_edges_ii, p.c_edges_dd
            )?;
        }
    }
    Ok(())
}

impl fmt::Display for ScReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "ROCOCO offline check (SC-graph, OSDI 2014 §3.1)")?;
        writeln!(f, "types: {}", self.included.join(", "))?;
        if !self.excluded_read_only.is_empty() {
            writeln!(
                f,
                "read-only (2-round protocol, not in the graph): {}",
                self.excluded_read_only.join(", ")
            )?;
        }
        writeln!(
            f,
            "graph: {} vertices, {} S-edges, {} I-I and {} D-D C-edges",
            self.vertices, self.s_edges, self.c_edges_ii, self.c_edges_dd
        )?;
        writeln!(f, "\npieces (declared -> effective):")?;
        for p in &self.pieces {
            let rep = if p.repeated { " (repeated)" } else { "" };
            let mark = if p.declared != p.effective {
                "  promoted"
            } else {
                ""
            };
            writeln!(
                f,
                "  {}.{}{rep}: {} -> {}{mark}",
                p.txn, p.piece, p.declared, p.effective
            )?;
        }
        if !self.promotions.is_empty() {
            writeln!(f, "\nimmediacy propagation:")?;
            for p in &self.promotions {
                writeln!(
                    f,
                    "  {} becomes I: C-edge with {} on {}",
                    p.promoted,
                    p.by,
                    p.on.join(", ")
                )?;
            }
        }
        if self.is_safe() {
            writeln!(
                f,
                "\nverdict: SAFE, no unreorderable SC-cycle (every SC-cycle has a D-D edge); no \
                 merged pieces"
            )?;
        } else {
            writeln!(
                f,
                "\nverdict: UNSAFE, {} block(s) with an unreorderable SC-cycle (all C-edges I-I)",
                self.unreorderable.len()
            )?;
            for c in &self.unreorderable {
                let mut s = String::new();
                write_cycle(&mut s, &c.cycle);
                writeln!(
                    f,
                    "  block of {} vertices, {} edges; shortest cycle:\n    {s}",
                    c.block_vertices, c.block_edges
                )?;
                for m in &c.merge {
                    writeln!(f, "    proposed merge, {}: {}", m.txn, m.pieces.join(" + "))?;
                }
            }
        }
        writeln!(f, "\npairs (ROCOCO):")?;
        write_pairs(f, &self.pairs, false)?;
        writeln!(
            f,
            "\nplain transaction chopping (all C-edges, no I/D): {} block(s) with SC-cycles",
            self.chopping.blocks_with_sc_cycles
        )?;
        if let Some(w) = &self.chopping.witness {
            let mut s = String::new();
            write_cycle(&mut s, &w.cycle);
            writeln!(f, "  e.g. {s}")?;
        }
        write_pairs(f, &self.chopping.pairs, true)?;
        if !self.never_written.is_empty() {
            writeln!(f, "\nnever written: {}", self.never_written.join(", "))?;
        }
        Ok(())
    }
}
