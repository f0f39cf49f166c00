//! Delivery's pieces (module docs of [`super`]): one deferrable `district` piece per district of
//! the warehouse (instance `d - 1`), each [`deliver_district`] on the district's server.

use super::super::delivery::{DeliveryInput, deliver_district};
use super::super::schema::TpccTables;
use super::super::txn::TpccContext;
use super::groups::*;
use super::{key, no_such_piece};
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
    let (t, k) = (ctx.tables, ctx.keys);
    // At most MAX_PIECED_DISTRICTS districts (`check_pieced`), so instances fit in a u16.
    for (n, d) in (0..=u16::MAX).zip(1..=k.districts) {
        out.push(PieceRef::new(0, n, t.district, k.district_index(inp.w, d)));
    }
}

pub(super) fn conflict_keys(
    ctx: &TpccContext,
    inp: &DeliveryInput,
    p: PieceRef,
    out: &mut Vec<(ConflictKey, Access)>,
) {
    let (t, k) = (ctx.tables, ctx.keys);
    let d = u32::from(p.instance) + 1;
    if p.piece != 0 || d > k.districts {
        return;
    }
    let dx = k.district_index(inp.w, d);
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
    let d = u32::from(p.instance) + 1;
    if p.piece != 0 || d > ctx.keys.districts {
        return Err(no_such_piece("delivery", p));
    }
    deliver_district(ctx, inp, d, tx).map(|_| ())
}
