//! The read-only types' pieces (module docs of [`super`]). ROCOCO runs them with its 2-round
//! read-only protocol (§4.1), which compares the outputs of two rounds: every piece outputs what
//! it read.

use super::super::order_status::{self, OrderStatusInput};
use super::super::schema::{DistrictRow, StockRow, TpccTables};
use super::super::stock_level::{RECENT_ORDERS, StockLevelInput, recent_items};
use super::super::txn::{TpccContext, read_row};
use super::super::warehouse_ytd::WarehouseYtdInput;
use super::groups::*;
use super::{ITEMS, NEXT_O_ID, STOCKS, district_of, key, no_such_piece, per_district};
use txlab_core::pieces::{
    ColumnGroup, ConflictKey, PieceKind, PieceProfile, PieceRef, PieceValues, TxnProfile,
};
use txlab_core::{Access, TxOps, TxResult};

pub(super) fn order_status_profile(t: &TpccTables) -> TxnProfile {
    let row = ColumnGroup::ROW;
    TxnProfile {
        kind: "order_status",
        read_only: true,
        pieces: vec![
            PieceProfile::new("status", PieceKind::Deferrable)
                .access(t.customer_by_name, row, Access::Read)
                .access(t.customer, CUSTOMER_BALANCE, Access::Read)
                .access(t.customer, CUSTOMER_STATIC, Access::Read)
                .access(t.order_by_customer, row, Access::Read)
                .access(t.order, ORDER_ROW, Access::Read)
                .access(t.order, ORDER_CARRIER, Access::Read)
                .access(t.order_line, ORDER_LINE_ROW, Access::Read)
                .access(t.order_line, ORDER_LINE_DELIVERY, Access::Read),
        ],
    }
}

pub(super) fn order_status_plan(
    ctx: &TpccContext,
    inp: &OrderStatusInput,
    out: &mut Vec<PieceRef>,
) {
    let dx = ctx.keys.district_index(inp.w, inp.d);
    out.push(PieceRef::new(0, 0, ctx.tables.district, dx));
}

pub(super) fn order_status_keys(
    ctx: &TpccContext,
    inp: &OrderStatusInput,
    out: &mut Vec<(ConflictKey, Access)>,
) {
    let t = ctx.tables;
    let dx = ctx.keys.district_index(inp.w, inp.d);
    let r = Access::Read;
    key(out, t.customer_by_name, ColumnGroup::ROW, dx, r);
    key(out, t.customer, CUSTOMER_BALANCE, dx, r);
    key(out, t.customer, CUSTOMER_STATIC, dx, r);
    key(out, t.order_by_customer, ColumnGroup::ROW, dx, r);
    key(out, t.order, ORDER_ROW, dx, r);
    key(out, t.order, ORDER_CARRIER, dx, r);
    key(out, t.order_line, ORDER_LINE_ROW, dx, r);
    key(out, t.order_line, ORDER_LINE_DELIVERY, dx, r);
}

/// Outputs, in slot 0: `c_id` (4), `balance` (8), `o_id` (4, 0 for none), `lines` (4),
/// `amount` (8), little-endian.
pub(super) fn order_status_run<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &OrderStatusInput,
    tx: &mut T,
    out: &mut PieceValues,
) -> TxResult<()> {
    let s = order_status::run(ctx, inp, tx)?;
    let mut v = [0u8; 28];
    v[..4].copy_from_slice(&s.c_id.to_le_bytes());
    v[4..12].copy_from_slice(&s.balance.to_le_bytes());
    v[12..16].copy_from_slice(&s.o_id.unwrap_or(0).to_le_bytes());
    v[16..20].copy_from_slice(&s.lines.to_le_bytes());
    v[20..].copy_from_slice(&s.amount.to_le_bytes());
    out.put(0, &v);
    Ok(())
}

const SL_DISTRICT: u16 = 0;
const SL_ORDER_LINES: u16 = 1;
const SL_STOCK: u16 = 2;

pub(super) fn stock_level_profile(t: &TpccTables) -> TxnProfile {
    use PieceKind::{Deferrable, Immediate};
    TxnProfile {
        kind: "stock_level",
        read_only: true,
        pieces: vec![
            PieceProfile::new("district", Immediate).access(
                t.district,
                DISTRICT_NEXT_O_ID,
                Access::Read,
            ),
            PieceProfile::new("order_lines", Immediate)
                .access(t.order_line, ORDER_LINE_ROW, Access::Read)
                .inputs_from(&[SL_DISTRICT.into()]),
            PieceProfile::new("stock", Deferrable)
                .access(t.stock, STOCK_QUANTITY, Access::Read)
                .inputs_from(&[SL_ORDER_LINES.into()])
                .repeated(),
        ],
    }
}

pub(super) fn stock_level_plan(ctx: &TpccContext, inp: &StockLevelInput, out: &mut Vec<PieceRef>) {
    let dx = ctx.keys.district_index(inp.w, inp.d);
    out.push(PieceRef::new(SL_DISTRICT, 0, ctx.tables.district, dx));
    out.push(PieceRef::new(SL_ORDER_LINES, 0, ctx.tables.district, dx));
}

/// The items `order_lines` output (little-endian `u32`s).
fn items(inputs: &PieceValues) -> impl Iterator<Item = u32> + '_ {
    inputs
        .get(ITEMS)
        .unwrap_or(&[])
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Once `order_lines` has run: one `stock` instance per item it found.
pub(super) fn stock_level_plan_after(
    ctx: &TpccContext,
    inp: &StockLevelInput,
    done: PieceRef,
    outputs: &PieceValues,
    out: &mut Vec<PieceRef>,
) {
    if done.piece != SL_ORDER_LINES {
        return;
    }
    for (n, i) in (0u16..).zip(items(outputs)) {
        out.push(PieceRef::new(
            SL_STOCK,
            n,
            ctx.tables.stock,
            ctx.keys.stock(inp.w, i),
        ));
    }
}

pub(super) fn stock_level_keys(
    ctx: &TpccContext,
    inp: &StockLevelInput,
    p: PieceRef,
    inputs: &PieceValues,
    out: &mut Vec<(ConflictKey, Access)>,
) {
    let (t, k) = (ctx.tables, ctx.keys);
    let dx = k.district_index(inp.w, inp.d);
    match p.piece {
        SL_DISTRICT => key(out, t.district, DISTRICT_NEXT_O_ID, dx, Access::Read),
        SL_ORDER_LINES => key(out, t.order_line, ORDER_LINE_ROW, dx, Access::Read),
        SL_STOCK => {
            if let Some(i) = items(inputs).nth(usize::from(p.instance)) {
                key(
                    out,
                    t.stock,
                    STOCK_QUANTITY,
                    k.stock(inp.w, i),
                    Access::Read,
                );
            }
        }
        _ => {}
    }
}

pub(super) fn stock_level_run<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &StockLevelInput,
    p: PieceRef,
    inputs: &PieceValues,
    tx: &mut T,
    out: &mut PieceValues,
) -> TxResult<()> {
    let (t, k) = (ctx.tables, ctx.keys);
    match p.piece {
        SL_DISTRICT => {
            let dkey = k.district(inp.w, inp.d);
            let district = read_row(tx, t.district, dkey, "district", DistrictRow::decode)?;
            out.put_u64(NEXT_O_ID, u64::from(district.d_next_o_id));
        }
        SL_ORDER_LINES => {
            let next = inputs.require_u64(NEXT_O_ID, "stock_level.order_lines")?;
            let next = u32::try_from(next).unwrap_or(u32::MAX);
            let mut found = [0u32; (RECENT_ORDERS * 15) as usize];
            let n = recent_items(ctx, inp.w, inp.d, next, tx, &mut found)?;
            let mut bytes = [0u8; (RECENT_ORDERS * 15 * 4) as usize];
            for (chunk, i) in bytes.chunks_exact_mut(4).zip(&found[..n]) {
                chunk.copy_from_slice(&i.to_le_bytes());
            }
            out.put(ITEMS, &bytes[..4 * n]);
        }
        SL_STOCK => {
            inputs.require(ITEMS, "stock_level.stock")?;
            let Some(i) = items(inputs).nth(usize::from(p.instance)) else {
                return Err(no_such_piece("stock_level", p));
            };
            let stock = read_row(tx, t.stock, k.stock(inp.w, i), "stock", StockRow::decode)?;
            out.put(STOCKS + p.instance, &stock.s_quantity.to_le_bytes());
        }
        _ => return Err(no_such_piece("stock_level", p)),
    }
    Ok(())
}

pub(super) fn warehouse_ytd_profile(t: &TpccTables) -> TxnProfile {
    TxnProfile {
        kind: "warehouse_ytd",
        read_only: true,
        pieces: vec![
            PieceProfile::new("district", PieceKind::Deferrable)
                .access(t.district, DISTRICT_YTD, Access::Read)
                .repeated(),
        ],
    }
}

pub(super) fn warehouse_ytd_plan(
    ctx: &TpccContext,
    inp: &WarehouseYtdInput,
    out: &mut Vec<PieceRef>,
) {
    per_district(ctx, inp.w, 0, out);
}

pub(super) fn warehouse_ytd_keys(
    ctx: &TpccContext,
    inp: &WarehouseYtdInput,
    p: PieceRef,
    out: &mut Vec<(ConflictKey, Access)>,
) {
    if let Some(d) = district_of(ctx, p) {
        let dx = ctx.keys.district_index(inp.w, d);
        key(out, ctx.tables.district, DISTRICT_YTD, dx, Access::Read);
    }
}

/// Outputs `D_YTD` (8 bytes, little-endian) in slot `d - 1`.
pub(super) fn warehouse_ytd_run<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &WarehouseYtdInput,
    p: PieceRef,
    tx: &mut T,
    out: &mut PieceValues,
) -> TxResult<()> {
    let d = district_of(ctx, p).ok_or_else(|| no_such_piece("warehouse_ytd", p))?;
    let dkey = ctx.keys.district(inp.w, d);
    let district = read_row(
        tx,
        ctx.tables.district,
        dkey,
        "district",
        DistrictRow::decode,
    )?;
    out.put(p.instance, &district.d_ytd.to_le_bytes());
    Ok(())
}
