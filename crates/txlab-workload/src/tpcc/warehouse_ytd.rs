//! The warehouse's year-to-date total as a read-only transaction: `sum(D_YTD)` over the
//! warehouse's districts.
//!
//! # Why
//!
//! ROCOCO (Mu, Cui, Zhang, Lloyd, Li, OSDI 2014, §5 Evaluation, subsection "Scaled TPC-C",
//! paragraph "Partition Strategy") drops the warehouse's running purchase total `W_YTD`, which
//! every Payment would otherwise update (a hot spot once a warehouse has many districts), and
//! obtains the same figure with a read-only transaction that adds up the districts' `D_YTD`.
//! In the scaled variant
//! ([`TpccConfig::scaled`](super::TpccConfig::scaled)) the WAREHOUSE row has no `W_YTD` column
//! ([`ScaledWarehouseRow`](super::schema::ScaledWarehouseRow)) and this transaction is how the
//! total is obtained. It works in the standard variant too, where it equals `W_YTD` by
//! consistency condition 1.
//!
//! # Not in the mix
//!
//! The paper gives the query no frequency: its clients issue "a mixture of TPC-C transactions
//! according to the specification", and its Table 1 lists the five TPC-C transaction types with
//! a mix that "matches the specified mix for TPC-C". So no [`TpccMix`](super::TpccMix) issues
//! it; the scaled mix is the standard one (or NewOrder + Payment). It is available
//!
//! - as a program on any engine: [`Tpcc::warehouse_ytd_txn`](super::Tpcc::warehouse_ytd_txn)
//!   ([`TpccKind::WarehouseYtd`](super::TpccKind::WarehouseYtd));
//! - run and answered: [`Tpcc::warehouse_ytd`](super::Tpcc::warehouse_ytd);
//! - inside another transaction: [`run`];
//!
//! and the consistency check uses it for condition 1 of the scaled variant (see
//! [`consistency`](super::consistency)).
//!
//! # Value dependencies
//!
//! None: the district keys follow from `w` and the number of districts, all read only.
//! [`declare`] lists them and leaves `dependent` unset, so a deterministic engine can run it as a
//! one-shot read-only stored procedure (ROCOCO runs it with its read-only protocol, §4.1).

use super::schema::DistrictRow;
use super::txn::{TpccContext, read_row};
use txlab_core::{Access, AccessSet, TxOps, TxResult};

/// The query's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WarehouseYtdInput {
    /// Warehouse, `1..=warehouses`.
    pub w: u32,
}

/// Returns `sum(D_YTD)` in cents over the districts of warehouse `inp.w`, reading each DISTRICT
/// row once (read only).
pub fn run<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &WarehouseYtdInput,
    tx: &mut T,
) -> TxResult<i64> {
    let (t, k) = (ctx.tables, ctx.keys);
    let mut sum = 0i64;
    for d in 1..=k.districts {
        let district = read_row(
            tx,
            t.district,
            k.district(inp.w, d),
            "district",
            DistrictRow::decode,
        )?;
        sum += district.d_ytd;
    }
    Ok(sum)
}

/// Declares every district of the warehouse as read (module docs).
pub fn declare(ctx: &TpccContext, inp: &WarehouseYtdInput, out: &mut AccessSet) {
    for d in 1..=ctx.keys.districts {
        out.push(
            ctx.tables.district,
            ctx.keys.district(inp.w, d),
            Access::Read,
        );
    }
}
