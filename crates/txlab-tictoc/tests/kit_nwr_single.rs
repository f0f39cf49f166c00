//! TicToc+NWR with single-write omitters (`TicTocNwrSingle`, engine `tictoc-nwr-single`) in the
//! correctness kit (`txlab_testkit::nwr_single_kit!`): Hermitage schedules, random schedules
//! (reads, blind writes, read-modify-writes, inserts, deletes and scans), threaded stress across
//! epochs, the NWR mutants, the schedules that show which reads this rule marks, strictness with
//! acknowledgement times, and the two schedules that are TicToc's own: the omitter's extension
//! target, and the old-version reader.
//!
//! As in `kit_nwr.rs`: manual epochs and `AckMode::EpochStable`; the kit checks histories for
//! serializability.

mod common;

use common::TicTocHooks;
use txlab_check::{CheckOptions, History, check};
use txlab_core::{Engine, Transaction, TxOps, Worker};
use txlab_nwr::NwrMutation;
use txlab_testkit::family::{EngineOf, manual};
use txlab_testkit::nwr::{blind_write_omitted as blind_write, counters, omitted_writes};
use txlab_testkit::nwr_kit::{T, db_with, num};
use txlab_tictoc::__layout::epoch_floor;
use txlab_tictoc::{Mutation, NwrSingleWrite, TicTocConfig};

// Which reads leave a mark under this rule and the scan-miss mark; strictness with group-commit
// acknowledgements; the pivot writer's mark (`TAG_PIVOT_READ` in the history tag) lasts one
// epoch.
txlab_testkit::nwr_single_kit!(
    TicTocHooks,
    single_write_marks,
    single_write_strict_with_acknowledgements,
    single_write_mark_lasts_one_epoch,
);

fn config() -> TicTocConfig {
    manual::<TicTocHooks, NwrSingleWrite>()
}

const Y: u64 = 2;
const Z: u64 = 3;
const K: u64 = 4;

type Db = EngineOf<TicTocHooks, NwrSingleWrite>;

/// Read-modify-writes of `K` until its version's timestamp is `floor(e) + n - 1`, then a
/// read-only transaction reads `key`'s loaded version and `K`: it commits at `floor(e) + n - 1`
/// and extends `key`'s `rts` there (it is no pre-epoch reader, so it is lifted to the floor and
/// beyond). Returns the epoch.
fn push_rts_into_the_epoch(db: &Db, key: u64, n: u64) -> u64 {
    let mut w = db.worker().unwrap();
    for _ in 0..n {
        let mut t = w.begin();
        assert!(
            t.update(T, K, &mut |b| b
                .copy_from_slice(&(num(b) + 1).to_le_bytes()))
                .unwrap()
        );
        t.commit().unwrap();
    }
    let mut t = w.begin();
    assert_eq!(t.read(T, key).unwrap().map(num), Some(key * 10));
    assert_eq!(t.read(T, K).unwrap().map(num), Some(40 + n));
    t.commit().unwrap().epoch
}

/// The omitter's extension target. `Y` reads y's loaded version `y0`, whose `rts` another reader
/// pushed to `floor(e) + 5`; `O` reads `z0` and blind-writes y; `W1` installs y's pivot at
/// `floor(e) + 6`; `O` is omitted (ordered just before the pivot); `Y` then writes z. Correct:
/// `O` extended `z0` to the pivot's timestamp, so `Y` commits above it, where `y0` is no longer
/// valid: `Y` aborts. Returns whether `Y` committed, and the epoch.
fn extension_target_schedule(db: &Db) -> (bool, u64) {
    let epoch = push_rts_into_the_epoch(db, Y, 6);
    let mut ws: Vec<_> = (0..3).map(|_| db.worker().unwrap()).collect();
    let [y, o, w1] = &mut ws[..] else {
        unreachable!()
    };
    let mut ty = y.begin();
    assert_eq!(ty.read(T, Y).unwrap().map(num), Some(20));
    let mut to = o.begin();
    assert_eq!(to.read(T, Z).unwrap().map(num), Some(30));
    to.write(T, Y, &1u64.to_le_bytes()).unwrap();
    assert!(!blind_write(w1, Y, 2), "y's pivot");
    to.commit().unwrap();
    assert_eq!(counters(o)["nwr_commits_omitted"], 1, "O is omitted");
    ty.write(T, Z, &3u64.to_le_bytes()).unwrap();
    (ty.commit().is_ok(), epoch)
}

#[test]
fn an_omitter_extends_its_reads_to_the_pivots_timestamp() {
    let (db, rec) = db_with::<TicTocHooks, NwrSingleWrite>(config());
    let (committed, epoch) = extension_target_schedule(&db);
    assert!(
        !committed,
        "Y read y0, which the pivot replaced below Y's timestamp"
    );
    let h = rec.take();
    assert_eq!(omitted_writes(&h), 1);
    let report = check(&h, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
    // The pivot's timestamp, floor(e) + 6, is where O's read of z now reaches.
    let mut w = db.worker().unwrap();
    let mut t = w.begin();
    assert_eq!(t.read(T, Y).unwrap().map(num), Some(2));
    let ts = t.commit().unwrap();
    assert_eq!(ts.epoch, epoch);
    assert!(epoch_floor(epoch) > 0);
}

#[test]
fn extending_to_the_floor_only_is_caught_by_the_checker() {
    let (db, rec) = db_with::<TicTocHooks, NwrSingleWrite>(
        config().with_mutation(Mutation::Nwr(NwrMutation::ValidateReadsBeforePivot)),
    );
    let (committed, _) = extension_target_schedule(&db);
    assert!(
        committed,
        "Y commits at floor(e) + 1, where y0 is still valid"
    );
    let h = rec.take();
    assert_eq!(omitted_writes(&h), 1);
    let report = check(&h, CheckOptions::serializable());
    assert!(
        !report.is_serializable(),
        "O -rw(z)-> Y -rw(y)-> O must be found: {report}"
    );
}

/// TicToc+NWR's old-version hazard (`tests/nwr.rs`, `old_version_reader_schedule`) under this
/// rule: `r` read x0, whose `rts` another reader pushed into the epoch; `p` installs x's pivot
/// (blind, so unmarked); `o` reads y0 and blind-writes x: it is omitted here (no reader marks
/// anything), and sits just below the pivot, above every reader of x0. `w` installs y above `o`'s
/// extension of y0, `r` reads it and must then fail TicToc's own validation of x0. The history
/// checks.
#[test]
fn the_old_version_reader_is_ordered_before_the_omitter() {
    const X: u64 = 1;
    let (db, rec) = db_with::<TicTocHooks, NwrSingleWrite>(config());
    push_rts_into_the_epoch(&db, X, 10);
    let mut ws: Vec<_> = (0..4).map(|_| db.worker().unwrap()).collect();
    let [r, p, o, w] = &mut ws[..] else {
        unreachable!()
    };
    let mut tr = r.begin();
    assert_eq!(tr.read(T, X).unwrap().map(num), Some(10));
    assert!(!blind_write(p, X, 2), "x's pivot");
    let mut to = o.begin();
    assert_eq!(to.read(T, Y).unwrap().map(num), Some(20));
    to.write(T, X, &3u64.to_le_bytes()).unwrap();
    to.commit().unwrap();
    assert_eq!(counters(o)["nwr_commits_omitted"], 1, "o is omitted");
    assert!(!blind_write(w, Y, 4), "y's pivot");
    assert_eq!(tr.read(T, Y).unwrap().map(num), Some(4));
    assert!(tr.commit().is_err(), "r read x0, which p replaced");
    let h: History = rec.take();
    assert_eq!(omitted_writes(&h), 1);
    let report = check(&h, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}
