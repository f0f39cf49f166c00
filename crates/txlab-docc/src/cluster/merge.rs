//! One history for a whole cluster: each partition records its part of a transaction (a
//! single-partition transaction whole; a multi-partition one as the leader's reads and each
//! participant's installed writes), so the parts of one transaction are merged into one record
//! before the history is checked (`docs/protocols/docc.md`, "Multi-partition").
//!
//! The engines must record on the sequence clock (`DoccConfig::sequence_clock`,
//! `CalvinConfig::sequence_clock`): a transaction of global rank `r` runs from `2r` to
//! `2r + 1` at every partition, so its parts share that interval, and `CheckOptions::strict()`
//! on the merged history checks equivalence to the serial execution in the global order.
//! Committed and rolled-back parts of one rank become one record (committed if any part
//! committed: a participant's part of a rolled-back transaction installs nothing and records
//! nothing); failed attempts (a DOCC retry's first attempt, a Calvin access outside its locks)
//! stay separate. Records get fresh ids, since every partition numbers its own from zero.

use std::collections::BTreeMap;
use txlab_check::History;
use txlab_core::protocol::history::{Outcome, TxnRecord, txn_id};

/// The partitions' histories merged into the cluster's (module docs).
pub fn merge_histories(parts: impl IntoIterator<Item = History>) -> History {
    let mut by_rank: BTreeMap<(u64, u64), TxnRecord> = BTreeMap::new();
    let mut attempts = Vec::new();
    for part in parts {
        for r in part.into_records() {
            if matches!(r.outcome, Outcome::Aborted(_)) {
                attempts.push(r);
                continue;
            }
            match by_rank.entry((r.begin_ns, r.end_ns)) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(r);
                }
                std::collections::btree_map::Entry::Occupied(mut o) => {
                    let m = o.get_mut();
                    m.reads.extend(r.reads);
                    m.writes.extend(r.writes);
                    m.scans.extend(r.scans);
                    if r.outcome == Outcome::Committed {
                        m.outcome = Outcome::Committed;
                    }
                }
            }
        }
    }
    let merged = by_rank.into_values().enumerate().map(|(i, mut r)| {
        r.id = txn_id(1, i as u64);
        r
    });
    let failed = attempts.into_iter().enumerate().map(|(i, mut r)| {
        r.id = txn_id(2, i as u64);
        r
    });
    merged.chain(failed).collect()
}
