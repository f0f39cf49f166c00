//! NewOrder (clause 2.4): enter a customer's order of 5–15 items.
//!
//! Steps (clause 2.4.2.2), each line's reads and writes in order:
//!
//! 1. read WAREHOUSE `w` (`W_TAX`);
//! 2. read DISTRICT `(w, d)` for update, take `o_id = D_NEXT_O_ID`, write `D_NEXT_O_ID + 1`;
//! 3. read CUSTOMER `(w, d, c)` (`C_DISCOUNT`, `C_LAST`, `C_CREDIT`);
//! 4. insert ORDER `(w, d, o_id)`, NEW-ORDER `(w, d, o_id)` and ORDER-BY-CUSTOMER
//!    `(w, d, c, o_id)`;
//! 5. per line: read ITEM `i` (absent: the unused id of the 1 % rollback, clause 2.4.1.4 →
//!    [`TxError::UserAbort`]); read STOCK `(supply_w, i)` for update and write it back with
//!    `S_QUANTITY` decreased by the quantity (or increased by 91 − quantity when fewer than
//!    quantity + 10 remain), `S_YTD += quantity`, `S_ORDER_CNT += 1`, `S_REMOTE_CNT += 1` if
//!    `supply_w != w`; insert ORDER-LINE `(w, d, o_id, number)` with `OL_AMOUNT = quantity *
//!    I_PRICE` and `OL_DIST_INFO = S_DIST_d`.
//!
//! Value dependencies: the keys of step 4 and the ORDER-LINE keys depend on `D_NEXT_O_ID` read in
//! step 2; every other key (warehouse, district, customer, items, stocks) is known from the
//! inputs. Hence [`declare`] lists those and sets `dependent`.

use super::keys::MAX_ORDER_ID;
use super::random::contains_original;
use super::schema::{
    CustomerOrderRow, CustomerRow, DistrictRow, ItemRow, NewOrderRow, OrderLineRow, OrderRow,
    StockRow,
};
use super::txn::{TpccContext, inconsistent, read_row, read_row_for_update, read_warehouse};
use txlab_core::{Access, AccessSet, Error, TxError, TxOps, TxResult};

/// The reason of the 1 % rollback (an unused item id, clause 2.4.2.3).
pub const ROLLBACK: &str = "new_order: unused item id (the 1% rollback of clause 2.4.2.3)";

/// One order line's inputs (clause 2.4.1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OrderLineInput {
    /// `OL_I_ID`: `1..=items`, or `items + 1` (unused) for a rollback.
    pub item: u32,
    /// `OL_SUPPLY_W_ID`.
    pub supply_w: u32,
    /// `OL_QUANTITY`, 1..=10.
    pub quantity: u32,
}

/// NewOrder's inputs (clause 2.4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NewOrderInput {
    /// Home warehouse.
    pub w: u32,
    /// District.
    pub d: u32,
    /// Customer.
    pub c: u32,
    /// Order lines; the first `ol_cnt` are used.
    pub lines: [OrderLineInput; 15],
    /// `O_OL_CNT`, 5..=15.
    pub ol_cnt: u8,
    /// `O_ENTRY_D`.
    pub entry_d: u64,
}

impl NewOrderInput {
    /// The used order lines.
    pub fn lines(&self) -> &[OrderLineInput] {
        &self.lines[..usize::from(self.ol_cnt)]
    }
}

fn write_row<T: TxOps + ?Sized, const N: usize>(
    tx: &mut T,
    table: txlab_core::TableId,
    key: u64,
    encode: impl FnOnce(&mut [u8]),
) -> TxResult<()> {
    let mut buf = [0u8; N];
    encode(&mut buf);
    tx.write(table, key, &buf)
}

fn insert_row<T: TxOps + ?Sized, const N: usize>(
    tx: &mut T,
    table: txlab_core::TableId,
    key: u64,
    encode: impl FnOnce(&mut [u8]),
) -> TxResult<()> {
    let mut buf = [0u8; N];
    encode(&mut buf);
    if tx.insert(table, key, &buf)? {
        Ok(())
    } else {
        // The key of a fresh order id is present: D_NEXT_O_ID was read stale (txn module docs).
        Err(inconsistent(table, key))
    }
}

/// Runs NewOrder; returns the order's total amount in cents (clause 2.4.2.2:
/// `sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX)`).
pub fn run<T: TxOps + ?Sized>(ctx: &TpccContext, inp: &NewOrderInput, tx: &mut T) -> TxResult<i64> {
    let (t, k) = (ctx.tables, ctx.keys);
    let (w, d, c) = (inp.w, inp.d, inp.c);
    let warehouse = read_warehouse(ctx, tx, w)?;
    let district = take_order_id(ctx, inp, tx)?;
    let o_id = district.d_next_o_id;
    let customer = read_row(
        tx,
        t.customer,
        k.customer(w, d, c),
        "customer",
        CustomerRow::decode,
    )?;
    insert_order(ctx, inp, o_id, tx)?;
    let mut sum = 0i64;
    for (number, line) in (1u32..).zip(inp.lines()) {
        let item = read_item(ctx, line, tx)?;
        let stock = take_stock(ctx, inp, line, tx)?;
        // Brand-generic (clause 2.4.2.2): computed as the spec asks; only reported to the terminal.
        let _brand_generic = contains_original(&item.i_data) && contains_original(&stock.s_data);
        sum += insert_order_line(
            ctx,
            inp,
            o_id,
            number,
            line,
            item.i_price,
            stock.dist(d),
            tx,
        )?;
    }
    let rate = i128::from(10_000 - customer.c_discount)
        * i128::from(10_000 + warehouse.w_tax + district.d_tax);
    Ok((i128::from(sum) * rate / 100_000_000) as i64)
}

/// Step 2: reads the district for update and increments `D_NEXT_O_ID`; returns the row as read
/// (its `d_next_o_id` is the order's id).
pub fn take_order_id<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    tx: &mut T,
) -> TxResult<DistrictRow> {
    let (t, k) = (ctx.tables, ctx.keys);
    let (w, d) = (inp.w, inp.d);
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
    district.d_next_o_id = o_id;
    Ok(district)
}

/// Step 4: inserts ORDER, NEW-ORDER and ORDER-BY-CUSTOMER of order `o_id`.
pub fn insert_order<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    o_id: u32,
    tx: &mut T,
) -> TxResult<()> {
    let (t, k) = (ctx.tables, ctx.keys);
    let (w, d, c) = (inp.w, inp.d, inp.c);
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

/// Step 5's item read: the ITEM row, or the rollback of an unused id ([`ROLLBACK`]).
pub fn read_item<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    line: &OrderLineInput,
    tx: &mut T,
) -> TxResult<ItemRow> {
    match tx.read(ctx.tables.item, ctx.keys.item(line.item))? {
        Some(bytes) => Ok(ItemRow::decode(bytes)?),
        None => Err(TxError::user_abort(ROLLBACK)),
    }
}

/// Step 5's stock update of one line; returns the STOCK row after it.
pub fn take_stock<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    line: &OrderLineInput,
    tx: &mut T,
) -> TxResult<StockRow> {
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
    write_row::<T, { StockRow::SIZE }>(tx, t.stock, skey, |b| stock.encode(b))?;
    Ok(stock)
}

/// Step 5's ORDER-LINE insert of line `number` (1-based) of order `o_id`, given the item's
/// `I_PRICE` and the stock's `S_DIST_xx`; returns `OL_AMOUNT`.
#[allow(clippy::too_many_arguments)]
pub fn insert_order_line<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &NewOrderInput,
    o_id: u32,
    number: u32,
    line: &OrderLineInput,
    price: i64,
    dist: &[u8; 24],
    tx: &mut T,
) -> TxResult<i64> {
    let (t, k) = (ctx.tables, ctx.keys);
    let amount = i64::from(line.quantity) * price;
    let ol = OrderLineRow {
        ol_o_id: o_id,
        ol_d_id: inp.d,
        ol_w_id: inp.w,
        ol_number: number as u8,
        ol_i_id: line.item,
        ol_supply_w_id: line.supply_w,
        ol_delivery_d: 0,
        ol_quantity: line.quantity as u8,
        ol_amount: amount,
        ol_dist_info: *dist,
    };
    insert_row::<T, { OrderLineRow::SIZE }>(
        tx,
        t.order_line,
        k.order_line(inp.w, inp.d, o_id, number),
        |b| ol.encode(b),
    )?;
    Ok(amount)
}

/// Declares the keys known from the inputs (module docs); `dependent` is set.
pub fn declare(ctx: &TpccContext, inp: &NewOrderInput, out: &mut AccessSet) {
    let (t, k) = (ctx.tables, ctx.keys);
    out.push(t.warehouse, k.warehouse(inp.w), Access::Read);
    out.push(t.district, k.district(inp.w, inp.d), Access::ReadWrite);
    out.push(t.customer, k.customer(inp.w, inp.d, inp.c), Access::Read);
    for line in inp.lines() {
        out.push(t.item, k.item(line.item), Access::Read);
        if line.item <= k.items {
            out.push(
                t.stock,
                k.stock(line.supply_w, line.item),
                Access::ReadWrite,
            );
        }
    }
    out.dependent = true;
}
