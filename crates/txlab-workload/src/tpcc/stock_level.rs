//! StockLevel (clause 2.8): a read-only count of recently sold items with low stock.
//!
//! Steps (clause 2.8.2.2):
//!
//! 1. read DISTRICT `(w, d)`: `o = D_NEXT_O_ID`;
//! 2. scan ORDER-LINE over orders `o - 20 ..= o - 1` of the district and collect the distinct
//!    `OL_I_ID`s;
//! 3. read STOCK `(w, i)` of each and count those with `S_QUANTITY < threshold`.
//!
//! Value dependencies: the order-line range depends on `D_NEXT_O_ID` and the stock keys on the
//! lines read; [`declare`] lists the district and sets `dependent`.

use super::schema::{DistrictRow, OrderLineRow, StockRow};
use super::txn::{TpccContext, read_row};
use txlab_core::{Access, AccessSet, Error, TxError, TxOps, TxResult};

/// StockLevel's inputs (clause 2.8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StockLevelInput {
    /// Warehouse.
    pub w: u32,
    /// District.
    pub d: u32,
    /// Threshold, 10..=20.
    pub threshold: i32,
}

/// Orders examined (clause 2.8.2.2: the last 20).
pub const RECENT_ORDERS: u32 = 20;

/// Runs StockLevel; returns the number of distinct items below the threshold.
pub fn run<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &StockLevelInput,
    tx: &mut T,
) -> TxResult<u32> {
    let (t, k) = (ctx.tables, ctx.keys);
    let (w, d) = (inp.w, inp.d);
    let district = read_row(
        tx,
        t.district,
        k.district(w, d),
        "district",
        DistrictRow::decode,
    )?;
    let next = district.d_next_o_id;
    let mut items = [0u32; (RECENT_ORDERS * 15) as usize];
    let n = recent_items(ctx, w, d, next, tx, &mut items)?;
    let mut low = 0;
    for &i in &items[..n] {
        let stock = read_row(tx, t.stock, k.stock(w, i), "stock", StockRow::decode)?;
        if stock.s_quantity < inp.threshold {
            low += 1;
        }
    }
    Ok(low)
}

/// Step 2: the distinct `OL_I_ID`s, ascending, of the order lines of orders
/// `next - 20 ..= next - 1` of district `(w, d)`, written to the front of `items`; returns how
/// many.
pub fn recent_items<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    w: u32,
    d: u32,
    next: u32,
    tx: &mut T,
    items: &mut [u32; (RECENT_ORDERS * 15) as usize],
) -> TxResult<usize> {
    let first = next.saturating_sub(RECENT_ORDERS).max(1);
    if next <= first {
        return Ok(0);
    }
    let mut n = 0usize;
    let mut bad = None;
    let (lo, hi) = ctx.keys.order_lines(w, d, first, next - 1);
    tx.scan(ctx.tables.order_line, lo, hi, &mut |_, value| {
        match OrderLineRow::decode(value) {
            Ok(ol) if n < items.len() => {
                items[n] = ol.ol_i_id;
                n += 1;
            }
            Ok(_) => {
                bad = Some(Error::Invariant(format!(
                    "tpcc stock_level: more than {} order lines in the last {RECENT_ORDERS} orders",
                    items.len()
                )))
            }
            Err(e) => bad = Some(e),
        }
        bad.is_none()
    })?;
    if let Some(e) = bad {
        return Err(TxError::Error(e));
    }
    items[..n].sort_unstable();
    let mut distinct = 0;
    for i in 0..n {
        if i == 0 || items[i] != items[distinct - 1] {
            items[distinct] = items[i];
            distinct += 1;
        }
    }
    Ok(distinct)
}

/// Declares the district and sets `dependent` (module docs).
pub fn declare(ctx: &TpccContext, inp: &StockLevelInput, out: &mut AccessSet) {
    out.push(
        ctx.tables.district,
        ctx.keys.district(inp.w, inp.d),
        Access::Read,
    );
    out.dependent = true;
}
