//! Delivery (clause 2.7): deliver the oldest undelivered order of every district of a warehouse,
//! as one transaction (the specification allows it to be one or several; clause 2.7.4 measures it
//! as one business transaction, and deferred execution is not modelled).
//!
//! Steps per district `d = 1..=D` (clause 2.7.4.2):
//!
//! 1. the oldest NEW-ORDER: the first key of an ascending scan over `(w, d, *)` with limit 1; if
//!    there is none, the district is skipped;
//! 2. delete that NEW-ORDER row;
//! 3. ORDER `(w, d, o_id)`: read for update, set `O_CARRIER_ID`, note `O_C_ID`;
//! 4. scan ORDER-LINE `(w, d, o_id, *)`; write each line back with `OL_DELIVERY_D` set; sum
//!    `OL_AMOUNT`;
//! 5. CUSTOMER `(w, d, O_C_ID)`: read for update, `C_BALANCE += sum`, `C_DELIVERY_CNT += 1`.
//!
//! Deleted NEW-ORDER rows may linger as absent tombstones in some engines; `TxOps::scan` skips
//! absent keys, so step 1 sees only live rows.
//!
//! Value dependencies: everything depends on the scan of step 1 (the order id), and the customer
//! on `O_C_ID`; no key is known from the inputs, so [`declare`] only sets `dependent`.

use super::keys::Keys;
use super::schema::{CustomerRow, OrderLineRow, OrderRow};
use super::txn::{TpccContext, inconsistent, read_inserted_row_for_update, read_row_for_update};
use txlab_core::{AccessSet, Error, TxError, TxOps, TxResult};

/// Delivery's inputs (clause 2.7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeliveryInput {
    /// Warehouse.
    pub w: u32,
    /// `O_CARRIER_ID`, 1..=10.
    pub carrier: u8,
    /// `OL_DELIVERY_D`.
    pub date: u64,
}

/// Runs Delivery; returns the number of districts that had an order to deliver.
pub fn run<T: TxOps + ?Sized>(ctx: &TpccContext, inp: &DeliveryInput, tx: &mut T) -> TxResult<u32> {
    let mut delivered = 0;
    for d in 1..=ctx.keys.districts {
        delivered += u32::from(deliver_district(ctx, inp, d, tx)?);
    }
    Ok(delivered)
}

/// Steps 1–5 for district `d` of warehouse `inp.w`; returns whether it had an order to deliver.
/// Every row it touches belongs to the district (ROCOCO runs it as one piece per district).
pub fn deliver_district<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &DeliveryInput,
    d: u32,
    tx: &mut T,
) -> TxResult<bool> {
    let (t, k) = (ctx.tables, ctx.keys);
    let w = inp.w;
    let (lo, hi) = k.district_orders(w, d);
    let mut oldest = None;
    tx.scan(t.new_order, lo, hi, &mut |key, _| {
        oldest = Some(Keys::order_of_key(key));
        false
    })?;
    let Some(o_id) = oldest else {
        return Ok(false);
    };
    let okey = k.order(w, d, o_id);
    if !tx.delete(t.new_order, okey)? {
        // Vanished between the scan and the delete: an inconsistent view (txn module docs).
        return Err(inconsistent(t.new_order, okey));
    }
    let mut order = read_inserted_row_for_update(tx, t.order, okey, OrderRow::decode)?;
    order.o_carrier_id = inp.carrier;
    let mut buf = [0u8; OrderRow::SIZE];
    order.encode(&mut buf);
    tx.write(t.order, okey, &buf)?;

    let mut lines = [(0u64, [0u8; OrderLineRow::SIZE]); 15];
    let mut n = 0usize;
    let (lo, hi) = k.order_lines(w, d, o_id, o_id);
    tx.scan(t.order_line, lo, hi, &mut |key, value| {
        if n < lines.len() && value.len() == OrderLineRow::SIZE {
            lines[n].0 = key;
            lines[n].1.copy_from_slice(value);
        }
        n += 1;
        true
    })?;
    if n > lines.len() {
        return Err(TxError::Error(Error::Invariant(format!(
            "tpcc delivery: order {o_id} of warehouse {w} district {d} has {n} lines (at most 15)"
        ))));
    }
    let mut sum = 0i64;
    for (key, bytes) in &mut lines[..n] {
        let mut ol = OrderLineRow::decode(bytes)?;
        ol.ol_delivery_d = inp.date;
        sum += ol.ol_amount;
        ol.encode(bytes);
        tx.write(t.order_line, *key, bytes)?;
    }
    let ckey = k.customer(w, d, order.o_c_id);
    let mut customer = read_row_for_update(tx, t.customer, ckey, "customer", CustomerRow::decode)?;
    customer.c_balance += sum;
    customer.c_delivery_cnt += 1;
    let mut buf = [0u8; CustomerRow::SIZE];
    customer.encode(&mut buf);
    tx.write(t.customer, ckey, &buf)?;
    Ok(true)
}

/// Declares nothing but `dependent` (module docs).
pub fn declare(_ctx: &TpccContext, _inp: &DeliveryInput, out: &mut AccessSet) {
    out.dependent = true;
}
