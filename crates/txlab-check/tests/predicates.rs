//! Range scans as predicate reads: phantoms must close cycles; legitimate scans must not.

use txlab_check::{AnomalyKind, CheckOptions, History, check};

#[test]
fn a_phantom_insert_closes_a_cycle() {
    // T1 scans keys 0..=10 and sees none; T2 reads x (key 100) and inserts key 5; T1 then writes
    // x. T1 -rw(5)-> T2 (T1 saw 5 absent, T2 created it) and T2 -rw(100)-> T1: not serializable.
    let mut h = History::new();
    h.txn(1).scan(0, 0, 10).write(100, 1).commit();
    h.txn(2).read(100, 0).write(5, 1).commit();
    let r = check(&h, CheckOptions::serializable());
    assert!(!r.is_serializable(), "{r}");
    assert_eq!(
        r.count(AnomalyKind::G2Item) + r.count(AnomalyKind::GSingle),
        1,
        "{r}"
    );
}

#[test]
fn without_the_scan_the_same_history_is_serializable() {
    let mut h = History::new();
    h.txn(1).write(100, 1).commit();
    h.txn(2).read(100, 0).write(5, 1).commit();
    assert!(check(&h, CheckOptions::serializable()).is_serializable());
}

#[test]
fn a_scan_that_saw_the_insert_is_ordered_after_it() {
    let mut h = History::new();
    h.txn(2).write(5, 1).commit();
    h.txn(1).scan(0, 0, 10).read(5, 1).write(100, 1).commit();
    assert!(check(&h, CheckOptions::serializable()).is_serializable());
}

#[test]
fn a_scan_stopped_early_claims_nothing_beyond_its_end() {
    // The scan covered only 0..=3, so missing key 5 says nothing.
    let mut h = History::new();
    h.txn(1).scan(0, 0, 3).write(100, 1).commit();
    h.txn(2).read(100, 0).write(5, 1).commit();
    assert!(check(&h, CheckOptions::serializable()).is_serializable());
}

#[test]
fn a_scan_that_skips_a_key_present_in_every_version_is_a_phantom_miss() {
    // Key 5 is initially present (T3 read version 0 of it, present) and never deleted; T1's scan
    // over it did not return it.
    let mut h = History::new();
    h.txn(3).read(5, 0).commit();
    h.txn(1).scan(0, 0, 10).commit();
    h.txn(2).write(5, 1).commit();
    let r = check(&h, CheckOptions::serializable());
    assert_eq!(r.count(AnomalyKind::PhantomMiss), 1, "{r}");
}

#[test]
fn a_scan_after_a_delete_reads_the_delete() {
    // T2 deletes key 5 (initially present); T1's scan misses 5 (it saw the delete) and T1 then
    // overwrites x that T2 read: T2 -wr(5)-> T1 and T2 -rw(x)-> T1 agree: serializable.
    let mut h = History::new();
    h.txn(3).read(5, 0).commit();
    h.txn(2).read(100, 0).delete(5, 1).commit();
    h.txn(1).scan(0, 0, 10).write(100, 1).commit();
    assert!(check(&h, CheckOptions::serializable()).is_serializable());
    // A re-insert of the key after the scan orders the scanner before the re-inserter
    // (T1 -rw(5)-> T4), consistent with T4 reading T1's x: still serializable.
    let mut h = History::new();
    h.txn(3).read(5, 0).commit();
    h.txn(2).delete(5, 1).read(100, 0).commit();
    h.txn(1).scan(0, 0, 10).write(100, 1).commit();
    h.txn(4).read(100, 1).write(5, 2).commit();
    assert!(check(&h, CheckOptions::serializable()).is_serializable());
}
