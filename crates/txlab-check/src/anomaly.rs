//! What the checker reports: [`Anomaly`] = an [`AnomalyKind`] plus its [`Evidence`].
//!
//! Cycle anomalies follow Adya, "Weak Consistency: A Generalized Theory and Optimistic
//! Implementations for Distributed Transactions" (MIT PhD thesis, 1999), section 4.4, and Adya,
//! Liskov, O'Neil, "Generalized Isolation Level Definitions" (ICDE 2000):
//!
//! - **G0** (write cycles): a cycle of `ww` edges only;
//! - **G1a** (aborted reads): a committed transaction read a version written by an aborted one;
//! - **G1b** (intermediate reads): a committed transaction read a version that is not the final
//!   write of that key by its (committed) writer;
//! - **G1c** (circular information flow): a cycle of `ww` and `wr` edges (with at least one `wr`;
//!   all-`ww` cycles are reported as G0);
//! - **G-single** (single anti-dependency cycle): a cycle with exactly one `rw` edge;
//! - **G2-item** (item anti-dependency cycle): a cycle with two or more `rw` edges (Adya's G2-item
//!   also covers G-single; the checker reports the more specific name).
//!
//! The `-realtime` variants are the same shapes closed by at least one real-time edge
//! (`T1` finished before `T2` began): violations of strict serializability only, named as in
//! Elle (Kingsbury and Alvaro, "Elle: Inferring Isolation Anomalies from Experimental
//! Observations", VLDB 2020). Garbage and omitted-version reads are not in Adya's list: they
//! show a recorder or version-order bug rather than an isolation anomaly.

use crate::{Key, display_txn};
use std::fmt;
use txlab_core::protocol::history::TxnId;

/// The kinds of anomaly the checker reports.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnomalyKind {
    /// A cycle of write-write dependencies.
    G0,
    /// A committed transaction read a version written by an aborted transaction.
    G1a,
    /// A committed transaction read a version that its writer later overwrote itself.
    G1b,
    /// A cycle of write-write and write-read dependencies.
    G1c,
    /// A cycle with exactly one anti-dependency (read skew, lost update).
    GSingle,
    /// A cycle with two or more anti-dependencies (write skew).
    G2Item,
    /// A read of a version tag that no transaction wrote.
    GarbageRead,
    /// A read of a version its writer installed as not visible (an NWR omitted write).
    OmittedRead,
    /// A range scan did not return a key that was present in every version it could have seen.
    PhantomMiss,
    /// A G0 shape closed by a real-time edge.
    G0Realtime,
    /// A G1c shape closed by a real-time edge.
    G1cRealtime,
    /// A G-single shape closed by a real-time edge (e.g. a stale read).
    GSingleRealtime,
    /// A G2-item shape closed by a real-time edge.
    G2ItemRealtime,
    /// The history contradicts itself (duplicate transaction ids, two versions of a key with the
    /// same tag or the same order, a write of tag 0, a transaction ending before it began).
    InvalidHistory,
}

impl AnomalyKind {
    /// Every kind, in report order.
    pub const ALL: [AnomalyKind; 14] = [
        AnomalyKind::InvalidHistory,
        AnomalyKind::GarbageRead,
        AnomalyKind::OmittedRead,
        AnomalyKind::PhantomMiss,
        AnomalyKind::G1a,
        AnomalyKind::G1b,
        AnomalyKind::G0,
        AnomalyKind::G1c,
        AnomalyKind::GSingle,
        AnomalyKind::G2Item,
        AnomalyKind::G0Realtime,
        AnomalyKind::G1cRealtime,
        AnomalyKind::GSingleRealtime,
        AnomalyKind::G2ItemRealtime,
    ];

    /// The conventional name (`G0`, `G1a`, `G-single`, `G2-item`, `G-single-realtime`, ...).
    pub fn name(self) -> &'static str {
        match self {
            AnomalyKind::G0 => "G0",
            AnomalyKind::G1a => "G1a",
            AnomalyKind::G1b => "G1b",
            AnomalyKind::G1c => "G1c",
            AnomalyKind::GSingle => "G-single",
            AnomalyKind::G2Item => "G2-item",
            AnomalyKind::GarbageRead => "garbage-read",
            AnomalyKind::OmittedRead => "omitted-read",
            AnomalyKind::PhantomMiss => "phantom-miss",
            AnomalyKind::G0Realtime => "G0-realtime",
            AnomalyKind::G1cRealtime => "G1c-realtime",
            AnomalyKind::GSingleRealtime => "G-single-realtime",
            AnomalyKind::G2ItemRealtime => "G2-item-realtime",
            AnomalyKind::InvalidHistory => "invalid-history",
        }
    }

    /// Whether the anomaly is shown by a dependency cycle.
    pub fn is_cycle(self) -> bool {
        !matches!(
            self,
            AnomalyKind::G1a
                | AnomalyKind::G1b
                | AnomalyKind::GarbageRead
                | AnomalyKind::OmittedRead
                | AnomalyKind::PhantomMiss
                | AnomalyKind::InvalidHistory
        )
    }

    /// Whether the anomaly involves real-time order (a strict-serializability violation only).
    pub fn is_realtime(self) -> bool {
        matches!(
            self,
            AnomalyKind::G0Realtime
                | AnomalyKind::G1cRealtime
                | AnomalyKind::GSingleRealtime
                | AnomalyKind::G2ItemRealtime
        )
    }
}

impl fmt::Display for AnomalyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The kind of an edge of the direct serialization graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DependencyKind {
    /// Write-write: `to` installed the version right after `from`'s in the key's version order.
    Ww,
    /// Write-read: `to` read the version `from` installed.
    Wr,
    /// Read-write (anti-dependency): `from` read the version that `to` replaced.
    Rw,
    /// Real time: `from` finished before `to` began.
    RealTime,
}

impl DependencyKind {
    /// `ww`, `wr`, `rw` or `rt`.
    pub fn name(self) -> &'static str {
        match self {
            DependencyKind::Ww => "ww",
            DependencyKind::Wr => "wr",
            DependencyKind::Rw => "rw",
            DependencyKind::RealTime => "rt",
        }
    }
}

impl fmt::Display for DependencyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One edge of a reported cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dependency {
    /// The transaction that must come first.
    pub from: TxnId,
    /// The transaction that must come after.
    pub to: TxnId,
    /// Why.
    pub kind: DependencyKind,
    /// The key the dependency is on (`None` for real-time edges).
    pub key: Option<Key>,
}

/// A single bad read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadRead {
    /// The committed transaction that read.
    pub reader: TxnId,
    /// The key read.
    pub key: Key,
    /// The version tag observed.
    pub version: u64,
    /// The transaction that wrote that version, if any did.
    pub writer: Option<TxnId>,
}

/// Why an anomaly was reported.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// A dependency cycle, as consecutive edges (the last edge's `to` is the first edge's `from`).
    Cycle(Vec<Dependency>),
    /// A single read.
    Read(BadRead),
    /// An inconsistency of the history itself.
    Invalid(String),
}

/// One anomaly found in a history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anomaly {
    /// What kind.
    pub kind: AnomalyKind,
    /// The proof.
    pub evidence: Evidence,
}

impl Anomaly {
    /// The cycle, for cycle anomalies.
    pub fn cycle(&self) -> Option<&[Dependency]> {
        match &self.evidence {
            Evidence::Cycle(c) => Some(c),
            _ => None,
        }
    }

    /// The transactions involved: the cycle's members in cycle order, or the reader then the
    /// writer of a bad read.
    pub fn txns(&self) -> Vec<TxnId> {
        match &self.evidence {
            Evidence::Cycle(c) => c.iter().map(|d| d.from).collect(),
            Evidence::Read(r) => std::iter::once(r.reader).chain(r.writer).collect(),
            Evidence::Invalid(_) => Vec::new(),
        }
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.kind)?;
        match &self.evidence {
            Evidence::Cycle(edges) => {
                for (i, d) in edges.iter().enumerate() {
                    if i == 0 {
                        write!(f, "{}", display_txn(d.from))?;
                    }
                    match d.key {
                        Some(k) => write!(f, " -{}({k})-> {}", d.kind, display_txn(d.to))?,
                        None => write!(f, " -{}-> {}", d.kind, display_txn(d.to))?,
                    }
                }
                Ok(())
            }
            Evidence::Read(r) => {
                write!(f, "{} read {}@{}", display_txn(r.reader), r.key, r.version)?;
                match (self.kind, r.writer) {
                    (AnomalyKind::G1a, Some(w)) => {
                        write!(f, ", written by aborted {}", display_txn(w))
                    }
                    (AnomalyKind::G1b, Some(w)) => {
                        write!(
                            f,
                            ", an intermediate version that {} overwrote",
                            display_txn(w)
                        )
                    }
                    (AnomalyKind::OmittedRead, Some(w)) => {
                        write!(f, ", which {} installed as not visible", display_txn(w))
                    }
                    (_, Some(w)) => write!(f, " (writer {})", display_txn(w)),
                    (_, None) => write!(f, ", a version no transaction wrote"),
                }
            }
            Evidence::Invalid(msg) => f.write_str(msg),
        }
    }
}
