//! Phantom schedules the random schedules reach too rarely to rely on, one body for every
//! protocol.
//!
//! [`blind_write_after_scan_miss`]: a transaction scans a range in which a key has no record,
//! then blind-writes that key. Creating the key's (absent) record bumps the range's phantom
//! stripe, and an engine that tolerates its *own* bump (so that its own insert does not abort
//! it) must still notice another transaction's write of the record it created: that write bumps
//! nothing, since the record already exists. Missing it lets both commit with the scanner's write
//! installed last, which no serial order explains (the scanner saw the key absent, so it precedes
//! the other writer; its write is the key's final value, so it follows it).
//!
//! [`write_before_the_creators_bump`]: the record of a new key is linked by one transaction (its
//! creator) and written by another while the creator has not yet bumped the key's phantom stripe
//! (the creator is parked there through `txlab_storage::hooks`). A scan that ran before the link
//! and validates before the bump must still notice the write: the writer did not create the
//! record, so it cannot count on its own bump.
//!
//! [`insert_into_scanned_partition`] and [`inserts_into_other_partitions`]: phantom protection
//! over a table whose stripes are partitioned ([`StripeLayout::partitioned`], as TPC-C's are by
//! district). The first is a real phantom (a predicate write skew that only the scan's phantom
//! check can break, with the insert far from the scan's first key); the second inserts and deletes
//! in every other partition while a scan is open and requires the scan to commit: a check coarser
//! than the partition (stripes shared across partitions) fails it.

use crate::Protocol;
use std::sync::{Arc, mpsc};
use txlab_check::{MemoryRecorder, check};
use txlab_core::protocol::storage::StripeLayout;
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxError, TxOps, Worker};

const T: TableId = TableId(0);
const MISSING: u64 = 1;
const SCANNER: u64 = 100;
const OTHER: u64 = 200;

fn v(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

/// Whether a step's result is a commit (`true`) or a conflict abort (`false`); any real error
/// fails the test.
fn committed<T>(r: Result<T, TxError>, what: &str, name: &str) -> bool {
    match r {
        Ok(_) => true,
        Err(TxError::Conflict(_)) => false,
        Err(e) => panic!("{name}: {what}: {e}"),
    }
}

/// The scanner `W` scans `0..=2` over an ordered table holding keys 0 and 2 (key 1 has no
/// record), then blind-writes key 1; another transaction `Z` blind-writes key 1 and commits; then
/// `W` commits. Run twice: `Z` begun before `W` and after `W`'s scan (the order matters to
/// timestamp protocols). If both commit, the key's final value must be `Z`'s (`W` serialized
/// first); if it is `W`'s, the history has the cycle `W -rw(k1)-> Z -ww(k1)-> W`. The recorded
/// history must pass the checker as well.
pub fn blind_write_after_scan_miss<P: Protocol>() {
    for z_first in [true, false] {
        let mut schema = Schema::new();
        schema.add(TableSpec::ordered("t", 8)).expect("valid table");
        let recorder = Arc::new(MemoryRecorder::new());
        let db = P::build(&schema, recorder.clone()).expect("engine builds");
        db.load(T, 0, &v(0)).expect("load k0");
        db.load(T, 2, &v(2)).expect("load k2");
        let mut workers: Vec<_> = (0..4).map(|_| db.worker().expect("worker")).collect();
        let [ww, wz_first, wz_late, wr] = &mut workers[..] else {
            unreachable!("four workers")
        };

        let z_early = z_first.then(|| wz_first.begin());
        let mut w = ww.begin();
        let mut seen = Vec::new();
        let scanned = w.scan(T, 0, 2, &mut |k, _| {
            seen.push(k);
            true
        });
        let mut w_ok = committed(scanned, "W scans", P::NAME);
        if w_ok {
            assert_eq!(
                seen,
                [0, 2],
                "{}: key 1 has no record when W scans",
                P::NAME
            );
            w_ok = committed(w.write(T, MISSING, &v(SCANNER)), "W writes", P::NAME);
        }
        let mut z = z_early.unwrap_or_else(|| wz_late.begin());
        let mut z_ok = committed(z.write(T, MISSING, &v(OTHER)), "Z writes", P::NAME);
        z_ok = z_ok && committed(z.commit(), "Z commits", P::NAME);
        w_ok = w_ok && committed(w.commit(), "W commits", P::NAME);

        let mut r = wr.begin();
        let last = r
            .read(T, MISSING)
            .expect("read after both")
            .map(|b| u64::from_le_bytes(b.try_into().expect("8-byte value")));
        r.commit().expect("read-only commits");
        if w_ok && z_ok {
            assert_eq!(
                last,
                Some(OTHER),
                "{} (Z begun {}): both committed, so W, which saw key 1 absent, precedes Z, \
                 whose write must then be the last",
                P::NAME,
                if z_first { "first" } else { "after W's scan" }
            );
        }
        let report = check(&recorder.take(), crate::check_options::<P>());
        assert!(report.is_serializable(), "{}: {report}", P::NAME);
    }
}

/// What the creator thread of [`write_before_the_creators_bump`] reports.
#[derive(Debug, PartialEq, Eq)]
enum Creator {
    /// Parked between linking key 1 and bumping its stripe.
    Parked,
    /// Done (its transaction ended).
    Done,
}

/// A phantom through another transaction's link: over an ordered table holding keys 0 and 2 and
/// a one-row flag table, the scanner `S` scans `0..=2` (key 1 has no record); a creator `C` reads
/// key 1, which links its absent record, and is parked before the stripe bump; `W` reads the flag,
/// inserts key 1 into the record `C` linked and commits; `S` writes the flag and commits; then `C`
/// resumes. Both `S` and `W` committing is a cycle (`S -rw(key 1)-> W -rw(flag)-> S`), so at most
/// one may; the recorded history must pass the checker. Run with `W` begun before `S` and after
/// `S`'s scan.
pub fn write_before_the_creators_bump<P: Protocol>() {
    for w_first in [true, false] {
        let mut schema = Schema::new();
        schema.add(TableSpec::ordered("t", 8)).expect("valid table");
        schema
            .add(TableSpec::dense("flag", 8, 1))
            .expect("valid table");
        let recorder = Arc::new(MemoryRecorder::new());
        let db = P::build(&schema, recorder.clone()).expect("engine builds");
        db.load(T, 0, &v(0)).expect("load k0");
        db.load(T, 2, &v(2)).expect("load k2");
        db.load(FLAG, 0, &v(0)).expect("load the flag");
        let mut workers: Vec<_> = (0..3).map(|_| db.worker().expect("worker")).collect();
        let [ws, ww_first, ww_late] = &mut workers[..] else {
            unreachable!("three workers")
        };
        let name = P::NAME;
        let order = if w_first { "first" } else { "after S's scan" };

        let w_early = w_first.then(|| ww_first.begin());
        let mut s = ws.begin();
        let mut seen = Vec::new();
        let scanned = s.scan(T, 0, 2, &mut |k, _| {
            seen.push(k);
            true
        });
        let s_ok = committed(scanned, "S scans", name);
        if s_ok {
            assert_eq!(seen, [0, 2], "{name}: key 1 has no record when S scans");
        }

        let (w_ok, s_ok) = std::thread::scope(|scope| {
            let (report, reports) = mpsc::channel();
            let (resume, resumed) = mpsc::channel::<()>();
            let db = &db;
            scope.spawn(move || {
                let mut wc = db.worker().expect("worker");
                let mut c = wc.begin();
                let parked = report.clone();
                let read = txlab_storage::hooks::with_link_pause(
                    move |point| {
                        if point == MISSING {
                            parked.send(Creator::Parked).expect("the test waits");
                            resumed.recv().expect("the test resumes the creator");
                        }
                    },
                    || c.read(T, MISSING).map(|_| ()),
                );
                if committed(read, "C reads key 1", name) {
                    committed(c.commit(), "C commits", name);
                }
                report.send(Creator::Done).expect("the test waits");
            });
            assert_eq!(
                reports.recv().expect("the creator reports"),
                Creator::Parked,
                "{name}: C's read of the missing key 1 linked no record"
            );

            let mut w = w_early.unwrap_or_else(|| ww_late.begin());
            let mut w_ok = committed(w.read(FLAG, 0).map(|_| ()), "W reads the flag", name);
            if w_ok {
                let inserted = w.insert(T, MISSING, &v(OTHER)).map(|fresh| {
                    assert!(fresh, "{name}: W found key 1 present");
                });
                w_ok = committed(inserted, "W inserts key 1", name);
            }
            w_ok = w_ok && committed(w.commit(), "W commits", name);
            let mut s_ok = s_ok && committed(s.write(FLAG, 0, &v(SCANNER)), "S writes", name);
            s_ok = s_ok && committed(s.commit(), "S commits", name);

            resume.send(()).expect("the creator waits");
            assert_eq!(reports.recv().expect("the creator ends"), Creator::Done);
            (w_ok, s_ok)
        });
        let report = check(&recorder.take(), crate::check_options::<P>());
        assert!(
            !(w_ok && s_ok),
            "{name} (W begun {order}): both committed, yet S missed W's key 1 in the range it \
             scanned and W missed S's flag; checker: {report}"
        );
        assert!(
            report.is_serializable(),
            "{name} (W begun {order}): {report}"
        );
    }
}

/// Partitions of the partitioned table: keys `p << PART_SHIFT | offset`.
const PART_SHIFT: u32 = 16;
/// The partitioned table and the one-row flag table of the partition tests.
const ROWS: TableId = TableId(0);
const FLAG: TableId = TableId(1);
/// The partition the scanner scans.
const SCANNED: u64 = 1;

fn part_key(p: u64, offset: u64) -> u64 {
    p << PART_SHIFT | offset
}

/// An engine over `ROWS` (4 partitions of `2^16` keys, one stripe each, rows at offsets 0 and
/// 100 of every partition) and `FLAG` (one row).
fn partitioned_db<P: Protocol>() -> (P::Engine, Arc<MemoryRecorder>) {
    let mut schema = Schema::new();
    schema
        .add(TableSpec::ordered("rows", 8).with_stripes(StripeLayout::partitioned(PART_SHIFT, 4)))
        .expect("valid table");
    schema
        .add(TableSpec::dense("flag", 8, 1))
        .expect("valid table");
    let recorder = Arc::new(MemoryRecorder::new());
    let db = P::build(&schema, recorder.clone()).expect("engine builds");
    for p in 0..4 {
        for offset in [0, 100] {
            db.load(ROWS, part_key(p, offset), &v(p))
                .expect("load a row");
        }
    }
    db.load(FLAG, 0, &v(0)).expect("load the flag");
    (db, recorder)
}

/// Scans all of partition [`SCANNED`]; `None` if the scan aborted.
fn scan_partition(w: &mut impl Transaction, name: &str) -> Option<Vec<u64>> {
    let mut seen = Vec::new();
    let r = w.scan(
        ROWS,
        part_key(SCANNED, 0),
        part_key(SCANNED, 0xFFFF),
        &mut |k, _| {
            seen.push(k);
            true
        },
    );
    committed(r, "W scans", name).then_some(seen)
}

/// A phantom only the scan's check can stop: `W` scans partition 1 and writes the flag; `Z` reads
/// the flag and inserts a row into partition 1 (far from the scan's first key); `Z` commits, then
/// `W`. Both committing is a cycle (`W -rw(partition 1)-> Z -rw(flag)-> W`), so at most one may;
/// the recorded history must pass the checker. Run with `Z` begun before `W` and after `W`'s scan.
pub fn insert_into_scanned_partition<P: Protocol>() {
    for z_first in [true, false] {
        let (db, recorder) = partitioned_db::<P>();
        let mut workers: Vec<_> = (0..3).map(|_| db.worker().expect("worker")).collect();
        let [ww, wz_first, wz_late] = &mut workers[..] else {
            unreachable!("three workers")
        };
        let z_early = z_first.then(|| wz_first.begin());
        let mut w = ww.begin();
        let seen = scan_partition(&mut w, P::NAME);
        if let Some(seen) = &seen {
            assert_eq!(
                seen,
                &[part_key(SCANNED, 0), part_key(SCANNED, 100)],
                "{}",
                P::NAME
            );
        }
        let mut w_ok =
            seen.is_some() && committed(w.write(FLAG, 0, &v(SCANNER)), "W writes", P::NAME);
        let mut z = z_early.unwrap_or_else(|| wz_late.begin());
        let mut z_ok = committed(z.read(FLAG, 0).map(|_| ()), "Z reads the flag", P::NAME);
        z_ok = z_ok
            && committed(
                z.insert(ROWS, part_key(SCANNED, 0xF000), &v(OTHER)),
                "Z inserts",
                P::NAME,
            );
        z_ok = z_ok && committed(z.commit(), "Z commits", P::NAME);
        w_ok = w_ok && committed(w.commit(), "W commits", P::NAME);
        assert!(
            !(w_ok && z_ok),
            "{} (Z begun {}): both committed, yet W missed Z's row in the range it scanned and Z \
             missed W's flag",
            P::NAME,
            if z_first { "first" } else { "after W's scan" }
        );
        let report = check(&recorder.take(), crate::check_options::<P>());
        assert!(report.is_serializable(), "{}: {report}", P::NAME);
    }
}

/// No false phantom across partitions: while `W`'s scan of partition 1 is open, `Z` inserts a row
/// into and deletes a row from every other partition and commits; `W` then writes the flag and
/// must commit too (nothing it read changed). Run with `Z` begun before `W` and after `W`'s scan.
pub fn inserts_into_other_partitions<P: Protocol>() {
    for z_first in [true, false] {
        let (db, recorder) = partitioned_db::<P>();
        let mut workers: Vec<_> = (0..3).map(|_| db.worker().expect("worker")).collect();
        let [ww, wz_first, wz_late] = &mut workers[..] else {
            unreachable!("three workers")
        };
        let z_early = z_first.then(|| wz_first.begin());
        let mut w = ww.begin();
        let seen = scan_partition(&mut w, P::NAME)
            .unwrap_or_else(|| panic!("{}: a scan with no concurrent writer aborted", P::NAME));
        assert_eq!(seen.len(), 2, "{}", P::NAME);
        let mut z = z_early.unwrap_or_else(|| wz_late.begin());
        for p in [0, 2, 3] {
            assert!(
                z.insert(ROWS, part_key(p, 0x8000), &v(OTHER))
                    .expect("Z inserts"),
                "{}: the key was free",
                P::NAME
            );
            assert!(
                z.delete(ROWS, part_key(p, 100)).expect("Z deletes"),
                "{}",
                P::NAME
            );
        }
        z.commit()
            .unwrap_or_else(|e| panic!("{}: Z, alone in its partitions, aborted: {e}", P::NAME));
        w.write(FLAG, 0, &v(SCANNER)).expect("W writes the flag");
        w.commit().unwrap_or_else(|e| {
            panic!(
                "{} (Z begun {}): a scan of partition {SCANNED} aborted because other partitions \
                 changed: {e}",
                P::NAME,
                if z_first { "first" } else { "after W's scan" }
            )
        });
        let report = check(&recorder.take(), crate::check_options::<P>());
        assert!(report.is_serializable(), "{}: {report}", P::NAME);
    }
}
