//! The checker on the workloads' own profiles: scaled TPC-C (the paper's §5.2 verdict), TPC-C with
//! its read-only types run as ordinary ones (why §4.1 exists), and YCSB.

use txlab_core::pieces::PieceProfiles;
use txlab_rococo::sc::{PairVerdict, ScOptions, ScReport, report};
use txlab_workload::{Tpcc, TpccConfig, Ycsb, YcsbConfig, YcsbPreset};

fn tpcc(include_read_only: bool) -> ScReport {
    let tpcc = Tpcc::new(TpccConfig::rococo_scaled()).unwrap();
    report(&tpcc, ScOptions { include_read_only }).unwrap()
}

fn pair(r: &ScReport, a: &str, b: &str) -> PairVerdict {
    r.pairs
        .iter()
        .find(|p| (p.a.as_str(), p.b.as_str()) == (a, b))
        .unwrap_or_else(|| panic!("no pair {a} x {b}"))
        .verdict
}

#[test]
fn scaled_tpcc_has_no_unreorderable_cycle_and_no_merged_pieces() {
    let r = tpcc(false);
    assert!(r.is_safe(), "{r}");
    r.require_safe().unwrap();
    assert_eq!(r.included, ["new_order", "payment", "delivery"]);
    assert_eq!(
        r.excluded_read_only,
        ["order_status", "stock_level", "warehouse_ytd"]
    );
    assert!(r.promotions.is_empty(), "{r}");
    assert!(r.pieces.iter().all(|p| p.declared == p.effective));
    // The one I-I C-edge: the two NewOrders' district pieces on D_NEXT_O_ID.
    assert_eq!(r.c_edges_ii, 1, "{r}");
    assert!(r.c_edges_dd > 0);
    assert_eq!(pair(&r, "new_order", "new_order"), PairVerdict::Safe);
    assert_eq!(pair(&r, "new_order", "delivery"), PairVerdict::Safe);
    assert_eq!(pair(&r, "new_order", "payment"), PairVerdict::NoConflict);
    assert_eq!(pair(&r, "payment", "delivery"), PairVerdict::Safe);
    // Plain chopping would reject it (SC-cycles through D-D edges).
    assert!(r.chopping.blocks_with_sc_cycles > 0);
    assert_eq!(
        r.chopping
            .pairs
            .iter()
            .filter(|p| p.verdict == PairVerdict::Unsafe)
            .count(),
        5
    );
    for static_group in [
        "warehouse",
        "item",
        "customer_by_name",
        "district.static",
        "stock.static",
    ] {
        assert!(
            r.never_written.iter().any(|g| g == static_group),
            "{static_group}: {r}"
        );
    }
}

#[test]
fn tpcc_with_its_read_only_types_as_ordinary_ones_is_unreorderable() {
    let r = tpcc(true);
    assert!(!r.is_safe(), "{r}");
    // StockLevel's immediate order-line read promotes NewOrder's order_line piece first...
    let first = &r.promotions[0];
    assert!(
        first.promoted.starts_with("new_order[") && first.promoted.contains(".order_line["),
        "{r}"
    );
    assert!(
        first.by.starts_with("stock_level[") && first.by.ends_with(".order_lines"),
        "{r}"
    );
    assert_eq!(first.on, ["order_line.row"]);
    let order_line = r
        .pieces
        .iter()
        .find(|p| p.txn == "new_order" && p.piece == "order_line")
        .unwrap();
    assert_eq!((order_line.declared, order_line.effective), ('D', 'I'));
    // ...which, with its immediate D_NEXT_O_ID read, closes an all-I-I cycle through NewOrder.
    assert_eq!(pair(&r, "new_order", "stock_level"), PairVerdict::Unsafe);
    assert!(r.require_safe().is_err());
    assert!(!r.unreorderable[0].merge.is_empty());
    // OrderStatus alone (one deferrable piece) adds no immediacy.
    let os = Tpcc::new(TpccConfig::rococo_scaled()).unwrap();
    let mut profiles = os.profiles();
    profiles.retain(|p| p.kind != "stock_level");
    let r = txlab_rococo::sc::analyze(
        &profiles,
        &os.table_layouts(),
        ScOptions {
            include_read_only: true,
        },
    )
    .unwrap();
    assert!(r.is_safe(), "{r}");
}

#[test]
fn ycsb_is_deferrable_everywhere_and_safe() {
    let ycsb = Ycsb::new(YcsbConfig::preset(YcsbPreset::A)).unwrap();
    for include_read_only in [false, true] {
        let r = report(&ycsb, ScOptions { include_read_only }).unwrap();
        assert!(r.is_safe(), "{r}");
        assert_eq!(r.c_edges_ii, 0);
    }
}
