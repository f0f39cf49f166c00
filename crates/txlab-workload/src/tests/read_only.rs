//! `Program::read_only` is never a lie: every program of every workload that claims it runs on
//! the serial engine through a wrapper that counts writes, and writes nothing. Each read-only kind
//! must actually occur (a generator that never produced one would prove nothing), and the wrapper
//! must see the writes of the programs that do write.

use crate::{
    Generator, SmallBank, SmallBankConfig, Tpcc, TpccConfig, Workload, Ycsb, YcsbConfig, YcsbPreset,
};
use std::collections::BTreeMap;
use txlab_check::serial::SerialEngine;
use txlab_core::{Engine, Program, TableId, Transaction, TxOps, TxResult, Worker};

/// A [`TxOps`] that forwards everything and counts the operations that may write.
struct CountWrites<'a, T: ?Sized> {
    inner: &'a mut T,
    writes: usize,
}

impl<T: TxOps + ?Sized> TxOps for CountWrites<'_, T> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.inner.read(table, key)
    }
    fn read_for_update(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.inner.read_for_update(table, key)
    }
    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.writes += 1;
        self.inner.write(table, key, value)
    }
    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.writes += 1;
        self.inner.update(table, key, f)
    }
    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.writes += 1;
        self.inner.insert(table, key, value)
    }
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.writes += 1;
        self.inner.delete(table, key)
    }
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        self.inner.scan(table, lo, hi, visit)
    }
}

/// Runs `program` (committing it when it succeeds) and returns how many writing operations it
/// made.
fn writes_of<P: Program<Output = ()>>(engine: &SerialEngine, program: &P) -> usize {
    let mut worker = engine.worker().unwrap();
    let mut tx = worker.begin();
    let mut counting = CountWrites {
        inner: &mut tx,
        writes: 0,
    };
    let ok = program.run(&mut counting).is_ok();
    let writes = counting.writes;
    if ok {
        tx.commit().unwrap();
    } else {
        tx.abort();
    }
    writes
}

/// Runs `count` programs of each of `threads` generators of `workload` on a loaded serial engine.
/// Returns, per kind, `(programs claiming read_only, programs, writing operations of the ones
/// claiming it, writing operations of the others)`.
fn tally<W: Workload>(
    workload: &W,
    threads: usize,
    count: usize,
) -> BTreeMap<&'static str, (usize, usize, usize, usize)> {
    let engine = SerialEngine::new(workload.schema());
    workload.load(&engine).unwrap();
    let mut out: BTreeMap<&'static str, (usize, usize, usize, usize)> = BTreeMap::new();
    for thread in 0..threads {
        let mut generator = workload.generator(thread, 0x5eed);
        for _ in 0..count {
            let p = generator.next();
            let writes = writes_of(&engine, p);
            let e = out.entry(p.kind()).or_default();
            e.1 += 1;
            if p.read_only() {
                e.0 += 1;
                e.2 += writes;
            } else {
                e.3 += writes;
            }
        }
    }
    out
}

/// Asserts no claiming program wrote, that exactly the `expected` kinds claim (all of their
/// programs), and that the other kinds did write.
fn assert_claims(tally: &BTreeMap<&'static str, (usize, usize, usize, usize)>, expected: &[&str]) {
    for kind in expected {
        let (claims, n, _, _) = tally.get(kind).copied().unwrap_or_default();
        assert!(n > 0, "no {kind} program was generated: {tally:?}");
        assert_eq!(
            claims, n,
            "every {kind} program claims read_only: {tally:?}"
        );
    }
    for (kind, &(claims, n, claimed_writes, other_writes)) in tally {
        assert_eq!(
            claimed_writes, 0,
            "{kind}: a program claiming read_only wrote"
        );
        if !expected.contains(kind) {
            assert_eq!(claims, 0, "{kind} claims read_only: {tally:?}");
            assert!(other_writes > 0, "{kind} never wrote in {n} programs");
        }
    }
}

#[test]
fn ycsb_read_only_transactions_never_write() {
    for preset in [YcsbPreset::B, YcsbPreset::C] {
        let cfg = YcsbConfig {
            records: 1000,
            ..YcsbConfig::preset(preset)
        };
        let t = tally(&Ycsb::new(cfg).unwrap(), 2, 300);
        assert_claims(&t, &["read_only"]);
    }
}

#[test]
fn smallbank_balance_never_writes() {
    let cfg = SmallBankConfig {
        customers: 100,
        audit: true,
        ..SmallBankConfig::default()
    };
    let t = tally(&SmallBank::new(cfg).unwrap(), 2, 400);
    assert_claims(&t, &["balance"]);
}

#[test]
fn tpcc_order_status_stock_level_and_warehouse_ytd_never_write() {
    let tpcc = Tpcc::new(TpccConfig::tiny(2)).unwrap();
    let t = tally(&tpcc, 2, 150);
    assert_claims(&t, &["order_status", "stock_level"]);

    let scaled = Tpcc::new(TpccConfig {
        scaled: true,
        ..TpccConfig::tiny(2)
    })
    .unwrap();
    let engine = SerialEngine::new(scaled.schema());
    scaled.load(&engine).unwrap();
    for w in 1..=2 {
        let ytd = scaled.warehouse_ytd_txn(w).unwrap();
        assert!(ytd.read_only());
        assert_eq!(writes_of(&engine, &ytd), 0);
    }
}
