//! Histories of a cluster run, and the one-order check.
//!
//! **Histories.** Servers record at column-group granularity: every `(table, group)` is its own
//! history table (`pieces::history_table`), scans are predicate reads. Two pieces writing
//! different groups of one row commute and ROCOCO does not order them, so a row-level history
//! would report false cycles. Each coordinator merges its transaction's parts from every server
//! with its begin and end instants into one record (`client` module), and
//! [`check`] checks the merged history with `CheckOptions::strict()`: ROCOCO claims strict
//! serializability (§3.3, Proposition 2), and so do 2PL and OCC with 2PC.
//!
//! **One order.** Each server logs every piece execution in its execution order with the
//! piece's conflict keys ([`OrderEntry`]). For every two transactions that access a conflict
//! key one after the other, at least one writing, the log says which went first; the check
//! requires one direction per pair over all servers and keys, and a violation names the pair,
//! both servers and both keys. It follows each key's accesses as one-hop tracking does (a read
//! after the last write, a write after every read since the last write, or after the last
//! write), so it costs time linear in the log.

use crate::msg::OrderEntry;
use std::collections::BTreeMap;
use std::fmt;
use txlab_check::{CheckOptions, History, Report, display_txn};
use txlab_core::pieces::ConflictKey;
use txlab_core::protocol::history::{TxnId, TxnRecord};

/// Two transactions executed in opposite orders (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneOrderViolation {
    /// The transaction that went first at `first`.
    pub a: TxnId,
    /// The other one.
    pub b: TxnId,
    /// `(server, key)` where `a` went before `b`.
    pub first: (u16, ConflictKey),
    /// `(server, key)` where `b` went before `a`.
    pub second: (u16, ConflictKey),
}

impl fmt::Display for OneOrderViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "one order violated: {} before {} on server {} key {}, but {} before {} on server {} \
             key {}",
            display_txn(self.a),
            display_txn(self.b),
            self.first.0,
            self.first.1,
            display_txn(self.b),
            display_txn(self.a),
            self.second.0,
            self.second.1
        )
    }
}

#[derive(Default)]
struct KeyLog {
    last_writer: Option<TxnId>,
    readers: Vec<TxnId>,
}

/// The one-order check (module docs) over every transaction's piece executions.
pub fn one_order<'a>(
    txns: impl IntoIterator<Item = (TxnId, &'a [OrderEntry])>,
) -> Result<(), OneOrderViolation> {
    let mut log: Vec<(u16, u64, TxnId, &OrderEntry)> = txns
        .into_iter()
        .flat_map(|(t, es)| es.iter().map(move |e| (e.server, e.seq, t, e)))
        .collect();
    log.sort_unstable_by_key(|e| (e.0, e.1));
    let mut keys: BTreeMap<(u16, ConflictKey), KeyLog> = BTreeMap::new();
    let mut seen: BTreeMap<(TxnId, TxnId), (bool, u16, ConflictKey)> = BTreeMap::new();
    let mut before = |a: TxnId, b: TxnId, server: u16, key: ConflictKey| {
        if a == b {
            return Ok(());
        }
        let (pair, forward) = if a < b {
            ((a, b), true)
        } else {
            ((b, a), false)
        };
        match seen.get(&pair) {
            None => {
                seen.insert(pair, (forward, server, key));
                Ok(())
            }
            Some(&(f, s, k)) if f != forward => Err(OneOrderViolation {
                a: if f { pair.0 } else { pair.1 },
                b: if f { pair.1 } else { pair.0 },
                first: (s, k),
                second: (server, key),
            }),
            Some(_) => Ok(()),
        }
    };
    for (server, _, txn, entry) in log {
        for &(key, access) in &entry.keys {
            let k = keys.entry((server, key)).or_default();
            if access.reads()
                && let Some(w) = k.last_writer
            {
                before(w, txn, server, key)?;
            }
            if access.writes() {
                let readers = std::mem::take(&mut k.readers);
                if readers.iter().all(|&r| r == txn) {
                    if let Some(w) = k.last_writer {
                        before(w, txn, server, key)?;
                    }
                } else {
                    for r in readers {
                        before(r, txn, server, key)?;
                    }
                }
                k.last_writer = Some(txn);
            } else if !k.readers.contains(&txn) {
                k.readers.push(txn);
            }
        }
    }
    Ok(())
}

/// What [`check`] found.
#[derive(Debug)]
pub struct Checked {
    /// The strict-serializability report of the merged history.
    pub report: Report,
    /// The one-order check.
    pub one_order: Result<(), OneOrderViolation>,
}

impl Checked {
    /// Whether both checks passed.
    pub fn passed(&self) -> bool {
        self.report.is_serializable() && self.one_order.is_ok()
    }
}

/// Checks a run's recorded transactions: the merged history with `CheckOptions::strict()` and
/// the one-order property.
pub fn check(recorded: Vec<(TxnRecord, Vec<OrderEntry>)>) -> Checked {
    let one = one_order(recorded.iter().map(|(r, o)| (r.id, o.as_slice())));
    let history = History::from_records(recorded.into_iter().map(|(r, _)| r).collect());
    Checked {
        report: txlab_check::check(&history, CheckOptions::strict()),
        one_order: one,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use txlab_core::pieces::ColumnGroup;
    use txlab_core::{Access, TableId};

    fn entry(server: u16, seq: u64, key: u64, access: Access) -> OrderEntry {
        OrderEntry {
            server,
            seq,
            keys: vec![(ConflictKey::new(TableId(0), ColumnGroup::ROW, key), access)],
        }
    }

    #[test]
    fn opposite_orders_on_two_servers_are_named() {
        let t1 = [
            entry(0, 0, 1, Access::BlindWrite),
            entry(1, 1, 2, Access::BlindWrite),
        ];
        let t2 = [
            entry(0, 1, 1, Access::BlindWrite),
            entry(1, 0, 2, Access::BlindWrite),
        ];
        let e = one_order([(1, &t1[..]), (2, &t2[..])]).unwrap_err();
        assert_eq!((e.a, e.b), (1, 2));
        assert_eq!(e.first.0, 0);
        assert_eq!(e.second.0, 1);
        let s = e.to_string();
        assert!(s.contains("server 0") && s.contains("server 1"), "{s}");
        // The same order everywhere passes; so do readers that never conflict.
        let t2 = [
            entry(0, 1, 1, Access::BlindWrite),
            entry(1, 2, 2, Access::BlindWrite),
        ];
        one_order([(1, &t1[..]), (2, &t2[..])]).unwrap();
        let r1 = [entry(0, 0, 1, Access::Read)];
        let r2 = [entry(0, 1, 1, Access::Read)];
        one_order([(1, &r1[..]), (2, &r2[..])]).unwrap();
    }

    #[test]
    fn an_anti_dependency_against_a_write_order_is_found() {
        // On server 0, t1 reads k before t2 writes it (t1 -> t2); on server 1, t2 writes j
        // before t1 reads it (t2 -> t1).
        let t1 = [entry(0, 0, 1, Access::Read), entry(1, 1, 2, Access::Read)];
        let t2 = [
            entry(0, 1, 1, Access::BlindWrite),
            entry(1, 0, 2, Access::BlindWrite),
        ];
        assert!(one_order([(1, &t1[..]), (2, &t2[..])]).is_err());
    }
}
