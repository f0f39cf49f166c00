use super::*;
use crate::error::TxError;
use crate::test_support::Map;

#[test]
fn piece_values_put_get_replace_and_compare_by_content() {
    let mut v = PieceValues::new();
    assert!(v.is_empty());
    v.put_u64(3, 7);
    v.put(1, b"abc");
    assert_eq!(v.get_u64(3), Some(7));
    assert_eq!(v.get(1), Some(&b"abc"[..]));
    assert_eq!(v.get(2), None);
    assert_eq!(v.get_u64(1), None, "3 bytes are not a u64");
    v.put(1, b"xyz");
    v.put(1, b"longer");
    assert_eq!(v.get(1), Some(&b"longer"[..]));
    assert_eq!(v.len(), 2);

    let mut w = PieceValues::new();
    w.put(1, b"longer");
    w.put_u64(3, 7);
    assert_eq!(v, w, "equality ignores insertion order and stale bytes");
    w.put_u64(3, 8);
    assert_ne!(v, w);

    let e = v.require(9, "order_line").unwrap_err().to_string();
    assert!(e.contains("order_line") && e.contains("slot 9"), "{e}");
    let e = v.require_u64(1, "order_line").unwrap_err().to_string();
    assert!(e.contains("6 bytes"), "{e}");

    let mut m = PieceValues::new();
    m.put_u64(3, 1);
    m.extend_from(&w);
    assert_eq!(m, w);
}

fn profile() -> TxnProfile {
    let t = TableId(0);
    TxnProfile {
        kind: "toy",
        read_only: false,
        pieces: vec![
            PieceProfile::new("a", PieceKind::Immediate).access(t, ColumnGroup::ROW, Access::Read),
            PieceProfile::new("b", PieceKind::Deferrable)
                .access(t, ColumnGroup::ROW, Access::ReadWrite)
                .inputs_from(&[0])
                .repeated(),
        ],
    }
}

#[test]
fn plans_are_checked_against_their_profile() {
    let p = profile();
    let r = |piece, instance| PieceRef::new(piece, instance, TableId(0), 0);
    check_plan(&p, &[r(0, 0), r(1, 0), r(1, 1)]).unwrap();
    let e = check_plan(&p, &[r(1, 0), r(0, 0)]).unwrap_err().to_string();
    assert!(e.contains("b is planned before an instance of a"), "{e}");
    let e = check_plan(&p, &[r(0, 0), r(0, 1)]).unwrap_err().to_string();
    assert!(e.contains("not repeated"), "{e}");
    let e = check_plan(&p, &[r(0, 0), r(1, 2), r(1, 2)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("instance 2 is planned twice"), "{e}");
    let e = check_plan(&p, &[r(2, 0)]).unwrap_err().to_string();
    assert!(e.contains("piece = 2") && e.contains("0..2"), "{e}");
}

#[test]
fn history_tables_are_distinct_per_table_and_group() {
    let mut seen = std::collections::BTreeSet::new();
    for t in [0u16, 1, 4095] {
        for g in 0..=ColumnGroup::MAX {
            assert!(seen.insert(history_table(TableId(t), ColumnGroup(g)).unwrap()));
        }
    }
    let e = history_table(TableId(4096), ColumnGroup(0)).unwrap_err();
    assert!(e.to_string().contains("table = 4096"), "{e}");
    let e = history_table(TableId(1), ColumnGroup(16)).unwrap_err();
    assert!(e.to_string().contains("column group = 16"), "{e}");
}

#[test]
fn conflicts_need_one_key_and_one_write() {
    let k = ConflictKey::new(TableId(1), ColumnGroup(2), 5);
    let other_group = ConflictKey::new(TableId(1), ColumnGroup(3), 5);
    assert!(conflicts((k, Access::Read), (k, Access::Insert)));
    assert!(!conflicts((k, Access::Read), (k, Access::Read)));
    assert!(!conflicts(
        (k, Access::ReadWrite),
        (other_group, Access::ReadWrite)
    ));
    assert!(permits(Access::ReadWrite, Access::Read));
    assert!(!permits(Access::Read, Access::Insert));
    assert!(!permits(Access::BlindWrite, Access::Delete));
}

#[test]
fn layouts_must_cover_the_row_with_disjoint_groups() {
    let t = TableId(0);
    let ok = TableLayout::whole(t, "t")
        .group(1, "a", &[(0, 4)])
        .group(2, "b", &[(4, 6), (8, 10)])
        .group(3, "c", &[(6, 8)]);
    ok.validate(10).unwrap();
    assert_eq!(ok.group_of_byte(9), Some(ColumnGroup(2)));
    assert_eq!(ok.group_name(ColumnGroup(3)), "c");
    assert_eq!(
        TableLayout::whole(t, "w").group_name(ColumnGroup::ROW),
        "row"
    );
    let e = ok.validate(12).unwrap_err().to_string();
    assert!(e.contains("byte 10"), "{e}");
    let overlap = TableLayout::whole(t, "t")
        .group(1, "a", &[(0, 5)])
        .group(2, "b", &[(4, 10)]);
    assert!(
        overlap
            .validate(10)
            .unwrap_err()
            .to_string()
            .contains("overlap")
    );
    let zero = TableLayout::whole(t, "t").group(0, "a", &[(0, 10)]);
    assert!(
        zero.validate(10)
            .unwrap_err()
            .to_string()
            .contains("column group = 0")
    );
    assert_eq!(KeyUnit::Shift(32).of(3 << 32 | 9), 3);
    assert_eq!(KeyUnit::Div(100).of(250), 2);
}

fn invariant(r: TxResult<impl std::fmt::Debug>) -> String {
    match r {
        Err(TxError::Error(Error::Invariant(m))) => m,
        other => panic!("expected an invariant error, got {other:?}"),
    }
}

#[test]
fn checked_ops_allow_declared_accesses_and_name_the_rest() {
    // Table 0: groups 1 (bytes 0..2) and 2 (bytes 2..4), units of 16 keys. Table 1: whole rows.
    let (a, b) = (TableId(0), TableId(1));
    let tables = vec![
        TableLayout::whole(a, "grouped")
            .unit(KeyUnit::Shift(4))
            .group(1, "hot", &[(0, 2)])
            .group(2, "static", &[(2, 4)]),
        TableLayout::whole(b, "plain"),
    ];
    let mut db = Map::default();
    db.write(a, 0x21, &[1, 1, 9, 9]).unwrap();
    let declared = [
        (ConflictKey::new(a, ColumnGroup(1), 2), Access::ReadWrite),
        (ConflictKey::new(a, ColumnGroup(2), 2), Access::Read),
        (ConflictKey::new(b, ColumnGroup::ROW, 7), Access::Insert),
    ];
    let mut ops = CheckedOps::new(&mut db, "p", &declared, &tables);
    assert!(
        ops.read(a, 0x2f).unwrap().is_none(),
        "absent, and covered: the unit of 0x21"
    );
    assert!(ops.update(a, 0x21, &mut |v| v[0] = 5).unwrap());
    ops.write(a, 0x21, &[5, 6, 9, 9]).unwrap();
    assert!(ops.insert(b, 7, &[0]).unwrap());
    ops.scan(a, 0x20, 0x2f, &mut |_, _| true).unwrap();
    assert_eq!(ops.checked(), 5);

    let m = invariant(ops.write(a, 0x21, &[5, 6, 0, 9]));
    assert!(
        m.contains("piece p: write of table grouped key 0x21") && m.contains("static"),
        "{m}"
    );
    let m = invariant(ops.read(a, 0x31));
    assert!(m.contains("unit 3"), "{m}");
    let m = invariant(ops.scan(a, 0x20, 0x30, &mut |_, _| true));
    assert!(m.contains("spans units 2 to 3"), "{m}");
    let m = invariant(ops.delete(b, 7));
    assert!(m.contains("Delete"), "{m}");
    let m = invariant(ops.write(b, 8, &[1]));
    assert!(m.contains("key 0x8"), "{m}");
    let m = invariant(ops.read(TableId(9), 0));
    assert!(m.contains("no layout"), "{m}");
    drop(ops);
    assert_eq!(
        db.0[&(0, 0x21)],
        vec![5, 6, 9, 9],
        "refused writes left no trace"
    );
}

#[cfg(all(feature = "serde", not(any(txlab_loom, txlab_shuttle))))]
#[test]
fn piece_refs_and_conflict_keys_survive_a_serde_round_trip() {
    let r = PieceRef::new(3, 14, TableId(8), u64::MAX - 1);
    let k = (
        ConflictKey::new(TableId(2), ColumnGroup(3), 77),
        PieceKind::Deferrable,
    );
    let text = serde_json::to_string(&(r, k)).unwrap();
    assert_eq!(
        serde_json::from_str::<(PieceRef, (ConflictKey, PieceKind))>(&text).unwrap(),
        (r, k)
    );
}
