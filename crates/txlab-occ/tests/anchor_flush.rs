//! The anchor guard's flushes after a write (`txlab_occ::worker`): garbage a writing transaction
//! deferred is freed while its worker goes on with read-only transactions only, within
//! [`FLUSHES_AFTER_WRITE`] × [`FLUSH_EVERY`] begins. A worker that stopped flushing too early
//! (fewer flushes than the two epoch advances reclamation needs, or none once it reads only)
//! would keep the garbage until it writes again or is dropped, and this test fails.
//!
//! One test in this binary on purpose: crossbeam-epoch's default collector is shared by the
//! process, and a participant pinned by a test running beside it would hold the epoch back.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};
use txlab_occ::worker::{FLUSH_EVERY, FLUSHES_AFTER_WRITE};
use txlab_silo::{Silo, SiloConfig};

const T: TableId = TableId(0);

/// Counts its drops: the deferred garbage the test watches.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn read_only(w: &mut impl Worker) {
    let mut tx = w.begin();
    assert!(tx.read(T, 1).unwrap().is_some());
    let info = tx.commit().unwrap();
    assert!(info.read_only);
}

#[test]
fn garbage_a_writer_deferred_is_freed_while_it_runs_read_only_transactions() {
    let mut schema = Schema::new();
    schema.add(TableSpec::dense("t", 8, 4)).unwrap();
    let db = Silo::builder()
        .config(SiloConfig::manual())
        .build(&schema)
        .unwrap();
    db.load(T, 1, &1u64.to_le_bytes()).unwrap();
    let mut w = db.worker().unwrap();
    // Past the first flush interval, so the anchor is pinned and a flush is due at any begin.
    for _ in 0..=FLUSH_EVERY {
        read_only(&mut w);
    }

    for round in 0..3 {
        let freed = Arc::new(AtomicUsize::new(0));
        let mut tx = w.begin();
        tx.write(T, 2, &2u64.to_le_bytes()).unwrap();
        let garbage = Counted(Arc::clone(&freed));
        tx.guard.defer(move || drop(garbage));
        tx.commit().unwrap();

        let bound = u32::from(FLUSHES_AFTER_WRITE) * FLUSH_EVERY;
        let mut begins = 0;
        while freed.load(Ordering::SeqCst) == 0 && begins < bound {
            read_only(&mut w);
            begins += 1;
        }
        assert_eq!(
            freed.load(Ordering::SeqCst),
            1,
            "round {round}: garbage deferred by a write still held after {begins} read-only \
             transactions of its worker"
        );
    }
}
