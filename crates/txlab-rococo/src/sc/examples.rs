//! The paper's example workloads, as profiles (used by the tests and by
//! `txlab rococo-check --workload figure2|figure2-immediate|figure4`).
//!
//! - Figure 1/2: `new_order_fragment` buys one each of items `a` and `b`: piece `p1` reads and
//!   writes STOCK of `a`, `p2` of `b`. With both pieces immediate, two instances interleaved as in
//!   Figure 2 cannot be ordered (S1 fixes T1 → T2, S2 fixes T2 → T1): the checker must reject it
//!   and propose merging `p1` and `p2`. With `p2` deferrable it is safe.
//! - Figure 3/4: `simplified_new_order`: `p1` (immediate) reads and increments DISTRICT's
//!   `next_oid`, `p2` (deferrable, one per item) reduces a STOCK level, `p3` (deferrable, one per
//!   item) records the order using `p1`'s order id. Every SC-cycle has a D-D edge: safe.

use txlab_core::pieces::{
    ColumnGroup, PieceKind, PieceProfile, PieceProfiles, TableLayout, TxnProfile,
};
use txlab_core::{Access, TableId};

/// STOCK.
pub const STOCK: TableId = TableId(0);
/// DISTRICT (groups: 1 `next_oid`, 2 `static`).
pub const DISTRICT: TableId = TableId(1);
/// ORDER.
pub const ORDER: TableId = TableId(2);

/// A workload given by its profiles and tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// The transaction types.
    pub profiles: Vec<TxnProfile>,
    /// The tables.
    pub tables: Vec<TableLayout>,
}

impl PieceProfiles for Example {
    fn profiles(&self) -> Vec<TxnProfile> {
        self.profiles.clone()
    }

    fn table_layouts(&self) -> Vec<TableLayout> {
        self.tables.clone()
    }
}

fn tables() -> Vec<TableLayout> {
    vec![
        TableLayout::whole(STOCK, "stock"),
        TableLayout::whole(DISTRICT, "district")
            .group(1, "next_oid", &[(0, 4)])
            .group(2, "static", &[(4, 8)]),
        TableLayout::whole(ORDER, "order"),
    ]
}

/// Figure 2's `new_order_fragment` with pieces of the given kinds (module docs).
pub fn figure2(p1: PieceKind, p2: PieceKind) -> Example {
    let stock = |name, kind| {
        PieceProfile::new(name, kind).access(STOCK, ColumnGroup::ROW, Access::ReadWrite)
    };
    Example {
        profiles: vec![TxnProfile {
            kind: "new_order_fragment",
            read_only: false,
            pieces: vec![stock("p1", p1), stock("p2", p2)],
        }],
        tables: tables(),
    }
}

/// Figure 4's `simplified_new_order` (module docs).
pub fn figure4() -> Example {
    Example {
        profiles: vec![TxnProfile {
            kind: "simplified_new_order",
            read_only: false,
            pieces: vec![
                PieceProfile::new("p1", PieceKind::Immediate).access(
                    DISTRICT,
                    ColumnGroup(1),
                    Access::ReadWrite,
                ),
                PieceProfile::new("p2", PieceKind::Deferrable)
                    .access(STOCK, ColumnGroup::ROW, Access::ReadWrite)
                    .repeated(),
                PieceProfile::new("p3", PieceKind::Deferrable)
                    .access(ORDER, ColumnGroup::ROW, Access::Insert)
                    .inputs_from(&[0])
                    .repeated(),
            ],
        }],
        tables: tables(),
    }
}
