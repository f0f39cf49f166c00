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

use crate::Protocol;
use std::sync::Arc;
use txlab_check::{MemoryRecorder, check};
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
