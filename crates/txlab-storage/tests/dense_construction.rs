//! Construction cost of a large dense table with a realistic record (version word + 100-byte
//! atomic value), the shape of YCSB's main table.
//!
//! Run with:
//! `CARGO_TARGET_DIR=/work/target-storage cargo test -p txlab-storage --release --test dense_construction -- --ignored --nocapture`

use std::sync::atomic::AtomicU64;
use std::time::Instant;
use txlab_core::TableId;
use txlab_core::protocol::storage::{Index, Record};
use txlab_core::protocol::value::AtomicValue;
use txlab_storage::DenseIndex;

struct VersionedValue {
    _version: AtomicU64,
    value: AtomicValue,
}

impl Record for VersionedValue {
    fn absent(value_size: usize) -> Self {
        Self {
            _version: AtomicU64::new(0),
            value: AtomicValue::zeroed(value_size),
        }
    }
}

fn build(capacity: u64) -> f64 {
    let start = Instant::now();
    let index = DenseIndex::<VersionedValue>::new(TableId(0), 100, capacity).unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(index.len() as u64, capacity);
    let guard = crossbeam_epoch::pin();
    let last = index.get(capacity - 1, &guard).unwrap().unwrap();
    assert_eq!(last.value.len(), 100);
    secs
}

#[test]
fn a_small_dense_table_builds_with_full_size_values() {
    build(10_000);
}

/// 10M records of 100 bytes; prints the construction time (expected: a couple of seconds).
#[test]
#[ignore = "allocates about 1.5 GB; run explicitly (see the module docs)"]
fn ten_million_records_build_in_seconds() {
    let secs = build(10_000_000);
    println!("dense construction, 10M records x 100 B: {secs:.2} s");
    assert!(secs < 20.0, "construction took {secs:.1} s");
}
