//! The threaded test body for engines that unlink deleted records ("retire tombstones":
//! `txlab_silo::retire`, `txlab_tictoc::retire`, `txlab_mvto::retire`), written once for all of
//! them.
//!
//! Threads run short transactions of inserts, deletes, reads, blind writes, read-modify-writes
//! and scans over a sliding window of few keys on a hash and an ordered table, while the engine's
//! background thread advances the epoch quickly, so tombstones are retired while other
//! transactions still hold their records. The recorded history goes to the checker. How many
//! tombstones were retired comes from the workers' `retired_tombstones` counter
//! (`Worker::drain_counters`), so a run that retired nothing is told apart from one that passed.

#[cfg(not(txlab_loom))]
use crate::family::{self, Hooks, Kit, NoNwr};
use std::sync::Arc;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::protocol::history::{Outcome, WriteKind};
use txlab_core::{
    ConflictCause, Engine, Error, Schema, TableId, TableSpec, Transaction, TxError, TxOps, Worker,
};

/// The hash table of [`schema`].
pub const HASH: TableId = TableId(0);
/// The ordered table of [`schema`].
pub const ORDERED: TableId = TableId(1);
/// The dense table of [`schema`] (its deletes are never unlinked).
pub const DENSE: TableId = TableId(2);

/// Keys of the sliding window: few, so deletes, re-inserts and retirements collide. The window
/// moves by half its width every [`WINDOW_TXNS`] transactions, so tombstones left behind get old
/// enough to retire while transactions on the newer half still meet them.
pub const KEYS: u64 = 8;
/// Transactions of one worker per window position.
pub const WINDOW_TXNS: u64 = 50;

/// A hash, an ordered and a dense table (16 keys), each with 8-byte values.
pub fn schema() -> Schema {
    let mut s = Schema::new();
    s.add(TableSpec::hash("hash", 8)).expect("valid table");
    s.add(TableSpec::ordered("ordered", 8))
        .expect("valid table");
    s.add(TableSpec::dense("dense", 8, 16))
        .expect("valid table");
    s
}

/// The 8-byte value of [`schema`]'s tables that holds `x`.
pub fn value(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

/// The number an 8-byte value holds (see [`value`]).
pub fn number(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("an 8-byte value"))
}

/// The cause of a conflict; panics on any other error.
pub fn cause(e: TxError) -> ConflictCause {
    match e {
        TxError::Conflict(c) => c.cause,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

/// Inserts `(t, key) = val` in a transaction of its own, which must commit.
pub fn insert(w: &mut impl Worker, t: TableId, key: u64, val: u64) {
    let mut tx = w.begin();
    assert!(
        tx.insert(t, key, &value(val)).expect("insert"),
        "{key} was absent"
    );
    tx.commit().expect("insert commits");
}

/// Deletes `(t, key)` in a transaction of its own, which must commit.
pub fn delete(w: &mut impl Worker, t: TableId, key: u64) {
    let mut tx = w.begin();
    assert!(tx.delete(t, key).expect("delete"), "{key} was present");
    tx.commit().expect("delete commits");
}

/// The committed writes of `(t, key)` as `(kind, version)`, in version order (the checker's).
pub fn write_versions(history: &History, t: TableId, key: u64) -> Vec<(WriteKind, u64)> {
    let mut out: Vec<(WriteKind, u64)> = history
        .records()
        .iter()
        .filter(|r| r.outcome == Outcome::Committed)
        .flat_map(|r| r.writes.iter())
        .filter(|w| w.table == t && w.key == key)
        .map(|w| (w.kind, w.version))
        .collect();
    out.sort_by_key(|&(_, ver)| ver);
    out
}

/// What [`unlinked_after_two_epochs`] needs of an engine and its worker type `W`, as closures
/// (the engines' test accessors are inherent methods).
#[expect(missing_debug_implementations, reason = "a bundle of closures")]
pub struct RetireProbe<'a, W> {
    /// Advances the global epoch by hand; whether it moved.
    pub advance: &'a dyn Fn() -> bool,
    /// Whether the table's index still maps the key.
    pub is_mapped: &'a dyn Fn(TableId, u64) -> bool,
    /// The worker's queued deletes.
    pub backlog: &'a dyn Fn(&W) -> usize,
    /// Tombstones the worker has unlinked.
    pub retired: &'a dyn Fn(&W) -> u64,
    /// A transaction that lets the worker work on its queue (at its begin).
    pub tick: &'a dyn Fn(&mut W),
}

/// The unlink timing every retiring engine shares, on `t`'s key 5 (epochs advanced by hand):
/// insert and delete queue one entry; it stays mapped in the delete's epoch and the next one;
/// two epochs later the worker's next begin unlinks it.
pub fn unlinked_after_two_epochs<W: Worker>(w: &mut W, t: TableId, p: &RetireProbe<'_, W>) {
    insert(w, t, 5, 50);
    delete(w, t, 5);
    assert_eq!((p.backlog)(w), 1, "table {t:?}: the delete is queued");
    (p.tick)(w);
    assert!((p.is_mapped)(t, 5), "same epoch: still mapped");
    assert!((p.advance)());
    (p.tick)(w);
    assert!((p.is_mapped)(t, 5), "one epoch later: still mapped");
    assert_eq!((p.backlog)(w), 1);
    assert!((p.advance)());
    (p.tick)(w);
    assert!(
        !(p.is_mapped)(t, 5),
        "table {t:?}: two epochs later the tombstone is gone"
    );
    assert_eq!((p.backlog)(w), 0);
    assert_eq!((p.retired)(w), 1);
}

/// What one [`churn`] run found.
#[derive(Debug)]
pub struct ChurnOutcome {
    /// Whether the checker accepted the history under the given options.
    pub passed: bool,
    /// Tombstones the workers unlinked.
    pub retired: u64,
    /// The checker's report.
    pub report: String,
}

/// Runs `threads` workers of `txns` transactions each on an engine from `build` (module docs) and
/// checks the history with `options`.
pub fn churn<E, F>(build: F, threads: u64, txns: u64, options: CheckOptions) -> ChurnOutcome
where
    E: Engine + Sync,
    F: FnOnce(&Schema, Arc<MemoryRecorder>) -> Result<E, Error>,
{
    let rec = Arc::new(MemoryRecorder::new());
    let db = build(&schema(), Arc::clone(&rec)).expect("engine builds");
    let retired: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let db = &db;
                s.spawn(move || worker_run(db, t, txns))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker thread"))
            .sum()
    });
    drop(db);
    let report = check(&rec.take(), options);
    ChurnOutcome {
        passed: report.is_serializable(),
        retired,
        report: report.to_string(),
    }
}

/// One worker's transactions; returns how many tombstones it retired.
fn worker_run<E: Engine>(db: &E, t: u64, txns: u64) -> u64 {
    let mut w = db.worker().expect("worker");
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t + 1);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut retired = 0;
    for i in 0..txns {
        let mut tx = w.begin();
        let body = (|| -> Result<(), TxError> {
            for op in 0..3 {
                let r = next();
                let table = if r & 1 == 0 { HASH } else { ORDERED };
                let key = (i / WINDOW_TXNS) * (KEYS / 2) + (r >> 1) % KEYS;
                let unique = ((t << 40) | (i << 8) | op).to_le_bytes();
                match (r >> 8) % 7 {
                    0 | 1 => {
                        tx.insert(table, key, &unique)?;
                    }
                    2 | 3 => {
                        tx.delete(table, key)?;
                    }
                    4 => {
                        tx.read(table, key)?;
                    }
                    5 => tx.write(table, key, &unique)?,
                    _ if table == ORDERED => {
                        tx.scan(ORDERED, key, key + 2, &mut |_, _| true)?;
                    }
                    _ => {
                        tx.update(table, key, &mut |b| b.copy_from_slice(&unique))?;
                    }
                }
            }
            Ok(())
        })();
        if body.is_ok() {
            let _ = tx.commit();
        } else {
            drop(tx);
        }
        if i % 256 == 255 || i + 1 == txns {
            w.drain_counters(&mut |name, n| {
                if name == "retired_tombstones" {
                    retired += n;
                }
            });
        }
    }
    retired
}

/// Runs [`churn`] (3 threads, 4,000 transactions each) in rounds, each on a fresh engine with its
/// history checked, until more than 10 tombstones were retired in all. At most 8 rounds: the
/// background epoch thread may barely run on a loaded test runner. Panics on a failed check or
/// if retirement was not exercised.
pub fn churn_until_retired<E, F>(name: &str, build: F, options: CheckOptions)
where
    E: Engine + Sync,
    F: Fn(&Schema, Arc<MemoryRecorder>) -> Result<E, Error>,
{
    let mut retired = 0;
    for round in 0..8 {
        let out = churn(&build, 3, 4_000, options);
        assert!(out.passed, "{name}, round {round}: {}", out.report);
        retired += out.retired;
        eprintln!("{name}, round {round}: retired {}", out.retired);
        if retired > 10 {
            return;
        }
    }
    panic!("{name}: {retired} tombstones retired in 8 rounds: retirement was not exercised");
}

/// Runs [`churn`] (3 threads, 3,000 transactions each) on a broken engine up to 80 times and
/// returns the first round whose history the checker rejected. It is a race, usually caught within
/// a few rounds; the high cap keeps a loaded 2-core machine from missing it, and costs nothing
/// when the mutant is caught early.
pub fn churn_catches<E, F>(build: F, options: CheckOptions) -> Option<usize>
where
    E: Engine + Sync,
    F: Fn(&Schema, Arc<MemoryRecorder>) -> Result<E, Error>,
{
    (0..80).position(|_| !churn(&build, 3, 3_000, options).passed)
}

#[cfg(not(txlab_loom))]
/// A transaction that blind-writes or inserts a key whose tombstone is retired while it runs
/// aborts with `ConflictCause::RecordRetired`; its retry writes the key's fresh record, which a
/// later read sees. On [`schema`]'s hash and ordered tables, family `H`'s baseline with epochs
/// advanced by hand; every history checked as its kit checks them.
pub fn a_writer_holding_the_retired_record_aborts_and_succeeds_on_retry<H: Hooks>() {
    for t in [HASH, ORDERED] {
        for blind in [false, true] {
            let (db, recorder) = baseline::<H>();
            let mut deleter = db.worker().expect("worker");
            let mut writer = db.worker().expect("worker");
            insert(&mut deleter, t, 7, 70);
            delete(&mut deleter, t, 7);
            assert!(H::advance::<NoNwr>(&db));
            let mut tx = writer.begin();
            write_key_7(&mut tx, t, blind, 71);
            assert!(H::advance::<NoNwr>(&db));
            deleter
                .begin()
                .commit()
                .expect("an empty transaction commits");
            let retired = crate::nwr::counters(&mut deleter)
                .get("retired_tombstones")
                .copied();
            assert_eq!(retired, Some(1), "table {t:?}");
            assert_eq!(
                cause(tx.commit().expect_err("its record was retired")),
                ConflictCause::RecordRetired,
                "table {t:?}, blind {blind}"
            );
            // The retry finds the fresh record.
            let mut tx = writer.begin();
            write_key_7(&mut tx, t, blind, 72);
            tx.commit().expect("the retry commits");
            let mut tx = deleter.begin();
            assert_eq!(tx.read(t, 7).expect("read").map(number), Some(72));
            tx.commit().expect("read-only commits");
            let report = check(&recorder.take(), crate::check_options::<Kit<H>>());
            assert!(report.is_serializable(), "{}: {report}", H::NAMES[0]);
        }
    }
}

#[cfg(not(txlab_loom))]
/// Blind-writes (`blind`) or inserts `x` as `t`'s key 7.
fn write_key_7(tx: &mut impl TxOps, t: TableId, blind: bool, x: u64) {
    if blind {
        tx.write(t, 7, &value(x)).expect("blind write");
    } else {
        assert!(tx.insert(t, 7, &value(x)).expect("insert"));
    }
}

#[cfg(not(txlab_loom))]
/// Family `H`'s baseline over [`schema`], epochs advanced by hand, and its recorder.
fn baseline<H: Hooks>() -> (family::EngineOf<H, NoNwr>, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::new());
    let config = family::manual::<H, NoNwr>();
    let db = family::build::<H, NoNwr>(&schema(), config, recorder.clone()).expect("engine builds");
    (db, recorder)
}

#[cfg(not(txlab_loom))]
/// On the hash and the ordered table: a tombstone leaves its index two epochs after its delete
/// ([`unlinked_after_two_epochs`]), and the key comes back in a fresh record, on another worker
/// (read absent, inserted, read). The history checks as family `H`'s kit checks it and orders
/// the key's versions insert, delete, re-insert (the fresh record's first write is above the
/// tombstone's).
pub fn a_tombstone_is_unlinked_and_the_key_is_reusable<H: Hooks>() {
    for t in [HASH, ORDERED] {
        let (db, rec) = baseline::<H>();
        let mut w = db.worker().expect("worker");
        unlinked_after_two_epochs(
            &mut w,
            t,
            &RetireProbe {
                advance: &|| H::advance::<NoNwr>(&db),
                is_mapped: &|t, k| H::is_mapped::<NoNwr>(&db, t, k),
                backlog: &|w| H::retire_backlog::<NoNwr>(w),
                retired: &|w| H::retired_count::<NoNwr>(w),
                tick: &|w| {
                    w.begin()
                        .commit()
                        .map(drop)
                        .expect("an empty transaction commits")
                },
            },
        );
        assert_eq!(H::mapped_keys::<NoNwr>(&db, t), 0);

        let mut w2 = db.worker().expect("worker");
        let mut tx = w2.begin();
        assert_eq!(tx.read(t, 5).expect("read"), None);
        tx.commit().expect("read-only commits");
        insert(&mut w2, t, 5, 51);
        let mut tx = w2.begin();
        assert_eq!(tx.read(t, 5).expect("read").map(number), Some(51));
        tx.commit().expect("read-only commits");

        let history = rec.take();
        let report = check(&history, crate::check_options::<Kit<H>>());
        assert!(report.is_serializable(), "{}: {report}", H::NAMES[0]);
        let versions = write_versions(&history, t, 5);
        assert_eq!(
            versions.iter().map(|&(k, _)| k).collect::<Vec<_>>(),
            [WriteKind::Put, WriteKind::Delete, WriteKind::Put],
            "{versions:x?}"
        );
    }
}
