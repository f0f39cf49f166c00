//! TicToc+NWR semantics, step by step from one thread with several workers: which blind writes
//! the non-visible write rule omits (the NWR paper, Figure 1 (b)–(d)), which it never omits, that
//! an omitted write is never read, that a reader of an old version in the omitter's epoch cannot
//! break serializability (the hazard TicToc adds to Silo+NWR), strict serializability with
//! group-commit acknowledgements across epoch boundaries, the two NWR mutants caught by targeted
//! schedules, and a threaded blind-write stress that really omits writes.

use std::collections::HashMap;
use std::sync::Arc;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::protocol::history::{Outcome, Recorder};
use txlab_core::{
    AckMode, ConflictCause, Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker,
};
use txlab_nwr::Nwr;
use txlab_nwr::NwrMutation;
use txlab_testkit::nwr::omitted_writes as omitted;
use txlab_tictoc::__layout::{epoch_base, epoch_floor};
use txlab_tictoc::{Mutation, TicToc, TicTocConfig, TicTocNwr};

const T: TableId = TableId(0);
const X: u64 = 1;
const Y: u64 = 2;
const Z: u64 = 3;
const K: u64 = 4;

type Db = TicTocNwr<MemoryRecorder>;

fn config() -> TicTocConfig {
    TicTocConfig::manual().with_ack(AckMode::EpochStable)
}

fn db_with(cfg: TicTocConfig) -> (Db, Arc<MemoryRecorder>) {
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 16)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = TicToc::builder()
        .nwr(Nwr)
        .config(cfg)
        .recorder(rec.clone())
        .build(&s)
        .unwrap();
    for k in 0..16 {
        db.load(T, k, &v(k * 10)).unwrap();
    }
    (db, rec)
}

fn db() -> (Db, Arc<MemoryRecorder>) {
    db_with(config())
}

fn v(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

fn num(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap())
}

fn counters(w: &mut impl Worker) -> HashMap<&'static str, u64> {
    let mut m = HashMap::new();
    w.drain_counters(&mut |name, d| *m.entry(name).or_insert(0) += d);
    m
}

/// Blind-writes `value` to `key` in one transaction and returns whether it was omitted.
fn blind_write(w: &mut impl Worker, key: u64, value: u64) -> bool {
    let before = counters(w);
    assert_eq!(before.get("nwr_commits_omitted").copied().unwrap_or(0), 0);
    let mut tx = w.begin();
    tx.write(T, key, &v(value)).unwrap();
    tx.commit().unwrap();
    counters(w)["nwr_commits_omitted"] == 1
}

fn read_now(w: &mut impl Worker, key: u64) -> u64 {
    let mut tx = w.begin();
    let got = tx.read(T, key).unwrap().map(num).unwrap();
    tx.commit().unwrap();
    got
}

fn bump(w: &mut impl Worker, key: u64) {
    let mut tx = w.begin();
    assert!(
        tx.update(T, key, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
            .unwrap()
    );
    tx.commit().unwrap();
}

fn assert_serializable(history: &History) {
    let report = check(history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}

#[test]
fn engine_names_and_plain_tictoc_reports_no_counters() {
    let (db, _) = db();
    assert_eq!(db.name(), "tictoc-nwr");
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 4)).unwrap();
    let plain = TicToc::builder()
        .config(TicTocConfig::manual())
        .build(&s)
        .unwrap();
    assert_eq!(plain.name(), "tictoc");
    let mut w = plain.worker().unwrap();
    assert!(counters(&mut w).is_empty());
    let nwr = TicToc::builder()
        .nwr(Nwr)
        .config(TicTocConfig::manual())
        .build(&s)
        .unwrap();
    assert_eq!(nwr.name(), "tictoc-nwr");
}

/// Commit timestamps respect epochs: every version installed in epoch `e` has a tag (its commit
/// timestamp) in `[floor(e), base(e + 1))` and omitted writes sit in `[base(e), floor(e))`.
#[test]
fn commit_timestamps_are_epoch_prefixed() {
    let (db, rec) = db();
    let mut w = db.worker().unwrap();
    for _ in 0..3 {
        let e = db.epochs().global();
        assert!(!blind_write(&mut w, X, e));
        assert!(blind_write(&mut w, X, e + 100));
        bump(&mut w, Y);
        assert!(db.epochs().advance());
    }
    let h = rec.take();
    let mut seen = 0;
    for r in h.records() {
        for wr in &r.writes {
            let e = wr.order >> 24;
            if wr.visible {
                assert!(wr.order >= epoch_floor(e) && wr.order < epoch_base(e + 1));
            } else {
                assert!(wr.order > epoch_base(e) && wr.order < epoch_floor(e));
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 9);
    assert_serializable(&h);
}

/// Figure 1 (d) (and (b), which TicToc sees the same way): the epoch's first blind write of x is
/// installed; a later blind write of x in the same epoch is omitted, ordered just before it.
#[test]
fn fig1_b_d_a_later_blind_write_in_the_epoch_is_omitted() {
    let (db, rec) = db();
    let (mut w1, mut w3, mut r) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    // (b): both begin before either commits; (d): t3 begins after t1 committed. Same outcome.
    let mut t3 = w3.begin();
    assert!(
        !blind_write(&mut w1, X, 1),
        "the epoch's first version of x is the pivot"
    );
    t3.write(T, X, &v(3)).unwrap();
    t3.commit().unwrap();
    assert_eq!(counters(&mut w3)["nwr_commits_omitted"], 1);
    assert!(
        blind_write(&mut w3, X, 33),
        "(d): a later blind write is omitted too"
    );
    assert_eq!(
        read_now(&mut r, X),
        1,
        "the pivot stays the visible version"
    );
    let h = rec.take();
    assert_eq!(omitted(&h), 2);
    assert_serializable(&h);
}

/// Figure 1 (c): t2 read the pivot x3 before t1's blind write of x commits; t1 is still omitted
/// (t2 read a version of this epoch, not the one t1's write is ordered after).
#[test]
fn fig1_c_a_reader_of_the_pivot_does_not_prevent_omission() {
    let (db, rec) = db();
    let (mut w1, mut w2, mut w3) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    let mut t1 = w1.begin();
    assert!(!blind_write(&mut w3, X, 3));
    assert_eq!(read_now(&mut w2, X), 3);
    t1.write(T, X, &v(1)).unwrap();
    t1.commit().unwrap();
    assert_eq!(counters(&mut w1)["nwr_commits_omitted"], 1);
    assert_eq!(read_now(&mut w2, X), 3);
    let h = rec.take();
    assert_eq!(omitted(&h), 1);
    assert_serializable(&h);
}

/// The first blind write of a key in each epoch is installed (no pivot yet, ST-Rule); after the
/// epoch advances the next one is installed again, and its value becomes visible.
#[test]
fn the_first_blind_write_of_each_epoch_is_installed() {
    let (db, rec) = db();
    let mut w = db.worker().unwrap();
    assert!(!blind_write(&mut w, X, 1));
    assert!(blind_write(&mut w, X, 2));
    assert!(db.epochs().advance());
    assert!(
        !blind_write(&mut w, X, 3),
        "a new epoch needs its own pivot"
    );
    assert_eq!(read_now(&mut w, X), 3);
    assert!(blind_write(&mut w, X, 4));
    assert_eq!(read_now(&mut w, X), 3);
    assert_serializable(&rec.take());
}

/// Read-modify-writes (`update`, or `read` then `write` of the same key), inserts and deletes are
/// never omitted, even with a pivot in place.
#[test]
fn read_modify_writes_inserts_and_deletes_are_never_omitted() {
    let (db, rec) = db();
    let mut w = db.worker().unwrap();
    assert!(!blind_write(&mut w, X, 1));
    let _ = counters(&mut w);

    bump(&mut w, X);
    assert_eq!(read_now(&mut w, X), 2, "the update is installed");

    let mut tx = w.begin();
    assert_eq!(tx.read(T, X).unwrap().map(num), Some(2));
    tx.write(T, X, &v(7)).unwrap();
    tx.commit().unwrap();
    assert_eq!(read_now(&mut w, X), 7, "read-then-write is installed");

    let mut tx = w.begin();
    assert!(tx.delete(T, X).unwrap());
    tx.commit().unwrap();
    let mut tx = w.begin();
    assert!(tx.insert(T, X, &v(8)).unwrap());
    tx.commit().unwrap();
    assert_eq!(read_now(&mut w, X), 8, "delete and insert are installed");

    let c = counters(&mut w);
    assert_eq!(c["nwr_commits_omitted"], 0);
    assert_eq!(c["nwr_fail_not_blind"], 4);
    assert_serializable(&rec.take());
}

/// mRS: a writing transaction of this epoch read x's pre-epoch version and committed, so a blind
/// write of x cannot be ordered after that version; it is installed by the baseline instead. (A
/// read-only reader of pre-epoch versions leaves no mark: `kit_nwr.rs`,
/// `nwr_pre_epoch_readers_and_marks`.)
#[test]
fn a_pre_epoch_read_in_the_epoch_blocks_omission() {
    let (db, rec) = db();
    let (mut wr, mut w) = (db.worker().unwrap(), db.worker().unwrap());
    let mut tx = wr.begin();
    assert_eq!(tx.read(T, X).unwrap().map(num), Some(10));
    tx.write(T, Z, &v(5)).unwrap();
    tx.commit().unwrap();
    assert!(!blind_write(&mut w, X, 1));
    let mut tx = w.begin();
    tx.write(T, X, &v(2)).unwrap();
    tx.commit().unwrap();
    let c = counters(&mut w);
    assert_eq!(c["nwr_commits_omitted"], 0);
    assert_eq!(c["nwr_fail_mrs"], 1);
    assert_eq!(read_now(&mut w, X), 2);
    assert_serializable(&rec.take());
}

/// mWS (conservative form): a transaction that read a version written in this epoch is not
/// omitted (its writer may be reachable from the pivot); the baseline commits it.
#[test]
fn reading_a_version_of_this_epoch_falls_back_to_the_baseline() {
    let (db, rec) = db();
    let mut w = db.worker().unwrap();
    assert!(!blind_write(&mut w, X, 1));
    assert!(!blind_write(&mut w, Y, 1));
    let _ = counters(&mut w);
    let mut tx = w.begin();
    assert_eq!(tx.read(T, Y).unwrap().map(num), Some(1));
    tx.write(T, X, &v(2)).unwrap();
    tx.commit().unwrap();
    let c = counters(&mut w);
    assert_eq!((c["nwr_commits_omitted"], c["nwr_fail_mws"]), (0, 1));
    assert_eq!(c["nwr_commits_baseline"], 1);
    assert_eq!(read_now(&mut w, X), 2);
    assert_serializable(&rec.take());
}

/// NWR never aborts: a transaction whose read was overwritten fails NWR validation (overwriters)
/// and is then aborted by TicToc itself, with TicToc's cause.
#[test]
fn a_failed_validation_hands_over_to_the_baseline_which_alone_aborts() {
    let (db, _rec) = db();
    let (mut a, mut b) = (db.worker().unwrap(), db.worker().unwrap());
    assert!(!blind_write(&mut b, X, 1));
    let _ = counters(&mut b);
    let mut tx = a.begin();
    assert_eq!(tx.read(T, Y).unwrap().map(num), Some(20));
    tx.write(T, X, &v(5)).unwrap();
    bump(&mut b, Y);
    let err = tx.commit().unwrap_err();
    assert_eq!(err.conflict().unwrap().cause, ConflictCause::ReadValidation);
    assert_eq!(counters(&mut a)["nwr_fail_overwriters"], 1);
}

/// Two reads of one pre-epoch version in one transaction: the first rts extension into the epoch
/// shifts the word's `wts` (delta overflow); the second read still validates (the history tag
/// recognises the version), so the transaction is not falsely aborted by its own extension.
#[test]
fn an_rts_extension_into_the_epoch_does_not_abort_a_second_read_of_the_version() {
    let (db, rec) = db();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    assert_eq!(tx.read(T, X).unwrap().map(num), Some(10));
    assert_eq!(tx.read(T, X).unwrap().map(num), Some(10));
    tx.write(T, Y, &v(1)).unwrap();
    tx.commit().unwrap();
    assert_eq!(read_now(&mut w, Y), 1);
    assert_serializable(&rec.take());
}

/// An omitted write is never read by anyone: many omitted writes of distinct values, read back by
/// fresh transactions in the same and later epochs, never show up.
#[test]
fn an_omitted_write_is_never_read() {
    let (db, rec) = db();
    let (mut w, mut r) = (db.worker().unwrap(), db.worker().unwrap());
    for epoch_round in 0..3u64 {
        let pivot = 1_000 * (epoch_round + 1);
        assert!(!blind_write(&mut w, X, pivot));
        for i in 1..20 {
            assert!(blind_write(&mut w, X, pivot + i));
            assert_eq!(read_now(&mut r, X), pivot);
        }
        assert!(db.epochs().advance());
        assert_eq!(
            read_now(&mut r, X),
            pivot,
            "still the pivot after the epoch ends"
        );
        // That read of a pre-epoch version blocks omissions of x in this epoch (mRS); start the
        // next round in a fresh epoch.
        assert!(db.epochs().advance());
    }
    let h = rec.take();
    assert_eq!(omitted(&h), 57);
    let tags: Vec<u64> = h
        .records()
        .iter()
        .flat_map(|t| t.writes.iter().filter(|w| !w.visible).map(|w| w.version))
        .collect();
    assert!(
        h.records()
            .iter()
            .flat_map(|t| t.reads.iter())
            .all(|rd| !tags.contains(&rd.version))
    );
    assert_serializable(&h);
}

/// With `AckMode::AtCommit` (acknowledged at commit, so same-epoch transactions are not
/// concurrent from the client's view) NWR is never attempted.
#[test]
fn acknowledging_at_commit_disables_omission() {
    let (db, _) = db_with(TicTocConfig::manual());
    let mut w = db.worker().unwrap();
    assert!(!blind_write(&mut w, X, 1));
    assert!(!blind_write(&mut w, X, 2));
    assert_eq!(read_now(&mut w, X), 2);
}

/// Replaces each committed transaction's end with its acknowledgement under group commit: the
/// first epoch advance recorded at or after it (`acks[i]` = recorder time of the i-th advance).
fn acknowledged(history: History, acks: &[u64], last: u64) -> History {
    let mut records = history.into_records();
    for r in records.iter_mut() {
        if r.outcome == Outcome::Committed {
            r.end_ns = acks
                .iter()
                .copied()
                .find(|&a| a >= r.end_ns)
                .unwrap_or(last);
        }
    }
    History::from_records(records)
}

/// Strict serializability across epoch boundaries, epochs advanced by hand: with commit-return
/// times the real-time order is violated (t2 began after t1 returned, yet t2's omitted write is
/// ordered before t1's), but with group-commit acknowledgements (the epoch's end) it holds:
/// epoch-prefixed timestamps order every transaction of a later epoch after every earlier one
/// (plain TicToc, ordering by computed timestamps alone, is not strict even so).
#[test]
fn strict_serializable_with_group_commit_acknowledgements() {
    let (db, rec) = db();
    let (mut a, mut b, mut c) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    let mut acks = Vec::new();
    for round in 0..3u64 {
        assert!(!blind_write(&mut a, X, 100 + round));
        assert!(
            blind_write(&mut b, X, 200 + round),
            "t2 begins after t1 returned"
        );
        let mut t = c.begin();
        assert_eq!(
            t.read(T, Y).unwrap().map(num),
            Some(if round == 0 { 20 } else { round })
        );
        t.write(T, Z, &v(round)).unwrap();
        t.commit().unwrap();
        assert!(!blind_write(&mut a, Y, round + 1));
        assert!(db.epochs().advance());
        acks.push(rec.now_ns());
        assert_eq!(read_now(&mut c, X), 100 + round);
        assert!(db.epochs().advance());
        acks.push(rec.now_ns());
    }
    let last = rec.now_ns();
    let raw = rec.take();
    let report = check(&raw, CheckOptions::strict());
    assert!(
        !report.is_serializable(),
        "commit-return times must show the reordering: {report}"
    );
    let report = check(&acknowledged(raw, &acks, last), CheckOptions::strict());
    assert!(report.is_serializable(), "{report}");
}

/// The schedule that needs the mRS check: t_r reads x's pre-epoch version and blind-writes z
/// (installed: z's first version of the epoch); t_p blind-writes x (installed, the pivot); t_j
/// blind-writes x and z. Omitting t_j orders it after t_r on x (t_r read the older version) and
/// before t_r on z: a cycle. Correct TicToc+NWR installs t_j instead.
fn mrs_schedule(db: &Db) {
    let (mut r, mut p, mut j) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    let mut tr = r.begin();
    assert_eq!(tr.read(T, X).unwrap().map(num), Some(10));
    tr.write(T, Z, &v(1)).unwrap();
    tr.commit().unwrap();
    assert!(!blind_write(&mut p, X, 2));
    let mut tj = j.begin();
    tj.write(T, X, &v(3)).unwrap();
    tj.write(T, Z, &v(3)).unwrap();
    tj.commit().unwrap();
}

/// The schedule that needs the epoch check: t_j reads y's loaded version and blind-writes x,
/// which has no version of this epoch; t_k then reads x and blind-writes y. If t_j's write were
/// omitted, t_k would read x's older version (t_k before t_j) while t_j read y's older version
/// (t_j before t_k): a cycle. Correct TicToc+NWR installs t_j, and t_k reads it.
fn epoch_schedule(db: &Db) {
    let (mut j, mut k) = (db.worker().unwrap(), db.worker().unwrap());
    let mut tj = j.begin();
    assert_eq!(tj.read(T, Y).unwrap().map(num), Some(20));
    tj.write(T, X, &v(1)).unwrap();
    tj.commit().unwrap();
    let mut tk = k.begin();
    let _ = tk.read(T, X).unwrap();
    tk.write(T, Y, &v(2)).unwrap();
    tk.commit().unwrap();
}

/// The hazard TicToc adds (`docs/protocols/tictoc.md`, "NWR"): TicToc may commit a read of a
/// version that has since been overwritten. In epoch `e`:
///
/// 1. k's read-modify-writes push key K's timestamp to `floor(e) + 9`;
/// 2. t reads x0 (x's pre-epoch version) and K and commits read-only at `floor(e) + 9`,
///    extending x0's rts there (after marking the read in x's read-epoch word);
/// 3. r reads x0 (rts `floor(e) + 9`, so r may later commit at any time up to that without
///    revalidating it);
/// 4. p blind-writes x: installed (x's first version of the epoch, the pivot);
/// 5. o reads y0 and blind-writes x;
/// 6. w blind-writes y (y's first version of the epoch: installed);
/// 7. r reads w's y and commits.
///
/// If o's write were omitted (ordered after x0, before the pivot), r would commit at
/// `floor(e) + 1` without revalidating x0: r -rw-> o (r read x0, o wrote x after it),
/// o -rw-> w (o read y0), w -wr-> r: a cycle. Correct TicToc+NWR refuses the omission (t's merge
/// put x0 in x's mRS before its extension made x0 readable at `floor(e)` and later), installs o,
/// and r then fails TicToc's own validation. Returns whether r committed.
fn old_version_reader_schedule(db: &Db) -> bool {
    let mut ws: Vec<_> = (0..6).map(|_| db.worker().unwrap()).collect();
    let [k, t, r, p, o, w] = &mut ws[..] else {
        unreachable!()
    };
    for _ in 0..10 {
        bump(k, K);
    }
    let mut tt = t.begin();
    assert_eq!(tt.read(T, X).unwrap().map(num), Some(10));
    assert_eq!(tt.read(T, K).unwrap().map(num), Some(50));
    tt.commit().unwrap();
    let mut tr = r.begin();
    assert_eq!(tr.read(T, X).unwrap().map(num), Some(10));
    assert!(!blind_write(p, X, 2));
    let mut to = o.begin();
    assert_eq!(to.read(T, Y).unwrap().map(num), Some(20));
    to.write(T, X, &v(3)).unwrap();
    to.commit().unwrap();
    assert!(!blind_write(w, Y, 4));
    assert_eq!(tr.read(T, Y).unwrap().map(num), Some(4));
    tr.commit().is_ok()
}

#[test]
fn a_reader_of_an_old_version_in_the_epoch_cannot_break_serializability() {
    let (db, rec) = db();
    let committed = old_version_reader_schedule(&db);
    let h = rec.take();
    assert_eq!(omitted(&h), 0, "o must not be omitted");
    assert!(
        !committed,
        "r read x0, which o's installed version replaced"
    );
    assert_serializable(&h);
}

#[test]
fn the_old_version_reader_schedule_is_the_hazard() {
    // With the mRS check skipped, o is omitted, r commits, and the checker finds the cycle.
    let (db, rec) =
        db_with(config().with_mutation(Mutation::Nwr(NwrMutation::SkipMergedReadCheck)));
    let committed = old_version_reader_schedule(&db);
    let h = rec.take();
    assert_eq!(omitted(&h), 1);
    assert!(committed, "r commits by time travel");
    let report = check(&h, CheckOptions::serializable());
    assert!(
        !report.is_serializable(),
        "the mutant must produce a cycle: {report}"
    );
}

#[test]
fn the_mrs_and_epoch_schedules_are_serializable() {
    for schedule in [mrs_schedule, epoch_schedule] {
        let (db, rec) = db();
        schedule(&db);
        assert_serializable(&rec.take());
    }
}

#[test]
fn skipping_the_mrs_check_is_caught_by_the_checker() {
    let (db, rec) =
        db_with(config().with_mutation(Mutation::Nwr(NwrMutation::SkipMergedReadCheck)));
    mrs_schedule(&db);
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(
        !report.is_serializable(),
        "the mutant must produce a cycle: {report}"
    );
}

#[test]
fn skipping_the_epoch_check_is_caught_by_the_checker() {
    let (db, rec) = db_with(config().with_mutation(Mutation::Nwr(NwrMutation::SkipEpochCheck)));
    epoch_schedule(&db);
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(
        !report.is_serializable(),
        "the mutant must produce a cycle: {report}"
    );
}

/// Every TicToc variant has the same record: the word, the history tag and the value (TicToc+NWR
/// keeps its pivot objects beside the records, `txlab_storage::Companions`). With the
/// `line-aligned-records` feature it rounds up to one 64-byte line.
#[test]
fn every_tictoc_variant_has_plain_tictocs_record() {
    use std::mem::{align_of, size_of};
    use txlab_core::protocol::value::AtomicValue;
    use txlab_tictoc::{LINE_ALIGNED_RECORDS, TicTocRecord};
    let line = |packed| txlab_testkit::nwr::record_size_in_layout(packed, LINE_ALIGNED_RECORDS);
    assert_eq!(
        size_of::<TicTocRecord>(),
        line(16 + size_of::<AtomicValue>())
    );
    assert_eq!(align_of::<TicTocRecord>() == 64, LINE_ALIGNED_RECORDS);
}

/// The worked example of `docs/protocols/tictoc.md` ("NWR"), with its numbers.
#[test]
fn the_documented_worked_example() {
    let (db, rec) = db();
    let mut ws: Vec<_> = (0..5).map(|_| db.worker().unwrap()).collect();
    let [w0, w1, w2, w3, w4] = &mut ws[..] else {
        unreachable!()
    };
    while db.epochs().global() < 6 {
        assert!(db.epochs().advance());
    }
    for _ in 0..5 {
        bump(w0, X);
    }
    assert!(db.epochs().advance());
    assert_eq!(db.epochs().global(), 7);
    let _ = rec.take();

    assert!(!blind_write(w1, X, 1), "t1 installs the pivot");
    let mut t2 = w2.begin();
    assert_eq!(t2.read(T, Y).unwrap().map(num), Some(20));
    t2.write(T, X, &v(2)).unwrap();
    let info = t2.commit().unwrap();
    assert_eq!((info.epoch, info.acknowledged), (7, false));
    assert_eq!(counters(w2)["nwr_commits_omitted"], 1);
    assert_eq!(read_now(w3, X), 1, "t3 reads t1's value");
    assert!(!blind_write(w4, Y, 4), "t4 is installed");

    let h = rec.take();
    let writes: Vec<(u64, u64, bool)> = h
        .records()
        .iter()
        .flat_map(|r| r.writes.iter().map(|w| (w.key, w.order, w.visible)))
        .collect();
    assert_eq!(
        writes,
        [
            (X, 125_829_120, true),
            (X, 117_440_513, false),
            (Y, 125_829_121, true)
        ]
    );
    let t3_read = h.records()[2].reads[0];
    assert_eq!((t3_read.key, t3_read.version), (X, 125_829_120));
    let t1_prev = 109_051_908;
    assert_eq!(epoch_floor(6) + 4, t1_prev);
    assert_serializable(&h);
}

/// A pre-epoch reader whose read's `wts` a delta shift moved into `[base(e), floor(e))` (the
/// `txlab_tictoc::commit` case beyond plain TicToc's timestamps): `t1` reads y's loaded version
/// and writes z, so it merges y and extends `rts(y)` to `floor(e)`, which shifts y's `wts` to
/// `floor(e) - (2^15 - 1)`. `r` then reads only y: its history tag is pre-epoch and its TicToc
/// `commit_ts` (that `wts`) is below the floor, so it commits there and merges nothing. y's mark
/// (from `t1`) still blocks an omission of y in the epoch, and the history checks.
#[test]
fn a_pre_epoch_reader_of_a_shifted_version_merges_nothing() {
    let (db, rec) = db();
    let (mut a, mut r) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = a.begin();
    assert_eq!(t1.read(T, Y).unwrap().map(num), Some(20));
    t1.write(T, Z, &v(5)).unwrap();
    t1.commit().unwrap();
    let _ = counters(&mut a);
    assert_eq!(read_now(&mut r, Y), 20);
    let c = counters(&mut r);
    assert_eq!(c["nwr_unmarked_readers"], 1, "{c:?}");
    assert!(!blind_write(&mut a, Y, 1), "y's pivot");
    assert!(!blind_write(&mut a, Y, 2), "t1's read of y marked it");
    assert_eq!(read_now(&mut r, Y), 2, "installed by the baseline");
    assert_serializable(&rec.take());
}

/// TicToc+NWR over caller-built tables whose indexes differ from the schema's declarations (a
/// table declared dense with 4 keys, given a hash index; a dense index of 100 keys for a table
/// declared with 4): the pivot objects follow the indexes, so a key only the index accepts can be
/// omitted, and its object shows the omission.
#[test]
fn pivot_objects_follow_caller_built_indexes() {
    use txlab_storage::{HashIndex, Tables};
    let mut declared = Schema::new();
    declared.add(TableSpec::dense("t", 8, 4)).unwrap();
    let mut larger = Schema::new();
    larger.add(TableSpec::dense("t", 8, 100)).unwrap();
    let custom = Tables::with_custom(
        &declared,
        vec![(T, Box::new(HashIndex::new(T, 8)) as Box<_>)],
    )
    .unwrap();
    for tables in [custom, Tables::new(&larger).unwrap()] {
        let rec = Arc::new(MemoryRecorder::new());
        let db: Db = TicToc::builder()
            .nwr(Nwr)
            .config(config())
            .recorder(rec.clone())
            .tables(tables)
            .build(&declared)
            .unwrap();
        db.load(T, 50, &v(500)).unwrap();
        let mut w = db.worker().unwrap();
        assert!(!blind_write(&mut w, 50, 1), "the pivot");
        assert!(
            blind_write(&mut w, 50, 2),
            "a key beyond the declared capacity is omitted"
        );
        let word = db
            .pivot_word(T, 50)
            .expect("TicToc+NWR keeps pivot objects");
        assert_eq!(word.pivot, txlab_nwr::pivot::PIVOT_BASE - 1);
        let h: History = rec.take();
        assert_eq!(omitted(&h), 1);
        assert!(check(&h, CheckOptions::serializable()).is_serializable());
    }
}
