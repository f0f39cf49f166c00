//! Unit tests of the whole workload on [`MemoryDb`], a serial in-memory [`TxOps`] (one
//! `BTreeMap`, copy-on-begin so a failed transaction leaves no trace).

use super::*;
use crate::Generator;
use std::collections::{BTreeMap, HashMap};
use txlab_core::{AccessSet, Program, TableId, TxError, TxOps, TxResult};

/// A serial database: a transaction works on a copy of the map that replaces it on success.
#[derive(Debug, Default, Clone)]
struct MemoryDb {
    rows: BTreeMap<(u16, u64), Vec<u8>>,
}

struct MemoryTx<'a> {
    rows: &'a mut BTreeMap<(u16, u64), Vec<u8>>,
    /// Every `(table, key)` touched by a point operation, for declare-vs-run checks.
    touched: Vec<(TableId, u64)>,
    /// Every `(table, key)` written, inserted, updated or deleted.
    written: Vec<(TableId, u64)>,
}

impl TxOps for MemoryTx<'_> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.touched.push((table, key));
        Ok(self.rows.get(&(table.0, key)).map(|v| v.as_slice()))
    }
    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.touched.push((table, key));
        self.written.push((table, key));
        self.rows.insert((table.0, key), value.to_vec());
        Ok(())
    }
    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.touched.push((table, key));
        self.written.push((table, key));
        Ok(self.rows.get_mut(&(table.0, key)).map(|v| f(v)).is_some())
    }
    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.touched.push((table, key));
        self.written.push((table, key));
        if self.rows.contains_key(&(table.0, key)) {
            return Ok(false);
        }
        self.rows.insert((table.0, key), value.to_vec());
        Ok(true)
    }
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.touched.push((table, key));
        self.written.push((table, key));
        Ok(self.rows.remove(&(table.0, key)).is_some())
    }
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        for ((_, k), v) in self.rows.range((table.0, lo)..=(table.0, hi)) {
            if !visit(*k, v) {
                break;
            }
        }
        Ok(())
    }
}

impl MemoryDb {
    fn loaded(tpcc: &Tpcc) -> MemoryDb {
        let mut db = MemoryDb::default();
        tpcc.populate(&mut |t, k, v| {
            assert!(
                db.rows.insert((t.0, k), v.to_vec()).is_none(),
                "key loaded twice"
            );
            Ok(())
        })
        .unwrap();
        db
    }

    /// Runs `f` atomically; returns its result and the touched keys.
    fn transact<T>(
        &mut self,
        f: impl FnOnce(&mut MemoryTx<'_>) -> TxResult<T>,
    ) -> (TxResult<T>, Vec<(TableId, u64)>) {
        let (r, touched, _) = self.transact_logged(f);
        (r, touched)
    }

    /// Like [`MemoryDb::transact`], also returning the written keys.
    #[allow(clippy::type_complexity)]
    fn transact_logged<T>(
        &mut self,
        f: impl FnOnce(&mut MemoryTx<'_>) -> TxResult<T>,
    ) -> (TxResult<T>, Vec<(TableId, u64)>, Vec<(TableId, u64)>) {
        let mut copy = self.rows.clone();
        let mut tx = MemoryTx {
            rows: &mut copy,
            touched: Vec::new(),
            written: Vec::new(),
        };
        let r = f(&mut tx);
        let (touched, written) = (tx.touched, tx.written);
        if r.is_ok() {
            self.rows = copy;
        }
        (r, touched, written)
    }

    fn count(&self, table: TableId) -> usize {
        self.rows.range((table.0, 0)..=(table.0, u64::MAX)).count()
    }
}

fn tiny() -> TpccConfig {
    TpccConfig {
        warehouses: 2,
        districts_per_warehouse: 3,
        customers_per_district: 30,
        items: 200,
        ..TpccConfig::default()
    }
}

#[test]
fn population_counts_match_clause_4_3_3_1() {
    let tpcc = Tpcc::new(tiny()).unwrap();
    let db = MemoryDb::loaded(&tpcc);
    let t = tpcc.tables();
    let (w, d, c, i) = (2, 2 * 3, 2 * 3 * 30, 200);
    assert_eq!(db.count(t.warehouse), w);
    assert_eq!(db.count(t.district), d);
    assert_eq!(db.count(t.customer), c);
    assert_eq!(db.count(t.customer_by_name), c);
    assert_eq!(db.count(t.history), c);
    assert_eq!(db.count(t.order), c);
    assert_eq!(db.count(t.order_by_customer), c);
    assert_eq!(db.count(t.item), i);
    assert_eq!(db.count(t.stock), w * i);
    assert_eq!(db.count(t.new_order), d * 9, "the last 30 % of 30 orders");
    let lines = db.count(t.order_line);
    assert!((c * 5..=c * 15).contains(&lines), "{lines}");
    // 10 % ORIGINAL in item data: a loose bound on 200 items.
    let originals = db
        .rows
        .range((t.item.0, 0)..=(t.item.0, u64::MAX))
        .filter(|(_, v)| random::contains_original(&schema::ItemRow::decode(v).unwrap().i_data))
        .count();
    assert!(
        (5..=45).contains(&originals),
        "{originals} of 200 items ORIGINAL"
    );
    // Every last name 0..30 exists once per district.
    let k = tpcc.keys();
    for name in 0..30 {
        let (lo, hi) = k.customers_named(1, 2, name);
        assert_eq!(
            db.rows
                .range((t.customer_by_name.0, lo)..=(t.customer_by_name.0, hi))
                .count(),
            1
        );
    }
    // Population is deterministic.
    assert_eq!(MemoryDb::loaded(&tpcc).rows, db.rows);
}

#[test]
fn loaded_database_is_consistent_and_a_corruption_is_named() {
    let tpcc = Tpcc::new(tiny()).unwrap();
    let mut db = MemoryDb::loaded(&tpcc);
    let ctx = tpcc.context();
    for w in 1..=2 {
        db.transact(|tx| consistency::check_warehouse(&ctx, tx, w))
            .0
            .unwrap();
    }
    // Break condition 1: change a district's D_YTD.
    let t = tpcc.tables();
    let key = (t.district.0, tpcc.keys().district(2, 3));
    let mut row = schema::DistrictRow::decode(&db.rows[&key]).unwrap();
    row.d_ytd += 1;
    row.encode(db.rows.get_mut(&key).unwrap());
    let e = db
        .transact(|tx| consistency::check_warehouse(&ctx, tx, 2))
        .0
        .unwrap_err();
    assert!(
        e.to_string().contains("condition 1") && e.to_string().contains("warehouse 2"),
        "{e}"
    );
    // Break condition 2 and 3: drop a middle new-order row.
    let mut db = MemoryDb::loaded(&tpcc);
    db.rows
        .remove(&(t.new_order.0, tpcc.keys().order(1, 2, 25)));
    let e = db
        .transact(|tx| consistency::check_warehouse(&ctx, tx, 1))
        .0
        .unwrap_err();
    assert!(
        e.to_string().contains("condition 3") && e.to_string().contains("district 2"),
        "{e}"
    );
    // Break condition 4: drop an order line.
    let mut db = MemoryDb::loaded(&tpcc);
    db.rows
        .remove(&(t.order_line.0, tpcc.keys().order_line(1, 1, 3, 1)));
    let e = db
        .transact(|tx| consistency::check_warehouse(&ctx, tx, 1))
        .0
        .unwrap_err();
    assert!(e.to_string().contains("condition 4"), "{e}");
}

fn run_mix(tpcc: &Tpcc, db: &mut MemoryDb, txns: usize, seed: u64) -> HashMap<&'static str, usize> {
    let mut counts = HashMap::new();
    let mut gens: Vec<_> = (0..2).map(|th| tpcc.generator(th, seed)).collect();
    let mut declared = AccessSet::default();
    for n in 0..txns {
        let txn = gens[n % 2].next();
        declared.clear();
        txn.declare(&mut declared);
        let (r, touched) = db.transact(|tx| txn.run(tx));
        match r {
            Ok(()) => *counts.entry(txn.kind()).or_default() += 1,
            Err(TxError::UserAbort(_)) => {
                assert_eq!(txn.txn_kind(), TpccKind::NewOrder);
                *counts.entry("rollback").or_default() += 1;
            }
            Err(e) => panic!("{} failed: {e}", txn.kind()),
        }
        // Declared keys are touched; undeclared touched keys only when dependent.
        for &(table, key, _) in &declared.accesses {
            assert!(
                touched.contains(&(table, key)),
                "{}: declared ({}, {key:#x}) not touched",
                txn.kind(),
                table.0
            );
        }
        if !declared.dependent {
            for &(table, key) in &touched {
                assert!(
                    declared
                        .accesses
                        .iter()
                        .any(|&(t, k, _)| (t, k) == (table, key)),
                    "{}: touched ({}, {key:#x}) not declared",
                    txn.kind(),
                    table.0
                );
            }
        }
    }
    counts
}

#[test]
fn full_mix_keeps_consistency_and_hits_the_mix() {
    let tpcc = Tpcc::new(tiny()).unwrap();
    let mut db = MemoryDb::loaded(&tpcc);
    let n = 2000;
    let counts = run_mix(&tpcc, &mut db, n, 42);
    let ctx = tpcc.context();
    for w in 1..=2 {
        db.transact(|tx| consistency::check_warehouse(&ctx, tx, w))
            .0
            .unwrap();
    }
    let get = |k: &str| counts.get(k).copied().unwrap_or(0) as f64 / n as f64;
    let new_orders = get("new_order") + get("rollback");
    assert!((0.40..=0.50).contains(&new_orders), "{counts:?}");
    assert!((0.38..=0.48).contains(&get("payment")), "{counts:?}");
    for k in ["order_status", "delivery", "stock_level"] {
        assert!((0.02..=0.065).contains(&get(k)), "{k}: {counts:?}");
    }
    let rollbacks = counts.get("rollback").copied().unwrap_or(0);
    assert!(
        (1..=25).contains(&rollbacks),
        "{rollbacks} rollbacks of ~900 NewOrders"
    );
    // Deliveries removed new-orders and NewOrders added some: the table changed size.
    assert_ne!(db.count(tpcc.tables().new_order), 2 * 3 * 9);
}

#[test]
fn scaled_variant_leaves_w_ytd_alone_and_np_mix_has_two_kinds() {
    let cfg = TpccConfig {
        scaled: true,
        mix: TpccMix::NewOrderPayment,
        districts_per_warehouse: 20,
        ..tiny()
    };
    let tpcc = Tpcc::new(cfg).unwrap();
    assert_eq!(tpcc.name(), "tpcc-np");
    let mut db = MemoryDb::loaded(&tpcc);
    let before = db.rows[&(tpcc.tables().warehouse.0, 0)].clone();
    let counts = run_mix(&tpcc, &mut db, 400, 7);
    assert_eq!(
        db.rows[&(tpcc.tables().warehouse.0, 0)],
        before,
        "W_YTD untouched"
    );
    assert!(
        counts
            .keys()
            .all(|k| ["new_order", "payment", "rollback"].contains(k)),
        "{counts:?}"
    );
    let ctx = tpcc.context();
    db.transact(|tx| consistency::check_warehouse(&ctx, tx, 1))
        .0
        .unwrap();
    let params = tpcc.parameters();
    assert!(params.contains(&("scaled", "true".to_string())));
    assert!(params.contains(&("districts_per_warehouse", "20".to_string())));
}

#[test]
fn generators_are_deterministic_by_seed_and_thread() {
    let tpcc = Tpcc::new(tiny()).unwrap();
    let take = |th, seed| {
        let mut g = tpcc.generator(th, seed);
        (0..50).map(|_| g.next().clone()).collect::<Vec<_>>()
    };
    assert_eq!(take(0, 1), take(0, 1));
    assert_ne!(take(0, 1), take(1, 1));
    assert_ne!(take(0, 1), take(0, 2));
    // The run constants obey the C-delta rule against the load constants.
    let load = tpcc.load_constants();
    for seed in 0..50 {
        let run = tpcc.run_constants(seed);
        assert!(random::valid_last_name_delta(load.c_last, run.c_last));
    }
}

#[test]
fn payment_by_last_name_picks_the_middle_by_first_name() {
    let tpcc = Tpcc::new(TpccConfig {
        customers_per_district: 3000,
        districts_per_warehouse: 1,
        items: 15,
        ..TpccConfig::default()
    })
    .unwrap();
    let mut db = MemoryDb::loaded(&tpcc);
    let ctx = tpcc.context();
    let t = tpcc.tables();
    let k = tpcc.keys();
    // Find a last name shared by several customers and compute the expected pick by hand.
    let mut by_name: BTreeMap<u32, Vec<([u8; 16], u32)>> = BTreeMap::new();
    for c in 1..=3000 {
        let row =
            schema::CustomerRow::decode(&db.rows[&(t.customer.0, k.customer(1, 1, c))]).unwrap();
        let name = (0..1000)
            .find(|&n| random::last_name(n) == row.c_last)
            .unwrap();
        by_name.entry(name).or_default().push((row.c_first, c));
    }
    let (&name, group) = by_name.iter().max_by_key(|(_, g)| g.len()).unwrap();
    assert!(group.len() >= 3);
    let mut sorted = group.clone();
    sorted.sort_unstable();
    let expected = sorted[sorted.len().div_ceil(2) - 1].1;
    let inp = payment::PaymentInput {
        w: 1,
        d: 1,
        c_w: 1,
        c_d: 1,
        customer: CustomerSelector::LastName(name),
        amount: 12_345,
        date: 9,
        history_key: keys::history(0, 0, 1),
    };
    let (paid, _) = db.transact(|tx| payment::run_for_customer(&ctx, &inp, tx));
    assert_eq!(paid.unwrap(), expected);
    let row =
        schema::CustomerRow::decode(&db.rows[&(t.customer.0, k.customer(1, 1, expected))]).unwrap();
    assert_eq!(row.c_balance, load::CUSTOMER_INITIAL_BALANCE - 12_345);
    assert_eq!(row.c_payment_cnt, 2);
    if &row.c_credit == b"BC" {
        assert!(
            codec::trimmed(&row.c_data)
                .starts_with(format!("{expected} 1 1 1 1 123.45 ").as_bytes())
        );
    }
}

#[test]
fn new_order_rollback_is_a_user_abort_and_leaves_no_trace() {
    let tpcc = Tpcc::new(tiny()).unwrap();
    let mut db = MemoryDb::loaded(&tpcc);
    let ctx = tpcc.context();
    let mut lines = [new_order::OrderLineInput::default(); 15];
    for (i, l) in lines.iter_mut().enumerate().take(5) {
        *l = new_order::OrderLineInput {
            item: i as u32 + 1,
            supply_w: 1,
            quantity: 3,
        };
    }
    lines[4].item = 201; // unused id
    let mut inp = new_order::NewOrderInput {
        w: 1,
        d: 1,
        c: 1,
        lines,
        ol_cnt: 5,
        entry_d: 5,
    };
    let before = db.rows.clone();
    let (r, _) = db.transact(|tx| new_order::run(&ctx, &inp, tx));
    assert!(matches!(r, Err(TxError::UserAbort(_))), "{r:?}");
    assert_eq!(db.rows, before);
    inp.lines[4].item = 5;
    let (r, _) = db.transact(|tx| new_order::run(&ctx, &inp, tx));
    assert!(r.unwrap() > 0);
    let t = tpcc.tables();
    assert!(
        db.rows
            .contains_key(&(t.new_order.0, tpcc.keys().order(1, 1, 31)))
    );
    // OrderStatus finds the new order as customer 1's latest.
    let os = order_status::OrderStatusInput {
        w: 1,
        d: 1,
        customer: CustomerSelector::Id(1),
    };
    let status = db
        .transact(|tx| order_status::run(&ctx, &os, tx))
        .0
        .unwrap();
    assert_eq!((status.o_id, status.lines), (Some(31), 5));
}

#[test]
fn delivery_delivers_the_oldest_new_order_of_every_district() {
    let tpcc = Tpcc::new(tiny()).unwrap();
    let mut db = MemoryDb::loaded(&tpcc);
    let ctx = tpcc.context();
    let t = tpcc.tables();
    let k = tpcc.keys();
    let inp = delivery::DeliveryInput {
        w: 2,
        carrier: 7,
        date: 99,
    };
    let n = db.transact(|tx| delivery::run(&ctx, &inp, tx)).0.unwrap();
    assert_eq!(n, 3);
    for d in 1..=3 {
        assert!(!db.rows.contains_key(&(t.new_order.0, k.order(2, d, 22))));
        assert!(db.rows.contains_key(&(t.new_order.0, k.order(2, d, 23))));
        let o = schema::OrderRow::decode(&db.rows[&(t.order.0, k.order(2, d, 22))]).unwrap();
        assert_eq!(o.o_carrier_id, 7);
        let ol =
            schema::OrderLineRow::decode(&db.rows[&(t.order_line.0, k.order_line(2, d, 22, 1))])
                .unwrap();
        assert_eq!(ol.ol_delivery_d, 99);
    }
    // Warehouse 1 untouched.
    assert!(db.rows.contains_key(&(t.new_order.0, k.order(1, 1, 22))));
    // Stock level counts something sensible (at most 20 orders * 15 lines).
    let sl = stock_level::StockLevelInput {
        w: 1,
        d: 1,
        threshold: 101,
    };
    let low = db.transact(|tx| stock_level::run(&ctx, &sl, tx)).0.unwrap();
    assert!((1..=300).contains(&low), "{low}");
}

// ---------------------------------------------------------------------------------------------
// The scaled variant: no W_YTD column, Payment reads the warehouse only, the read-only total.

use txlab_core::Access;

fn scaled_tiny() -> TpccConfig {
    TpccConfig {
        scaled: true,
        districts_per_warehouse: 5,
        ..tiny()
    }
}

fn payment_input(w: u32, d: u32, c_w: u32, amount: i64, seq: u64) -> payment::PaymentInput {
    payment::PaymentInput {
        w,
        d,
        c_w,
        c_d: 1,
        customer: CustomerSelector::Id(3),
        amount,
        date: seq + 2,
        history_key: keys::history(0, 0, seq),
    }
}

fn declared_keys(txn: &TpccTxn) -> AccessSet {
    let mut set = AccessSet::default();
    txn.declare(&mut set);
    set
}

#[test]
fn scaled_payment_only_reads_the_warehouse_row_which_has_no_w_ytd() {
    let tpcc = Tpcc::new(scaled_tiny()).unwrap();
    let t = tpcc.tables();
    let k = tpcc.keys();
    let mut db = MemoryDb::loaded(&tpcc);
    let wkey = (t.warehouse, k.warehouse(1));
    let before = db.rows[&(t.warehouse.0, wkey.1)].clone();
    assert_eq!(
        before.len(),
        schema::ScaledWarehouseRow::SIZE,
        "no W_YTD column"
    );
    assert!(schema::WarehouseRow::decode(&before).is_err());
    let txn = TpccTxn::new(
        tpcc.context(),
        TpccInput::Payment(payment_input(1, 2, 1, 4_321, 1)),
    );
    let (r, touched, written) = db.transact_logged(|tx| txn.run(tx));
    r.unwrap();
    // The warehouse is read (name and address for H_DATA), never written.
    assert_eq!(touched.iter().filter(|&&x| x == wkey).count(), 1);
    assert!(!written.contains(&wkey), "{written:?}");
    assert_eq!(db.rows[&(t.warehouse.0, wkey.1)], before);
    assert!(
        declared_keys(&txn)
            .accesses
            .contains(&(wkey.0, wkey.1, Access::Read))
    );
    // H_DATA starts with W_NAME.
    let h = schema::HistoryRow::decode(&db.rows[&(t.history.0, keys::history(0, 0, 1))]).unwrap();
    let w_name = schema::ScaledWarehouseRow::decode(&before).unwrap().w_name;
    assert!(h.h_data.starts_with(codec::trimmed(&w_name)));

    // The standard variant still read-modify-writes W_YTD.
    let tpcc = Tpcc::new(tiny()).unwrap();
    let mut db = MemoryDb::loaded(&tpcc);
    let txn = TpccTxn::new(
        tpcc.context(),
        TpccInput::Payment(payment_input(1, 2, 1, 4_321, 1)),
    );
    let (r, _, written) = db.transact_logged(|tx| txn.run(tx));
    r.unwrap();
    assert!(written.contains(&wkey));
    assert!(
        declared_keys(&txn)
            .accesses
            .contains(&(wkey.0, wkey.1, Access::ReadWrite))
    );
    let wh = schema::WarehouseRow::decode(&db.rows[&(t.warehouse.0, wkey.1)]).unwrap();
    assert_eq!(wh.w_ytd, 3 * load::DISTRICT_INITIAL_YTD + 4_321);
}

#[test]
fn warehouse_ytd_is_a_read_only_sum_of_d_ytd() {
    let tpcc = Tpcc::new(scaled_tiny()).unwrap();
    let ctx = tpcc.context();
    let mut db = MemoryDb::loaded(&tpcc);
    let ytd = |db: &mut MemoryDb, w| {
        let txn = tpcc.warehouse_ytd_txn(w).unwrap();
        let (r, touched, written) = db.transact_logged(|tx| txn.run(tx));
        r.unwrap();
        assert!(written.is_empty(), "read only: {written:?}");
        // Reads every district of the warehouse, exactly what it declares.
        let set = declared_keys(&txn);
        assert!(!set.dependent);
        let declared: Vec<_> = set.accesses.iter().map(|&(t, k, _)| (t, k)).collect();
        assert!(set.accesses.iter().all(|a| a.2 == Access::Read));
        assert_eq!(touched, declared);
        assert_eq!(touched.len(), 5);
        let inp = warehouse_ytd::WarehouseYtdInput { w };
        db.transact(|tx| warehouse_ytd::run(&ctx, &inp, tx))
            .0
            .unwrap()
    };
    let initial = 5 * load::DISTRICT_INITIAL_YTD;
    assert_eq!(ytd(&mut db, 1), initial);
    assert_eq!(ytd(&mut db, 2), initial);
    // Payments to districts 2 and 5 of warehouse 1 (one with a customer of warehouse 2).
    for (seq, (d, c_w, amount)) in [(2, 1, 100), (5, 2, 250_000), (2, 1, 7)]
        .into_iter()
        .enumerate()
    {
        let txn = TpccTxn::new(
            ctx,
            TpccInput::Payment(payment_input(1, d, c_w, amount, seq as u64)),
        );
        db.transact(|tx| txn.run(tx)).0.unwrap();
    }
    assert_eq!(ytd(&mut db, 1), initial + 100 + 250_000 + 7);
    assert_eq!(ytd(&mut db, 2), initial);
    let txn = tpcc.warehouse_ytd_txn(1).unwrap();
    assert_eq!(txn.txn_kind(), TpccKind::WarehouseYtd);
    assert_eq!(txn.kind(), "warehouse_ytd");
    // Bad warehouse ids name the value and the range.
    for w in [0, 3] {
        let e = tpcc.warehouse_ytd_txn(w).unwrap_err().to_string();
        assert!(
            e.contains(&format!("warehouse = {w}")) && e.contains("1..=2"),
            "{e}"
        );
    }
    // The mix never issues it.
    let mut g = tpcc.generator(0, 5);
    assert!((0..5000).all(|_| g.next().txn_kind() != TpccKind::WarehouseYtd));
}

#[test]
fn scaled_condition_1_compares_the_read_only_sum_with_history() {
    let tpcc = Tpcc::new(scaled_tiny()).unwrap();
    let ctx = tpcc.context();
    let t = tpcc.tables();
    let check = |db: &mut MemoryDb, w| {
        db.transact(|tx| consistency::check_warehouse(&ctx, tx, w))
            .0
    };
    // Holds after load and after a run of the full mix (with remote payments).
    let mut db = MemoryDb::loaded(&tpcc);
    check(&mut db, 1).unwrap();
    check(&mut db, 2).unwrap();
    let counts = run_mix(&tpcc, &mut db, 1500, 9);
    assert!(counts["payment"] > 500, "{counts:?}");
    check(&mut db, 1).unwrap();
    check(&mut db, 2).unwrap();
    let (paid, _) = db.transact(|tx| consistency::history_total(&ctx, tx, 1));
    let (ytd, _) =
        db.transact(|tx| warehouse_ytd::run(&ctx, &warehouse_ytd::WarehouseYtdInput { w: 1 }, tx));
    assert_eq!(
        ytd.unwrap(),
        consistency::expected_warehouse_ytd(&ctx, paid.unwrap())
    );

    // A lost D_YTD update (the district's total short by one payment) is caught and named.
    let key = (t.district.0, tpcc.keys().district(2, 4));
    let mut row = schema::DistrictRow::decode(&db.rows[&key]).unwrap();
    row.d_ytd -= 1;
    row.encode(db.rows.get_mut(&key).unwrap());
    let e = check(&mut db, 2).unwrap_err().to_string();
    assert!(
        e.contains("condition 1") && e.contains("scaled") && e.contains("warehouse 2"),
        "{e}"
    );
    check(&mut db, 1).unwrap();

    // So is a Payment whose HISTORY row is missing.
    let mut db = MemoryDb::loaded(&tpcc);
    let txn = TpccTxn::new(ctx, TpccInput::Payment(payment_input(1, 3, 1, 999, 4)));
    db.transact(|tx| txn.run(tx)).0.unwrap();
    check(&mut db, 1).unwrap();
    db.rows
        .remove(&(t.history.0, keys::history(0, 0, 4)))
        .unwrap();
    let e = check(&mut db, 1).unwrap_err().to_string();
    assert!(
        e.contains("condition 1") && e.contains("warehouse 1"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// Input fractions of the generator (fixed seed), within five binomial standard deviations.

/// Asserts `hits / n` is within five standard deviations of `p` (binomial): about 1 in 1.7M
/// for a correct generator, while e.g. 2 % for 1 % or 10 % for 15 % lies far outside.
fn assert_fraction(what: &str, hits: u64, n: u64, p: f64) {
    assert!(n > 0, "{what}: no samples");
    let observed = hits as f64 / n as f64;
    let tolerance = 5.0 * (p * (1.0 - p) / n as f64).sqrt();
    assert!(
        (observed - p).abs() <= tolerance,
        "{what}: {hits} of {n} = {observed:.4}, expected {p} +- {tolerance:.4}"
    );
}

#[derive(Debug, Default)]
struct Fractions {
    lines: u64,
    remote_lines: u64,
    payments: u64,
    remote_payments: u64,
    payments_by_name: u64,
    order_statuses: u64,
    order_statuses_by_name: u64,
}

fn fractions(tpcc: &Tpcc, thread: usize, seed: u64, txns: usize) -> Fractions {
    let warehouses = tpcc.config().warehouses;
    let home = (thread % warehouses as usize) as u32 + 1;
    let mut f = Fractions::default();
    let mut g = tpcc.generator(thread, seed);
    for _ in 0..txns {
        match g.next().input() {
            TpccInput::NewOrder(i) => {
                assert_eq!(i.w, home);
                for line in &i.lines[..usize::from(i.ol_cnt)] {
                    assert!((1..=warehouses).contains(&line.supply_w));
                    f.lines += 1;
                    f.remote_lines += u64::from(line.supply_w != i.w);
                }
            }
            TpccInput::Payment(i) => {
                assert_eq!(i.w, home);
                assert!((1..=warehouses).contains(&i.c_w));
                f.payments += 1;
                if i.c_w == i.w {
                    assert_eq!(i.c_d, i.d, "a home customer is of the paying district");
                } else {
                    f.remote_payments += 1;
                }
                f.payments_by_name +=
                    u64::from(matches!(i.customer, CustomerSelector::LastName(_)));
            }
            TpccInput::OrderStatus(i) => {
                f.order_statuses += 1;
                f.order_statuses_by_name +=
                    u64::from(matches!(i.customer, CustomerSelector::LastName(_)));
            }
            _ => {}
        }
    }
    f
}

#[test]
fn remote_and_by_last_name_fractions_match_clauses_2_4_1_5_2_5_1_2_and_2_6_1_2() {
    let tpcc = Tpcc::new(TpccConfig::tiny(4)).unwrap();
    let f = fractions(&tpcc, 1, 2024, 200_000);
    // Clause 2.4.1.5: each order line is supplied by a remote warehouse with probability 1 %.
    assert!(f.lines > 800_000, "{f:?}");
    assert_fraction("remote order lines", f.remote_lines, f.lines, 0.01);
    // Clause 2.5.1.2: 15 % of payments are for a customer of a remote warehouse.
    assert!(f.payments > 80_000, "{f:?}");
    assert_fraction("remote payments", f.remote_payments, f.payments, 0.15);
    // Clauses 2.5.1.2 and 2.6.1.2: 60 % of customers are selected by last name.
    assert_fraction(
        "payments by last name",
        f.payments_by_name,
        f.payments,
        0.60,
    );
    assert!(f.order_statuses > 7_000, "{f:?}");
    assert_fraction(
        "order-status by last name",
        f.order_statuses_by_name,
        f.order_statuses,
        0.60,
    );
    assert_fraction(
        "customer lookups by last name (Payment + OrderStatus)",
        f.payments_by_name + f.order_statuses_by_name,
        f.payments + f.order_statuses,
        0.60,
    );

    // The NewOrder + Payment mix draws the same fractions.
    let np = Tpcc::new(TpccConfig {
        mix: TpccMix::NewOrderPayment,
        ..TpccConfig::tiny(4)
    })
    .unwrap();
    let f = fractions(&np, 3, 77, 100_000);
    assert_eq!(f.order_statuses, 0);
    assert_fraction("np: remote order lines", f.remote_lines, f.lines, 0.01);
    assert_fraction("np: remote payments", f.remote_payments, f.payments, 0.15);
    assert_fraction(
        "np: payments by last name",
        f.payments_by_name,
        f.payments,
        0.60,
    );

    // With one warehouse nothing is remote; last names keep their 60 %.
    let one = Tpcc::new(TpccConfig::tiny(1)).unwrap();
    let f = fractions(&one, 0, 2024, 50_000);
    assert_eq!((f.remote_lines, f.remote_payments), (0, 0), "{f:?}");
    assert_fraction(
        "1 warehouse: payments by last name",
        f.payments_by_name,
        f.payments,
        0.60,
    );
}
