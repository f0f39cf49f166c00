//! TPC-C consistency conditions 1–4 (clause 3.3.2.1–3.3.2.4), checked through read-only
//! transactions.
//!
//! For every warehouse `w` and district `d`:
//!
//! 1. `W_YTD = sum(D_YTD)` over the warehouse's districts (3.3.2.1). In the scaled variant there
//!    is no `W_YTD` column (ROCOCO, OSDI 2014, §5 "Scaled TPC-C": the warehouse total *is* the
//!    read-only sum, [`warehouse_ytd`]), so 3.3.2.1 as written would hold
//!    by definition. It is replaced by the check that gives it meaning: the read-only sum equals
//!    what the warehouse was paid, i.e. clause 3.3.2.8's `W_YTD = sum(H_AMOUNT)` over the HISTORY
//!    rows with `H_W_ID = w`, with `W_YTD := sum(D_YTD)`. Every Payment adds `H_AMOUNT` to one
//!    `D_YTD` of its home warehouse and inserts one HISTORY row with that amount and `H_W_ID`, so
//!    this catches a lost `D_YTD` update or a Payment applied in part. With fewer than 3000
//!    customers per district the population's HISTORY (`C` rows of 10.00 per district) no longer
//!    adds up to the initial `D_YTD` (30 000.00), so the expected value is
//!    `sum(H_AMOUNT) + D * (30 000.00 - C * 10.00)` (the correction is 0 at the standard scale).
//!    It scans the whole HISTORY table once per warehouse.
//! 2. `D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)` over the district's ORDER and NEW-ORDER rows
//!    (3.3.2.2); the NEW-ORDER part only when the district has NEW-ORDER rows (all of them may
//!    have been delivered).
//! 3. `max(NO_O_ID) - min(NO_O_ID) + 1 =` the number of NEW-ORDER rows of the district (3.3.2.3).
//! 4. `sum(O_OL_CNT) =` the number of ORDER-LINE rows of the district (3.3.2.4).
//!
//! [`check`] runs one read-only transaction per warehouse (retried on conflicts, at most 16
//! attempts) and returns [`Error::Invariant`] naming the condition, warehouse, district and the
//! numbers that disagree. Run it while no other transaction runs.

use super::Tpcc;
use super::load::{DISTRICT_INITIAL_YTD, HISTORY_INITIAL_AMOUNT};
use super::schema::{DistrictRow, HistoryRow, OrderRow, WarehouseRow};
use super::txn::{TpccContext, read_row};
use super::warehouse_ytd::{self, WarehouseYtdInput};
use txlab_core::{Engine, Error, RetryPolicy, TxError, TxOps, TxResult, run};

/// What one district's rows say, as read by [`district_facts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DistrictFacts {
    /// `D_YTD` in cents.
    pub d_ytd: i64,
    /// `D_NEXT_O_ID`.
    pub d_next_o_id: u32,
    /// `max(O_ID)` (`None` without orders).
    pub max_o_id: Option<u32>,
    /// `(min, max, count)` of `NO_O_ID` (`None` without NEW-ORDER rows).
    pub new_orders: Option<(u32, u32, u64)>,
    /// `sum(O_OL_CNT)`.
    pub sum_ol_cnt: u64,
    /// Number of ORDER-LINE rows.
    pub order_lines: u64,
}

/// Reads the facts of district `(w, d)` in `tx`.
pub fn district_facts<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    tx: &mut T,
    w: u32,
    d: u32,
) -> TxResult<DistrictFacts> {
    let (t, k) = (ctx.tables, ctx.keys);
    let district = read_row(
        tx,
        t.district,
        k.district(w, d),
        "district",
        DistrictRow::decode,
    )?;
    let mut facts = DistrictFacts {
        d_ytd: district.d_ytd,
        d_next_o_id: district.d_next_o_id,
        ..DistrictFacts::default()
    };
    let (lo, hi) = k.district_orders(w, d);
    let mut bad = None;
    tx.scan(t.order, lo, hi, &mut |key, value| {
        match OrderRow::decode(value) {
            Ok(o) => {
                facts.max_o_id = Some(k.unpack_order(key).o);
                facts.sum_ol_cnt += u64::from(o.o_ol_cnt);
            }
            Err(e) => bad = Some(e),
        }
        true
    })?;
    if let Some(e) = bad {
        return Err(e.into());
    }
    tx.scan(t.new_order, lo, hi, &mut |key, _| {
        let o = k.unpack_order(key).o;
        facts.new_orders = Some(match facts.new_orders {
            None => (o, o, 1),
            Some((min, _, n)) => (min, o, n + 1),
        });
        true
    })?;
    let (lo, hi) = k.order_lines(w, d, 0, super::keys::MAX_ORDER_ID);
    tx.scan(t.order_line, lo, hi, &mut |_, _| {
        facts.order_lines += 1;
        true
    })?;
    Ok(facts)
}

/// Checks conditions 2–4 on one district's facts.
pub fn check_district(w: u32, d: u32, f: &DistrictFacts) -> Result<(), Error> {
    let expected_max = u64::from(f.d_next_o_id) - 1;
    let max_o = f.max_o_id.map_or(0, u64::from);
    if max_o != expected_max {
        return Err(Error::Invariant(format!(
            "tpcc consistency condition 2 (clause 3.3.2.2): warehouse {w} district {d}: \
             D_NEXT_O_ID - 1 = {expected_max} but max(O_ID) = {max_o}"
        )));
    }
    if let Some((min, max, count)) = f.new_orders {
        if u64::from(max) != expected_max {
            return Err(Error::Invariant(format!(
                "tpcc consistency condition 2 (clause 3.3.2.2): warehouse {w} district {d}: \
                 D_NEXT_O_ID - 1 = {expected_max} but max(NO_O_ID) = {max}"
            )));
        }
        let span = u64::from(max - min) + 1;
        if span != count {
            return Err(Error::Invariant(format!(
                "tpcc consistency condition 3 (clause 3.3.2.3): warehouse {w} district {d}: \
                 max(NO_O_ID) - min(NO_O_ID) + 1 = {max} - {min} + 1 = {span} but there are \
                 {count} NEW-ORDER rows"
            )));
        }
    }
    if f.sum_ol_cnt != f.order_lines {
        return Err(Error::Invariant(format!(
            "tpcc consistency condition 4 (clause 3.3.2.4): warehouse {w} district {d}: \
             sum(O_OL_CNT) = {} but there are {} ORDER-LINE rows",
            f.sum_ol_cnt, f.order_lines
        )));
    }
    Ok(())
}

/// `sum(H_AMOUNT)` in cents over the HISTORY rows with `H_W_ID = w` (a scan of the whole table:
/// HISTORY keys are per generator, not per warehouse).
pub fn history_total<T: TxOps + ?Sized>(ctx: &TpccContext, tx: &mut T, w: u32) -> TxResult<i64> {
    let mut total = 0i64;
    let mut bad = None;
    tx.scan(ctx.tables.history, 0, u64::MAX, &mut |_, value| {
        match HistoryRow::decode(value) {
            Ok(h) if h.h_w_id == w => total += h.h_amount,
            Ok(_) => {}
            Err(e) => bad = Some(e),
        }
        bad.is_none()
    })?;
    match bad {
        Some(e) => Err(e.into()),
        None => Ok(total),
    }
}

/// What `sum(D_YTD)` of a warehouse must be, given `sum(H_AMOUNT)` of its HISTORY rows: the
/// population gives each district `D_YTD = 30 000.00` but only `C` history rows of 10.00.
pub fn expected_warehouse_ytd(ctx: &TpccContext, history_total: i64) -> i64 {
    let k = ctx.keys;
    let per_district = DISTRICT_INITIAL_YTD - i64::from(k.customers) * HISTORY_INITIAL_AMOUNT;
    history_total + i64::from(k.districts) * per_district
}

/// Checks conditions 1–4 for warehouse `w` inside `tx` (condition 1 in its scaled form when
/// `ctx.scaled`, module docs).
pub fn check_warehouse<T: TxOps + ?Sized>(ctx: &TpccContext, tx: &mut T, w: u32) -> TxResult<()> {
    let mut sum_d_ytd = 0i64;
    for d in 1..=ctx.keys.districts {
        let facts = district_facts(ctx, tx, w, d)?;
        check_district(w, d, &facts)?;
        sum_d_ytd += facts.d_ytd;
    }
    if ctx.scaled {
        let ytd = warehouse_ytd::run(ctx, &WarehouseYtdInput { w }, tx)?;
        let paid = history_total(ctx, tx, w)?;
        let expected = expected_warehouse_ytd(ctx, paid);
        if ytd != expected {
            return Err(TxError::Error(Error::Invariant(format!(
                "tpcc consistency condition 1, scaled variant (W_YTD := sum(D_YTD), checked as \
                 clause 3.3.2.8 W_YTD = sum(H_AMOUNT)): warehouse {w}: the read-only \
                 sum(D_YTD) = {ytd} cents but the population's total plus the warehouse's \
                 payments = {expected} cents (sum(H_AMOUNT) = {paid} cents)"
            ))));
        }
    } else {
        let t = ctx.tables;
        let wh = read_row(
            tx,
            t.warehouse,
            ctx.keys.warehouse(w),
            "warehouse",
            WarehouseRow::decode,
        )?;
        if wh.w_ytd != sum_d_ytd {
            return Err(TxError::Error(Error::Invariant(format!(
                "tpcc consistency condition 1 (clause 3.3.2.1): warehouse {w}: W_YTD = {} cents \
                 but sum(D_YTD) = {sum_d_ytd} cents",
                wh.w_ytd
            ))));
        }
    }
    Ok(())
}

/// Checks conditions 1–4 on every warehouse of `engine` (module docs).
pub fn check<E: Engine>(tpcc: &Tpcc, engine: &E) -> Result<(), Error> {
    let ctx = tpcc.context();
    let mut worker = engine.worker()?;
    for w in 1..=ctx.warehouses {
        run(&mut worker, RetryPolicy::attempts(16)?, |tx| {
            check_warehouse(&ctx, tx, w)
        })
        .map_err(|e| match e {
            TxError::Error(e) => e,
            other => Error::Internal(format!(
                "tpcc check: the read-only transaction of warehouse {w} failed: {other}"
            )),
        })?;
    }
    Ok(())
}
