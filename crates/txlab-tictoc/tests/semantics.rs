//! TicToc's transaction semantics, driven step by step from one thread with several workers.
//!
//! Each schedule states what TicToc does and why, in terms of the timestamps it computes: a
//! loaded record has `wts = rts = 0`; a writer commits at `commit_ts = max(max wts read,
//! max rts + 1 written)`; a read whose `rts < commit_ts` must still have its `wts` and gets its
//! `rts` extended. Histories are checked with `CheckOptions::serializable()`: TicToc orders
//! transactions by `commit_ts`, which may differ from real-time order (the last test shows a
//! schedule that is serializable but not strictly serializable).

use std::sync::Arc;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::protocol::history::Recorder;
use txlab_core::{
    ConflictCause, Engine, Error, RetryPolicy, Schema, TableId, TableSpec, Transaction, TxError,
    TxOps, Worker, run,
};
use txlab_tictoc::{TicToc, TicTocConfig};

const T: TableId = TableId(0); // dense, 16 keys, 8-byte values
const H: TableId = TableId(1); // hash
const O: TableId = TableId(2); // ordered

fn db() -> TicToc {
    let mut s = Schema::new();
    s.add(TableSpec::dense("dense", 8, 16)).unwrap();
    s.add(TableSpec::hash("hash", 8)).unwrap();
    s.add(TableSpec::ordered("ordered", 8)).unwrap();
    let db = TicToc::builder()
        .config(TicTocConfig::manual())
        .build(&s)
        .unwrap();
    for k in 0..16 {
        db.load(T, k, &v(k * 10)).unwrap();
    }
    db
}

fn v(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

fn num(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap())
}

fn cause(e: TxError) -> ConflictCause {
    match e {
        TxError::Conflict(c) => c.cause,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[test]
fn committed_writes_are_visible_and_reads_see_own_writes() {
    let db = db();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 3).unwrap().map(num), Some(30));
    tx.write(T, 3, &v(31)).unwrap();
    assert_eq!(
        tx.read(T, 3).unwrap().map(num),
        Some(31),
        "read-your-writes"
    );
    assert!(
        tx.update(T, 4, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
            .unwrap()
    );
    let info = tx.commit().unwrap();
    assert!(info.acknowledged);
    assert!(!info.read_only);
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 3).unwrap().map(num), Some(31));
    assert_eq!(tx.read(T, 4).unwrap().map(num), Some(41));
    assert!(tx.commit().unwrap().read_only);
}

#[test]
fn aborted_and_dropped_transactions_leave_no_trace() {
    let db = db();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    tx.write(T, 1, &v(99)).unwrap();
    tx.abort();
    {
        let mut tx = w.begin();
        tx.write(T, 2, &v(99)).unwrap();
        // dropped here
    }
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 1).unwrap().map(num), Some(10));
    assert_eq!(tx.read(T, 2).unwrap().map(num), Some(20));
    tx.commit().unwrap();
}

#[test]
fn a_stale_read_fails_validation() {
    // T1 reads x (wts 0, rts 0); T2 writes x at commit_ts 1; T1 writes y (rts 0), so its
    // commit_ts is 1 > rts(x as read) = 0: validation finds x's wts changed and aborts T1. TicToc
    // cannot order T1 before T2 here because x's rts never covered T1's timestamp.
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.read(T, 0).unwrap();
    t2.write(T, 0, &v(1)).unwrap();
    t2.commit().unwrap();
    t1.write(T, 1, &v(1)).unwrap();
    assert_eq!(
        cause(t1.commit().unwrap_err()),
        ConflictCause::ReadValidation
    );
}

#[test]
fn lost_update_is_prevented() {
    // T1 commits x at ts 1; T2 locks x (rts 1), so commit_ts 2 > rts(x as read) = 0, and x's wts
    // changed: abort.
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.update(T, 5, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
        .unwrap();
    t2.update(T, 5, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
        .unwrap();
    t1.commit().unwrap();
    assert!(t2.commit().is_err());
    let mut t = w1.begin();
    assert_eq!(t.read(T, 5).unwrap().map(num), Some(51));
    t.commit().unwrap();
}

#[test]
fn write_skew_is_prevented() {
    // x + y >= 0 style: each reads both, writes one. Serializability forbids both committing.
    // T1 commits at 1 and extends rts(7) to 1; T2 locks 7 (rts 1), commit_ts 2 > rts(6 as read)
    // = 0 and 6's wts changed: T2 aborts.
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.read(T, 6).unwrap();
    t1.read(T, 7).unwrap();
    t2.read(T, 6).unwrap();
    t2.read(T, 7).unwrap();
    t1.write(T, 6, &v(0)).unwrap();
    t2.write(T, 7, &v(0)).unwrap();
    let r1 = t1.commit();
    let r2 = t2.commit();
    assert!(
        r1.is_ok() != r2.is_ok(),
        "exactly one of the two commits: {r1:?} {r2:?}"
    );
}

#[test]
fn blind_writes_do_not_conflict_with_each_other() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.write(T, 8, &v(1)).unwrap();
    t2.write(T, 8, &v(2)).unwrap();
    t1.commit().unwrap();
    t2.commit().unwrap(); // ts 1, then ts 2: the later locker gets the later timestamp
    let mut t = w1.begin();
    assert_eq!(
        t.read(T, 8).unwrap().map(num),
        Some(2),
        "last committer wins"
    );
    t.commit().unwrap();
}

#[test]
fn insert_and_delete_semantics() {
    let db = db();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    assert_eq!(tx.read(H, 7).unwrap(), None);
    assert!(tx.insert(H, 7, &v(70)).unwrap());
    assert!(
        !tx.insert(H, 7, &v(71)).unwrap(),
        "already present in this transaction"
    );
    assert_eq!(tx.read(H, 7).unwrap().map(num), Some(70));
    tx.commit().unwrap();

    let mut tx = w.begin();
    assert!(!tx.insert(H, 7, &v(72)).unwrap(), "present in the database");
    assert!(tx.delete(H, 7).unwrap());
    assert_eq!(tx.read(H, 7).unwrap(), None);
    assert!(!tx.delete(H, 7).unwrap());
    tx.commit().unwrap();

    let mut tx = w.begin();
    assert_eq!(tx.read(H, 7).unwrap(), None);
    assert!(!tx.delete(H, 7).unwrap());
    assert!(!tx.update(H, 7, &mut |_| {}).unwrap());
    assert!(tx.insert(H, 7, &v(73)).unwrap(), "re-insert after delete");
    tx.commit().unwrap();
    let mut tx = w.begin();
    assert_eq!(tx.read(H, 7).unwrap().map(num), Some(73));
    tx.commit().unwrap();
}

#[test]
fn concurrent_inserts_of_one_key_let_only_one_commit() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.insert(H, 100, &v(1)).unwrap());
    assert!(t2.insert(H, 100, &v(2)).unwrap());
    t1.commit().unwrap();
    assert!(t2.commit().is_err());
}

#[test]
fn a_read_of_a_missing_key_is_invalidated_by_a_later_insert() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert_eq!(t1.read(H, 55).unwrap(), None);
    assert!(t2.insert(H, 55, &v(1)).unwrap());
    t2.commit().unwrap();
    t1.write(T, 0, &v(0)).unwrap();
    assert_eq!(
        cause(t1.commit().unwrap_err()),
        ConflictCause::ReadValidation
    );
}

#[test]
fn scans_see_present_keys_in_order_with_own_writes_overlaid() {
    let db = db();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    for k in [10u64, 20, 30, 40] {
        tx.insert(O, k, &v(k)).unwrap();
    }
    tx.commit().unwrap();
    let mut tx = w.begin();
    tx.delete(O, 20).unwrap();
    tx.insert(O, 25, &v(250)).unwrap();
    tx.write(O, 30, &v(300)).unwrap();
    let mut seen = Vec::new();
    tx.scan(O, 15, 40, &mut |k, val| {
        seen.push((k, num(val)));
        true
    })
    .unwrap();
    assert_eq!(seen, vec![(25, 250), (30, 300), (40, 40)]);
    let mut first = Vec::new();
    tx.scan(O, 0, u64::MAX, &mut |k, _| {
        first.push(k);
        false
    })
    .unwrap();
    assert_eq!(first, vec![10], "the visitor stops the scan");
    tx.commit().unwrap();
}

#[test]
fn a_phantom_insert_aborts_the_scanner_but_its_own_insert_does_not() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    let mut n = 0;
    t1.scan(O, 1000, 2000, &mut |_, _| {
        n += 1;
        true
    })
    .unwrap();
    assert_eq!(n, 0);
    t2.insert(O, 1500, &v(1)).unwrap();
    t2.commit().unwrap();
    t1.write(T, 0, &v(0)).unwrap();
    assert_eq!(
        cause(t1.commit().unwrap_err()),
        ConflictCause::PhantomValidation
    );

    let mut t3 = w1.begin();
    t3.scan(O, 3000, 4000, &mut |_, _| true).unwrap();
    assert!(t3.insert(O, 3500, &v(2)).unwrap());
    t3.commit()
        .expect("its own insert must not invalidate its own scan");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let db = db();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    let e = tx.read(TableId(9), 0).unwrap_err();
    assert_eq!(e, TxError::Error(Error::UnknownTable { id: 9, count: 3 }));
    let e = tx.read(T, 16).unwrap_err();
    assert!(e.to_string().contains("key 16 is out of range"), "{e}");
    let e = tx.write(T, 1, &[1, 2, 3]).unwrap_err();
    assert!(
        e.to_string().contains("3 bytes") && e.to_string().contains("8 bytes"),
        "{e}"
    );
    let e = tx.scan(H, 0, 10, &mut |_, _| true).unwrap_err();
    assert!(e.to_string().contains("range scans"), "{e}");
    assert!(!e.is_retryable());
    tx.abort();
    assert!(db.load(T, 100, &v(0)).is_err());
    assert!(db.load(T, 1, &[0; 3]).is_err());
}

#[test]
fn run_retries_conflicts_and_stops_on_user_abort() {
    let db = db();
    let mut w = db.worker().unwrap();
    let mut other = db.worker().unwrap();
    let mut calls = 0;
    let done = run(&mut w, RetryPolicy::no_backoff(), |tx| {
        calls += 1;
        let x = num(tx.read(T, 9)?.unwrap());
        if calls == 1 {
            // Another transaction changes what we read before we commit: a conflict.
            let mut t = other.begin();
            t.write(T, 9, &v(x + 100))?;
            t.commit()?;
        }
        tx.write(T, 10, &v(x))?;
        Ok(x)
    })
    .unwrap();
    assert_eq!(calls, 2);
    assert_eq!(done.attempts, 2);
    assert_eq!(done.value, 190);

    let r: Result<_, _> = run(&mut w, RetryPolicy::default(), |tx| {
        tx.write(T, 11, &v(0))?;
        Err::<(), _>(TxError::user_abort("changed my mind"))
    });
    assert_eq!(r.unwrap_err(), TxError::user_abort("changed my mind"));
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 11).unwrap().map(num), Some(110));
    tx.commit().unwrap();
}

#[test]
fn group_commit_acknowledges_only_once_the_epoch_is_stable() {
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 4)).unwrap();
    let cfg = TicTocConfig::manual().with_ack(txlab_core::AckMode::EpochStable);
    let db = TicToc::builder().config(cfg).build(&s).unwrap();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    tx.write(T, 0, &v(1)).unwrap();
    let info = tx.commit().unwrap();
    assert!(!info.acknowledged);
    assert!(
        db.stable_epoch() < info.epoch,
        "not stable before the epoch advances"
    );
    db.epochs().advance();
    assert!(db.stable_epoch() >= info.epoch);
}

fn recorded_db() -> (TicToc<MemoryRecorder>, Arc<MemoryRecorder>) {
    let mut s = Schema::new();
    s.add(TableSpec::dense("dense", 8, 16)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = TicToc::builder()
        .config(TicTocConfig::manual())
        .recorder(rec.clone())
        .build(&s)
        .unwrap();
    for k in 0..16 {
        db.load(T, k, &v(k * 10)).unwrap();
    }
    (db, rec)
}

/// Commits `n` blind writes of `key` one after the other: its `wts` (and `rts`) becomes `n`.
fn bump_wts<W: Worker>(w: &mut W, key: u64, n: u64) {
    for i in 0..n {
        let mut tx = w.begin();
        tx.write(T, key, &v(1000 + i)).unwrap();
        tx.commit().unwrap();
    }
}

#[test]
fn a_reader_of_an_overwritten_version_commits_by_being_ordered_before_the_writer() {
    // Silo aborts T1 in both schedules below (its read of x changed before commit). TicToc commits
    // it: x was written once before (wts = rts = 1), so T1 reads x valid over [1, 1]; T2
    // overwrites x at commit_ts 2; T1's commit_ts is max(wts read = 1, rts(y) + 1 = 1) = 1 <= the
    // rts it read, so T1 needs no validation and is serialized at 1, before T2 at 2.
    let (db, rec) = recorded_db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    bump_wts(&mut w1, 0, 1);

    // T1 writes a key nobody read.
    let mut t1 = w1.begin();
    assert_eq!(t1.read(T, 0).unwrap().map(num), Some(1000));
    let mut t2 = w2.begin();
    t2.write(T, 0, &v(7)).unwrap();
    t2.commit().unwrap();
    t1.write(T, 1, &v(1000)).unwrap();
    t1.commit()
        .expect("TicToc orders T1 before T2 instead of aborting it");

    // Read-only T1'.
    let mut t1 = w1.begin();
    assert_eq!(t1.read(T, 0).unwrap().map(num), Some(7));
    let mut t2 = w2.begin();
    t2.write(T, 0, &v(8)).unwrap();
    t2.commit().unwrap();
    assert!(t1.commit().expect("read-only T1' commits").read_only);

    let mut t = w1.begin();
    assert_eq!(t.read(T, 0).unwrap().map(num), Some(8));
    assert_eq!(t.read(T, 1).unwrap().map(num), Some(1000));
    t.commit().unwrap();

    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
    assert_eq!(report.aborted, 0, "{report}");
}

#[test]
fn an_rts_extension_pushes_a_later_writer_past_the_reader() {
    // x = key 2 gets wts 3. T3 reads y = key 3 (wts 0, rts 0) and x (wts 3) and writes key 4:
    // commit_ts = max(3, rts(key 4) + 1 = 1) = 3 > rts(y) = 0, so validation extends y's rts to 3.
    // A later writer of y must then commit above 3, so a reader of y's old version at timestamp 3
    // stays valid and commits without validation even though y was overwritten meanwhile.
    let (db, rec) = recorded_db();
    let mut w = db.worker().unwrap();
    bump_wts(&mut w, 2, 3);
    let mut t3 = w.begin();
    t3.read(T, 3).unwrap();
    t3.read(T, 2).unwrap();
    t3.write(T, 4, &v(0)).unwrap();
    t3.commit().unwrap();
    let mut w2 = db.worker().unwrap();
    let mut reader = w2.begin();
    reader.read(T, 3).unwrap();
    reader.read(T, 2).unwrap(); // wts 3: reader's commit_ts is 3
    let mut writer = w.begin();
    writer.write(T, 3, &v(33)).unwrap();
    writer.commit().unwrap();
    reader
        .commit()
        .expect("the reader's timestamp 3 is covered by the extended rts of key 3");
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}

#[test]
fn tictoc_is_serializable_but_not_strictly_serializable() {
    // Setup: key 9 (w) gets rts 10 through a read-only transaction at timestamp 10.
    // Tc reads w (wts 0, rts 10). Ta overwrites w at commit_ts 11 and finishes. Tb begins after Ta
    // finished, reads y (key 5, wts 0) and commits read-only at 0. Tc then writes y: commit_ts =
    // max(0, rts(y) + 1) = 1 <= 10, so its read of w needs no validation and it commits at 1.
    // Serial order by timestamp: Tb (0), Tc (1), Ta (11): serializable. But Ta finished before Tb
    // began, and Tb -> Tc -> Ta in the serial order: a real-time cycle, so not strictly
    // serializable.
    let (db, rec) = recorded_db();
    let (mut wa, mut wb, mut wc) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    bump_wts(&mut wa, 8, 10);
    let mut t = wa.begin();
    t.read(T, 8).unwrap();
    t.read(T, 9).unwrap();
    t.commit().unwrap();

    let mut tc = wc.begin();
    tc.read(T, 9).unwrap();
    let mut ta = wa.begin();
    ta.write(T, 9, &v(99)).unwrap();
    ta.commit().unwrap();
    // Make Tb's begin instant strictly later than Ta's end on the recorder's clock.
    let ta_done = rec.now_ns();
    while rec.now_ns() <= ta_done {
        std::hint::spin_loop();
    }
    let mut tb = wb.begin();
    assert_eq!(tb.read(T, 5).unwrap().map(num), Some(50));
    tb.commit().unwrap();
    tc.write(T, 5, &v(55)).unwrap();
    tc.commit()
        .expect("Tc commits at timestamp 1, before Ta's 11");

    let history = rec.take();
    let report = check(&history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
    let strict = check(&history, CheckOptions::strict());
    assert!(
        !strict.is_serializable(),
        "expected a real-time anomaly: {strict}"
    );
}

#[test]
fn history_tags_are_install_timestamps_and_strictly_increase_per_key() {
    let (db, rec) = recorded_db();
    let mut w = db.worker().unwrap();
    bump_wts(&mut w, 0, 3);
    let mut t = w.begin();
    t.read(T, 0).unwrap();
    t.commit().unwrap();
    let history = rec.take();
    let tags: Vec<u64> = history
        .records()
        .iter()
        .flat_map(|r| r.writes.iter().map(|w| w.version))
        .collect();
    assert_eq!(tags, vec![1, 2, 3]);
    let last = history.records().last().unwrap();
    assert_eq!(
        last.reads[0].version, 3,
        "the reader saw the version tagged 3"
    );
}

#[test]
fn the_engine_is_named_tictoc() {
    let db = db();
    assert_eq!(db.name(), "tictoc");
    assert!(db.worker().is_ok());
}

#[test]
fn a_delta_overflow_shifts_wts_but_keeps_the_history_tag() {
    // Key 1 reaches wts 40_000 (> MAX_DELTA = 32_767 above key 2's wts 0). A reader of both
    // commits at 40_000 and must extend key 2's rts that far: key 2's wts moves to
    // 40_000 - 32_767 (paper §3.6). Readers must still name the version by the tag it was
    // installed with (0), and a transaction that read key 2 before the shift fails its wts
    // comparison if it needs an extension (a false abort, never a wrong commit).
    let (db, rec) = recorded_db();
    let (mut w, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let far = 40_000u64;
    assert!(far > txlab_tictoc::__layout::MAX_DELTA);
    for i in 0..far {
        let mut tx = w.begin();
        tx.write(T, 1, &v(i)).unwrap();
        tx.commit().unwrap();
    }
    let mut early = w2.begin();
    early.read(T, 2).unwrap(); // wts 0, rts 0, before the shift
    let mut t = w.begin();
    t.read(T, 1).unwrap();
    t.read(T, 2).unwrap();
    t.commit().unwrap(); // commit_ts 40_000: extends key 2, shifting its wts
    early.write(T, 3, &v(0)).unwrap(); // commit_ts 1 > rts 0 read: must re-validate key 2
    assert_eq!(
        cause(early.commit().unwrap_err()),
        ConflictCause::ReadValidation,
        "the shifted wts no longer matches what the early reader saw"
    );
    let mut late = w.begin();
    assert_eq!(late.read(T, 2).unwrap().map(num), Some(20));
    late.write(T, 2, &v(21)).unwrap();
    late.commit().unwrap(); // commit_ts 40_001
    let history = rec.take();
    let last = history
        .records()
        .iter()
        .find(|r| r.writes.iter().any(|w| w.key == 2))
        .expect("the late writer of key 2 was recorded");
    assert_eq!(
        last.reads[0].version, 0,
        "the shifted version is still the loaded one"
    );
    assert_eq!(last.writes[0].version, far + 1);
    let report = check(&history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}

/// A recorded database with one ordered table (table 0, 8-byte values) holding key 0 = 0.
fn recorded_ordered_db() -> (TicToc<MemoryRecorder>, Arc<MemoryRecorder>) {
    let mut s = Schema::new();
    s.add(TableSpec::ordered("ordered", 8)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = TicToc::builder()
        .config(TicTocConfig::manual())
        .recorder(rec.clone())
        .build(&s)
        .unwrap();
    db.load(TableId(0), 0, &v(0)).unwrap();
    (db, rec)
}

#[test]
fn a_key_created_after_a_scan_cannot_be_ordered_before_the_scanner() {
    // The minimal schedule the random-schedule kit found (`TXLAB_SEED=1
    // TXLAB_PROPTEST_CASES=20000 cargo test -p txlab-tictoc --test kit random`, shrunk by hand),
    // on an ordered table where keys 0 and 1 share a phantom stripe:
    //
    //   setup  write k0                          k0: wts = rts = 1
    //   A      read k0                           (wts 1, rts 1)
    //   B      scan 0..=1 (sees k0 only), write k0, commit at rts(k0) + 1 = 2
    //   A      insert k1, commit
    //
    // A must be ordered before B (B overwrote the k0 A read) and after B (B's scan missed k1,
    // which A creates). Before stripes were timestamped, A committed at max(wts read = 1,
    // rts(k1) + 1 = 1) = 1 without validating anything (its read's rts already reached 1; B's
    // stripe check had passed before A linked k1), and the checker found the cycle
    // A -rw(k0)-> B -rw(k1)-> A. Now B's validation raises the stripe's scan_rts to 2, A's
    // creation of k1 must commit above it (at 3), and at 3 A's read of k0 is no longer valid
    // (B replaced that version at 2): A aborts.
    const O: TableId = TableId(0);
    let (db, rec) = recorded_ordered_db();
    let (mut wa, mut wb) = (db.worker().unwrap(), db.worker().unwrap());
    let mut setup = wb.begin();
    setup.write(O, 0, &v(1)).unwrap();
    setup.commit().unwrap();

    let mut a = wa.begin();
    assert_eq!(a.read(O, 0).unwrap().map(num), Some(1));
    let mut b = wb.begin();
    let mut seen = Vec::new();
    b.scan(O, 0, 1, &mut |k, _| {
        seen.push(k);
        true
    })
    .unwrap();
    assert_eq!(seen, vec![0], "k1 does not exist yet");
    b.write(O, 0, &v(2)).unwrap();
    b.commit().unwrap();
    assert!(a.insert(O, 1, &v(10)).unwrap());
    let outcome = a.commit();
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
    assert_eq!(
        cause(outcome.unwrap_err()),
        ConflictCause::ReadValidation,
        "A's creation of k1 is pushed above B's scan, where its read of k0 is stale"
    );
}

#[test]
fn a_creator_commits_above_every_scan_that_missed_its_key() {
    // B scans 0..=1 and commits at 5 (it read k0 at wts 5). A, which read nothing, then creates
    // k1 in the same stripe: TicToc alone would give it timestamp rts(k1) + 1 = 1, before B,
    // whose scan did not see k1. The stripe's scan_rts (5) pushes A to 6, after B. A creator in
    // a stripe nobody scanned is not pushed.
    const O: TableId = TableId(0);
    let (db, rec) = recorded_ordered_db();
    let (mut wa, mut wb) = (db.worker().unwrap(), db.worker().unwrap());
    for i in 0..5 {
        let mut tx = wb.begin();
        tx.write(O, 0, &v(i)).unwrap();
        tx.commit().unwrap();
    }
    let mut b = wb.begin();
    b.scan(O, 0, 1, &mut |_, _| true).unwrap();
    b.commit().unwrap();
    let mut a = wa.begin();
    assert!(a.insert(O, 1, &v(10)).unwrap());
    a.commit().unwrap();
    let mut far = wa.begin();
    assert!(far.insert(O, 1 << 20, &v(11)).unwrap());
    far.commit().unwrap();
    let history = rec.take();
    let version_of = |key: u64| {
        history
            .records()
            .iter()
            .flat_map(|r| r.writes.iter())
            .find(|w| w.key == key)
            .map(|w| w.version)
    };
    assert_eq!(
        version_of(1),
        Some(6),
        "k1 is created after B's timestamp 5"
    );
    assert_eq!(
        version_of(1 << 20),
        Some(1),
        "a creation in an unscanned stripe keeps TicToc's own timestamp"
    );
    let report = check(&history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}
