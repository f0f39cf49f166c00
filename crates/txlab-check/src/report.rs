//! [`Report`]: the checker's verdict, with counts and example anomalies.

use crate::anomaly::{Anomaly, AnomalyKind};
use std::collections::BTreeMap;
use std::fmt;

/// Sizes of the direct serialization graph that was checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphStats {
    /// Distinct `ww` edges.
    pub ww: usize,
    /// Distinct `wr` edges.
    pub wr: usize,
    /// Distinct `rw` edges.
    pub rw: usize,
    /// Real-time edges after the frontier reduction (0 unless real time was checked).
    pub real_time: usize,
}

/// What [`check`](crate::check) found.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Example anomalies, at most [`CheckOptions::max_examples`](crate::CheckOptions) per kind,
    /// in [`AnomalyKind::ALL`] order.
    pub anomalies: Vec<Anomaly>,
    /// Number of committed transactions.
    pub committed: usize,
    /// Number of aborted transactions (by concurrency control or by their program).
    pub aborted: usize,
    /// Whether real-time (strict serializability) edges were included.
    pub real_time: bool,
    /// Graph sizes.
    pub graph: GraphStats,
    /// How many anomalies of each kind were found (examples may have been dropped).
    pub counts: BTreeMap<AnomalyKind, usize>,
}

impl Report {
    /// Whether no anomaly was found: the history is serializable (strictly serializable when
    /// checked with `real_time`).
    pub fn is_serializable(&self) -> bool {
        self.counts.values().all(|&c| c == 0)
    }

    /// How many anomalies of `kind` were found.
    pub fn count(&self, kind: AnomalyKind) -> usize {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    /// The example anomalies of `kind`.
    pub fn of_kind(&self, kind: AnomalyKind) -> impl Iterator<Item = &Anomaly> {
        self.anomalies.iter().filter(move |a| a.kind == kind)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = if self.real_time {
            "strictly serializable"
        } else {
            "serializable"
        };
        write!(
            f,
            "{} committed, {} aborted; graph: {} ww, {} wr, {} rw, {} rt edges; ",
            self.committed,
            self.aborted,
            self.graph.ww,
            self.graph.wr,
            self.graph.rw,
            self.graph.real_time
        )?;
        if self.is_serializable() {
            return writeln!(f, "{level}: no anomalies");
        }
        writeln!(f, "NOT {level}:")?;
        for (kind, count) in &self.counts {
            let shown = self.of_kind(*kind).count();
            writeln!(f, "  {kind}: {count} found ({shown} shown)")?;
        }
        for a in &self.anomalies {
            writeln!(f, "  {a}")?;
        }
        Ok(())
    }
}
