//! NewOrder's pieces (module docs of [`super`]; the steps of [`super::super::new_order`]).
//!
//! Pieces: 0 `item` ×n, 1 `district`, 2 `stock` ×n, 3 `order`, 4 `order_line` ×n; the
//! instance of a per-line piece is the line's index.

use super::super::new_order::{
    NewOrderInput, OrderLineInput, insert_order, insert_order_line, read_item, take_order_id,
    take_stock,
};
use super::super::schema::{CustomerRow, StockRow, TpccTables};
use super::super::txn::{TpccContext, read_row, read_warehouse};
use super::groups::*;
use super::{O_ID, key, no_such_piece};
use txlab_core::pieces::{
    ColumnGroup, ConflictKey, PieceKind, PieceProfile, PieceRef, PieceValues, TxnProfile,
};
use txlab_core::{Access, Error, TxError, TxOps, TxResult};

const ITEM: u16 = 0;
const DISTRICT: u16 = 1;
const STOCK: u16 = 2;
const ORDER: u16 = 3;
const ORDER_LINE: u16 = 4;

/// Bytes of an `item` output: `I_PRICE` (8, little-endian) then `S_DIST_xx` (24).
const ITEM_OUTPUT: usize = 32;

pub(super) fn profile(t: &TpccTables) -> TxnProfile {
    use PieceKind::{Deferrable, Immediate};
    let row = ColumnGroup::ROW;
    TxnProfile {
        kind: "new_order",
        read_only: false,
        pieces: vec![
            PieceProfile::new("item", Immediate)
                .access(t.item, row, Access::Read)
                .access(t.stock, STOCK_STATIC, Access::Read)
                .repeated(),
            PieceProfile::new("district", Immediate)
                .access(t.district, DISTRICT_NEXT_O_ID, Access::ReadWrite)
                .access(t.district, DISTRICT_STATIC, Access::Read)
                .access(t.warehouse, row, Access::Read)
                .access(t.customer, CUSTOMER_STATIC, Access::Read)
                .inputs_from(&[ITEM.into()]),
            PieceProfile::new("stock", Deferrable)
                .access(t.stock, STOCK_QUANTITY, Access::ReadWrite)
                .inputs_from(&[ITEM.into()])
                .repeated(),
            PieceProfile::new("order", Deferrable)
                .access(t.order, ORDER_ROW, Access::Insert)
                .access(t.order, ORDER_CARRIER, Access::Insert)
                .access(t.new_order, row, Access::Insert)
                .access(t.order_by_customer, row, Access::Insert)
                .inputs_from(&[DISTRICT.into()]),
            PieceProfile::new("order_line", Deferrable)
                .access(t.order_line, ORDER_LINE_ROW, Access::Insert)
                .access(t.order_line, ORDER_LINE_DELIVERY, Access::Insert)
                .inputs_from(&[ITEM.into(), DISTRICT.into()])
                .repeated(),
        ],
    }
}

/// Whether line `line` names an item that exists (the rollback's unused id does not).
fn item_exists(ctx: &TpccContext, item: u32) -> bool {
    (1..=ctx.keys.items).contains(&item)
}

pub(super) fn plan(ctx: &TpccContext, inp: &NewOrderInput, out: &mut Vec<PieceRef>) {
    let (t, k) = (ctx.tables, ctx.keys);
    let dx = k.district_index(inp.w, inp.d);
    let home = PieceRef::new(0, 0, t.district, dx);
    let at_stock = |piece, n: u16, item, w| PieceRef::new(piece, n, t.stock, k.stock(w, item));
    for (n, line) in (0u16..).zip(inp.lines()) {
        out.push(if item_exists(ctx, line.item) {
            at_stock(ITEM, n, line.item, line.supply_w)
        } else {
            PieceRef {
                piece: ITEM,
                instance: n,
                ..home
            }
        });
    }
    out.push(PieceRef {
        piece: DISTRICT,
        ..home
    });
    for (n, line) in (0u16..).zip(inp.lines()) {
        // A line with the unused item has no stock row: the transaction ends at its `item`.
        if item_exists(ctx, line.item) {
            out.push(at_stock(STOCK, n, line.item, line.supply_w));
        }
    }
    out.push(PieceRef {
        piece: ORDER,
        ..home
    });
    for n in 0..u16::from(inp.ol_cnt) {
        out.push(PieceRef {
            piece: ORDER_LINE,
            instance: n,
            ..home
        });
    }
}

pub(super) fn conflict_keys(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    p: PieceRef,
    out: &mut Vec<(ConflictKey, Access)>,
) {
    let (t, k) = (ctx.tables, ctx.keys);
    let dx = k.district_index(inp.w, inp.d);
    let line = inp.lines().get(usize::from(p.instance));
    match (p.piece, line) {
        (ITEM, Some(line)) => {
            key(
                out,
                t.item,
                ColumnGroup::ROW,
                k.item(line.item),
                Access::Read,
            );
            if item_exists(ctx, line.item) {
                let s = k.stock(line.supply_w, line.item);
                key(out, t.stock, STOCK_STATIC, s, Access::Read);
            }
        }
        (DISTRICT, _) => {
            key(out, t.district, DISTRICT_NEXT_O_ID, dx, Access::ReadWrite);
            key(out, t.district, DISTRICT_STATIC, dx, Access::Read);
            key(
                out,
                t.warehouse,
                ColumnGroup::ROW,
                k.warehouse(inp.w),
                Access::Read,
            );
            key(out, t.customer, CUSTOMER_STATIC, dx, Access::Read);
        }
        (STOCK, Some(line)) if item_exists(ctx, line.item) => {
            let s = k.stock(line.supply_w, line.item);
            key(out, t.stock, STOCK_QUANTITY, s, Access::ReadWrite);
        }
        (ORDER, _) => {
            key(out, t.order, ORDER_ROW, dx, Access::Insert);
            key(out, t.order, ORDER_CARRIER, dx, Access::Insert);
            key(out, t.new_order, ColumnGroup::ROW, dx, Access::Insert);
            key(
                out,
                t.order_by_customer,
                ColumnGroup::ROW,
                dx,
                Access::Insert,
            );
        }
        (ORDER_LINE, Some(_)) => {
            key(out, t.order_line, ORDER_LINE_ROW, dx, Access::Insert);
            key(out, t.order_line, ORDER_LINE_DELIVERY, dx, Access::Insert);
        }
        _ => {}
    }
}

pub(super) fn run<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    p: PieceRef,
    inputs: &PieceValues,
    tx: &mut T,
    out: &mut PieceValues,
) -> TxResult<()> {
    let line = |n: u16| {
        inp.lines().get(usize::from(n)).ok_or_else(|| {
            TxError::Error(Error::invalid(
                "instance",
                n,
                format!("a line of this new_order (0..{})", inp.ol_cnt),
            ))
        })
    };
    match p.piece {
        ITEM => item(ctx, inp, p.instance, line(p.instance)?, tx, out),
        DISTRICT => district(ctx, inp, tx, out),
        STOCK => take_stock(ctx, inp, line(p.instance)?, tx).map(|_| ()),
        ORDER => insert_order(ctx, inp, o_id(inputs, "new_order.order")?, tx),
        ORDER_LINE => order_line(ctx, inp, p.instance, line(p.instance)?, inputs, tx),
        _ => Err(no_such_piece("new_order", p)),
    }
}

/// Step 5's item read (the rollback) and the stock's static columns.
fn item<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    n: u16,
    line: &OrderLineInput,
    tx: &mut T,
    out: &mut PieceValues,
) -> TxResult<()> {
    let (t, k) = (ctx.tables, ctx.keys);
    let item = read_item(ctx, line, tx)?;
    let skey = k.stock(line.supply_w, line.item);
    let stock = read_row(tx, t.stock, skey, "stock", StockRow::decode)?;
    let mut value = [0u8; ITEM_OUTPUT];
    value[..8].copy_from_slice(&item.i_price.to_le_bytes());
    value[8..].copy_from_slice(stock.dist(inp.d));
    out.put(n, &value);
    Ok(())
}

/// Steps 1–3: the order id.
fn district<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    tx: &mut T,
    out: &mut PieceValues,
) -> TxResult<()> {
    let (t, k) = (ctx.tables, ctx.keys);
    read_warehouse(ctx, tx, inp.w)?;
    let o_id = take_order_id(ctx, inp, tx)?.d_next_o_id;
    let ckey = k.customer(inp.w, inp.d, inp.c);
    read_row(tx, t.customer, ckey, "customer", CustomerRow::decode)?;
    out.put_u64(O_ID, u64::from(o_id));
    Ok(())
}

fn o_id(inputs: &PieceValues, piece: &str) -> Result<u32, Error> {
    let o = inputs.require_u64(O_ID, piece)?;
    u32::try_from(o).map_err(|_| Error::Internal(format!("piece {piece}: o_id {o} is not a u32")))
}

/// Step 5's order-line insert, with the price and `S_DIST_xx` its `item` piece output.
fn order_line<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    n: u16,
    line: &OrderLineInput,
    inputs: &PieceValues,
    tx: &mut T,
) -> TxResult<()> {
    let o_id = o_id(inputs, "new_order.order_line")?;
    let item = inputs.require(n, "new_order.order_line")?;
    let (Ok(price), Ok(dist)) = (
        <[u8; 8]>::try_from(&item[..item.len().min(8)]),
        <[u8; 24]>::try_from(&item[item.len().min(8)..]),
    ) else {
        return Err(TxError::Error(Error::Internal(format!(
            "piece new_order.order_line: input slot {n} holds {} bytes, not {ITEM_OUTPUT}",
            item.len()
        ))));
    };
    let number = u32::from(n) + 1;
    let price = i64::from_le_bytes(price);
    insert_order_line(ctx, inp, o_id, number, line, price, &dist, tx).map(|_| ())
}
