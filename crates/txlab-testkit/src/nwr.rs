//! Deterministic schedules for the non-visible write rule (NWR), one body for every NWR engine.
//!
//! The NWR engines (Silo+NWR, TicToc+NWR, MVTO+NWR) share the rule (`txlab_nwr::rule`) and so
//! share its corner cases; each engine's kit runs these bodies through its [`Protocol`] (built
//! with manual epochs and group commit, so the whole schedule runs in one epoch).

use crate::{Protocol, check_options};
use std::collections::HashMap;
use std::sync::Arc;
use txlab_check::{History, MemoryRecorder, check};
use txlab_core::history::Outcome;
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};

const T: TableId = TableId(0);

fn v(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

fn omitted_commits(w: &mut impl Worker) -> u64 {
    let mut m: HashMap<&'static str, u64> = HashMap::new();
    w.drain_counters(&mut |name, d| *m.entry(name).or_insert(0) += d);
    m.get("nwr_commits_omitted").copied().unwrap_or(0)
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
