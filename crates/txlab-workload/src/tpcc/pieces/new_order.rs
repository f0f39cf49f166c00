//! NewOrder's pieces (module docs of [`super`]; the steps of [`super::super::new_order`]).
//!
//! Pieces: 0 `item` ×n, 1 `district`, 2 `stock` ×n, 3 `order`, 4 `order_line` ×n; the
//! instance of a per-line piece is the line's index.

use super::super::keys::MAX_ORDER_ID;
use super::super::new_order::{NewOrderInput, ROLLBACK, insert_row, write_row};
use super::super::schema::{
    CustomerOrderRow, CustomerRow, DistrictRow, ItemRow, NewOrderRow, OrderLineRow, OrderRow,
    StockRow, TpccTables,
};
use super::super::txn::{TpccContext, read_row, read_row_for_update, read_warehouse};
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
        ITEM => item(ctx, inp, p.instance, *line(p.instance)?, tx, out),
        DISTRICT => district(ctx, inp, tx, out),
        STOCK => stock(ctx, inp, *line(p.instance)?, tx),
        ORDER => order(ctx, inp, inputs, tx),
        ORDER_LINE => order_line(ctx, inp, p.instance, *line(p.instance)?, inputs, tx),
        _ => Err(no_such_piece("new_order", p)),
    }
}

/// Step 5's item read (the rollback) and the stock's static columns.
fn item<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    n: u16,
    line: super::super::new_order::OrderLineInput,
    tx: &mut T,
    out: &mut PieceValues,
) -> TxResult<()> {
    let (t, k) = (ctx.tables, ctx.keys);
    let item = match tx.read(t.item, k.item(line.item))? {
        Some(bytes) => ItemRow::decode(bytes)?,
        None => return Err(TxError::UserAbort(ROLLBACK)),
    };
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
    let (w, d) = (inp.w, inp.d);
    read_warehouse(ctx, tx, w)?;
    let dkey = k.district(w, d);
    let mut district = read_row_for_update(tx, t.district, dkey, "district", DistrictRow::decode)?;
    let o_id = district.d_next_o_id;
    if o_id > MAX_ORDER_ID {
        return Err(TxError::Error(Error::Invariant(format!(
            "tpcc new_order: warehouse {w} district {d} ran out of order ids (D_NEXT_O_ID {o_id} \
             > {MAX_ORDER_ID})"
        ))));
    }
    district.d_next_o_id += 1;
    write_row::<T, { DistrictRow::SIZE }>(tx, t.district, dkey, |b| district.encode(b))?;
    read_row(
        tx,
        t.customer,
        k.customer(w, d, inp.c),
        "customer",
        CustomerRow::decode,
    )?;
    out.put_u64(O_ID, u64::from(o_id));
    Ok(())
}

/// Step 5's stock update.
fn stock<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    line: super::super::new_order::OrderLineInput,
    tx: &mut T,
) -> TxResult<()> {
    let (t, k) = (ctx.tables, ctx.keys);
    let skey = k.stock(line.supply_w, line.item);
    let mut stock = read_row_for_update(tx, t.stock, skey, "stock", StockRow::decode)?;
    let q = line.quantity as i32;
    if stock.s_quantity >= q + 10 {
        stock.s_quantity -= q;
    } else {
        stock.s_quantity = stock.s_quantity - q + 91;
    }
    stock.s_ytd += i64::from(q);
    stock.s_order_cnt += 1;
    if line.supply_w != inp.w {
        stock.s_remote_cnt += 1;
    }
    write_row::<T, { StockRow::SIZE }>(tx, t.stock, skey, |b| stock.encode(b))
}

fn o_id(inputs: &PieceValues, piece: &str) -> Result<u32, Error> {
    let o = inputs.require_u64(O_ID, piece)?;
    u32::try_from(o).map_err(|_| Error::Internal(format!("piece {piece}: o_id {o} is not a u32")))
}

/// Step 4.
fn order<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    inputs: &PieceValues,
    tx: &mut T,
) -> TxResult<()> {
    let (t, k) = (ctx.tables, ctx.keys);
    let (w, d, c) = (inp.w, inp.d, inp.c);
    let o_id = o_id(inputs, "new_order.order")?;
    let order = OrderRow {
        o_id,
        o_d_id: d,
        o_w_id: w,
        o_c_id: c,
        o_entry_d: inp.entry_d,
        o_carrier_id: 0,
        o_ol_cnt: inp.ol_cnt,
        o_all_local: u8::from(inp.lines().iter().all(|l| l.supply_w == w)),
    };
    insert_row::<T, { OrderRow::SIZE }>(tx, t.order, k.order(w, d, o_id), |b| order.encode(b))?;
    let new_order = NewOrderRow {
        no_o_id: o_id,
        no_d_id: d,
        no_w_id: w,
    };
    insert_row::<T, { NewOrderRow::SIZE }>(tx, t.new_order, k.order(w, d, o_id), |b| {
        new_order.encode(b)
    })?;
    insert_row::<T, { CustomerOrderRow::SIZE }>(
        tx,
        t.order_by_customer,
        k.customer_order(w, d, c, o_id),
        |b| CustomerOrderRow { o_id }.encode(b),
    )
}

/// Step 5's order-line insert.
fn order_line<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    n: u16,
    line: super::super::new_order::OrderLineInput,
    inputs: &PieceValues,
    tx: &mut T,
) -> TxResult<()> {
    let (t, k) = (ctx.tables, ctx.keys);
    let o_id = o_id(inputs, "new_order.order_line")?;
    let item = inputs.require(n, "new_order.order_line")?;
    if item.len() != ITEM_OUTPUT {
        return Err(TxError::Error(Error::Internal(format!(
            "piece new_order.order_line: input slot {n} holds {} bytes, not {ITEM_OUTPUT}",
            item.len()
        ))));
    }
    let mut price = [0u8; 8];
    price.copy_from_slice(&item[..8]);
    let mut dist = [0u8; 24];
    dist.copy_from_slice(&item[8..]);
    let number = u32::from(n) + 1;
    let ol = OrderLineRow {
        ol_o_id: o_id,
        ol_d_id: inp.d,
        ol_w_id: inp.w,
        ol_number: number as u8,
        ol_i_id: line.item,
        ol_supply_w_id: line.supply_w,
        ol_delivery_d: 0,
        ol_quantity: line.quantity as u8,
        ol_amount: i64::from(line.quantity) * i64::from_le_bytes(price),
        ol_dist_info: dist,
    };
    insert_row::<T, { OrderLineRow::SIZE }>(
        tx,
        t.order_line,
        k.order_line(inp.w, inp.d, o_id, number),
        |b| ol.encode(b),
    )
}
