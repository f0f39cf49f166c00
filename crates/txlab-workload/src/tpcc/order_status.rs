//! OrderStatus (clause 2.6): a read-only query of a customer's latest order.
//!
//! Steps (clause 2.6.2.2):
//!
//! 1. CUSTOMER `(w, d, c)` by id, or by last name as in Payment; read `C_BALANCE`, `C_FIRST`,
//!    `C_MIDDLE`, `C_LAST`;
//! 2. the customer's latest order: the last entry of the ascending scan of ORDER-BY-CUSTOMER over
//!    `(w, d, c, *)`; read ORDER `(w, d, o_id)` (`O_ENTRY_D`, `O_CARRIER_ID`);
//! 3. scan ORDER-LINE over `(w, d, o_id, 1..=15)` (`OL_I_ID`, `OL_SUPPLY_W_ID`, `OL_QUANTITY`,
//!    `OL_AMOUNT`, `OL_DELIVERY_D`).
//!
//! Value dependencies: the order and its lines depend on the index scan (and, by last name, the
//! customer on the name scan). [`declare`] lists the customer when selected by id and sets
//! `dependent`.

use super::keys::Keys;
use super::schema::{CustomerRow, OrderLineRow, OrderRow};
use super::txn::{CustomerSelector, TpccContext, inconsistent, read_row, select_customer};
use txlab_core::{Access, AccessSet, Error, TxError, TxOps, TxResult};

/// OrderStatus' inputs (clause 2.6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OrderStatusInput {
    /// Warehouse.
    pub w: u32,
    /// District.
    pub d: u32,
    /// How the customer is selected.
    pub customer: CustomerSelector,
}

/// What OrderStatus reports (part of the terminal output of clause 2.6.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderStatus {
    /// The customer.
    pub c_id: u32,
    /// `C_BALANCE` in cents.
    pub balance: i64,
    /// The latest order's id (`None` if the customer has none).
    pub o_id: Option<u32>,
    /// Number of order lines found.
    pub lines: u32,
    /// Sum of their `OL_AMOUNT`, in cents.
    pub amount: i64,
}

/// Runs OrderStatus.
pub fn run<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &OrderStatusInput,
    tx: &mut T,
) -> TxResult<OrderStatus> {
    let (t, k) = (ctx.tables, ctx.keys);
    let (w, d) = (inp.w, inp.d);
    let c = select_customer(ctx, tx, w, d, inp.customer)?;
    let customer = read_row(
        tx,
        t.customer,
        k.customer(w, d, c),
        "customer",
        CustomerRow::decode,
    )?;
    let mut status = OrderStatus {
        c_id: c,
        balance: customer.c_balance,
        o_id: None,
        lines: 0,
        amount: 0,
    };
    let (lo, hi) = k.customer_orders(w, d, c);
    let mut latest = None;
    tx.scan(t.order_by_customer, lo, hi, &mut |key, _| {
        latest = Some(Keys::order_of_key(key));
        true
    })?;
    let Some(o_id) = latest else {
        return Ok(status);
    };
    let okey = k.order(w, d, o_id);
    let order = match tx.read(t.order, okey)? {
        Some(bytes) => OrderRow::decode(bytes)?,
        // Listed by the index but absent: an inconsistent view (txn module docs).
        None => return Err(inconsistent(t.order, okey)),
    };
    if order.o_c_id != c {
        return Err(TxError::Error(Error::Invariant(format!(
            "tpcc order_status: order {o_id} of warehouse {w} district {d} belongs to customer {}, \
             but the order-by-customer index lists it under customer {c}",
            order.o_c_id
        ))));
    }
    status.o_id = Some(o_id);
    let (lo, hi) = k.order_lines(w, d, o_id, o_id);
    let mut bad = None;
    tx.scan(t.order_line, lo, hi, &mut |_, value| {
        match OrderLineRow::decode(value) {
            Ok(ol) => {
                status.lines += 1;
                status.amount += ol.ol_amount;
            }
            Err(e) => bad = Some(e),
        }
        true
    })?;
    if let Some(e) = bad {
        return Err(e.into());
    }
    Ok(status)
}

/// Declares the keys known from the inputs (module docs); `dependent` is set.
pub fn declare(ctx: &TpccContext, inp: &OrderStatusInput, out: &mut AccessSet) {
    if let CustomerSelector::Id(c) = inp.customer {
        out.push(
            ctx.tables.customer,
            ctx.keys.customer(inp.w, inp.d, c),
            Access::Read,
        );
    }
    out.dependent = true;
}
