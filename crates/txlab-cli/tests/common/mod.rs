//! What the command-line test binaries share.

/// TPC-C small enough for a debug build: 2 warehouses, 1,000 items, 100 customers per district.
pub const SMALL_TPCC: &[&str] = &[
    "--workload",
    "tpcc",
    "--warehouses",
    "2",
    "--items",
    "1000",
    "--district-customers",
    "100",
];
