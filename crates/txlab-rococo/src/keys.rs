//! One-hop dependency tracking per conflict key (§3.4), and the unfinished writers a read-only
//! read waits for (§4.1).
//!
//! Per [`ConflictKey`] a server keeps the last transaction that declared a write and the readers
//! since it. When a piece of `T` arrives:
//!
//! - a read adds the edge `last writer -> T`;
//! - a write adds an edge from **every** reader since the last writer, or from the last writer if
//!   there is none, then makes `T` the last writer. An edge from only the most recent reader
//!   would lose an earlier reader's anti-dependency: reader `R1`, reader `R2`, writer `W` must
//!   give `R1 -> W` and `R2 -> W` (a test and the `mutation` feature's `LastReaderOnly` hold it).
//!
//! Everything older is reachable through these edges. A transaction leaves the state of its
//! keys when it finishes here ([`KeyTable::finished`]): an edge from a parent that is decided
//! and has finished on this server constrains nothing (the walk for undecided ancestors stops
//! at decided vertices, export leaves decided parents out, and a decided component waits only
//! for parents that are undecided or unfinished here), so leaving it out changes no decision.
//! A key's state thus holds only this server's unfinished transactions, and handling a piece
//! costs work bounded by the transactions in flight on its keys, not by how many came before
//! (a key that is only ever read, such as a TPC-C item, would otherwise collect every reader
//! of the run). Edges are labelled `i`
//! when both pieces are immediate and `d` when both are deferrable; the offline checker's
//! immediacy propagation rules out mixed pairs, so one is counted as an internal error (and
//! labelled `i`, which keeps the order it already has).
//!
//! Lookups only (no iteration decides anything), so a hash map is fine here.

use crate::graph::{EDGE_D, EDGE_I};
use foldhash::HashMap;
use txlab_core::Access;
use txlab_core::pieces::{ConflictKey, PieceKind};
use txlab_core::protocol::history::TxnId;

/// One key's state: transactions of this server that have not finished (module docs).
#[derive(Debug, Default, Clone)]
struct KeyState {
    last_writer: Option<(TxnId, PieceKind)>,
    readers: Vec<(TxnId, PieceKind)>,
    /// Transactions that declared a write of the key.
    unfinished_writers: Vec<TxnId>,
}

impl KeyState {
    fn is_empty(&self) -> bool {
        self.last_writer.is_none() && self.readers.is_empty() && self.unfinished_writers.is_empty()
    }
}

/// The per-key tracking of one server (module docs).
#[derive(Debug, Default)]
pub struct KeyTable {
    keys: HashMap<ConflictKey, KeyState>,
    /// Edges between an immediate and a deferrable piece (internal errors).
    pub mixed_edges: u64,
    /// Test-only: writes take an edge from the most recent reader only.
    pub last_reader_only: bool,
}

fn label(a: PieceKind, b: PieceKind) -> Option<u8> {
    match (a, b) {
        (PieceKind::Immediate, PieceKind::Immediate) => Some(EDGE_I),
        (PieceKind::Deferrable, PieceKind::Deferrable) => Some(EDGE_D),
        _ => None,
    }
}

impl KeyTable {
    /// Records that a piece of `txn` of `kind` accesses `key` as `access`; appends the new edges
    /// into `txn` as `(parent, label)` to `edges`.
    pub fn access(
        &mut self,
        key: ConflictKey,
        txn: TxnId,
        kind: PieceKind,
        access: Access,
        edges: &mut Vec<(TxnId, u8)>,
    ) {
        let s = self.keys.entry(key).or_default();
        let mut mixed = 0;
        let mut edge = |from: (TxnId, PieceKind)| {
            if from.0 == txn {
                return;
            }
            let l = label(from.1, kind).unwrap_or_else(|| {
                mixed += 1;
                EDGE_I
            });
            edges.push((from.0, l));
        };
        if access.reads()
            && let Some(w) = s.last_writer
        {
            edge(w);
        }
        if access.writes() {
            match s.readers.iter().rev().find(|r| r.0 != txn).copied() {
                // A read-write took the edge from the last writer above.
                None if access.reads() => {}
                None => {
                    if let Some(w) = s.last_writer {
                        edge(w);
                    }
                }
                Some(last) if self.last_reader_only => edge(last),
                // `edge` skips `txn` itself.
                Some(_) => s.readers.iter().copied().for_each(&mut edge),
            }
            s.last_writer = Some((txn, kind));
            s.readers.clear();
            if !s.unfinished_writers.contains(&txn) {
                s.unfinished_writers.push(txn);
            }
        } else if !s.readers.iter().any(|r| r.0 == txn) {
            s.readers.push((txn, kind));
        }
        self.mixed_edges += mixed;
    }

    /// `txn` finished here, `keys` being every key it accessed: it no longer holds back reads of
    /// them, and later pieces take no edge from it (module docs). A key left with no
    /// transaction is dropped.
    pub fn finished(&mut self, txn: TxnId, keys: impl IntoIterator<Item = ConflictKey>) {
        for k in keys {
            let Some(s) = self.keys.get_mut(&k) else {
                continue;
            };
            s.unfinished_writers.retain(|&w| w != txn);
            s.readers.retain(|r| r.0 != txn);
            if s.last_writer.is_some_and(|w| w.0 == txn) {
                s.last_writer = None;
            }
            if s.is_empty() {
                self.keys.remove(&k);
            }
        }
    }

    /// How many keys have an unfinished transaction.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.keys.len()
    }

    /// Appends the unfinished writers of `key` to `out`.
    pub fn unfinished_writers(&self, key: &ConflictKey, out: &mut Vec<TxnId>) {
        if let Some(s) = self.keys.get(key) {
            out.extend_from_slice(&s.unfinished_writers);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PieceKind::{Deferrable as D, Immediate as I};
    use txlab_core::TableId;
    use txlab_core::pieces::ColumnGroup;

    const K: ConflictKey = ConflictKey::new(TableId(0), ColumnGroup::ROW, 7);

    fn access(t: &mut KeyTable, txn: TxnId, kind: PieceKind, a: Access) -> Vec<(TxnId, u8)> {
        let mut e = Vec::new();
        t.access(K, txn, kind, a, &mut e);
        e
    }

    #[test]
    fn a_write_depends_on_every_reader_since_the_last_writer() {
        let mut t = KeyTable::default();
        assert!(access(&mut t, 1, D, Access::BlindWrite).is_empty());
        assert_eq!(access(&mut t, 2, D, Access::Read), vec![(1, EDGE_D)]);
        assert_eq!(access(&mut t, 3, D, Access::Read), vec![(1, EDGE_D)]);
        // Both readers' anti-dependencies, not only the most recent one's.
        assert_eq!(
            access(&mut t, 4, D, Access::BlindWrite),
            vec![(2, EDGE_D), (3, EDGE_D)]
        );
        // No reader since 4: the next write depends on 4 itself.
        assert_eq!(access(&mut t, 5, D, Access::ReadWrite), vec![(4, EDGE_D)]);
        assert_eq!(t.mixed_edges, 0);

        let mut m = KeyTable {
            last_reader_only: true,
            ..KeyTable::default()
        };
        access(&mut m, 1, D, Access::BlindWrite);
        access(&mut m, 2, D, Access::Read);
        access(&mut m, 3, D, Access::Read);
        assert_eq!(access(&mut m, 4, D, Access::BlindWrite), vec![(3, EDGE_D)]);
    }

    #[test]
    fn labels_follow_the_kinds_and_mixed_pairs_are_counted() {
        let mut t = KeyTable::default();
        access(&mut t, 1, I, Access::ReadWrite);
        assert_eq!(access(&mut t, 2, I, Access::ReadWrite), vec![(1, EDGE_I)]);
        assert_eq!(access(&mut t, 3, D, Access::Read), vec![(2, EDGE_I)]);
        assert_eq!(t.mixed_edges, 1);
        // A transaction does not depend on itself.
        access(&mut t, 4, I, Access::BlindWrite);
        assert!(access(&mut t, 4, I, Access::Read).is_empty());
        assert_eq!(
            t.mixed_edges, 2,
            "3 read as D after 2 wrote as I, then 4 wrote as I"
        );
    }

    #[test]
    fn unfinished_writers_are_those_that_declared_a_write_and_did_not_finish() {
        let mut t = KeyTable::default();
        access(&mut t, 1, D, Access::BlindWrite);
        access(&mut t, 2, D, Access::Read);
        access(&mut t, 3, D, Access::ReadWrite);
        let mut w = Vec::new();
        t.unfinished_writers(&K, &mut w);
        assert_eq!(w, vec![1, 3]);
        t.finished(1, [K]);
        w.clear();
        t.unfinished_writers(&K, &mut w);
        assert_eq!(w, vec![3]);
    }

    #[test]
    fn finished_transactions_leave_the_key_and_give_no_edges() {
        let mut t = KeyTable::default();
        for reader in 1..=1000 {
            access(&mut t, reader, D, Access::Read);
            if reader > 1 {
                t.finished(reader - 1, [K]);
            }
        }
        // Only the unfinished reader 1000 gives an edge, however many read before it.
        assert_eq!(
            access(&mut t, 1001, D, Access::BlindWrite),
            vec![(1000, EDGE_D)]
        );
        t.finished(1000, [K]);
        assert_eq!(access(&mut t, 1002, D, Access::Read), vec![(1001, EDGE_D)]);
        t.finished(1001, [K]);
        assert_eq!(
            access(&mut t, 1003, D, Access::ReadWrite),
            vec![(1002, EDGE_D)]
        );
        t.finished(1002, [K]);
        t.finished(1003, [K]);
        assert!(access(&mut t, 1004, D, Access::ReadWrite).is_empty());
        t.finished(1004, [K]);
        assert_eq!(
            t.len(),
            0,
            "a key with no unfinished transaction is dropped"
        );
    }
}
