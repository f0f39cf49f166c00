//! Deterministic schedules for the non-visible write rule (NWR), one body for every NWR engine.
//!
//! The NWR engines (Silo+NWR, TicToc+NWR, MVTO+NWR) share the rule (`txlab_nwr::rule`) and so
//! share its corner cases; each engine's kit runs these bodies through its [`Protocol`] (built
//! with manual epochs and group commit, so the whole schedule runs in one epoch).

use crate::{Protocol, check_options};
use std::collections::HashMap;
use std::sync::Arc;
use txlab_check::{History, MemoryRecorder, check};
use txlab_core::protocol::history::Outcome;
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};
use txlab_nwr::PivotWord;
use txlab_nwr::pivot::PIVOT_BASE;

const T: TableId = TableId(0);

fn v(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

fn omitted_commits(w: &mut impl Worker) -> u64 {
    counter(w, "nwr_commits_omitted")
}

/// Drains `w`'s counters and returns `name`'s (0 if the engine does not report it).
fn counter(w: &mut impl Worker, name: &str) -> u64 {
    counters(w).get(name).copied().unwrap_or(0)
}

/// Drains `w`'s counters (the NWR engines' `nwr_*` statistics among them).
pub fn counters(w: &mut impl Worker) -> HashMap<&'static str, u64> {
    let mut m: HashMap<&'static str, u64> = HashMap::new();
    w.drain_counters(&mut |n, d| *m.entry(n).or_insert(0) += d);
    m
}

/// The omitted writes of a history: committed writes recorded as not visible (NWR's omissions).
pub fn omitted_writes(history: &History) -> usize {
    history
        .records()
        .iter()
        .filter(|r| r.outcome == Outcome::Committed)
        .flat_map(|r| r.writes.iter())
        .filter(|w| !w.visible)
        .count()
}

/// The scan-miss rule (`docs/protocols/nwr.md`, rule step 5): a scan that finds a key absent
/// leaves nothing in that key's merged read set, so the epoch's first version of a key that was
/// absent must count as a pre-epoch read of it.
///
/// Serial schedule in one epoch over an ordered table where k0 and k2 exist and k1 has no record:
/// T0 writes k2 and scans k0..=k1 (seeing k1 missing); T1 writes k1 (its first version, the
/// pivot); T2 blind-writes k1 and k2. Omitting both of T2's writes would order its write of k1
/// before T0's scan (T2 -rw-> T0) and after T0's write of k2 (T0 -ww-> T2): a G-single cycle.
/// So T2 must commit visibly; the history must check.
pub fn scan_miss_blocks_omission<P: Protocol>() {
    let mut schema = Schema::new();
    schema.add(TableSpec::ordered("t", 8)).expect("valid table");
    let recorder = Arc::new(MemoryRecorder::new());
    let db = P::build(&schema, recorder.clone()).expect("engine builds");
    // k2 exists before the epoch, so T0's write of k2 is not itself a first write over an
    // absent key: only the scan miss on k1 can stop T2's omission.
    db.load(T, 0, &v(0)).expect("load k0");
    db.load(T, 2, &v(0)).expect("load k2");
    let (mut w0, mut w1, mut w2) = (
        db.worker().expect("worker"),
        db.worker().expect("worker"),
        db.worker().expect("worker"),
    );

    let mut t0 = w0.begin();
    t0.write(T, 2, &v(1000)).expect("T0 writes k2");
    let mut seen = Vec::new();
    t0.scan(T, 0, 1, &mut |k, _| {
        seen.push(k);
        true
    })
    .expect("T0 scans");
    assert_eq!(seen, [0], "{}: k1 has no record when T0 scans", P::NAME);
    t0.commit().expect("T0 commits");

    let mut t1 = w1.begin();
    t1.write(T, 1, &v(1100)).expect("T1 writes k1");
    t1.commit().expect("T1 commits");
    assert_eq!(
        omitted_commits(&mut w1),
        0,
        "{}: k1's first version is installed",
        P::NAME
    );

    let mut t2 = w2.begin();
    t2.write(T, 1, &v(1200)).expect("T2 writes k1");
    t2.write(T, 2, &v(1201)).expect("T2 writes k2");
    t2.commit().expect("T2 commits (NWR never aborts)");
    assert_eq!(
        omitted_commits(&mut w2),
        0,
        "{}: T2's write of k1 would be ordered before T0's scan that saw k1 missing",
        P::NAME
    );

    let mut t3 = w0.begin();
    let k1 = t3.read(T, 1).expect("read k1").map(|b| b.to_vec());
    t3.commit().expect("T3 commits");
    assert_eq!(
        k1.as_deref(),
        Some(&v(1200)[..]),
        "{}: T2's k1 is visible",
        P::NAME
    );

    let history = recorder.take();
    assert!(
        history.records().iter().any(|r| !r.scans.is_empty()),
        "{}: T0's scan is in the history",
        P::NAME
    );
    assert_eq!(omitted_writes(&history), 0, "{}", P::NAME);
    let report = check(&history, check_options::<P>());
    assert!(report.is_serializable(), "{}: {report}", P::NAME);
}

/// A dense table `t` of keys `0..8`, key `k` loaded with `10 k` (all versions pre-epoch).
fn loaded<P: Protocol>() -> (P::Engine, Arc<MemoryRecorder>) {
    loaded_keys::<P>(8)
}

/// A dense table `t` of keys `0..keys`, key `k` loaded with `10 k`.
fn loaded_keys<P: Protocol>(keys: u64) -> (P::Engine, Arc<MemoryRecorder>) {
    loaded_table::<P>(TableSpec::dense("t", 8, keys), keys)
}

/// The one table `spec` (as `T`), keys `0..keys` loaded with `10 k`.
fn loaded_table<P: Protocol>(spec: TableSpec, keys: u64) -> (P::Engine, Arc<MemoryRecorder>) {
    let mut schema = Schema::new();
    schema.add(spec).expect("valid table");
    let recorder = Arc::new(MemoryRecorder::new());
    let db = P::build(&schema, recorder.clone()).expect("engine builds");
    for k in 0..keys {
        db.load(T, k, &v(10 * k)).expect("load");
    }
    (db, recorder)
}

fn read_value(tx: &mut impl TxOps, key: u64) -> u64 {
    let got = tx.read(T, key).expect("read").expect("loaded key");
    u64::from_le_bytes(got.try_into().expect("8-byte value"))
}

/// Blind-writes `value` to `key` of table 0 in a transaction of its own (which must commit) and
/// returns whether the write was omitted (`nwr_commits_omitted`).
pub fn blind_write_omitted(w: &mut impl Worker, key: u64, value: u64) -> bool {
    blind_write_counters(w, key, value).get("nwr_commits_omitted") == Some(&1)
}

/// On `w`: installs `key`'s pivot (value 1, never omitted), blind-writes 2 and asserts whether
/// that write was `omitted` (`why` explains the expectation), then reads `key` on `w` (MVTO's
/// per-worker clocks make another worker's read older) and asserts the visible value: the
/// pivot's if the write was omitted, else the write's.
fn assert_pivot_then_blind_write<P: Protocol>(
    w: &mut impl Worker,
    key: u64,
    omitted: bool,
    why: &str,
) {
    assert!(!blind_write_omitted(w, key, 1), "{}: the pivot", P::NAME);
    assert_eq!(
        blind_write_omitted(w, key, 2),
        omitted,
        "{}: {why}",
        P::NAME
    );
    let mut t = w.begin();
    let visible = if omitted { 1 } else { 2 };
    assert_eq!(read_value(&mut t, key), visible, "{}: {why}", P::NAME);
    t.commit().expect("read-only commits");
}

fn assert_checks<P: Protocol>(recorder: &MemoryRecorder, omitted: usize) {
    let history = recorder.take();
    assert_eq!(omitted_writes(&history), omitted, "{}", P::NAME);
    let report = check(&history, check_options::<P>());
    assert!(report.is_serializable(), "{}: {report}", P::NAME);
}

/// Which pre-epoch reads leave a mark in mRS (`txlab_nwr::rule::is_pre_epoch_reader`), in one
/// epoch, over keys x = 1, y = 2, z = 3 loaded before it:
///
/// 1. A *writing* transaction reads x (pre-epoch) and writes z. Its read is merged into x's mRS:
///    after the epoch's first write of x (the pivot) is installed, a blind write of x cannot be
///    ordered before it (it would sit after the reader's version of x yet before the reader,
///    which is serialized in the epoch) and is installed by the baseline (`nwr_fail_mrs`).
/// 2. A *read-only* transaction that read only pre-epoch versions (x) leaves no mark
///    (`nwr_unmarked_readers`): it is serialized at the start of the epoch, before every omitter,
///    so the later blind write of x is omitted.
/// 3. A read-only reader of x and y whose commit comes *after* the pivot was installed and the
///    omission happened: each engine decides by its own validation (Silo aborts it, its x
///    changed; TicToc and MVTO may commit it at its old timestamp), and the history must check.
///
/// 4. A read-only transaction that read a version of *this* epoch (y, from the installer `t_p`)
///    and the pre-epoch x must mark x: it follows `t_p`, so an omitter of x and y would close
///    `t_j -ww(y)-> t_p -wr(y)-> t_r -rw(x)-> t_j`. `t_j` must be installed.
///
/// Every history is checked; the omitted write is never read.
pub fn pre_epoch_readers_and_marks<P: Protocol>() {
    const X: u64 = 1;
    const Y: u64 = 2;
    const Z: u64 = 3;

    // 1: the writer's pre-epoch read blocks the omission.
    let (db, recorder) = loaded::<P>();
    let (mut r, mut w) = (db.worker().expect("worker"), db.worker().expect("worker"));
    let mut t = r.begin();
    assert_eq!(read_value(&mut t, X), 10);
    t.write(T, Z, &v(5)).expect("write z");
    t.commit().expect("reader-writer commits");
    assert_eq!(counter(&mut r, "nwr_unmarked_readers"), 0, "{}", P::NAME);
    assert_pivot_then_blind_write::<P>(
        &mut w,
        X,
        false,
        "a reader-writer of the epoch read x's older version",
    );
    assert_checks::<P>(&recorder, 0);

    // 2: a read-only pre-epoch reader leaves no mark.
    let (db, recorder) = loaded::<P>();
    let (mut r, mut w) = (db.worker().expect("worker"), db.worker().expect("worker"));
    let mut t = r.begin();
    assert_eq!(read_value(&mut t, X), 10);
    assert_eq!(read_value(&mut t, Y), 20);
    t.commit().expect("read-only commits");
    assert_eq!(counter(&mut r, "nwr_unmarked_readers"), 1, "{}", P::NAME);
    assert_pivot_then_blind_write::<P>(
        &mut w,
        X,
        true,
        "the read-only reader sits before the epoch's omitters",
    );
    assert_checks::<P>(&recorder, 1);

    // 3: a read-only reader of the older x that commits after the omission.
    let (db, recorder) = loaded::<P>();
    let (mut r, mut w) = (db.worker().expect("worker"), db.worker().expect("worker"));
    let mut t = r.begin();
    assert_eq!(read_value(&mut t, X), 10);
    assert_eq!(read_value(&mut t, Y), 20);
    assert!(!blind_write_omitted(&mut w, X, 1), "{}: the pivot", P::NAME);
    assert!(blind_write_omitted(&mut w, X, 2), "{}: omitted", P::NAME);
    match t.commit() {
        Ok(_) => {}
        Err(e) => assert!(e.is_retryable(), "{}: {e}", P::NAME),
    }
    assert_checks::<P>(&recorder, 1);

    // 4: a read-only reader of this epoch's y and the older x marks x. One worker runs the
    // whole schedule, so MVTO's timestamps follow it.
    let (db, recorder) = loaded::<P>();
    let mut w = db.worker().expect("worker");
    assert!(!blind_write_omitted(&mut w, Y, 1), "{}: y's pivot", P::NAME);
    let mut t = w.begin();
    assert_eq!(read_value(&mut t, Y), 1, "{}: y's pivot", P::NAME);
    assert_eq!(read_value(&mut t, X), 10);
    t.commit().expect("read-only commits");
    assert_eq!(counter(&mut w, "nwr_unmarked_readers"), 0, "{}", P::NAME);
    assert!(!blind_write_omitted(&mut w, X, 1), "{}: x's pivot", P::NAME);
    let mut t = w.begin();
    t.write(T, X, &v(2)).expect("blind write x");
    t.write(T, Y, &v(2)).expect("blind write y");
    t.commit().expect("NWR never aborts");
    assert_eq!(
        counter(&mut w, "nwr_commits_omitted"),
        0,
        "{}: x's older version was read by a reader that follows y's pivot",
        P::NAME
    );
    assert_checks::<P>(&recorder, 0);
}

/// The rule on every built-in index kind (the pivot objects of Silo+NWR and TicToc+NWR live
/// beside the records, `txlab_storage::Companions`: an array for dense tables, a map filled on
/// first use for the others). One epoch over a table `t` of keys `0..5`, loaded before it, for
/// each of a dense, a hash and an ordered table:
///
/// 1. key 1 gets its pivot, then a blind write of key 1 is omitted and the pivot stays visible;
/// 2. keys 0 and 3 get pivots, then one transaction blind-writes both and is omitted (two objects
///    of one transaction);
/// 3. a writer reads key 2 (pre-epoch) and writes key 4 (no pivot, so installed); after key 2's
///    pivot a blind write of key 2 is not omitted (the writer's read mark).
///
/// The history of each table has exactly the three omitted writes and checks. Each key's pivot
/// object, as `pivot_word` reports it, shows exactly the omissions of that key: keys 0, 1 and 3
/// one each (the pivot counter one below its base, in the epoch of the omissions), key 2 none.
/// So neither keys sharing one object nor a lookup finding a fresh object each time passes.
pub fn omits_on_every_index_kind<P: Protocol>(
    pivot_word: impl Fn(&P::Engine, TableId, u64) -> Option<PivotWord>,
) {
    let kinds = [
        TableSpec::dense("t", 8, 5),
        TableSpec::hash("t", 8),
        TableSpec::ordered("t", 8),
    ];
    for spec in kinds {
        let kind = spec.index.name();
        let (db, recorder) = loaded_table::<P>(spec, 5);
        let (mut r, mut w) = (db.worker().expect("worker"), db.worker().expect("worker"));

        assert_pivot_then_blind_write::<P>(&mut w, 1, true, &format!("{kind}: key 1"));

        assert!(
            !blind_write_omitted(&mut w, 0, 1),
            "{}: {kind}: pivot 0",
            P::NAME
        );
        assert!(
            !blind_write_omitted(&mut w, 3, 1),
            "{}: {kind}: pivot 3",
            P::NAME
        );
        let mut t = w.begin();
        t.write(T, 0, &v(2)).expect("blind write 0");
        t.write(T, 3, &v(2)).expect("blind write 3");
        t.commit().expect("NWR never aborts");
        assert_eq!(
            omitted_commits(&mut w),
            1,
            "{}: {kind}: both writes follow their pivots",
            P::NAME
        );

        let mut t = r.begin();
        assert_eq!(read_value(&mut t, 2), 20, "{}: {kind}", P::NAME);
        t.write(T, 4, &v(5)).expect("write 4");
        t.commit().expect("reader-writer commits");
        assert_eq!(
            omitted_commits(&mut r),
            0,
            "{}: {kind}: key 4 has no pivot",
            P::NAME
        );
        assert_pivot_then_blind_write::<P>(
            &mut w,
            2,
            false,
            &format!("{kind}: a reader-writer of the epoch read key 2's older version"),
        );
        assert_checks::<P>(&recorder, 3);

        let word = |k| pivot_word(&db, T, k).expect("an NWR engine keeps pivot objects");
        let epoch = word(1).epoch;
        for k in [0, 1, 3] {
            let w = word(k);
            assert_eq!(
                (w.epoch, w.pivot),
                (epoch, PIVOT_BASE - 1),
                "{}: {kind}: key {k}'s object shows its one omission",
                P::NAME
            );
        }
        assert_eq!(
            word(2).in_epoch(epoch).pivot,
            PIVOT_BASE,
            "{}: {kind}: nothing of key 2 was omitted",
            P::NAME
        );
    }
}

/// How a test reaches into an NWR engine around retirement
/// ([`omits_after_retire_and_reinsert`]), as closures (the accessors are inherent methods).
#[expect(missing_debug_implementations, reason = "a bundle of closures")]
pub struct NwrRetireProbe<'a, E> {
    /// Advances the global epoch by hand; whether it moved.
    pub advance: &'a dyn Fn(&E) -> bool,
    /// Whether the table's index still maps the key.
    pub is_mapped: &'a dyn Fn(&E, TableId, u64) -> bool,
    /// The key's pivot object as it stands (publishes a fresh one for a key that has none).
    pub pivot_word: &'a dyn Fn(&E, TableId, u64) -> Option<PivotWord>,
}

/// Omission across a key's retirement, on a hash and an ordered table (the tables whose deleted
/// records are unlinked, and whose pivot objects live in a hash companion that drops a retired
/// key's object). Key 3:
///
/// 1. epoch `e1`: its pivot is installed and a blind write is omitted (its object shows one
///    omission in `e1`);
/// 2. it is deleted, and two epochs later unlinked (`is_mapped` turns false); its object is gone
///    too (the lookup publishes a fresh one, of no epoch);
/// 3. it is inserted again, in a new record; in that epoch a blind write is *not* omitted (the
///    insert replaced an absent state, the scan-miss mark, rule step 5);
/// 4. next epoch: pivot, then a blind write that is omitted, shown by the fresh object alone.
///
/// The history (two omitted writes) is checked. MVTO retires a tombstone only below its GC
/// horizon: build its engine with the horizon recomputed at every writing commit.
pub fn omits_after_retire_and_reinsert<P: Protocol>(probe: &NwrRetireProbe<'_, P::Engine>) {
    const K: u64 = 3;
    const TICK: u64 = 4;
    for spec in [TableSpec::hash("t", 8), TableSpec::ordered("t", 8)] {
        let kind = spec.index.name();
        let (db, recorder) = loaded_table::<P>(spec, 5);
        let mut w = db.worker().expect("worker");
        let word = |k| (probe.pivot_word)(&db, T, k).expect("an NWR engine keeps pivot objects");

        assert_pivot_then_blind_write::<P>(&mut w, K, true, &format!("{kind}: before the delete"));
        let e1 = word(K).epoch;
        assert_eq!(word(K).pivot, PIVOT_BASE - 1, "{}: {kind}", P::NAME);

        crate::retire::delete(&mut w, T, K);
        for _ in 0..2 {
            assert!((probe.advance)(&db), "{}: the epoch advances", P::NAME);
            // A writing commit (never omitted: it reads what it writes) lets the worker work on
            // its retire queue at begin; MVTO also moves its GC horizon at writing commits.
            let mut t = w.begin();
            let x = read_value(&mut t, TICK);
            t.write(T, TICK, &v(x + 1)).expect("read-modify-write");
            t.commit().expect("a read-modify-write commits");
        }
        assert!(
            !(probe.is_mapped)(&db, T, K),
            "{}: {kind}: two epochs after its delete the record is unlinked",
            P::NAME
        );
        let fresh = word(K);
        assert!(
            fresh.epoch != e1 && fresh.pivot == PIVOT_BASE,
            "{}: {kind}: the retired key's object went with its record: {fresh:?}",
            P::NAME
        );

        crate::retire::insert(&mut w, T, K, 30);
        assert!(
            !blind_write_omitted(&mut w, K, 31),
            "{}: {kind}: the insert over an absent key marks it for its epoch",
            P::NAME
        );
        assert!((probe.advance)(&db), "{}: the epoch advances", P::NAME);
        assert_pivot_then_blind_write::<P>(&mut w, K, true, &format!("{kind}: after reinsert"));
        let now = word(K);
        assert!(
            now.epoch > e1 && now.pivot == PIVOT_BASE - 1,
            "{}: {kind}: the new record's object shows its one omission: {now:?}",
            P::NAME
        );
        assert_checks::<P>(&recorder, 2);
    }
}

/// The marks of the single-write rule (`txlab_nwr::NwrSingleWrite`, `docs/protocols/nwr.md`,
/// "A rule with fewer read marks"), in one epoch over keys x = 1, y = 2, z = 3 loaded before it.
/// An omitter sits just before its item's pivot, so only a reader serialized *after* the pivot
/// can be hurt by a missing mark, and that is the pivot's own writer:
///
/// 1. A writing transaction reads x (pre-epoch) and writes z, then x's pivot is installed: the
///    reader validated x before the pivot's writer locked it, so a blind write of x is omitted
///    (the reader left no mark). Under `Nwr` (every pre-epoch read marked) it would not be.
/// 2. A read-only transaction reads y's pivot and the pre-epoch x, then x's pivot: it marks
///    nothing (`nwr_unmarked_readers`), and a blind write of x is omitted. (`Nwr` needs the mark
///    here because its omitters may write several items.)
/// 3. x's pivot is a read-modify-write of x: its read of x's older version is marked, so a blind
///    write of x is not omitted (`nwr_fail_mrs`): omitting it would be a lost update,
///    `t_p -rw(x)-> t_j -ww(x)-> t_p`. Nor is a second one, after the first committed visibly
///    (the mark lasts the epoch, whichever version of it is the latest).
/// 4. A transaction that blind-writes x and y, both with pivots, is not omitted
///    (`nwr_fail_multi_write`).
/// 5. Over an ordered table with k1 absent: the pivot of k1 is a blind write by a transaction
///    that scanned k0..=k1 and saw k1 missing. That read is not in its read set; the scan-miss
///    mark (rule step 5) blocks a later blind write of k1 (`nwr_fail_mrs`).
///
/// Every history is checked and its omitted writes counted.
pub fn single_write_marks<P: Protocol>() {
    const X: u64 = 1;
    const Y: u64 = 2;
    const Z: u64 = 3;

    // 1: a reader-writer of the older x leaves no mark.
    let (db, recorder) = loaded::<P>();
    let (mut r, mut w) = (db.worker().expect("worker"), db.worker().expect("worker"));
    let mut t = r.begin();
    assert_eq!(read_value(&mut t, X), 10);
    t.write(T, Z, &v(5)).expect("write z");
    t.commit().expect("reader-writer commits");
    assert_pivot_then_blind_write::<P>(
        &mut w,
        X,
        true,
        "the reader-writer is serialized before x's pivot",
    );
    assert_checks::<P>(&recorder, 1);

    // 2: a read-only reader of y's pivot and the older x marks nothing.
    let (db, recorder) = loaded::<P>();
    let mut w = db.worker().expect("worker");
    assert!(!blind_write_omitted(&mut w, Y, 1), "{}: y's pivot", P::NAME);
    let mut t = w.begin();
    assert_eq!(read_value(&mut t, Y), 1, "{}: y's pivot", P::NAME);
    assert_eq!(read_value(&mut t, X), 10);
    t.commit().expect("read-only commits");
    assert_eq!(counter(&mut w, "nwr_unmarked_readers"), 1, "{}", P::NAME);
    assert_pivot_then_blind_write::<P>(
        &mut w,
        X,
        true,
        "the read-only reader is serialized before x's pivot",
    );
    assert_checks::<P>(&recorder, 1);

    // 3: the pivot's writer read x's older version: marked, no omission.
    let (db, recorder) = loaded::<P>();
    let mut w = db.worker().expect("worker");
    let mut t = w.begin();
    let x = read_value(&mut t, X);
    t.write(T, X, &v(x + 1)).expect("read-modify-write of x");
    t.commit().expect("x's pivot commits");
    let _ = counter(&mut w, "nwr_fail_mrs");
    // The second write checks that the mark outlives the pivot for the rest of the epoch: the
    // first blind write is then the item's latest version, and the second still may not sit
    // before the pivot.
    for (value, why) in [
        (2, "a lost update if omitted"),
        (3, "the pivot writer's mark is kept through the epoch"),
    ] {
        let mut t = w.begin();
        t.write(T, X, &v(value)).expect("blind write x");
        t.commit().expect("NWR never aborts");
        let c = counters(&mut w);
        let (refused, omitted) = (c.get("nwr_fail_mrs"), c.get("nwr_commits_omitted"));
        assert_eq!(refused, Some(&1), "{}: {why}", P::NAME);
        assert_eq!(omitted.copied().unwrap_or(0), 0, "{}: {why}", P::NAME);
    }
    let mut t = w.begin();
    assert_eq!(
        read_value(&mut t, X),
        3,
        "{}: both blind writes are visible",
        P::NAME
    );
    t.commit().expect("read-only commits");
    assert_checks::<P>(&recorder, 0);

    // 4: two writes are never omitted.
    let (db, recorder) = loaded::<P>();
    let mut w = db.worker().expect("worker");
    assert!(!blind_write_omitted(&mut w, X, 1), "{}: x's pivot", P::NAME);
    assert!(!blind_write_omitted(&mut w, Y, 1), "{}: y's pivot", P::NAME);
    let mut t = w.begin();
    t.write(T, X, &v(2)).expect("blind write x");
    t.write(T, Y, &v(2)).expect("blind write y");
    t.commit().expect("NWR never aborts");
    assert_eq!(counter(&mut w, "nwr_fail_multi_write"), 1, "{}", P::NAME);
    assert_checks::<P>(&recorder, 0);

    // 5: the scan-miss mark of a pivot written over an absent key.
    let mut schema = Schema::new();
    schema.add(TableSpec::ordered("t", 8)).expect("valid table");
    let recorder = Arc::new(MemoryRecorder::new());
    let db = P::build(&schema, recorder.clone()).expect("engine builds");
    db.load(T, 0, &v(0)).expect("load k0");
    let mut w = db.worker().expect("worker");
    let mut t = w.begin();
    let mut seen = Vec::new();
    t.scan(T, 0, 1, &mut |k, _| {
        seen.push(k);
        true
    })
    .expect("scan");
    assert_eq!(seen, [0], "{}: k1 is absent", P::NAME);
    t.write(T, 1, &v(1)).expect("blind write k1");
    t.commit().expect("k1's pivot commits");
    assert!(
        !blind_write_omitted(&mut w, 1, 2),
        "{}: the pivot's writer saw k1 missing",
        P::NAME
    );
    assert_checks::<P>(&recorder, 0);
}

/// The size a record of `packed` bytes takes in the layout an engine was built with: `packed`,
/// or rounded up to one 64-byte cache line when the engine's `line-aligned-records` feature is on
/// (`line_aligned`, the engine's `LINE_ALIGNED_RECORDS`). Used by each engine's layout test.
pub fn record_size_in_layout(packed: usize, line_aligned: bool) -> usize {
    if line_aligned {
        packed.next_multiple_of(64)
    } else {
        packed
    }
}

/// The engine of `P` (a single-write NWR engine) reports `name`, and counts every read-only
/// commit as an unmarked reader (under the single-write rule no reader marks anything).
pub fn single_write_engine_name_and_unmarked_readers<P: Protocol>(name: &str) {
    let (db, _recorder) = loaded::<P>();
    assert_eq!(db.name(), name);
    let mut w = db.worker().expect("worker");
    for _ in 0..3 {
        let mut t = w.begin();
        assert_eq!(read_value(&mut t, 1), 10);
        t.commit().expect("read-only commits");
    }
    assert_eq!(counter(&mut w, "nwr_unmarked_readers"), 3, "{}", P::NAME);
}

/// Strict serializability of a single-write NWR engine across epoch boundaries, epochs advanced
/// by `advance` (the engine's manual epoch step; it must return whether the epoch moved). With
/// commit-return times the real-time order is violated (t2 began after t1 returned, yet t2's
/// omitted write is ordered before t1's); with group-commit acknowledgements (the end of each
/// epoch) it holds. Each round also has a read-only reader of the older y (no mark) and a
/// single-writer that read it.
pub fn single_write_strict_with_acknowledgements<P: Protocol>(
    advance: impl Fn(&P::Engine) -> bool,
) {
    use txlab_check::CheckOptions;
    use txlab_core::protocol::history::Recorder;
    let (db, rec) = loaded::<P>();
    let (mut a, mut b, mut c) = (
        db.worker().expect("worker"),
        db.worker().expect("worker"),
        db.worker().expect("worker"),
    );
    let (x, y, z) = (1, 2, 3);
    let mut acks = Vec::new();
    let mut omissions = 0;
    for round in 0..3u64 {
        assert!(
            !blind_write_omitted(&mut a, x, 100 + round),
            "{}: x's pivot",
            P::NAME
        );
        assert!(
            blind_write_omitted(&mut b, x, 200 + round),
            "{}: t2 begins after t1 returned",
            P::NAME
        );
        omissions += 1;
        let mut t = c.begin();
        let old_y = read_value(&mut t, y);
        t.commit().expect("read-only commits");
        let mut t = c.begin();
        assert_eq!(read_value(&mut t, y), old_y);
        t.write(T, z, &v(round)).expect("write z");
        t.commit().expect("reader-writer commits");
        assert!(
            !blind_write_omitted(&mut a, y, round + 1),
            "{}: y's pivot",
            P::NAME
        );
        assert!(advance(&db), "{}: the epoch advances", P::NAME);
        acks.push(rec.now_ns());
        let mut t = c.begin();
        assert_eq!(read_value(&mut t, x), 100 + round, "{}", P::NAME);
        t.commit().expect("read-only commits");
    }
    assert!(advance(&db), "{}: the epoch advances", P::NAME);
    acks.push(rec.now_ns());
    let last = rec.now_ns();
    let raw = rec.take();
    assert_eq!(omitted_writes(&raw), omissions, "{}", P::NAME);
    let report = check(&raw, CheckOptions::strict());
    assert!(
        !report.is_serializable(),
        "{}: commit-return times must show the reordering: {report}",
        P::NAME
    );
    let report = check(
        &at_acknowledgements(raw, &acks, last),
        CheckOptions::strict(),
    );
    assert!(report.is_serializable(), "{}: {report}", P::NAME);
}

/// `raw` as group commit acknowledges it: every committed transaction ends at the first
/// acknowledgement time in `acks` (ascending) at or after its commit returned, or at `last`.
pub fn at_acknowledgements(raw: History, acks: &[u64], last: u64) -> History {
    let mut records = raw.into_records();
    for r in records
        .iter_mut()
        .filter(|r| r.outcome == Outcome::Committed)
    {
        r.end_ns = acks
            .iter()
            .copied()
            .find(|&t| t >= r.end_ns)
            .unwrap_or(last);
    }
    History::from_records(records)
}

/// The pivot writer's mark of a single-write NWR engine lasts one epoch (`advance` as in
/// [`single_write_strict_with_acknowledgements`]). In epoch `e` a read-modify-write of x installs
/// x's pivot and marks it, so two later blind writes of x commit visibly (the mark is copied to
/// each version of `e`). In `e + 1` a blind write installs x's new pivot, unmarked, and the next
/// blind write of x is omitted. The history is checked.
pub fn single_write_mark_lasts_one_epoch<P: Protocol>(advance: impl Fn(&P::Engine) -> bool) {
    const X: u64 = 1;
    let (db, recorder) = loaded::<P>();
    let mut w = db.worker().expect("worker");
    let mut t = w.begin();
    let old = read_value(&mut t, X);
    t.write(T, X, &v(old + 1)).expect("read-modify-write of x");
    t.commit().expect("x's pivot commits");
    let _ = counters(&mut w);
    for value in [20, 21] {
        let c = blind_write_counters(&mut w, X, value);
        let omitted = c.get("nwr_commits_omitted").copied().unwrap_or(0);
        assert_eq!(omitted, 0, "{}: {c:?}", P::NAME);
        assert_eq!(c.get("nwr_fail_mrs"), Some(&1), "{}: {c:?}", P::NAME);
    }
    assert!(advance(&db), "{}: the epoch advances", P::NAME);
    let c = blind_write_counters(&mut w, X, 30);
    assert_eq!(
        c.get("nwr_fail_epoch"),
        Some(&1),
        "{}: the new epoch's pivot: {c:?}",
        P::NAME
    );
    let c = blind_write_counters(&mut w, X, 31);
    assert_eq!(c.get("nwr_commits_omitted"), Some(&1), "{}: {c:?}", P::NAME);
    let mut t = w.begin();
    assert_eq!(read_value(&mut t, X), 30, "{}", P::NAME);
    t.commit().expect("read-only commits");
    assert_checks::<P>(&recorder, 1);
}

/// Check (4)'s read marks are written once per record and epoch (`nwr_read_marks_written`, the
/// read-epoch word of Silo+NWR and TicToc+NWR; `advance` moves to the next epoch and says
/// whether it did). In one epoch: a reader-writer that reads x and y (pre-epoch) and blind-writes
/// z marks both (z has no version of the epoch: Silo's filters stop the NWR phase and the
/// baseline merges, TicToc's NWR phase merges and `try_omit` declines; either way one failure,
/// `nwr_fail_epoch`); a second one reading x and w marks only w;
/// a read-only transaction of pre-epoch versions marks nothing (`nwr_unmarked_readers`); a
/// read-only transaction that reads z's new version and x marks nothing new (x is marked); a
/// reader-writer that reads v and blind-writes z, which now has its pivot, passes the filters,
/// marks v in the NWR phase and is omitted. In the next epoch, the first reader of y marks it
/// again. Every history is checked, and the epoch's marks block the omission of x.
pub fn read_marks_are_written_once_per_record_and_epoch<P: Protocol>(
    advance: impl Fn(&P::Engine) -> bool,
) {
    const W: u64 = 0;
    const X: u64 = 1;
    const Y: u64 = 2;
    const Z: u64 = 3;
    const U: u64 = 4;
    const V: u64 = 5;
    /// Reads `reads` (all loaded before the epoch), blind-writes `write`, commits; the counters.
    fn reader_writer(w: &mut impl Worker, reads: &[u64], write: u64) -> HashMap<&'static str, u64> {
        let _ = counters(w);
        let mut t = w.begin();
        for &k in reads {
            assert_eq!(read_value(&mut t, k), 10 * k);
        }
        t.write(T, write, &v(100 + write)).expect("blind write");
        t.commit().expect("reader-writer commits");
        counters(w)
    }
    let marks = |c: &HashMap<&'static str, u64>| c.get("nwr_read_marks_written").copied();
    let failures = |c: &HashMap<&'static str, u64>| {
        c.iter()
            .filter(|(k, _)| k.starts_with("nwr_fail_"))
            .map(|(_, n)| n)
            .sum::<u64>()
    };
    let (db, recorder) = loaded::<P>();
    let mut w = db.worker().expect("worker");
    let c = reader_writer(&mut w, &[X, Y], Z);
    assert_eq!(marks(&c), Some(2), "{}: {c:?}", P::NAME);
    assert_eq!(
        c.get("nwr_fail_epoch"),
        Some(&1),
        "{}: z has no pivot: {c:?}",
        P::NAME
    );
    assert_eq!(
        failures(&c),
        1,
        "{}: one failure, counted once: {c:?}",
        P::NAME
    );
    let c = reader_writer(&mut w, &[X, W], U);
    assert_eq!(marks(&c), Some(1), "{}: x was marked: {c:?}", P::NAME);
    assert_eq!(c.get("nwr_fail_epoch"), Some(&1), "{}: {c:?}", P::NAME);
    assert_eq!(failures(&c), 1, "{}: {c:?}", P::NAME);

    let mut t = w.begin();
    assert_eq!(read_value(&mut t, X), 10);
    t.commit().expect("read-only commits");
    let c = counters(&mut w);
    assert_eq!(
        c.get("nwr_unmarked_readers"),
        Some(&1),
        "{}: {c:?}",
        P::NAME
    );
    assert_eq!(marks(&c), Some(0), "{}: a pre-epoch reader: {c:?}", P::NAME);

    let mut t = w.begin();
    assert_eq!(
        read_value(&mut t, Z),
        100 + Z,
        "{}: z's version of this epoch",
        P::NAME
    );
    assert_eq!(read_value(&mut t, X), 10);
    t.commit().expect("read-only commits");
    let c = counters(&mut w);
    assert_eq!(
        c.get("nwr_unmarked_readers"),
        Some(&0),
        "{}: {c:?}",
        P::NAME
    );
    assert_eq!(marks(&c), Some(0), "{}: x was marked: {c:?}", P::NAME);
    assert_pivot_then_blind_write::<P>(&mut w, X, false, "x was read in this epoch");

    let c = reader_writer(&mut w, &[V], Z);
    assert_eq!(
        c.get("nwr_commits_omitted"),
        Some(&1),
        "{}: z has its pivot and no read mark: {c:?}",
        P::NAME
    );
    assert_eq!(
        marks(&c),
        Some(1),
        "{}: v, marked in the NWR phase: {c:?}",
        P::NAME
    );
    assert_eq!(failures(&c), 0, "{}: {c:?}", P::NAME);

    assert!(advance(&db), "{}: the epoch advances", P::NAME);
    let c = reader_writer(&mut w, &[Y], W);
    assert_eq!(
        marks(&c),
        Some(1),
        "{}: y again, in a new epoch: {c:?}",
        P::NAME
    );
    assert_checks::<P>(&recorder, 1);
}

/// Blind-writes `value` to `key` in a transaction of its own and returns the counters that commit
/// changed (the counters are drained first).
fn blind_write_counters(w: &mut impl Worker, key: u64, value: u64) -> HashMap<&'static str, u64> {
    let _ = counters(w);
    let mut tx = w.begin();
    tx.write(T, key, &v(value)).expect("blind write");
    tx.commit()
        .expect("a blind write commits (NWR never aborts)");
    counters(w)
}

/// Threads on a hot write-contended mix (4 operations, half reads, half blind writes; writes over
/// 4 or 8 keys skewed towards key 0, reads over keys 8..16, which nobody writes) with `P`'s engine
/// advancing its epoch underneath (build `P` with a background epoch, e.g. every millisecond):
/// writes are omitted, and the recorded history (omitted writes included) is serializable. 2 and
/// 4 threads, 2,000 committed transactions each per round, repeated (up to 8 rounds) until a
/// write was omitted. (The mixed YCSB-A stress, where reads and writes
/// share hot keys, is [`crate::nwr_epoch_stress`].)
pub fn threaded_blind_write_stress<P: Protocol>()
where
    P::Engine: Sync,
{
    // Whether a write can be omitted depends on how the threads interleave (an omitter needs
    // another thread's version of the same epoch), and under a loaded test runner two threads may
    // barely overlap. So the threads run again, on fresh seeds, until some write was omitted, at
    // most `MAX_ROUNDS` times; an engine that never omits still fails.
    const MAX_ROUNDS: u64 = 8;
    for (threads, keys) in [(2usize, 4u64), (4, 8)] {
        let (db, recorder) = loaded_keys::<P>(16);
        let mut omitted_total = 0u64;
        for round in 0..MAX_ROUNDS {
            if omitted_total > 0 {
                break;
            }
            omitted_total += std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads as u64)
                    .map(|t| {
                        let db = &db;
                        s.spawn(move || blind_write_worker(db, round * 64 + t, keys))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("worker thread"))
                    .sum::<u64>()
            });
        }
        let history = recorder.take();
        assert_eq!(
            omitted_writes(&history) as u64,
            omitted_total,
            "{}",
            P::NAME
        );
        assert!(
            omitted_total > 0,
            "{}, {threads} threads: no write was omitted in {MAX_ROUNDS} rounds",
            P::NAME
        );
        let report = check(&history, check_options::<P>());
        assert!(report.is_serializable(), "{}: {report}", P::NAME);
    }
}

/// One thread of [`threaded_blind_write_stress`]: commits 2,000 transactions and returns the
/// writes it omitted.
fn blind_write_worker<E: Engine>(db: &E, seed: u64, keys: u64) -> u64 {
    let mut w = db.worker().expect("worker");
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (seed + 1);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut committed = 0;
    while committed < 2_000 {
        let mut tx = w.begin();
        let mut ok = true;
        for _ in 0..4 {
            let r = next();
            // Skewed: the lowest set bit picks the key, so key 0 is hottest.
            let key = u64::from(r.trailing_zeros()).min(keys - 1);
            let res = if r >> 63 == 0 {
                tx.read(T, 8 + (r >> 32) % 8).map(|_| ())
            } else {
                tx.write(T, key, &v(r))
            };
            if res.is_err() {
                ok = false;
                break;
            }
        }
        if ok && tx.commit().is_ok() {
            committed += 1;
        }
    }
    counter(&mut w, "nwr_omitted_writes")
}
