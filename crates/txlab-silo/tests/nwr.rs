//! Silo+NWR semantics, step by step from one thread with several workers: which blind writes the
//! non-visible write rule omits (the NWR paper, Figure 1 (b)–(d)), which it never omits, that an
//! omitted write is never read, strict serializability with group-commit acknowledgements across
//! epoch boundaries, and the two NWR mutants caught by targeted schedules.

use std::collections::HashMap;
use std::sync::Arc;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::protocol::history::{Outcome, Recorder};
use txlab_core::{AckMode, Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};
use txlab_nwr::Nwr;
use txlab_nwr::NwrMutation;
use txlab_silo::{Mutation, Silo, SiloConfig, SiloNwr};
use txlab_testkit::nwr::omitted_writes as omitted;

const T: TableId = TableId(0);
const X: u64 = 1;
const Y: u64 = 2;
const Z: u64 = 3;

type Db = SiloNwr<MemoryRecorder>;

fn config() -> SiloConfig {
    SiloConfig::manual().with_ack(AckMode::EpochStable)
}

fn db_with(cfg: SiloConfig) -> (Db, Arc<MemoryRecorder>) {
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 16)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = Silo::builder()
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

fn assert_serializable(history: &History) {
    let report = check(history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}

#[test]
fn engine_names_and_plain_silo_reports_no_counters() {
    let (db, _) = db();
    assert_eq!(db.name(), "silo-nwr");
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 4)).unwrap();
    let plain = Silo::builder()
        .config(SiloConfig::manual())
        .build(&s)
        .unwrap();
    assert_eq!(plain.name(), "silo");
    let mut w = plain.worker().unwrap();
    assert!(counters(&mut w).is_empty());
}

/// Figure 1 (d) (and (b), which Silo sees the same way): the epoch's first blind write of x is
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
/// (t2 read a version of this epoch, not the one t1's write is ordered after), which timestamp
/// ordering with the Thomas write rule forbids.
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
    let c = counters(&mut w);
    assert_eq!(c["nwr_fail_epoch"], 0, "drained above");
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

    let mut tx = w.begin();
    assert!(
        tx.update(T, X, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
            .unwrap()
    );
    tx.commit().unwrap();
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

/// NWR never aborts: a transaction whose read changed fails NWR validation (overwriters) and is
/// then aborted by Silo itself, with Silo's cause.
#[test]
fn a_failed_validation_hands_over_to_the_baseline_which_alone_aborts() {
    let (db, _rec) = db();
    let (mut a, mut b) = (db.worker().unwrap(), db.worker().unwrap());
    assert!(!blind_write(&mut b, X, 1));
    let _ = counters(&mut b);
    let mut tx = a.begin();
    assert_eq!(tx.read(T, Y).unwrap().map(num), Some(20));
    tx.write(T, X, &v(5)).unwrap();
    let mut upd = b.begin();
    assert!(upd.update(T, Y, &mut |v| v[0] += 1).unwrap());
    upd.commit().unwrap();
    let err = tx.commit().unwrap_err();
    assert_eq!(
        err.conflict().unwrap().cause,
        txlab_core::ConflictCause::ReadValidation
    );
    assert_eq!(counters(&mut a)["nwr_fail_overwriters"], 1);
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
        // That read of a pre-epoch version would (rightly) block omissions of x in this epoch
        // (mRS); start the next round in a fresh epoch.
        assert!(db.epochs().advance());
    }
    let h = rec.take();
    assert_eq!(omitted(&h), 57);
    // No read in the history observed an invisible version.
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
    let (db, _) = db_with(SiloConfig::manual());
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
/// ordered before t1's), but with group-commit acknowledgements (the epoch's end) it holds, and
/// transactions of later epochs are ordered after every earlier one.
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
        // That pre-epoch read of x blocks omissions of x in this epoch (mRS): use a fresh one.
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
/// before t_r on z: a cycle. Correct Silo+NWR installs t_j instead.
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
/// (t_j before t_k): a cycle. Correct Silo+NWR installs t_j, and t_k reads it.
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

/// Every Silo variant has the same record: the TID word plus the value (Silo+NWR keeps its pivot
/// objects beside the records, `txlab_storage::Companions`; single-write omitters use a TID status
/// bit). With the `line-aligned-records` feature it rounds up to one 64-byte line.
#[test]
fn every_silo_variant_has_plain_silos_record() {
    use std::mem::{align_of, size_of};
    use txlab_core::protocol::value::AtomicValue;
    use txlab_silo::{LINE_ALIGNED_RECORDS, SiloRecord};
    let line = |packed| txlab_testkit::nwr::record_size_in_layout(packed, LINE_ALIGNED_RECORDS);
    assert_eq!(size_of::<SiloRecord>(), line(8 + size_of::<AtomicValue>()));
    assert_eq!(align_of::<SiloRecord>() == 64, LINE_ALIGNED_RECORDS);
}
