//! Payment's pieces (module docs of [`super`]; the steps of [`super::super::payment`]).
//!
//! Pieces: 0 `lookup` (planned only for a customer selected by last name), 1 `district`,
//! 2 `customer`, 3 `history`.

use super::super::payment::{PaymentInput, pay_customer, pay_district, write_history};
use super::super::schema::{DistrictRow, TpccTables};
use super::super::txn::{
    CustomerSelector, TpccContext, customer_by_last_name, read_row, read_warehouse,
};
use super::groups::*;
use super::{C_ID, key, no_such_piece};
use txlab_core::pieces::{
    ColumnGroup, ConflictKey, PieceKind, PieceProfile, PieceRef, PieceValues, TxnProfile,
};
use txlab_core::{Access, Error, TxOps, TxResult};

const LOOKUP: u16 = 0;
const DISTRICT: u16 = 1;
const CUSTOMER: u16 = 2;
const HISTORY: u16 = 3;

pub(super) fn profile(t: &TpccTables) -> TxnProfile {
    use PieceKind::{Deferrable, Immediate};
    let row = ColumnGroup::ROW;
    TxnProfile {
        kind: "payment",
        read_only: false,
        pieces: vec![
            PieceProfile::new("lookup", Immediate).access(t.customer_by_name, row, Access::Read),
            PieceProfile::new("district", Deferrable).access(
                t.district,
                DISTRICT_YTD,
                Access::ReadWrite,
            ),
            PieceProfile::new("customer", Deferrable)
                .access(t.customer, CUSTOMER_BALANCE, Access::ReadWrite)
                .access(t.customer, CUSTOMER_STATIC, Access::Read)
                .inputs_from(&[LOOKUP.into()]),
            PieceProfile::new("history", Deferrable)
                .access(t.history, row, Access::BlindWrite)
                .access(t.warehouse, row, Access::Read)
                .access(t.district, DISTRICT_STATIC, Access::Read)
                .inputs_from(&[LOOKUP.into()]),
        ],
    }
}

pub(super) fn plan(ctx: &TpccContext, inp: &PaymentInput, out: &mut Vec<PieceRef>) {
    let (t, k) = (ctx.tables, ctx.keys);
    let home = PieceRef::new(DISTRICT, 0, t.district, k.district_index(inp.w, inp.d));
    let customers = PieceRef::new(CUSTOMER, 0, t.district, k.district_index(inp.c_w, inp.c_d));
    if let CustomerSelector::LastName(_) = inp.customer {
        out.push(PieceRef {
            piece: LOOKUP,
            ..customers
        });
    }
    out.push(home);
    out.push(customers);
    out.push(PieceRef {
        piece: HISTORY,
        ..home
    });
}

pub(super) fn conflict_keys(
    ctx: &TpccContext,
    inp: &PaymentInput,
    p: PieceRef,
    out: &mut Vec<(ConflictKey, Access)>,
) {
    let (t, k) = (ctx.tables, ctx.keys);
    let home = k.district_index(inp.w, inp.d);
    let customers = k.district_index(inp.c_w, inp.c_d);
    match p.piece {
        LOOKUP => key(
            out,
            t.customer_by_name,
            ColumnGroup::ROW,
            customers,
            Access::Read,
        ),
        DISTRICT => key(out, t.district, DISTRICT_YTD, home, Access::ReadWrite),
        CUSTOMER => {
            key(
                out,
                t.customer,
                CUSTOMER_BALANCE,
                customers,
                Access::ReadWrite,
            );
            key(out, t.customer, CUSTOMER_STATIC, customers, Access::Read);
        }
        HISTORY => {
            key(
                out,
                t.history,
                ColumnGroup::ROW,
                inp.history_key,
                Access::BlindWrite,
            );
            key(
                out,
                t.warehouse,
                ColumnGroup::ROW,
                k.warehouse(inp.w),
                Access::Read,
            );
            key(out, t.district, DISTRICT_STATIC, home, Access::Read);
        }
        _ => {}
    }
}

/// The paying customer: from `lookup`'s output, or the input id.
fn customer_id(inp: &PaymentInput, inputs: &PieceValues, piece: &str) -> Result<u32, Error> {
    match inp.customer {
        CustomerSelector::Id(c) => Ok(c),
        CustomerSelector::LastName(_) => {
            let c = inputs.require_u64(C_ID, piece)?;
            u32::try_from(c)
                .map_err(|_| Error::Internal(format!("piece {piece}: c_id {c} is not a u32")))
        }
    }
}

pub(super) fn run<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &PaymentInput,
    p: PieceRef,
    inputs: &PieceValues,
    tx: &mut T,
    out: &mut PieceValues,
) -> TxResult<()> {
    match (p.piece, inp.customer) {
        (LOOKUP, CustomerSelector::LastName(name)) => {
            let c = customer_by_last_name(ctx, tx, inp.c_w, inp.c_d, name)?;
            out.put_u64(C_ID, u64::from(c));
            Ok(())
        }
        (DISTRICT, _) => pay_district(ctx, inp, tx).map(|_| ()),
        (CUSTOMER, _) => {
            let c = customer_id(inp, inputs, "payment.customer")?;
            pay_customer(ctx, inp, c, tx)
        }
        (HISTORY, _) => {
            let c = customer_id(inp, inputs, "payment.history")?;
            let warehouse = read_warehouse(ctx, tx, inp.w)?;
            let dkey = ctx.keys.district(inp.w, inp.d);
            let district = read_row(
                tx,
                ctx.tables.district,
                dkey,
                "district",
                DistrictRow::decode,
            )?;
            write_history(ctx, inp, c, &warehouse.w_name, &district.d_name, tx)
        }
        _ => Err(no_such_piece("payment", p)),
    }
}
