//! The NWR engines' tests, one body per test for every engine family ([`Hooks`]): the kit
//! ([`nwr_kit!`](macro@crate::nwr_kit), [`nwr_single_kit!`](crate::nwr_single_kit)) and the
//! step-by-step semantics of the non-visible write rule
//! ([`nwr_semantics!`](crate::nwr_semantics)): which blind writes it omits (the NWR paper,
//! Figure 1 (b)–(d)), which it never omits, that an omitted write is never read, strict
//! serializability with group-commit acknowledgements across epoch boundaries, and the two NWR
//! mutants caught by targeted schedules.
//!
//! The semantics run family `H`'s `Nwr` engine over one dense table `t` of keys `0..16`, key `k`
//! loaded with `10 k`, with manual epochs and `AckMode::EpochStable` ([`db`]).

use crate::family::{
    ConfigOf, EngineOf, EveryMs, Hooks, Kit, Retiring, SkipEpochCheck, SkipMergedReadCheck, build,
    manual,
};
use crate::nwr::{self, counters, omitted_writes};
use std::sync::Arc;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::protocol::history::Recorder;
use txlab_core::{ConflictCause, Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};
use txlab_nwr::{NoNwr, Nwr, NwrSingleWrite, WriteOmission};

/// The one table of the semantics.
pub const T: TableId = TableId(0);
const X: u64 = 1;
const Y: u64 = 2;
const Z: u64 = 3;

/// Family `H`'s `Nwr` engine.
pub type Db<H> = EngineOf<H, Nwr>;

/// Family `H`'s engine in mode `W` with `config` over table `t` of keys `0..16`, key `k` loaded
/// with `10 k`, and its recorder.
pub fn db_with<H: Hooks, W: WriteOmission>(
    config: ConfigOf<H>,
) -> (EngineOf<H, W>, Arc<MemoryRecorder>) {
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 16)).expect("valid table");
    let rec = Arc::new(MemoryRecorder::new());
    let db = build::<H, W>(&s, config, rec.clone()).expect("engine builds");
    for k in 0..16 {
        db.load(T, k, &v(k * 10)).expect("load");
    }
    (db, rec)
}

/// [`db_with`] the `Nwr` engine's manual configuration (group commit).
pub fn db<H: Hooks>() -> (Db<H>, Arc<MemoryRecorder>) {
    db_with::<H, Nwr>(manual::<H, Nwr>())
}

/// The 8-byte value of `x`.
pub fn v(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

/// The number an 8-byte value holds.
pub fn num(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8-byte value"))
}

/// Blind-writes `value` to `key` in one transaction and returns whether it was omitted (the
/// worker's counters hold no omission before it).
pub fn blind_write(w: &mut impl Worker, key: u64, value: u64) -> bool {
    let before = counters(w);
    assert_eq!(before.get("nwr_commits_omitted").copied().unwrap_or(0), 0);
    let mut tx = w.begin();
    tx.write(T, key, &v(value)).expect("blind write");
    tx.commit().expect("a blind write commits");
    counters(w)["nwr_commits_omitted"] == 1
}

/// Reads `key` in a transaction of its own, which must commit.
pub fn read_now(w: &mut impl Worker, key: u64) -> u64 {
    let mut tx = w.begin();
    let got = tx.read(T, key).expect("read").map(num).expect("present");
    tx.commit().expect("read-only commits");
    got
}

/// Asserts that `history` is serializable.
pub fn assert_serializable(history: &History) {
    let report = check(history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}

/// Asserts that a mutant's `history` is not serializable.
pub fn assert_not_serializable(history: &History) {
    let report = check(history, CheckOptions::serializable());
    assert!(
        !report.is_serializable(),
        "the mutant must produce a cycle: {report}"
    );
}

/// The engines report their names; the baseline reports no counters.
pub fn engine_names_and_the_baseline_reports_no_counters<H: Hooks>() {
    let (db, _) = db::<H>();
    assert_eq!(db.name(), H::NAMES[1]);
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 4)).expect("valid table");
    let rec = Arc::new(MemoryRecorder::new());
    let plain = build::<H, NoNwr>(&s, manual::<H, NoNwr>(), rec.clone()).expect("builds");
    assert_eq!(plain.name(), H::NAMES[0]);
    let mut w = plain.worker().expect("worker");
    assert!(counters(&mut w).is_empty());
    let nwr = build::<H, Nwr>(&s, manual::<H, NoNwr>(), rec).expect("builds");
    assert_eq!(nwr.name(), H::NAMES[1]);
}

/// Figure 1 (d) (and (b), which the single-version engines see the same way): the epoch's first
/// blind write of x is installed; a later blind write of x in the same epoch is omitted, ordered
/// just before it.
pub fn fig1_b_d_a_later_blind_write_in_the_epoch_is_omitted<H: Hooks>() {
    let (db, rec) = db::<H>();
    let (mut w1, mut w3, mut r) = (worker(&db), worker(&db), worker(&db));
    // (b): both begin before either commits; (d): t3 begins after t1 committed. Same outcome.
    let mut t3 = w3.begin();
    assert!(
        !blind_write(&mut w1, X, 1),
        "the epoch's first version of x is the pivot"
    );
    t3.write(T, X, &v(3)).expect("write");
    t3.commit().expect("commit");
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
    assert_eq!(omitted_writes(&h), 2);
    assert_serializable(&h);
}

fn worker<E: Engine>(db: &E) -> E::Worker<'_> {
    db.worker().expect("worker")
}

/// Figure 1 (c): t2 read the pivot x3 before t1's blind write of x commits; t1 is still omitted
/// (t2 read a version of this epoch, not the one t1's write is ordered after), which timestamp
/// ordering with the Thomas write rule forbids.
pub fn fig1_c_a_reader_of_the_pivot_does_not_prevent_omission<H: Hooks>() {
    let (db, rec) = db::<H>();
    // Created in this order, so MVTO's t1 has the smallest timestamp.
    let (mut w1, mut w3, mut w2) = (worker(&db), worker(&db), worker(&db));
    let mut t1 = w1.begin();
    assert!(!blind_write(&mut w3, X, 3));
    assert_eq!(read_now(&mut w2, X), 3);
    t1.write(T, X, &v(1)).expect("write");
    t1.commit().expect("commit");
    assert_eq!(counters(&mut w1)["nwr_commits_omitted"], 1);
    assert_eq!(read_now(&mut w2, X), 3);
    let h = rec.take();
    assert_eq!(omitted_writes(&h), 1);
    assert_serializable(&h);
}

/// The first blind write of a key in each epoch is installed (no pivot yet, ST-Rule); after the
/// epoch advances the next one is installed again, and its value becomes visible.
pub fn the_first_blind_write_of_each_epoch_is_installed<H: Hooks>() {
    let (db, rec) = db::<H>();
    let mut w = worker(&db);
    assert!(!blind_write(&mut w, X, 1));
    assert!(blind_write(&mut w, X, 2));
    assert!(H::advance::<Nwr>(&db));
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
/// never omitted, even with a pivot in place: the baseline commits them.
pub fn read_modify_writes_inserts_and_deletes_are_never_omitted<H: Hooks>() {
    let (db, rec) = db::<H>();
    let mut w = worker(&db);
    assert!(!blind_write(&mut w, X, 1));
    let _ = counters(&mut w);

    let mut tx = w.begin();
    assert!(
        tx.update(T, X, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
            .expect("update")
    );
    tx.commit().expect("commit");
    assert_eq!(read_now(&mut w, X), 2, "the update is installed");

    let mut tx = w.begin();
    assert_eq!(tx.read(T, X).expect("read").map(num), Some(2));
    tx.write(T, X, &v(7)).expect("write");
    tx.commit().expect("commit");
    assert_eq!(read_now(&mut w, X), 7, "read-then-write is installed");

    let mut tx = w.begin();
    assert!(tx.delete(T, X).expect("delete"));
    tx.commit().expect("commit");
    let mut tx = w.begin();
    assert!(tx.insert(T, X, &v(8)).expect("insert"));
    tx.commit().expect("commit");
    assert_eq!(read_now(&mut w, X), 8, "delete and insert are installed");

    let c = counters(&mut w);
    assert_eq!(c["nwr_commits_omitted"], 0);
    assert_eq!(c["nwr_fail_not_blind"], 4);
    assert_eq!(c["nwr_commits_baseline"], 4);
    assert_serializable(&rec.take());
}

/// mRS: a writing transaction of this epoch read x's pre-epoch version and committed, so a blind
/// write of x cannot be ordered after that version; it is installed by the baseline instead. (A
/// read-only reader of pre-epoch versions leaves no mark:
/// `crate::nwr::pre_epoch_readers_and_marks`.)
pub fn a_pre_epoch_read_in_the_epoch_blocks_omission<H: Hooks>() {
    let (db, rec) = db::<H>();
    let (mut wr, mut w) = (worker(&db), worker(&db));
    let mut tx = wr.begin();
    assert_eq!(tx.read(T, X).expect("read").map(num), Some(10));
    tx.write(T, Z, &v(5)).expect("write");
    tx.commit().expect("commit");
    assert!(!blind_write(&mut w, X, 1));
    let mut tx = w.begin();
    tx.write(T, X, &v(2)).expect("write");
    tx.commit().expect("commit");
    let c = counters(&mut w);
    assert_eq!(c["nwr_commits_omitted"], 0);
    assert_eq!(c["nwr_fail_mrs"], 1);
    assert_eq!(read_now(&mut w, X), 2);
    assert_serializable(&rec.take());
}

/// mWS (conservative form): a transaction that read a version written in this epoch is not
/// omitted (its writer may be reachable from the pivot); the baseline commits it.
pub fn reading_a_version_of_this_epoch_falls_back_to_the_baseline<H: Hooks>() {
    let (db, rec) = db::<H>();
    let mut w = worker(&db);
    assert!(!blind_write(&mut w, X, 1));
    assert!(!blind_write(&mut w, Y, 1));
    let _ = counters(&mut w);
    let mut tx = w.begin();
    assert_eq!(tx.read(T, Y).expect("read").map(num), Some(1));
    tx.write(T, X, &v(2)).expect("write");
    tx.commit().expect("commit");
    let c = counters(&mut w);
    assert_eq!((c["nwr_commits_omitted"], c["nwr_fail_mws"]), (0, 1));
    assert_eq!(c["nwr_commits_baseline"], 1);
    assert_eq!(read_now(&mut w, X), 2);
    assert_serializable(&rec.take());
}

/// NWR never aborts: a transaction whose read was overwritten fails NWR validation
/// (overwriters) and is then aborted by a single-version baseline itself, with its cause.
pub fn a_failed_validation_hands_over_to_the_baseline_which_alone_aborts<H: Hooks>() {
    let (db, _rec) = db::<H>();
    let (mut a, mut b) = (worker(&db), worker(&db));
    assert!(!blind_write(&mut b, X, 1));
    let _ = counters(&mut b);
    let mut tx = a.begin();
    assert_eq!(tx.read(T, Y).expect("read").map(num), Some(20));
    tx.write(T, X, &v(5)).expect("write");
    let mut upd = b.begin();
    assert!(upd.update(T, Y, &mut |v| v[0] += 1).expect("update"));
    upd.commit().expect("commit");
    let err = tx.commit().expect_err("the read of y changed");
    assert_eq!(
        err.conflict().expect("a conflict").cause,
        ConflictCause::ReadValidation
    );
    assert_eq!(counters(&mut a)["nwr_fail_overwriters"], 1);
}

/// An omitted write is never read by anyone: many omitted writes of distinct values, read back by
/// fresh transactions in the same and later epochs, never show up.
pub fn an_omitted_write_is_never_read<H: Hooks>() {
    an_omitted_write_is_never_read_with::<H, ()>(|_| ());
}

/// [`an_omitted_write_is_never_read`], with `versions` of the engine equal before and after each
/// epoch's omissions (MVTO: an omitted write links no version).
pub fn an_omitted_write_is_never_read_with<H: Hooks, V: PartialEq + std::fmt::Debug>(
    versions: impl Fn(&Db<H>) -> V,
) {
    let (db, rec) = db::<H>();
    let (mut w, mut r) = (worker(&db), worker(&db));
    for epoch_round in 0..3u64 {
        let pivot = 1_000 * (epoch_round + 1);
        assert!(!blind_write(&mut w, X, pivot));
        let before = versions(&db);
        for i in 1..20 {
            assert!(blind_write(&mut w, X, pivot + i));
            assert_eq!(read_now(&mut r, X), pivot);
        }
        assert_eq!(versions(&db), before);
        assert!(H::advance::<Nwr>(&db));
        assert_eq!(
            read_now(&mut r, X),
            pivot,
            "still the pivot after the epoch ends"
        );
        // That read of a pre-epoch version would (rightly) block omissions of x in this epoch
        // (mRS); start the next round in a fresh epoch.
        assert!(H::advance::<Nwr>(&db));
    }
    let h = rec.take();
    assert_eq!(omitted_writes(&h), 57);
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
pub fn acknowledging_at_commit_disables_omission<H: Hooks>() {
    let (db, _) = db_with::<H, Nwr>(ConfigOf::<H>::manual());
    let mut w = worker(&db);
    assert!(!blind_write(&mut w, X, 1));
    assert!(!blind_write(&mut w, X, 2));
    assert_eq!(read_now(&mut w, X), 2);
}

/// Strict serializability across epoch boundaries, epochs advanced by hand: with commit-return
/// times the real-time order is violated (t2 began after t1 returned, yet t2's omitted write is
/// ordered before t1's), but with group-commit acknowledgements (the epoch's end,
/// [`nwr::at_acknowledgements`]) it holds, and transactions of later epochs are ordered after
/// every earlier one.
pub fn strict_serializable_with_group_commit_acknowledgements<H: Hooks>() {
    let (db, rec) = db::<H>();
    let (mut a, mut b, mut c) = (worker(&db), worker(&db), worker(&db));
    let mut acks = Vec::new();
    for round in 0..3u64 {
        assert!(!blind_write(&mut a, X, 100 + round));
        assert!(
            blind_write(&mut b, X, 200 + round),
            "t2 begins after t1 returned"
        );
        let mut t = c.begin();
        assert_eq!(
            t.read(T, Y).expect("read").map(num),
            Some(if round == 0 { 20 } else { round })
        );
        t.write(T, Z, &v(round)).expect("write");
        t.commit().expect("commit");
        assert!(!blind_write(&mut a, Y, round + 1));
        assert!(H::advance::<Nwr>(&db));
        acks.push(rec.now_ns());
        assert_eq!(read_now(&mut c, X), 100 + round);
        // That pre-epoch read of x blocks omissions of x in this epoch (mRS): use a fresh one.
        assert!(H::advance::<Nwr>(&db));
        acks.push(rec.now_ns());
    }
    let last = rec.now_ns();
    let raw = rec.take();
    let report = check(&raw, CheckOptions::strict());
    assert!(
        !report.is_serializable(),
        "commit-return times must show the reordering: {report}"
    );
    let report = check(
        &nwr::at_acknowledgements(raw, &acks, last),
        CheckOptions::strict(),
    );
    assert!(report.is_serializable(), "{report}");
}

/// The schedule that needs the mRS check: t_r reads x's pre-epoch version and blind-writes z
/// (installed: z's first version of the epoch); t_p blind-writes x (installed, the pivot); t_j
/// blind-writes x and z. Omitting t_j orders it after t_r on x (t_r read the older version) and
/// before t_r on z: a cycle. The correct rule installs t_j instead.
pub fn mrs_schedule<H: Hooks>(db: &Db<H>) {
    let (mut r, mut p, mut j) = (worker(db), worker(db), worker(db));
    let mut tr = r.begin();
    assert_eq!(tr.read(T, X).expect("read").map(num), Some(10));
    tr.write(T, Z, &v(1)).expect("write");
    tr.commit().expect("commit");
    assert!(!blind_write(&mut p, X, 2));
    let mut tj = j.begin();
    tj.write(T, X, &v(3)).expect("write");
    tj.write(T, Z, &v(3)).expect("write");
    tj.commit().expect("commit");
}

/// The schedule that needs the epoch check: t_j reads y's loaded version and blind-writes x,
/// which has no version of this epoch; t_k then (in the next epoch where
/// [`Hooks::EPOCH_SCHEDULE_ADVANCES`]) reads x and blind-writes y. If t_j's write were omitted,
/// t_k would read x's older version (t_k before t_j) while t_j read y's older version (t_j before
/// t_k): a cycle. The correct rule installs t_j, and t_k reads it.
pub fn epoch_schedule<H: Hooks>(db: &Db<H>) {
    let (mut j, mut k) = (worker(db), worker(db));
    let mut tj = j.begin();
    assert_eq!(tj.read(T, Y).expect("read").map(num), Some(20));
    tj.write(T, X, &v(1)).expect("write");
    tj.commit().expect("commit");
    if H::EPOCH_SCHEDULE_ADVANCES {
        assert!(H::advance::<Nwr>(db));
    }
    let mut tk = k.begin();
    let _ = tk.read(T, X).expect("read");
    tk.write(T, Y, &v(2)).expect("write");
    tk.commit().expect("commit");
}

/// Both schedules' histories check under the correct rule.
pub fn the_mrs_and_epoch_schedules_are_serializable<H: Hooks>() {
    for schedule in [mrs_schedule::<H>, epoch_schedule::<H>] {
        let (db, rec) = db::<H>();
        schedule(&db);
        assert_serializable(&rec.take());
    }
}

/// The mutant without the merged-read check produces a cycle on [`mrs_schedule`].
pub fn skipping_the_mrs_check_is_caught_by_the_checker<H: Hooks>() {
    let config = manual::<H, Nwr>()
        .with_mutation(H::nwr_mutation(txlab_nwr::NwrMutation::SkipMergedReadCheck));
    let (db, rec) = db_with::<H, Nwr>(config);
    mrs_schedule::<H>(&db);
    assert_not_serializable(&rec.take());
}

/// The mutant without the epoch check produces a cycle on [`epoch_schedule`].
pub fn skipping_the_epoch_check_is_caught_by_the_checker<H: Hooks>() {
    let config =
        manual::<H, Nwr>().with_mutation(H::nwr_mutation(txlab_nwr::NwrMutation::SkipEpochCheck));
    let (db, rec) = db_with::<H, Nwr>(config);
    epoch_schedule::<H>(&db);
    assert_not_serializable(&rec.take());
}

/// [`nwr::scan_miss_blocks_omission`] on family `H`'s `Nwr` engine.
pub fn scan_miss_blocks_omission<H: Hooks>() {
    nwr::scan_miss_blocks_omission::<Kit<H, Nwr>>();
}

/// The kit's random schedules find the mutant without the epoch check (mode `W`).
pub fn kit_catches_skipped_epoch_check<H: Hooks, W: WriteOmission>() {
    crate::mutation::assert_caught::<Kit<H, W, SkipEpochCheck>>();
}

/// The kit's random schedules find the mutant without the merged-read check (mode `W`).
pub fn kit_catches_skipped_mrs_check<H: Hooks, W: WriteOmission>() {
    crate::mutation::assert_caught::<Kit<H, W, SkipMergedReadCheck>>();
}

/// [`nwr::omits_on_every_index_kind`], each omission landing in its own key's pivot object.
pub fn omits_on_every_index_kind<H: Hooks>() {
    nwr::omits_on_every_index_kind::<Kit<H, Nwr>>(H::pivot_word::<Nwr>);
}

/// [`nwr::pre_epoch_readers_and_marks`].
pub fn pre_epoch_readers_and_marks<H: Hooks>() {
    nwr::pre_epoch_readers_and_marks::<Kit<H, Nwr>>();
}

/// [`nwr::read_marks_are_written_once_per_record_and_epoch`] (the engines with a read-epoch
/// word).
pub fn read_marks_are_written_once_per_record_and_epoch<H: Hooks>() {
    nwr::read_marks_are_written_once_per_record_and_epoch::<Kit<H, Nwr>>(H::advance::<Nwr>);
}

/// [`nwr::omits_after_retire_and_reinsert`] on keyed tables, whose pivot objects go with their
/// records ([`Hooks::retiring`]'s configuration).
pub fn omits_after_retire_and_reinsert<H: Hooks>() {
    nwr::omits_after_retire_and_reinsert::<Kit<H, Nwr, Retiring>>(&nwr::NwrRetireProbe {
        advance: &H::advance::<Nwr>,
        is_mapped: &H::is_mapped::<Nwr>,
        pivot_word: &H::pivot_word::<Nwr>,
    });
}

/// The single-write engine reports its name and counts read-only commits as unmarked readers.
pub fn engine_name_and_unmarked_read_only_commits<H: Hooks>() {
    nwr::single_write_engine_name_and_unmarked_readers::<Kit<H, NwrSingleWrite>>(H::NAMES[2]);
}

/// SmallBank (read-modify-writes of balances, audit ledger), epochs advancing underneath: the
/// invariants and the history checked.
pub fn stress_smallbank_across_epochs<H: Hooks>() {
    crate::stress::smallbank::<Kit<H, NwrSingleWrite, EveryMs>>(&[2, 4], 1_500);
}

/// [`nwr::single_write_marks`].
pub fn single_write_marks<H: Hooks>() {
    nwr::single_write_marks::<Kit<H, NwrSingleWrite>>();
}

/// [`nwr::single_write_strict_with_acknowledgements`], epochs advanced by hand.
pub fn single_write_strict_with_acknowledgements<H: Hooks>() {
    nwr::single_write_strict_with_acknowledgements::<Kit<H, NwrSingleWrite>>(
        H::advance::<NwrSingleWrite>,
    );
}

/// [`nwr::single_write_mark_lasts_one_epoch`].
pub fn single_write_mark_lasts_one_epoch<H: Hooks>() {
    nwr::single_write_mark_lasts_one_epoch::<Kit<H, NwrSingleWrite>>(H::advance::<NwrSingleWrite>);
}

/// The `Nwr` engine of family `$hooks` ([`Hooks`]) in the kit, as `#[test]`s in a module
/// `nwr_kit`: the whole [`protocol_kit!`](crate::protocol_kit), the epoch-crossing stress
/// ([`nwr_epoch_stress!`](crate::nwr_epoch_stress), 1 ms epochs), the two NWR mutants, the
/// scan-miss rule, omissions on every index kind, pre-epoch readers' marks and omission across
/// retirement; then the tests named after the family (functions of this module, e.g.
/// `read_marks_are_written_once_per_record_and_epoch`).
#[macro_export]
macro_rules! nwr_kit {
    ($hooks:ty $(, $extra:ident)* $(,)?) => {
        mod nwr_kit {
            use super::*;
            type NwrKit = $crate::family::Kit<$hooks, $crate::family::Nwr>;
            type NwrKitEveryMs =
                $crate::family::Kit<$hooks, $crate::family::Nwr, $crate::family::EveryMs>;
            $crate::protocol_kit!(NwrKit);
            $crate::nwr_epoch_stress!(NwrKitEveryMs);
            #[test]
            fn kit_catches_skipped_epoch_check() {
                $crate::nwr_kit::kit_catches_skipped_epoch_check::<$hooks, $crate::family::Nwr>();
            }
            #[test]
            fn kit_catches_skipped_mrs_check() {
                $crate::nwr_kit::kit_catches_skipped_mrs_check::<$hooks, $crate::family::Nwr>();
            }
            $crate::nwr_kit!(@tests $hooks:
                scan_miss_blocks_omission,
                omits_on_every_index_kind,
                pre_epoch_readers_and_marks,
                omits_after_retire_and_reinsert,
                $($extra),*
            );
        }
    };
    (@tests $hooks:ty: $($test:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                $crate::nwr_kit::$test::<$hooks>();
            }
        )*
    };
}

/// The `NwrSingleWrite` engine of family `$hooks` in the kit, as `#[test]`s in a module
/// `nwr_single_kit`: the whole [`protocol_kit!`](crate::protocol_kit), the epoch-crossing stress
/// and SmallBank (1 ms epochs), the two NWR mutants and the engine's name; then the tests named
/// after the family (e.g. `single_write_marks`).
#[macro_export]
macro_rules! nwr_single_kit {
    ($hooks:ty $(, $extra:ident)* $(,)?) => {
        mod nwr_single_kit {
            use super::*;
            type SingleKit = $crate::family::Kit<$hooks, $crate::family::NwrSingleWrite>;
            type SingleKitEveryMs = $crate::family::Kit<
                $hooks,
                $crate::family::NwrSingleWrite,
                $crate::family::EveryMs,
            >;
            $crate::protocol_kit!(SingleKit);
            $crate::nwr_epoch_stress!(SingleKitEveryMs);
            #[test]
            fn kit_catches_skipped_epoch_check() {
                $crate::nwr_kit::kit_catches_skipped_epoch_check::<
                    $hooks,
                    $crate::family::NwrSingleWrite,
                >();
            }
            #[test]
            fn kit_catches_skipped_mrs_check() {
                $crate::nwr_kit::kit_catches_skipped_mrs_check::<
                    $hooks,
                    $crate::family::NwrSingleWrite,
                >();
            }
            $crate::nwr_kit!(@tests $hooks:
                stress_smallbank_across_epochs,
                engine_name_and_unmarked_read_only_commits,
                $($extra),*
            );
        }
    };
}

/// The step-by-step semantics of family `$hooks`'s `Nwr` engine (module docs), as `#[test]`s in
/// a module `nwr_semantics`; then the tests named after the family (e.g.
/// `fig1_b_d_a_later_blind_write_in_the_epoch_is_omitted`).
#[macro_export]
macro_rules! nwr_semantics {
    ($hooks:ty $(, $extra:ident)* $(,)?) => {
        mod nwr_semantics {
            use super::*;
            $crate::nwr_kit!(@tests $hooks:
                engine_names_and_the_baseline_reports_no_counters,
                fig1_c_a_reader_of_the_pivot_does_not_prevent_omission,
                the_first_blind_write_of_each_epoch_is_installed,
                read_modify_writes_inserts_and_deletes_are_never_omitted,
                a_pre_epoch_read_in_the_epoch_blocks_omission,
                reading_a_version_of_this_epoch_falls_back_to_the_baseline,
                an_omitted_write_is_never_read,
                acknowledging_at_commit_disables_omission,
                strict_serializable_with_group_commit_acknowledgements,
                the_mrs_and_epoch_schedules_are_serializable,
                skipping_the_mrs_check_is_caught_by_the_checker,
                skipping_the_epoch_check_is_caught_by_the_checker,
                $($extra),*
            );
        }
    };
}
