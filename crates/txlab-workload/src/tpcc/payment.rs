//! Payment (clause 2.5): a customer pays; the warehouse's, district's and customer's totals change.
//!
//! Steps (clause 2.5.2.2):
//!
//! 1. WAREHOUSE `w`: read `W_NAME` and the address (`W_STREET_1` .. `W_ZIP`), read for update
//!    and add `H_AMOUNT` to `W_YTD`. In the scaled variant (ROCOCO, OSDI 2014, §5 "Scaled
//!    TPC-C") the WAREHOUSE row has no `W_YTD` column
//!    ([`ScaledWarehouseRow`]): Payment only reads what the
//!    specification retrieves (name and address, for `H_DATA` and the terminal output) and never
//!    writes the row, so Payments of different districts do not conflict on it. The
//!    warehouse's year-to-date total is then [`warehouse_ytd`](super::warehouse_ytd), the
//!    read-only sum of `D_YTD`;
//! 2. DISTRICT `(w, d)`: read for update, add `H_AMOUNT` to `D_YTD`;
//! 3. CUSTOMER `(c_w, c_d, c)`: selected by id, or by last name through CUSTOMER-BY-LAST-NAME
//!    (scan, sort by `C_FIRST`, take position `ceil(n / 2)`); read for update, `C_BALANCE -=
//!    H_AMOUNT`, `C_YTD_PAYMENT += H_AMOUNT`, `C_PAYMENT_CNT += 1`, and for bad credit (`BC`)
//!    prepend `C_ID C_D_ID C_W_ID D_ID W_ID H_AMOUNT` to `C_DATA`, keeping 500 characters;
//! 4. insert a HISTORY row (`H_DATA = W_NAME + 4 spaces + D_NAME`), written blind under a key
//!    unique to the generator (`keys::history`).
//!
//! Value dependencies: with selection by last name, the customer key depends on the name-index
//! scan (a range, which an [`AccessSet`] cannot express): [`declare`] then omits the customer and
//! sets `dependent`. With selection by id every key is known from the inputs.

use super::schema::{CustomerRow, DistrictRow, HistoryRow, ScaledWarehouseRow, WarehouseRow};
use super::txn::{
    CustomerSelector, TpccContext, read_row_for_update, read_warehouse, select_customer,
};
use std::io::Write;
use txlab_core::{Access, AccessSet, TxOps, TxResult};

/// Payment's inputs (clause 2.5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PaymentInput {
    /// Home warehouse.
    pub w: u32,
    /// District of the home warehouse.
    pub d: u32,
    /// Customer's warehouse (`w` in 85 % of cases).
    pub c_w: u32,
    /// Customer's district.
    pub c_d: u32,
    /// How the customer is selected.
    pub customer: CustomerSelector,
    /// `H_AMOUNT` in cents, 100..=500 000.
    pub amount: i64,
    /// `H_DATE`.
    pub date: u64,
    /// The HISTORY key this Payment writes.
    pub history_key: u64,
}

/// Runs Payment; returns the customer's `C_ID`.
pub fn run<T: TxOps + ?Sized>(ctx: &TpccContext, inp: &PaymentInput, tx: &mut T) -> TxResult<()> {
    run_for_customer(ctx, inp, tx).map(|_| ())
}

/// Runs Payment; returns the id of the customer who paid.
pub fn run_for_customer<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &PaymentInput,
    tx: &mut T,
) -> TxResult<u32> {
    let (t, k) = (ctx.tables, ctx.keys);
    let wkey = k.warehouse(inp.w);
    let warehouse = if ctx.scaled {
        read_warehouse(ctx, tx, inp.w)?
    } else {
        let mut wh = read_row_for_update(tx, t.warehouse, wkey, "warehouse", WarehouseRow::decode)?;
        wh.w_ytd += inp.amount;
        let mut buf = [0u8; WarehouseRow::SIZE];
        wh.encode(&mut buf);
        tx.write(t.warehouse, wkey, &buf)?;
        ScaledWarehouseRow::from(wh)
    };
    let district = pay_district(ctx, inp, tx)?;
    let c = select_customer(ctx, tx, inp.c_w, inp.c_d, inp.customer)?;
    pay_customer(ctx, inp, c, tx)?;
    write_history(ctx, inp, c, &warehouse.w_name, &district.d_name, tx)?;
    Ok(c)
}

/// Step 2: adds `H_AMOUNT` to the district's `D_YTD`; returns the district row.
pub fn pay_district<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &PaymentInput,
    tx: &mut T,
) -> TxResult<DistrictRow> {
    let (t, k) = (ctx.tables, ctx.keys);
    let dkey = k.district(inp.w, inp.d);
    let mut district = read_row_for_update(tx, t.district, dkey, "district", DistrictRow::decode)?;
    district.d_ytd += inp.amount;
    let mut buf = [0u8; DistrictRow::SIZE];
    district.encode(&mut buf);
    tx.write(t.district, dkey, &buf)?;
    Ok(district)
}

/// Step 3 once the customer `c` of `(c_w, c_d)` is known: the balance, payment totals and, for
/// bad credit, `C_DATA`.
pub fn pay_customer<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &PaymentInput,
    c: u32,
    tx: &mut T,
) -> TxResult<()> {
    let (t, k) = (ctx.tables, ctx.keys);
    let ckey = k.customer(inp.c_w, inp.c_d, c);
    let mut customer = read_row_for_update(tx, t.customer, ckey, "customer", CustomerRow::decode)?;
    customer.c_balance -= inp.amount;
    customer.c_ytd_payment += inp.amount;
    customer.c_payment_cnt += 1;
    if &customer.c_credit == b"BC" {
        let mut data = [0u8; 500];
        let mut cursor = &mut data[..];
        // Writing into a fixed buffer stops at its end: exactly the truncation the spec asks.
        let _ = write!(
            cursor,
            "{} {} {} {} {} {}.{:02} ",
            c,
            inp.c_d,
            inp.c_w,
            inp.d,
            inp.w,
            inp.amount / 100,
            inp.amount % 100
        );
        let used = 500 - cursor.len();
        let keep = 500 - used;
        data[used..].copy_from_slice(&customer.c_data[..keep]);
        customer.c_data = data;
    }
    let mut buf = [0u8; CustomerRow::SIZE];
    customer.encode(&mut buf);
    tx.write(t.customer, ckey, &buf)
}

/// Step 4: the HISTORY row of customer `c`, with `H_DATA = W_NAME + 4 spaces + D_NAME`.
pub fn write_history<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &PaymentInput,
    c: u32,
    w_name: &[u8],
    d_name: &[u8],
    tx: &mut T,
) -> TxResult<()> {
    let mut h_data = [0u8; 24];
    let wn = super::codec::trimmed(w_name);
    let dn = super::codec::trimmed(d_name);
    let mut cursor = &mut h_data[..];
    // W_NAME (<= 10) + 4 spaces + D_NAME (<= 10) always fits in 24 bytes.
    let _ = cursor.write_all(wn);
    let _ = cursor.write_all(b"    ");
    let _ = cursor.write_all(dn);
    let history = HistoryRow {
        h_c_id: c,
        h_c_d_id: inp.c_d,
        h_c_w_id: inp.c_w,
        h_d_id: inp.d,
        h_w_id: inp.w,
        h_date: inp.date,
        h_amount: inp.amount,
        h_data,
    };
    let mut buf = [0u8; HistoryRow::SIZE];
    history.encode(&mut buf);
    tx.write(ctx.tables.history, inp.history_key, &buf)
}

/// Declares the keys known from the inputs (module docs).
pub fn declare(ctx: &TpccContext, inp: &PaymentInput, out: &mut AccessSet) {
    let (t, k) = (ctx.tables, ctx.keys);
    let wa = if ctx.scaled {
        Access::Read
    } else {
        Access::ReadWrite
    };
    out.push(t.warehouse, k.warehouse(inp.w), wa);
    out.push(t.district, k.district(inp.w, inp.d), Access::ReadWrite);
    match inp.customer {
        CustomerSelector::Id(c) => out.push(
            t.customer,
            k.customer(inp.c_w, inp.c_d, c),
            Access::ReadWrite,
        ),
        CustomerSelector::LastName(_) => out.dependent = true,
    }
    out.push(t.history, inp.history_key, Access::BlindWrite);
}
