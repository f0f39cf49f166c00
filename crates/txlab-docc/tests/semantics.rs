//! Engine behaviour the kits do not pin down: read-only misuse, deterministic user aborts, bad
//! input, the run lock, retry and prefetching counters, and garbage collection.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use txlab_check::MemoryRecorder;
use txlab_core::deterministic::Deterministic;
use txlab_core::{AccessSet, Engine, Error, Program, Schema, TableId, TableSpec, TxError, TxOps};
use txlab_core::{TxResult, Worker};
use txlab_docc::{Chain, Docc, DoccBasic, DoccConfig, InPlace, Layout};
use txlab_testkit::deterministic::{
    OneShot, Present, Setup, one_shot_schema, tpcc_small, workload_log, ycsb_hot,
};
use txlab_testkit::replay::Op;
use txlab_workload::Workload;

const T: TableId = TableId(0);

/// Adds `delta` to key 0 unless the value read is at least `limit` (then rolls back), and
/// claims `read_only` when told to (a liar when `delta != 0`).
#[derive(Debug, Clone)]
struct Capped {
    delta: u64,
    limit: u64,
    claims_read_only: bool,
}

impl Program for Capped {
    type Output = u64;
    fn run<X: TxOps + ?Sized>(&self, tx: &mut X) -> TxResult<u64> {
        let v = u64::from_le_bytes(tx.read(T, 0)?.expect("loaded").try_into().unwrap());
        if v >= self.limit {
            return Err(TxError::user_abort("over the cap"));
        }
        if self.delta != 0 {
            tx.write(T, 0, &(v + self.delta).to_le_bytes())?;
        }
        Ok(v)
    }
    fn declare(&self, _out: &mut AccessSet) {}
    fn kind(&self) -> &'static str {
        "capped"
    }
    fn read_only(&self) -> bool {
        self.claims_read_only
    }
}

fn kv_schema() -> Schema {
    let mut s = Schema::new();
    s.add(TableSpec::dense("kv", 8, 4)).unwrap();
    s
}

fn engines_agree_on_caps<L: Layout>(prefetch: bool) {
    let cfg = DoccConfig {
        prefetch,
        ..DoccConfig::default()
    };
    let log: Vec<Capped> = (0..40)
        .map(|i| Capped {
            delta: 1,
            limit: 25,
            claims_read_only: i == 7,
        })
        .collect();
    for workers in [1, 2, 4] {
        let db = Docc::<L>::builder()
            .config(cfg)
            .build(&kv_schema())
            .unwrap();
        db.load(T, 0, &0u64.to_le_bytes()).unwrap();
        let r = db.execute_log(&log, workers).unwrap();
        // Program 7 claims read_only and writes: a misuse naming its kind, nothing written.
        match &r[7] {
            Err(TxError::Error(Error::Misuse(m))) => assert!(m.ends_with("kind: capped"), "{m}"),
            other => panic!("program 7: {other:?}"),
        }
        // The others add 1 each until the value reaches 25, then roll back, deterministically.
        let oks: Vec<u64> = r.iter().filter_map(|x| x.as_ref().ok().copied()).collect();
        assert_eq!(oks, (0..25).collect::<Vec<_>>(), "{workers} workers");
        assert!(
            r[26..]
                .iter()
                .all(|x| matches!(x, Err(TxError::UserAbort(_))))
        );
        let mut w = db.worker().unwrap();
        let mut tx = w.begin();
        assert_eq!(tx.read(T, 0).unwrap().unwrap(), 25u64.to_le_bytes());
    }
}

#[test]
fn misuse_and_user_aborts_are_decided_on_validated_reads() {
    engines_agree_on_caps::<InPlace>(false);
    engines_agree_on_caps::<Chain>(false);
    engines_agree_on_caps::<Chain>(true);
}

#[test]
fn bad_input_is_refused_with_the_value_named() {
    let db = DoccBasic::builder()
        .config(DoccConfig {
            prefetch: false,
            ..DoccConfig::default()
        })
        .build(&kv_schema())
        .unwrap();
    let log = [Capped {
        delta: 0,
        limit: 9,
        claims_read_only: true,
    }];
    let e = db.execute_log(&log, 0).unwrap_err();
    assert!(e.to_string().contains("workers = 0"), "{e}");
    let e = db.execute_log(&log, 1025).unwrap_err();
    assert!(e.to_string().contains("1..=1024"), "{e}");
    // Prefetching needs placeholders.
    let e = Docc::<InPlace>::builder().build(&kv_schema()).unwrap_err();
    assert!(e.to_string().contains("prefetch = true"), "{e}");
    // Interactive workers and deterministic runs exclude each other.
    db.load(T, 0, &0u64.to_le_bytes()).unwrap();
    let w = db.worker().unwrap();
    let e = db.execute_log(&log, 1).unwrap_err();
    assert!(
        matches!(e, Error::Misuse(m) if m.contains("interactive workers")),
        "{e}"
    );
    drop(w);
    assert_eq!(db.execute_log(&log, 1).unwrap()[0], Ok(0));
}

/// A writer of key 0 that holds its first attempt until a reader has read key 0, so the reader
/// must fail validation and retry (a handshake, not a timing assumption: it needs two workers).
#[derive(Debug)]
struct Handshake {
    writer: bool,
    read_done: Arc<AtomicBool>,
}

impl Program for Handshake {
    type Output = u64;
    fn run<X: TxOps + ?Sized>(&self, tx: &mut X) -> TxResult<u64> {
        if self.writer {
            let deadline = Instant::now() + Duration::from_secs(30);
            while !self.read_done.load(Ordering::SeqCst) {
                assert!(Instant::now() < deadline, "the reader never read");
                std::thread::yield_now();
            }
            tx.write(T, 0, &7u64.to_le_bytes())?;
            return Ok(0);
        }
        let v = u64::from_le_bytes(tx.read(T, 0)?.expect("loaded").try_into().unwrap());
        let w = u64::from_le_bytes(tx.read(T, 1)?.expect("loaded").try_into().unwrap());
        self.read_done.store(true, Ordering::SeqCst);
        tx.write(T, 2, &(v + w).to_le_bytes())?;
        Ok(v)
    }
    fn declare(&self, _out: &mut AccessSet) {}
    fn kind(&self) -> &'static str {
        "handshake"
    }
}

/// The reader reads key 0 before the writer (earlier in the order) commits, so it retries; with
/// prefetching its retry reaches keys 0, 1 and 2 through the first attempt's references.
#[test]
fn retries_reuse_the_first_attempts_references() {
    for prefetch in [false, true] {
        let db = Docc::<Chain>::builder()
            .config(DoccConfig {
                prefetch,
                ..DoccConfig::default()
            })
            .build(&kv_schema())
            .unwrap();
        for k in 0..3 {
            db.load(T, k, &1u64.to_le_bytes()).unwrap();
        }
        let read_done = Arc::new(AtomicBool::new(false));
        let log = [
            Handshake {
                writer: true,
                read_done: Arc::clone(&read_done),
            },
            Handshake {
                writer: false,
                read_done,
            },
        ];
        let r = db.execute_log(&log, 2).unwrap();
        assert_eq!(
            r[1],
            Ok(7),
            "the reader's result is the one after the writer"
        );
        let s = db.stats();
        assert_eq!((s.retries, s.validation_failures), (1, 1), "{s:?}");
        let saved = if prefetch { 3 } else { 0 };
        assert_eq!(s.retry_lookups_saved, saved, "{s:?}");
        assert_eq!(s.retry_lookups_seen_before, saved, "{s:?}");
    }
}

/// Transaction `i` of a relay: reads key 0, says so (`read[i]`), then, unless it is the last,
/// holds its first attempt until transaction `i + 1` has read key 0 too, and writes key 0 + 1.
/// So every transaction but the first begins while the one before it (its dependency) has not
/// committed: a handshake, not a timing assumption (it needs two workers).
#[derive(Debug)]
struct Relay {
    i: usize,
    read: Arc<Vec<AtomicBool>>,
}

impl Program for Relay {
    type Output = u64;
    fn run<X: TxOps + ?Sized>(&self, tx: &mut X) -> TxResult<u64> {
        let v = u64::from_le_bytes(tx.read(T, 0)?.expect("loaded").try_into().unwrap());
        self.read[self.i].store(true, Ordering::SeqCst);
        if let Some(next) = self.read.get(self.i + 1) {
            let deadline = Instant::now() + Duration::from_secs(30);
            while !next.load(Ordering::SeqCst) {
                assert!(
                    Instant::now() < deadline,
                    "transaction {} never read",
                    self.i + 1
                );
                std::thread::yield_now();
            }
        }
        tx.write(T, 0, &(v + 1).to_le_bytes())?;
        Ok(v)
    }
    fn declare(&self, _out: &mut AccessSet) {}
    fn kind(&self) -> &'static str {
        "relay"
    }
}

/// A relay of `n` transactions on 2 workers (`Relay`); the results and the engine's counters.
fn relay<L: Layout>(cfg: DoccConfig, n: usize) -> (Vec<TxResult<u64>>, txlab_docc::DoccStats) {
    let db = Docc::<L>::builder()
        .config(cfg)
        .build(&kv_schema())
        .unwrap();
    db.load(T, 0, &0u64.to_le_bytes()).unwrap();
    let read: Arc<Vec<AtomicBool>> = Arc::new((0..n).map(|_| AtomicBool::new(false)).collect());
    let log: Vec<Relay> = (0..n)
        .map(|i| Relay {
            i,
            read: Arc::clone(&read),
        })
        .collect();
    let r = db.execute_log(&log, 2).unwrap();
    (r, db.stats())
}

/// `docc_settled` counts exactly the transactions whose dependency had committed when they
/// began. With one worker, that is every transaction (each begins after the one before it
/// finished): none waits or validates. In a relay (`Relay`), where every transaction but the
/// first begins before its dependency commits, only the first (no dependency) is settled; the
/// others wait, fail validation (their dependency wrote what they read) and retry. The
/// `SettleEarly` mutant settles them anyway and loses every other update.
#[test]
fn settled_transactions_are_those_whose_dependency_committed_before_they_began() {
    fn check<L: Layout>(prefetch: bool) {
        let cfg = DoccConfig {
            prefetch,
            ..DoccConfig::default()
        };
        let w = ycsb_hot();
        let db = Docc::<L>::builder().config(cfg).build(&w.schema()).unwrap();
        w.load(&db).unwrap();
        db.execute_log(&workload_log(&w, 5, 300), 1).unwrap();
        let s = db.stats();
        assert_eq!(s.settled, 300, "{} one worker: {s:?}", L::NAME);
        assert_eq!(
            (s.waits, s.retries),
            (0, 0),
            "{} one worker: {s:?}",
            L::NAME
        );

        let n = 6;
        let (r, s) = relay::<L>(cfg, n);
        let expected: Vec<TxResult<u64>> = (0..n as u64).map(Ok).collect();
        assert_eq!(r, expected, "{} relay", L::NAME);
        assert_eq!(s.settled, 1, "{} relay: {s:?}", L::NAME);
        assert_eq!(
            (s.retries, s.validation_failures),
            (n as u64 - 1, n as u64 - 1),
            "{} relay: {s:?}",
            L::NAME
        );

        let mutant = DoccConfig {
            mutation: Some(txlab_docc::Mutation::SettleEarly),
            ..cfg
        };
        let (r, s) = relay::<L>(mutant, n);
        // Transaction i > 0 began once i - 2 had committed (the worker that ran it claimed i)
        // and read before i - 1 committed: it reads i - 2's value and overwrites i - 1's.
        let lost: Vec<TxResult<u64>> = (0..n as u64).map(|i| Ok(i / 2)).collect();
        assert_eq!(r, lost, "{} SettleEarly relay", L::NAME);
        assert_eq!(
            (s.settled, s.retries),
            (n as u64, 0),
            "{} SettleEarly: {s:?}",
            L::NAME
        );
    }
    check::<InPlace>(false);
    check::<Chain>(false);
    check::<Chain>(true);
}

/// Versions per key stay bounded on a hot update workload, and deleted keys leave their index.
#[test]
fn garbage_collection_keeps_chains_short_and_retires_tombstones() {
    let w = ycsb_hot();
    let db = Docc::<Chain>::builder().build(&w.schema()).unwrap();
    w.load(&db).unwrap();
    for round in 0..5 {
        db.execute_log(&workload_log(&w, round, 2_000), 2).unwrap();
        let (most, records) = db.version_census(w.table()).unwrap();
        assert_eq!(records, 10);
        // An install keeps the newest version and the one each running transaction reads (at
        // most 2 here: one bound per worker).
        assert!(most <= 1 + 2, "round {round}: {most} versions on one key");
    }
    let gc = db.gc();
    assert!(gc.versions_allocated > 5_000);
    assert!(gc.versions_live() <= 20, "{gc:?}");

    // Inserts then deletes on an ordered table: the tombstones leave the index.
    let db = Docc::<Chain>::builder()
        .recorder(Arc::new(MemoryRecorder::new()))
        .build(&one_shot_schema())
        .unwrap();
    Present(0).load(&db).unwrap();
    let mut log = Vec::new();
    for k in 0..50 {
        log.push(OneShot {
            ops: vec![Op::Insert(k, k)],
            claims_read_only: false,
        });
        log.push(OneShot {
            ops: vec![Op::Delete(k)],
            claims_read_only: false,
        });
    }
    // Later transactions move the horizon past the deletes.
    for _ in 0..20 {
        log.push(OneShot {
            ops: vec![Op::Write(1_000, 1)],
            claims_read_only: false,
        });
    }
    db.execute_log(&log, 2).unwrap();
    let (_, records) = db.version_census(TableId(0)).unwrap();
    assert!(
        records <= 2,
        "{records} records left of 50 deleted keys and one live key"
    );
    assert!(db.gc().tombstones_retired >= 48, "{:?}", db.gc());
}

/// A long TPC-C run: versions per key stay bounded once the run is warm: an install keeps the
/// newest version and one below each running bound, and 2 workers publish at most 2 bounds.
#[test]
fn tpcc_versions_per_key_stay_bounded() {
    let w = tpcc_small();
    let db = Docc::<Chain>::builder().build(&w.schema()).unwrap();
    w.load(&db).unwrap();
    let mut most_seen = Vec::new();
    for round in 0..4 {
        db.execute_log(&workload_log(&w, 100 + round, 1_500), 2)
            .unwrap();
        let most = (0..w.schema().len())
            .map(|t| {
                db.version_census(TableId(t as u16))
                    .map(|c| c.0)
                    .unwrap_or(0)
            })
            .max()
            .unwrap();
        most_seen.push(most);
    }
    assert!(most_seen.iter().all(|&m| m <= 1 + 2), "{most_seen:?}");
    w.check(&db).unwrap();
}

/// Delivery's deleted new-order rows leave the index once no running transaction can need them.
#[test]
fn tpcc_deleted_rows_leave_the_index() {
    let w = tpcc_small();
    let db = Docc::<Chain>::builder().build(&w.schema()).unwrap();
    w.load(&db).unwrap();
    for round in 0..3 {
        db.execute_log(&workload_log(&w, 200 + round, 2_000), 2)
            .unwrap();
    }
    let new_order = TableId(4);
    let (_, mapped) = db.version_census(new_order).unwrap();
    let mut present = 0;
    let mut worker = db.worker().unwrap();
    let mut tx = worker.begin();
    tx.scan(new_order, 0, u64::MAX, &mut |_, _| {
        present += 1;
        true
    })
    .unwrap();
    drop(tx);
    assert!(db.gc().tombstones_retired > 100, "{:?}", db.gc());
    // A few tombstones wait for the horizon, and reads of missing keys leave absent records.
    assert!(
        mapped <= present + 64,
        "{mapped} records mapped for {present} rows"
    );
}

/// Resident memory of the process (Linux), bytes.
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// A long run on hot keys: after warm-up, resident memory stays flat (versions are trimmed and
/// freed through the epoch collector).
///
/// `cargo test --release -p txlab-docc --test semantics -- --ignored long_runs_keep_memory_flat`
#[test]
#[ignore = "long: 600,000 transactions"]
fn long_runs_keep_memory_flat() {
    let w = ycsb_hot();
    let db = Docc::<Chain>::builder().build(&w.schema()).unwrap();
    w.load(&db).unwrap();
    let mut after_warmup = 0;
    for round in 0..30 {
        db.execute_log(&workload_log(&w, round, 20_000), 2).unwrap();
        let rss = rss_bytes().expect("/proc/self/statm");
        if round == 3 {
            after_warmup = rss;
        }
        if round > 3 {
            assert!(
                rss < after_warmup + (16 << 20),
                "round {round}: {rss} bytes resident, {after_warmup} after warm-up"
            );
        }
    }
    let (most, _) = db.version_census(w.table()).unwrap();
    assert!(most <= 4, "{most}");
}
