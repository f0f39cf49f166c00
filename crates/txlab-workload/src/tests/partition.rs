//! Partitioners: every loaded row of a partitioned table has one owner in range (and the others
//! none), every partition owns rows, and TPC-C by district keeps each district's transactions on
//! the district's partition (except STOCK, placed by item).

use crate::tpcc::partition::{ByDistrict, ByWarehouse};
use crate::tpcc::txn::TpccInput;
use crate::{
    Generator, SmallBank, SmallBankConfig, Tpcc, TpccConfig, Workload, Ycsb, YcsbConfig, YcsbPreset,
};
use proptest::prelude::*;
use txlab_check::serial::SerialEngine;
use txlab_core::partition::{Partitioner, Placement};
use txlab_core::{Engine, Program, TableId, Transaction, TxOps, TxResult, Worker};

/// Loads `workload` and asserts every row has exactly the owner its placement says; returns the
/// number of rows each partition owns.
fn owners_of_loaded_rows<W: Workload, P: Partitioner>(workload: &W, p: &P) -> Vec<usize> {
    let engine = SerialEngine::new(workload.schema());
    workload.load(&engine).unwrap();
    let mut owned = vec![0; p.partitions() as usize];
    for (table, key, _) in engine.rows() {
        match (p.placement(table), p.partition_of(table, key)) {
            (Placement::Partitioned, Ok(owner)) => {
                assert!(owner < p.partitions(), "table {} key {key:#x}", table.0);
                owned[owner as usize] += 1;
            }
            (Placement::Partitioned, Err(e)) => panic!("table {} key {key:#x}: {e}", table.0),
            (other, Ok(owner)) => panic!("{other:?} table {} has owner {owner}", table.0),
            (_, Err(_)) => {}
        }
    }
    owned
}

fn tpcc(warehouses: u32, scaled: bool) -> Tpcc {
    Tpcc::new(TpccConfig {
        scaled,
        ..TpccConfig::tiny(warehouses)
    })
    .unwrap()
}

#[test]
fn every_loaded_row_has_one_owner_and_every_partition_owns_rows() {
    let w = tpcc(4, false);
    for n in 1..=4 {
        let p = ByWarehouse::new(w.config(), *w.tables(), n).unwrap();
        let owned = owners_of_loaded_rows(&w, &p);
        assert!(owned.iter().all(|&c| c > 0), "by warehouse, {n}: {owned:?}");
    }
    let d = tpcc(1, true);
    for n in [1, 3, 10] {
        let p = ByDistrict::new(d.config(), *d.tables(), n).unwrap();
        let owned = owners_of_loaded_rows(&d, &p);
        assert!(owned.iter().all(|&c| c > 0), "by district, {n}: {owned:?}");
    }
    let y = Ycsb::new(YcsbConfig {
        records: 1000,
        ..YcsbConfig::preset(YcsbPreset::A)
    })
    .unwrap();
    assert_eq!(
        owners_of_loaded_rows(&y, &y.partitioner(3).unwrap()),
        vec![334, 333, 333]
    );
    let s = SmallBank::new(SmallBankConfig {
        customers: 100,
        audit: true,
        ..SmallBankConfig::default()
    })
    .unwrap();
    let owned = owners_of_loaded_rows(&s, &s.partitioner(2).unwrap());
    assert!(owned.iter().all(|&c| c >= 100), "{owned:?}");
}

#[test]
fn partitioners_refuse_what_they_cannot_place_by_value() {
    let w = tpcc(2, false);
    let e = ByWarehouse::new(w.config(), *w.tables(), 3).unwrap_err();
    assert!(e.to_string().contains("partitions = 3"), "{e}");
    let e = ByDistrict::new(w.config(), *w.tables(), 2).unwrap_err();
    assert!(e.to_string().contains("scaled"), "{e}");
    let p = ByWarehouse::new(w.config(), *w.tables(), 2).unwrap();
    let t = w.tables();
    let e = p.partition_of(t.warehouse, 2).unwrap_err();
    assert!(e.to_string().contains("0x2"), "{e}");
    let e = p.partition_of(t.district, 20).unwrap_err();
    assert!(e.to_string().contains("0x14"), "{e}");
    let e = p.partition_of(t.item, 5).unwrap_err();
    assert!(e.to_string().contains("replicated"), "{e}");
    let e = p.partition_of(t.history, 5).unwrap_err();
    assert!(e.to_string().contains("home partition"), "{e}");
    let e = p.partition_of(TableId(11), 0).unwrap_err();
    assert!(e.to_string().contains("unknown table id 11"), "{e}");
}

/// Forwards to a transaction and records every point access and scanned range.
struct Touches<'a, T: ?Sized> {
    inner: &'a mut T,
    points: Vec<(TableId, u64)>,
    scans: Vec<(TableId, u64, u64)>,
}

impl<T: TxOps + ?Sized> TxOps for Touches<'_, T> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.points.push((table, key));
        self.inner.read(table, key)
    }
    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.points.push((table, key));
        self.inner.write(table, key, value)
    }
    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.points.push((table, key));
        self.inner.update(table, key, f)
    }
    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.points.push((table, key));
        self.inner.insert(table, key, value)
    }
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.points.push((table, key));
        self.inner.delete(table, key)
    }
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        self.scans.push((table, lo, hi));
        self.inner.scan(table, lo, hi, visit)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Scaled TPC-C (one warehouse): NewOrder, Payment, OrderStatus and StockLevel touch, apart
    /// from STOCK and the replicated and home-following tables, only rows of their district's
    /// partition, point accesses and both ends of every scanned range alike.
    #[test]
    fn by_district_keeps_a_districts_transactions_on_its_partition(seed in any::<u64>()) {
        let d = tpcc(1, true);
        let p = ByDistrict::new(d.config(), *d.tables(), 3).unwrap();
        let engine = SerialEngine::new(d.schema());
        d.load(&engine).unwrap();
        let keys = d.keys();
        let mut generator = d.generator(0, seed);
        let mut checked = 0;
        for _ in 0..60 {
            let txn = generator.next();
            let (w, dist) = match txn.input() {
                TpccInput::NewOrder(i) => (i.w, i.d),
                TpccInput::Payment(i) => (i.w, i.d),
                TpccInput::OrderStatus(i) => (i.w, i.d),
                TpccInput::StockLevel(i) => (i.w, i.d),
                _ => continue,
            };
            let home = p.partition_of_district(keys.district_index(w, dist));
            let mut worker = engine.worker().unwrap();
            let mut tx = worker.begin();
            let mut touches = Touches { inner: &mut tx, points: Vec::new(), scans: Vec::new() };
            let ok = txn.run(&mut touches).is_ok();
            let Touches { points, scans, .. } = touches;
            if ok { tx.commit().unwrap(); } else { tx.abort(); }
            let ends = scans.iter().flat_map(|&(t, lo, hi)| [(t, lo), (t, hi)]);
            for (table, key) in points.into_iter().chain(ends) {
                if table == d.tables().stock || p.placement(table) != Placement::Partitioned {
                    continue;
                }
                prop_assert_eq!(
                    p.partition_of(table, key).unwrap(), home,
                    "{:?}: table {} key {:#x}", txn.txn_kind(), table.0, key
                );
                checked += 1;
            }
        }
        prop_assert!(checked > 100, "only {} accesses checked", checked);
    }
}
