//! Hand-written histories: one per anomaly (each must be reported with the right kind and the
//! right transactions) and valid ones that must not be flagged.

use txlab_check::{
    AnomalyKind, CheckOptions, DependencyKind, Evidence, History, Report, check,
    serializable_by_enumeration,
};

fn checked(h: &History) -> Report {
    check(h, CheckOptions::serializable())
}

/// Asserts that `kind` is the only kind reported and its (first) example involves exactly `txns`.
fn assert_only(report: &Report, kind: AnomalyKind, txns: &[u64]) {
    assert!(!report.is_serializable(), "{report}");
    let kinds: Vec<AnomalyKind> = report.counts.keys().copied().collect();
    assert_eq!(kinds, vec![kind], "{report}");
    let a = report.of_kind(kind).next().expect("an example");
    let mut got = a.txns();
    got.sort_unstable();
    assert_eq!(got, txns, "{report}");
}

fn assert_clean(h: &History, opts: CheckOptions) {
    let report = check(h, opts);
    assert!(report.is_serializable(), "{report}");
    assert!(report.anomalies.is_empty());
}

#[test]
fn g0_write_cycle() {
    let mut h = History::new();
    h.txn(1).write(1, 1).write_at(2, 1, 2).commit(); // x1 first, y1 second
    h.txn(2).write(1, 2).write_at(2, 2, 1).commit(); // x2 second, y2 first
    let r = checked(&h);
    // The ww cycle is also a (trivial) data cycle, but G0 is reported once per class component:
    // only the ww class has a cycle starting with its characteristic edge.
    assert_only(&r, AnomalyKind::G0, &[1, 2]);
    let cycle = r.anomalies[0].cycle().unwrap();
    assert!(cycle.iter().all(|d| d.kind == DependencyKind::Ww));
    assert_eq!(cycle.len(), 2);
    assert_eq!(cycle[0].to, cycle[1].from);
    assert_eq!(cycle[1].to, cycle[0].from);
    assert_eq!(serializable_by_enumeration(&h), Ok(false));
}

#[test]
fn g1a_aborted_read() {
    let mut h = History::new();
    h.txn(1).write(1, 1).abort();
    h.txn(2).read(1, 1).commit();
    let r = checked(&h);
    assert_only(&r, AnomalyKind::G1a, &[1, 2]);
    let Evidence::Read(bad) = &r.anomalies[0].evidence else {
        panic!("{r}")
    };
    assert_eq!((bad.reader, bad.writer, bad.version), (2, Some(1), 1));
    assert_eq!(r.aborted, 1);
    assert_eq!(r.committed, 1);
}

#[test]
fn g1b_intermediate_read() {
    let mut h = History::new();
    h.txn(1).write(1, 1).write(1, 2).commit();
    h.txn(2).read(1, 1).commit();
    assert_only(&checked(&h), AnomalyKind::G1b, &[1, 2]);
    // Reading the final version is fine.
    let mut ok = History::new();
    ok.txn(1).write(1, 1).write(1, 2).commit();
    ok.txn(2).read(1, 2).commit();
    assert_clean(&ok, CheckOptions::serializable());
}

#[test]
fn g1c_circular_information_flow() {
    let mut h = History::new();
    h.txn(1).write(1, 1).read(2, 1).commit();
    h.txn(2).read(1, 1).write(2, 1).commit();
    let r = checked(&h);
    assert_only(&r, AnomalyKind::G1c, &[1, 2]);
    assert!(
        r.anomalies[0]
            .cycle()
            .unwrap()
            .iter()
            .all(|d| d.kind == DependencyKind::Wr)
    );
}

#[test]
fn g_single_read_skew() {
    let mut h = History::new();
    h.txn(1).read(1, 0).read(2, 1).commit(); // saw old x, new y
    h.txn(2).write(1, 1).write(2, 1).commit();
    let r = checked(&h);
    assert_only(&r, AnomalyKind::GSingle, &[1, 2]);
    let kinds: Vec<DependencyKind> = r.anomalies[0]
        .cycle()
        .unwrap()
        .iter()
        .map(|d| d.kind)
        .collect();
    assert_eq!(kinds, vec![DependencyKind::Rw, DependencyKind::Wr]);
    assert!(
        r.to_string()
            .contains("G-single: T1 -rw(k1)-> T2 -wr(k2)-> T1"),
        "{r}"
    );
}

#[test]
fn g_single_lost_update() {
    let mut h = History::new();
    h.txn(1).read(1, 0).write(1, 1).commit();
    h.txn(2).read(1, 0).write(1, 2).commit();
    assert_only(&checked(&h), AnomalyKind::GSingle, &[1, 2]);
}

#[test]
fn g2_item_write_skew() {
    let mut h = History::new();
    h.txn(1).read(1, 0).read(2, 0).write(1, 1).commit();
    h.txn(2).read(1, 0).read(2, 0).write(2, 1).commit();
    let r = checked(&h);
    assert_only(&r, AnomalyKind::G2Item, &[1, 2]);
    assert!(
        r.anomalies[0]
            .cycle()
            .unwrap()
            .iter()
            .all(|d| d.kind == DependencyKind::Rw)
    );
}

#[test]
fn the_reported_cycle_is_a_shortest_one() {
    // A long G-single chain T1 -rw-> T2 -wr-> T3 -wr-> T4 -wr-> T1 plus a short one
    // T5 -rw-> T6 -wr-> T5 in the same component (T4 -wr-> T5, T5 -wr-> T1 tie them together).
    let mut h = History::new();
    h.txn(1).read(1, 0).read(4, 1).read(15, 1).commit();
    h.txn(2).write(1, 1).write(2, 1).commit();
    h.txn(3).read(2, 1).write(3, 1).commit();
    h.txn(4).read(3, 1).write(4, 1).write(14, 1).commit();
    h.txn(5)
        .read(14, 1)
        .read(5, 0)
        .read(6, 1)
        .write(15, 1)
        .read(1, 1)
        .commit();
    h.txn(6).write(5, 1).write(6, 1).commit();
    let r = checked(&h);
    assert_eq!(r.count(AnomalyKind::GSingle), 1, "{r}");
    let a = r.of_kind(AnomalyKind::GSingle).next().unwrap();
    let mut txns = a.txns();
    txns.sort_unstable();
    assert_eq!(txns, vec![5, 6], "{r}");
}

#[test]
fn a_snapshot_read_of_an_old_version_is_serializable() {
    // T2 reads the initial x and y although T1 (which wrote both) committed first: serializable
    // as T2, T1.
    let mut h = History::new();
    h.txn(1).read(1, 0).write(1, 1).write(2, 1).commit();
    h.txn(2).read(1, 0).read(2, 0).commit();
    h.txn(3).read(1, 1).read(2, 1).write(1, 2).commit();
    assert_clean(&h, CheckOptions::serializable());
    assert_eq!(serializable_by_enumeration(&h), Ok(true));
    let r = checked(&h);
    // Parallel edges on different keys count once: T1 -wr-> T3 (x and y), T2 -rw-> T1 (x and y).
    assert_eq!(
        (r.graph.ww, r.graph.wr, r.graph.rw, r.committed),
        (1, 1, 1, 3),
        "{r}"
    );
}

#[test]
fn an_nwr_omitted_write_before_a_visible_pivot_is_serializable() {
    // Key 1: T1 installs tag 1 (order 1); T3's pivot version has tag 2 but order 3; T2 arrived
    // later (tag 3) and was omitted, ordered just before the pivot (order 2).
    let mut h = History::new();
    h.txn(1).write(1, 1).commit();
    h.txn(2).omitted_write(1, 3, 2).commit();
    h.txn(3).write_at(1, 2, 3).commit();
    h.txn(4).read(1, 1).commit(); // before T2 and T3
    h.txn(5).read(1, 2).commit(); // after the pivot
    assert_clean(&h, CheckOptions::serializable());
    assert_clean(&h, CheckOptions::strict());
    assert_eq!(serializable_by_enumeration(&h), Ok(true));
    let r = checked(&h);
    assert_eq!((r.graph.ww, r.graph.wr, r.graph.rw), (2, 2, 1), "{r}");

    // Reading the omitted version is flagged.
    let mut bad = h.clone();
    bad.txn(6).read(1, 3).commit();
    assert_only(&checked(&bad), AnomalyKind::OmittedRead, &[2, 6]);
    assert_eq!(serializable_by_enumeration(&bad), Ok(false));
}

#[test]
fn an_omitted_write_sharing_its_pivots_order_sorts_just_before_it() {
    // MVTO+NWR with single-write omitters records an omitted write with its pivot's order
    // (`WriteEvent::position`): T2 and T3 (tags 7 and 8) sit just before T4's pivot (tag and
    // order 5), by tag, and after T1 (order 3).
    let mut h = History::new();
    h.txn(1).write(1, 3).commit();
    h.txn(4).write(1, 5).commit();
    h.txn(2).omitted_write(1, 7, 5).commit();
    h.txn(3).omitted_write(1, 8, 5).commit();
    h.txn(5).read(1, 3).write(2, 1).commit(); // before T2: reads T1's version
    h.txn(6).read(1, 5).commit();
    assert_clean(&h, CheckOptions::serializable());
    assert_eq!(serializable_by_enumeration(&h), Ok(true));
    let r = checked(&h);
    // ww: T1 -> T2 -> T3 -> T4; wr: T1 -> T5, T4 -> T6; rw: T5 -> T2 (the version after T1's).
    assert_eq!((r.graph.ww, r.graph.wr, r.graph.rw), (3, 2, 1), "{r}");

    // Had T4 read the version before its own (T1's), it would have missed the omitted writes
    // ordered before it: a lost update, which the tie order exposes.
    let mut lost = History::new();
    lost.txn(1).write(1, 3).commit();
    lost.txn(4).read(1, 3).write(1, 5).commit();
    lost.txn(2).omitted_write(1, 7, 5).commit();
    let r = checked(&lost);
    assert!(!r.is_serializable(), "{r}");
    assert_eq!(serializable_by_enumeration(&lost), Ok(false));

    // Two visible versions still may not share an order.
    let mut dup = History::new();
    dup.txn(1).write_at(1, 3, 5).commit();
    dup.txn(2).write_at(1, 4, 5).commit();
    assert_eq!(checked(&dup).count(AnomalyKind::InvalidHistory), 1);
}

#[test]
fn a_stale_read_after_the_writer_committed_is_caught_only_in_real_time() {
    let mut h = History::new();
    h.txn(1).write(1, 1).during(0, 10).commit();
    h.txn(2).read(1, 0).during(20, 30).commit();
    assert_clean(&h, CheckOptions::serializable());
    let r = check(&h, CheckOptions::strict());
    assert_only(&r, AnomalyKind::GSingleRealtime, &[1, 2]);
    let kinds: Vec<DependencyKind> = r.anomalies[0]
        .cycle()
        .unwrap()
        .iter()
        .map(|d| d.kind)
        .collect();
    assert_eq!(kinds, vec![DependencyKind::RealTime, DependencyKind::Rw]);
    assert_eq!(r.graph.real_time, 1);
    // Overlapping in time, the same reads are strictly serializable.
    let mut concurrent = History::new();
    concurrent.txn(1).write(1, 1).during(0, 10).commit();
    concurrent.txn(2).read(1, 0).during(5, 30).commit();
    assert_clean(&concurrent, CheckOptions::strict());
}

#[test]
fn garbage_reads_and_invalid_histories_are_reported() {
    let mut h = History::new();
    h.txn(1).write(1, 1).commit();
    h.txn(2).read(1, 9).commit();
    assert_only(&checked(&h), AnomalyKind::GarbageRead, &[2]);

    let mut dup = History::new();
    dup.txn(1).write(1, 1).commit();
    dup.txn(1).commit();
    dup.txn(2).write(1, 1).commit();
    dup.txn(3).write(2, 0).commit();
    let r = checked(&dup);
    assert_eq!(r.count(AnomalyKind::InvalidHistory), 4, "{r}");
    let text = r.to_string();
    assert!(text.contains("transaction id T1 is used twice"), "{text}");
    assert!(text.contains("version 1 of k1 is written twice"), "{text}");
    assert!(text.contains("tag 0"), "{text}");
    assert!(text.contains("two versions of k1 have order 1"), "{text}");

    let mut backwards = History::new();
    backwards.txn(1).during(10, 5).commit();
    assert_clean(&backwards, CheckOptions::serializable());
    assert_eq!(
        check(&backwards, CheckOptions::strict()).count(AnomalyKind::InvalidHistory),
        1
    );
}

#[test]
fn aborted_readers_and_own_reads_add_nothing() {
    let mut h = History::new();
    h.txn(1).read(1, 0).write(1, 1).read(1, 1).commit(); // reads its own write
    h.txn(2).read(1, 0).read(2, 7).abort(); // stale and garbage, but aborted
    assert_clean(&h, CheckOptions::strict());
}

#[test]
fn examples_are_capped_but_everything_is_counted() {
    let mut h = History::new();
    h.txn(1).write(1, 1).abort();
    for i in 2..12 {
        h.txn(i).read(1, 1).commit();
    }
    let r = check(&h, CheckOptions::serializable().with_max_examples(3));
    assert_eq!(r.count(AnomalyKind::G1a), 10);
    assert_eq!(r.anomalies.len(), 3);
    assert!(r.to_string().contains("G1a: 10 found (3 shown)"), "{r}");
}
