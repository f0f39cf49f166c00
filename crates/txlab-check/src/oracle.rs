//! A brute-force serializability oracle for tiny histories, to test the graph checker against.
//!
//! [`serializable_by_enumeration`] answers: is there a serial order of the committed transactions
//! in which
//!
//! 1. each key's installed versions (each committed transaction's last write of the key) are
//!    written in their recorded version order (`order` ascending), and
//! 2. every read observes the version current at that point of the serial order (the last
//!    installed version before the reader, or the initial version, tag 0), unless it observes one
//!    of the reader's own writes, and that version is visible?
//!
//! This is Adya's definition of serializability for a history with a given version order
//! (equivalence to a serial history with the same version order and reads-from relation), decided
//! without any graph: by backtracking over the at most `7! = 5040` orders, pruning a prefix as
//! soon as a transaction cannot be placed next. Aborted transactions never install versions, so
//! reads of their writes (G1a), of overwritten intermediate writes (G1b), of tags nobody wrote and
//! of invisible versions can never be explained: the oracle answers `false` for them, as the
//! checker reports them.

use crate::{History, Key};
use std::collections::BTreeMap;
use txlab_core::Error;
use txlab_core::protocol::history::{Outcome, TxnRecord};

/// Most committed transactions the oracle accepts.
pub const ORACLE_MAX_COMMITTED: usize = 7;

/// The current version of a key during the search: `(tag, position, visible)`, the position of
/// `WriteEvent::position`; `None` for the initial version.
type Current = (u64, Option<Position>, bool);

/// A version's place in its key's order (`WriteEvent::position`).
type Position = (u64, bool, u64);

/// One committed transaction, prepared.
struct Prepared<'a> {
    record: &'a TxnRecord,
    /// Installed versions: key -> (tag, position, visible).
    installs: BTreeMap<Key, (u64, Position, bool)>,
}

/// Whether some serial order of the committed transactions explains the history (module docs).
/// More than [`ORACLE_MAX_COMMITTED`] committed transactions is an error.
pub fn serializable_by_enumeration(history: &History) -> Result<bool, Error> {
    let committed: Vec<&TxnRecord> = history
        .records()
        .iter()
        .filter(|r| r.outcome == Outcome::Committed)
        .collect();
    if committed.len() > ORACLE_MAX_COMMITTED {
        return Err(Error::invalid(
            "committed transactions",
            committed.len(),
            format!("the brute-force oracle accepts at most {ORACLE_MAX_COMMITTED}"),
        ));
    }
    let prepared: Vec<Prepared<'_>> = committed
        .iter()
        .map(|r| Prepared {
            record: r,
            installs: r
                .writes
                .iter()
                .map(|w| {
                    (
                        Key::new(w.table, w.key),
                        (w.version, w.position(), w.visible),
                    )
                })
                .collect(), // later writes of a key replace earlier ones: the final write wins
        })
        .collect();
    let mut placed = vec![false; prepared.len()];
    let mut current: BTreeMap<Key, Current> = BTreeMap::new();
    Ok(search(&prepared, &mut placed, &mut current, 0))
}

fn search(
    txns: &[Prepared<'_>],
    placed: &mut [bool],
    current: &mut BTreeMap<Key, Current>,
    depth: usize,
) -> bool {
    if depth == txns.len() {
        return true;
    }
    for i in 0..txns.len() {
        if placed[i] || !can_place(&txns[i], current) {
            continue;
        }
        let saved: Vec<(Key, Option<Current>)> = txns[i]
            .installs
            .iter()
            .map(|(&k, &(tag, order, visible))| (k, current.insert(k, (tag, Some(order), visible))))
            .collect();
        placed[i] = true;
        let ok = search(txns, placed, current, depth + 1);
        placed[i] = false;
        for (k, old) in saved {
            match old {
                Some(v) => current.insert(k, v),
                None => current.remove(&k),
            };
        }
        if ok {
            return true;
        }
    }
    false
}

/// Whether `t` can run next given the current versions.
fn can_place(t: &Prepared<'_>, current: &BTreeMap<Key, Current>) -> bool {
    let now = |k: &Key| current.get(k).copied().unwrap_or((0, None, true));
    let reads_ok = t.record.reads.iter().all(|r| {
        let key = Key::new(r.table, r.key);
        let own = t
            .record
            .writes
            .iter()
            .any(|w| Key::new(w.table, w.key) == key && w.version == r.version);
        let (tag, _, visible) = now(&key);
        own || (tag == r.version && visible)
    });
    let order_ok = t
        .installs
        .iter()
        .all(|(k, &(_, order, _))| now(k).1.is_none_or(|o| o < order));
    reads_ok && order_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_and_reordered_histories_are_explained() {
        let mut h = History::new();
        // T2 read the initial x while T1 wrote x: explained by T2, T1.
        h.txn(1).read(1, 0).write(1, 1).commit();
        h.txn(2).read(1, 0).read(2, 0).commit();
        assert_eq!(serializable_by_enumeration(&h), Ok(true));
    }

    #[test]
    fn write_skew_is_not_explained() {
        let mut h = History::new();
        h.txn(1).read(1, 0).read(2, 0).write(1, 1).commit();
        h.txn(2).read(1, 0).read(2, 0).write(2, 1).commit();
        assert_eq!(serializable_by_enumeration(&h), Ok(false));
    }

    #[test]
    fn the_version_order_must_be_respected() {
        let mut h = History::new();
        h.txn(1).write(1, 1).write_at(2, 1, 2).commit();
        h.txn(2).write(1, 2).write_at(2, 2, 1).commit();
        assert_eq!(serializable_by_enumeration(&h), Ok(false));
    }

    #[test]
    fn too_many_transactions_is_an_error_naming_the_limit() {
        let mut h = History::new();
        for i in 1..=8 {
            h.txn(i).commit();
        }
        let e = serializable_by_enumeration(&h).unwrap_err();
        assert!(e.to_string().contains("committed transactions = 8"), "{e}");
        assert!(e.to_string().contains("at most 7"), "{e}");
    }
}
