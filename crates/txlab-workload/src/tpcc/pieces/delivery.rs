//! Delivery's pieces (module docs of [`super`]): one deferrable `district` piece per district of
//! the warehouse (instance `d - 1`), each [`deliver_district`] on the district's server.

use super::super::delivery::{DeliveryInput, deliver_district};
use super::super::schema::TpccTables;
use super::super::txn::TpccContext;
use super::groups::*;
use super::{district_of, key, no_such_piece, per_district};
use txlab_core::pieces::{ColumnGroup, ConflictKey, PieceKind, PieceProfile, PieceRef, TxnProfile};
use txlab_core::{Access, TxOps, TxResult};

pub(super) fn profile(t: &TpccTables) -> TxnProfile {
    TxnProfile {
        kind: "delivery",
        read_only: false,
        pieces: vec![
            PieceProfile::new("district", PieceKind::Deferrable)
                .access(t.new_order, ColumnGroup::ROW, Access::Delete)
                .access(t.order, ORDER_ROW, Access::Read)
                .access(t.order, ORDER_CARRIER, Access::BlindWrite)
                .access(t.order_line, ORDER_LINE_ROW, Access::Read)
                .access(t.order_line, ORDER_LINE_DELIVERY, Access::BlindWrite)
                .access(t.customer, CUSTOMER_BALANCE, Access::ReadWrite)
                .repeated(),
        ],
    }
}

pub(super) fn plan(ctx: &TpccContext, inp: &DeliveryInput, out: &mut Vec<PieceRef>) {
    per_district(ctx, inp.w, 0, out);
}

pub(super) fn conflict_keys(
    ctx: &TpccContext,
    inp: &DeliveryInput,
    p: PieceRef,
    out: &mut Vec<(ConflictKey, Access)>,
) {
    let t = ctx.tables;
    let Some(d) = district_of(ctx, p) else {
        return;
    };
    let dx = ctx.keys.district_index(inp.w, d);
    key(out, t.new_order, ColumnGroup::ROW, dx, Access::Delete);
    key(out, t.order, ORDER_ROW, dx, Access::Read);
    key(out, t.order, ORDER_CARRIER, dx, Access::BlindWrite);
    key(out, t.order_line, ORDER_LINE_ROW, dx, Access::Read);
    key(
        out,
        t.order_line,
        ORDER_LINE_DELIVERY,
        dx,
        Access::BlindWrite,
    );
    key(out, t.customer, CUSTOMER_BALANCE, dx, Access::ReadWrite);
}

pub(super) fn run<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    inp: &DeliveryInput,
    p: PieceRef,
    tx: &mut T,
) -> TxResult<()> {
    let d = district_of(ctx, p).ok_or_else(|| no_such_piece("delivery", p))?;
    deliver_district(ctx, inp, d, tx).map(|_| ())
}
