//! Silo+NWR with single-write omitters (`SiloNwrSingle`, engine `silo-nwr-single`) in the
//! correctness kit: Hermitage schedules, random schedules (reads, blind writes,
//! read-modify-writes, inserts, deletes and scans), threaded stress across epochs, the NWR
//! mutants, and the schedules that show which reads this rule marks.
//!
//! As in `kit_nwr.rs`: manual epochs and `AckMode::EpochStable`; the kit checks histories for
//! serializability, and strictness with acknowledgement times is checked by the last test here
//! (as `tests/nwr.rs` does for `silo-nwr`). The check-order mutant needs a preemption inside a
//! commit and is caught in `tests/shuttle.rs`.

use std::sync::Arc;
use std::time::Duration;
use txlab_check::MemoryRecorder;
use txlab_core::epoch::EpochConfig;
use txlab_core::{AckMode, Error, Schema};
use txlab_silo::{Mutation, SiloConfig, SiloNwrSingle};
use txlab_testkit::{Expect, Hermitage, Protocol};

fn config() -> SiloConfig {
    SiloConfig::manual().with_ack(AckMode::EpochStable)
}

struct SiloNwrSingleKit;

impl Protocol for SiloNwrSingleKit {
    type Engine = SiloNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-single";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        SiloNwrSingle::with_omission(schema, config(), recorder)
    }

    /// Plain Silo's outcomes (`kit.rs`): the Hermitage schedules that NWR changes for
    /// `silo-nwr` (G0, OTV) omit transactions that write two items, which this rule never does.
    fn expect(test: Hermitage) -> Expect {
        match test {
            Hermitage::G0 | Hermitage::G1a => Expect::NoConflicts,
            Hermitage::G1b
            | Hermitage::G1c
            | Hermitage::PmpWrite
            | Hermitage::P4
            | Hermitage::G2Item => Expect::Aborts(&[1]),
            Hermitage::Otv => Expect::Aborts(&[2]),
            Hermitage::Pmp | Hermitage::GSingle => Expect::Aborts(&[0]),
            Hermitage::G2 => Expect::Aborts(&[0, 1]),
            _ => Expect::Serializable,
        }
    }
}

txlab_testkit::protocol_kit!(SiloNwrSingleKit);

/// Which reads leave a mark under this rule, and the scan-miss mark (`txlab_testkit::nwr`).
#[test]
fn nwr_single_write_marks() {
    txlab_testkit::nwr::single_write_marks::<SiloNwrSingleKit>();
}

/// A background epoch every millisecond, so stress runs cross many epoch boundaries.
struct SiloNwrSingleTimed;

impl Protocol for SiloNwrSingleTimed {
    type Engine = SiloNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-single-1ms-epochs";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = config().with_epoch(EpochConfig::every(Duration::from_millis(1))?);
        SiloNwrSingle::with_omission(schema, cfg, recorder)
    }
}

// YCSB and read-mostly YCSB-B with epochs advancing underneath (`txlab_testkit::nwr_epoch_stress`).
txlab_testkit::nwr_epoch_stress!(SiloNwrSingleTimed);

/// SmallBank (read-modify-writes of balances, audit ledger), epochs advancing underneath: the
/// invariants and the history checked.
#[test]
fn stress_smallbank_across_epochs() {
    txlab_testkit::stress::smallbank::<SiloNwrSingleTimed>(&[2, 4], 1_500);
}

macro_rules! mutant {
    ($name:ident, $test:ident, $mutation:expr) => {
        struct $name;
        impl Protocol for $name {
            type Engine = SiloNwrSingle<MemoryRecorder>;
            const NAME: &'static str = stringify!($name);
            const STRICT: bool = false;
            fn build(
                schema: &Schema,
                recorder: Arc<MemoryRecorder>,
            ) -> Result<Self::Engine, Error> {
                SiloNwrSingle::with_omission(schema, config().with_mutation($mutation), recorder)
            }
        }
        #[test]
        fn $test() {
            txlab_testkit::mutation::assert_caught::<$name>();
        }
    };
}

mutant!(
    NwrSingleSkipEpochCheck,
    kit_catches_skipped_epoch_check,
    Mutation::NwrSkipEpochCheck
);
// Under this rule the mRS slot only holds the pivot writer's own read of the item (and scan
// misses), so the random schedules must find the lost update through a read-modify-write pivot.
mutant!(
    NwrSingleSkipMergedReadCheck,
    kit_catches_skipped_mrs_check,
    Mutation::NwrSkipMergedReadCheck
);

/// The engine reports its own name, and counts read-only commits as unmarked readers.
#[test]
fn engine_name_and_unmarked_read_only_commits() {
    use txlab_core::{Engine, TableId, TableSpec, Transaction, TxOps, Worker};
    let mut schema = Schema::new();
    schema.add(TableSpec::dense("t", 8, 4)).unwrap();
    let db = SiloNwrSingle::new_with_omission(&schema, config()).unwrap();
    assert_eq!(db.name(), "silo-nwr-single");
    db.load(TableId(0), 1, &7u64.to_le_bytes()).unwrap();
    let mut w = db.worker().unwrap();
    for _ in 0..3 {
        let mut t = w.begin();
        assert!(t.read(TableId(0), 1).unwrap().is_some());
        t.commit().unwrap();
    }
    let mut unmarked = 0;
    w.drain_counters(&mut |name, n| {
        if name == "nwr_unmarked_readers" {
            unmarked += n;
        }
    });
    assert_eq!(unmarked, 3);
}

/// Strict serializability across epoch boundaries, epochs advanced by hand (as `tests/nwr.rs`
/// does for `silo-nwr`): with commit-return times the real-time order is violated (t2 began
/// after t1 returned, yet t2's omitted write is ordered before t1's), with group-commit
/// acknowledgements (the end of each epoch) it holds. Each round also has a read-only reader of
/// the older y (no mark) and a single-writer that read it.
#[test]
fn strict_serializable_with_group_commit_acknowledgements() {
    use txlab_check::{CheckOptions, History, check};
    use txlab_core::history::{Outcome, Recorder};
    use txlab_core::{Engine, TableId, TableSpec, Transaction, TxOps, Worker};
    const T: TableId = TableId(0);
    let num = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap());
    let omitted = |c: Counters| c.get("nwr_commits_omitted") == Some(&1);
    let mut schema = Schema::new();
    schema.add(TableSpec::dense("t", 8, 8)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = SiloNwrSingle::with_omission(&schema, config(), rec.clone()).unwrap();
    for k in 0..8 {
        db.load(T, k, &(10 * k).to_le_bytes()).unwrap();
    }
    let (mut a, mut b, mut c) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    let (x, y, z) = (1, 2, 3);
    let mut acks = Vec::new();
    let mut omissions = 0;
    for round in 0..3u64 {
        assert!(!omitted(blind_write(&mut a, x, 100 + round)), "x's pivot");
        assert!(
            omitted(blind_write(&mut b, x, 200 + round)),
            "t2 begins after t1 returned"
        );
        omissions += 1;
        let mut t = c.begin();
        let old_y = t.read(T, y).unwrap().map(num).unwrap();
        t.commit().unwrap();
        let mut t = c.begin();
        assert_eq!(t.read(T, y).unwrap().map(num), Some(old_y));
        t.write(T, z, &round.to_le_bytes()).unwrap();
        t.commit().unwrap();
        assert!(!omitted(blind_write(&mut a, y, round + 1)), "y's pivot");
        assert!(db.epochs().advance());
        acks.push(rec.now_ns());
        let mut t = c.begin();
        assert_eq!(t.read(T, x).unwrap().map(num), Some(100 + round));
        t.commit().unwrap();
    }
    assert!(db.epochs().advance());
    acks.push(rec.now_ns());
    let last = rec.now_ns();
    let raw = rec.take();
    assert_eq!(txlab_testkit::nwr::omitted_writes(&raw), omissions);
    let report = check(&raw, CheckOptions::strict());
    assert!(
        !report.is_serializable(),
        "commit-return times must show the reordering: {report}"
    );
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
    let report = check(&History::from_records(records), CheckOptions::strict());
    assert!(report.is_serializable(), "{report}");
}

/// The pivot writer's mark (`PIVOT_READ` in the TID word) lasts one epoch. In epoch `e` a
/// read-modify-write of x installs x's pivot and marks it, so two later blind writes of x commit
/// visibly (the mark is copied to each version of `e`). In `e + 1` a blind write installs x's
/// new pivot, unmarked, and the next blind write of x is omitted. Every history is checked.
#[test]
fn the_pivot_writers_mark_lasts_one_epoch() {
    use txlab_check::{CheckOptions, check};
    use txlab_core::{Engine, TableId, TableSpec, Transaction, TxOps, Worker};
    const T: TableId = TableId(0);
    const X: u64 = 1;
    let mut schema = Schema::new();
    schema.add(TableSpec::dense("t", 8, 4)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = SiloNwrSingle::with_omission(&schema, config(), rec.clone()).unwrap();
    db.load(T, X, &7u64.to_le_bytes()).unwrap();
    let mut w = db.worker().unwrap();

    let mut t = w.begin();
    let old = u64::from_le_bytes(t.read(T, X).unwrap().unwrap().try_into().unwrap());
    t.write(T, X, &(old + 1).to_le_bytes()).unwrap();
    t.commit().unwrap();
    for value in [20, 21] {
        let c = blind_write(&mut w, X, value);
        assert_eq!(c["nwr_commits_omitted"], 0, "{c:?}");
        assert_eq!(c["nwr_fail_mrs"], 1, "{c:?}");
    }

    assert!(db.epochs().advance());
    let c = blind_write(&mut w, X, 30);
    assert_eq!(c["nwr_fail_epoch"], 1, "the new epoch's pivot: {c:?}");
    let c = blind_write(&mut w, X, 31);
    assert_eq!(c["nwr_commits_omitted"], 1, "{c:?}");

    let mut t = w.begin();
    assert_eq!(t.read(T, X).unwrap(), Some(&30u64.to_le_bytes()[..]));
    t.commit().unwrap();
    let history = rec.take();
    assert_eq!(txlab_testkit::nwr::omitted_writes(&history), 1);
    let report = check(&history, CheckOptions::default());
    assert!(report.is_serializable(), "{report}");
}

type Counters = std::collections::HashMap<&'static str, u64>;

/// Drains `w`'s counters.
fn counters(w: &mut impl txlab_core::Worker) -> Counters {
    let mut m = Counters::new();
    w.drain_counters(&mut |n, d| *m.entry(n).or_insert(0) += d);
    m
}

/// Blind-writes `value` to `key` of table 0 in a transaction of its own and returns the counters
/// that commit changed.
fn blind_write(w: &mut impl txlab_core::Worker, key: u64, value: u64) -> Counters {
    use txlab_core::{TableId, Transaction, TxOps};
    let _ = counters(w);
    let mut tx = w.begin();
    tx.write(TableId(0), key, &value.to_le_bytes()).unwrap();
    tx.commit().unwrap();
    counters(w)
}
