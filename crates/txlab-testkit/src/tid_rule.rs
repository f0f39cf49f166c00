//! The commit timestamp rule, one body for every optimistic protocol: the versions a transaction
//! writes are ordered after every version it read.
//!
//! Silo picks its commit TID above every TID it read, every TID its locks replaced and its
//! worker's last TID (Tu et al., §4.4); TicToc's `commit_ts` is at least every `wts` it read
//! (Yu et al., Algorithm 2); MVTO's reads see only versions below the transaction's own
//! timestamp. Serializability alone does not see the read term go missing: a reader that writes
//! another key gets a TID below the version it read, and every history stays acyclic. This test
//! does: one worker rewrites `x` many times (its own TIDs climb), then another reads `x` and
//! writes `y`, whose previous version and whose worker's last TID are both old. Every version the
//! reader writes must exceed (TicToc: be at least) every version it read, as the recorded history
//! shows.

use crate::Protocol;
use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::protocol::history::Outcome;
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};

const T: TableId = TableId(0);
const X: u64 = 0;
const Y: u64 = 1;

/// How a written version must compare with the versions its transaction read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Strictly above (Silo's TIDs, MVTO's timestamps).
    Above,
    /// At or above (TicToc: ties are broken by physical commit order).
    AtLeast,
}

/// Runs the scenario of the module docs and checks every committed transaction's writes against
/// its reads.
pub fn written_versions_follow_reads<P: Protocol>(order: Order) {
    let mut schema = Schema::new();
    schema
        .add(TableSpec::dense("t", 8, 4))
        .expect("valid table");
    let recorder = Arc::new(MemoryRecorder::new());
    let db = P::build(&schema, recorder.clone()).expect("engine builds");
    for k in [X, Y] {
        db.load(T, k, &k.to_le_bytes()).expect("load");
    }
    let mut writer = db.worker().expect("worker");
    let mut reader = db.worker().expect("worker");
    for i in 0..50u64 {
        let mut tx = writer.begin();
        tx.write(T, X, &i.to_le_bytes()).expect("write x");
        tx.commit().expect("a lone writer commits");
    }
    let mut tx = reader.begin();
    let x = tx
        .read(T, X)
        .expect("read x")
        .expect("x is present")
        .to_vec();
    tx.write(T, Y, &x).expect("write y");
    tx.commit().expect("nothing conflicts with the reader");

    let history = recorder.take();
    let mut checked = 0;
    for r in history.records() {
        if r.outcome != Outcome::Committed || r.writes.is_empty() {
            continue;
        }
        let read = r.reads.iter().map(|e| e.version).max().unwrap_or(0);
        for w in r.writes.iter().filter(|w| w.visible) {
            let ok = match order {
                Order::Above => w.version > read,
                Order::AtLeast => w.version >= read,
            };
            assert!(
                ok,
                "{}: transaction {:#x} wrote table {} key {} at version {:#x}, not {order:?} the \
                 version {read:#x} it read",
                P::NAME,
                r.id,
                w.table.0,
                w.key,
                w.version
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 51, "{}: every writer was recorded", P::NAME);
}
