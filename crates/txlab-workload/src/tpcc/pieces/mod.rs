//! TPC-C as ROCOCO's pieces (Mu et al., OSDI 2014, §3.1 Figure 3, §5.2 Figure 12 and 13): the
//! profiles the offline checker analyses and the [`Pieced`] implementation of [`TpccTxn`],
//! beside the [`Program`](txlab_core::Program) code, reusing its row helpers.
//!
//! Only the scaled variant ([`TpccConfig::scaled`](super::TpccConfig::scaled), no `W_YTD`) has
//! pieces: it is what ROCOCO runs, partitioned by district
//! ([`ByDistrict`](super::partition::ByDistrict)), where WAREHOUSE is replicated and never
//! written.
//!
//! # Column groups
//!
//! | table | groups |
//! |---|---|
//! | DISTRICT | 1 `next_o_id` (`D_NEXT_O_ID`), 2 `ytd` (`D_YTD`), 3 `static` (the rest) |
//! | CUSTOMER | 1 `balance` (`C_BALANCE`, `C_YTD_PAYMENT`, `C_PAYMENT_CNT`, `C_DELIVERY_CNT`, `C_DATA`), 2 `static` |
//! | STOCK | 1 `quantity` (`S_QUANTITY`, `S_YTD`, `S_ORDER_CNT`, `S_REMOTE_CNT`), 2 `static` |
//! | ORDER | 1 `row` (all but the carrier), 2 `carrier` (`O_CARRIER_ID`) |
//! | ORDER-LINE | 1 `row` (all but the delivery date), 2 `delivery` (`OL_DELIVERY_D`) |
//! | the others | the whole row; WAREHOUSE, ITEM and CUSTOMER-BY-NAME are never written |
//!
//! # Conflict units
//!
//! Every district-local table is ordered by the **district** (its conflict key's unit is the
//! district index): NEW-ORDER, ORDER, ORDER-LINE and ORDER-BY-CUSTOMER are read by ranges, and
//! Delivery learns its order and its customer only by reading, yet must declare its keys when it
//! is dispatched (a deferrable piece); CUSTOMER uses the district too, for the same reason. Other
//! tables (STOCK, ITEM, WAREHOUSE, HISTORY) use the row key. Coarse units cost no concurrency
//! here: two NewOrders of a district already conflict on `D_NEXT_O_ID`, two Payments on `D_YTD`.
//!
//! # Pieces (I immediate, D deferrable, ×n one per order line or district)
//!
//! | type | pieces | routed by |
//! |---|---|---|
//! | NewOrder | `item` ×n I: ITEM and STOCK.static (price, `S_DIST_xx`); an unused item id ends the transaction with [`TxError::UserAbort`](txlab_core::TxError::UserAbort) before any writing piece is dispatched | STOCK row (unused item: the home district) |
//! | | `district` I (after the items): DISTRICT.next_o_id read-modify-write, DISTRICT.static, WAREHOUSE, CUSTOMER.static; outputs `o_id` | district |
//! | | `stock` ×n D (after the items): STOCK.quantity | STOCK row |
//! | | `order` D (input `o_id`): ORDER, NEW-ORDER, ORDER-BY-CUSTOMER inserts | district |
//! | | `order_line` ×n D (inputs: its item, `o_id`): ORDER-LINE inserts | district |
//! | Payment | `lookup` I (by last name only): CUSTOMER-BY-NAME; outputs `c_id` | customer's district |
//! | | `district` D: DISTRICT.ytd | district |
//! | | `customer` D: CUSTOMER.balance | customer's district |
//! | | `history` D: HISTORY (reads WAREHOUSE and DISTRICT.static for `H_DATA`) | district |
//! | Delivery | `district` ×districts D: oldest NEW-ORDER delete, ORDER.carrier, ORDER-LINE.delivery, CUSTOMER.balance | district |
//! | OrderStatus (read-only) | `status` D: the customer, its latest order and lines | district |
//! | StockLevel (read-only) | `district` I (`D_NEXT_O_ID`), `order_lines` I (distinct items of the last 20 orders), `stock` ×items D (learnt by [`Pieced::plan_after`]) | district / STOCK row |
//! | WarehouseYtd (read-only) | `district` ×districts D: `D_YTD` | district |
//!
//! `district` is the only immediate writer (Figure 3's `p1`); everything keyed by its output is
//! deferred. The offline checker finds no unreorderable SC-cycle among the read-write types, as
//! the paper states; with the read-only types treated as ordinary ones StockLevel's immediate
//! reads of `D_NEXT_O_ID` and of ORDER-LINE promote NewOrder's `order_line` and the workload is
//! unreorderable (`docs/protocols/rococo.md` has the report).
//!
//! # Output slots ([`PieceValues`])
//!
//! NewOrder: `item` instance `n` → slot `n` (`I_PRICE` little-endian, then `S_DIST_xx`);
//! `district` → [`O_ID`]. Payment: `lookup` → [`C_ID`]. Read-only types output what they read
//! (the read-only protocol compares two rounds): OrderStatus → slot 0; StockLevel:
//! `district` → [`NEXT_O_ID`], `order_lines` → [`ITEMS`], `stock` `n` → `STOCKS + n`;
//! WarehouseYtd: `district` `n` → slot `n`.

mod delivery;
mod new_order;
mod payment;
mod read_only;

#[cfg(test)]
mod tests;

use super::codec::spans;
use super::keys::Keys;
use super::schema::{CustomerRow, DistrictRow, OrderLineRow, OrderRow, StockRow, TpccTables};
use super::{Tpcc, TpccInput, TpccTxn};
use txlab_core::pieces::{
    ColumnGroup, ConflictKey, KeyUnit, PieceProfiles, PieceRef, PieceValues, Pieced, TableLayout,
    TxnProfile,
};
use txlab_core::{Access, Error, TableId, TxOps, TxResult};

/// Column groups (module docs).
pub mod groups {
    use txlab_core::pieces::ColumnGroup;

    /// DISTRICT `D_NEXT_O_ID`.
    pub const DISTRICT_NEXT_O_ID: ColumnGroup = ColumnGroup(1);
    /// DISTRICT `D_YTD`.
    pub const DISTRICT_YTD: ColumnGroup = ColumnGroup(2);
    /// DISTRICT's other columns.
    pub const DISTRICT_STATIC: ColumnGroup = ColumnGroup(3);
    /// CUSTOMER's balance and payment/delivery totals.
    pub const CUSTOMER_BALANCE: ColumnGroup = ColumnGroup(1);
    /// CUSTOMER's other columns.
    pub const CUSTOMER_STATIC: ColumnGroup = ColumnGroup(2);
    /// STOCK's quantity and counters.
    pub const STOCK_QUANTITY: ColumnGroup = ColumnGroup(1);
    /// STOCK's other columns.
    pub const STOCK_STATIC: ColumnGroup = ColumnGroup(2);
    /// ORDER without the carrier.
    pub const ORDER_ROW: ColumnGroup = ColumnGroup(1);
    /// ORDER `O_CARRIER_ID`.
    pub const ORDER_CARRIER: ColumnGroup = ColumnGroup(2);
    /// ORDER-LINE without the delivery date.
    pub const ORDER_LINE_ROW: ColumnGroup = ColumnGroup(1);
    /// ORDER-LINE `OL_DELIVERY_D`.
    pub const ORDER_LINE_DELIVERY: ColumnGroup = ColumnGroup(2);
}

/// Profile indices (in [`PieceProfiles::profiles`] order).
pub mod profile {
    /// NewOrder.
    pub const NEW_ORDER: usize = 0;
    /// Payment.
    pub const PAYMENT: usize = 1;
    /// Delivery.
    pub const DELIVERY: usize = 2;
    /// OrderStatus.
    pub const ORDER_STATUS: usize = 3;
    /// StockLevel.
    pub const STOCK_LEVEL: usize = 4;
    /// WarehouseYtd.
    pub const WAREHOUSE_YTD: usize = 5;
}

/// NewOrder's `o_id` output slot.
pub const O_ID: u16 = 16;
/// Payment's `c_id` output slot.
pub const C_ID: u16 = 0;
/// StockLevel's `D_NEXT_O_ID` output slot.
pub const NEXT_O_ID: u16 = 0;
/// StockLevel's distinct items (little-endian `u32`s) output slot.
pub const ITEMS: u16 = 1;
/// StockLevel's first stock output slot (`STOCKS + n` is `S_QUANTITY` of item `n`).
pub const STOCKS: u16 = 2;

/// The profiles of the six transaction types (module docs), for a database with tables `t`.
pub fn profiles(t: &TpccTables) -> Vec<TxnProfile> {
    vec![
        new_order::profile(t),
        payment::profile(t),
        delivery::profile(t),
        read_only::order_status_profile(t),
        read_only::stock_level_profile(t),
        read_only::warehouse_ytd_profile(t),
    ]
}

/// The layout of every table (module docs).
pub fn layouts(t: &TpccTables, k: &Keys) -> Vec<TableLayout> {
    let grouped = |table,
                   name,
                   fields: &'static [(&'static str, usize)],
                   hot: &[(u8, &'static str, &[&str])],
                   rest: (u8, &'static str)| {
        let mut l = TableLayout::whole(table, name);
        let mut all: Vec<&str> = Vec::new();
        for &(g, group, names) in hot {
            l = l.group(g, group, &spans(fields, names, false));
            all.extend_from_slice(names);
        }
        l.group(rest.0, rest.1, &spans(fields, &all, true))
    };
    let district = KeyUnit::Row;
    vec![
        TableLayout::whole(t.warehouse, "warehouse"),
        grouped(
            t.district,
            "district",
            DistrictRow::FIELDS,
            &[(1, "next_o_id", &["d_next_o_id"]), (2, "ytd", &["d_ytd"])],
            (3, "static"),
        )
        .unit(district),
        grouped(
            t.customer,
            "customer",
            CustomerRow::FIELDS,
            &[(
                1,
                "balance",
                &[
                    "c_balance",
                    "c_ytd_payment",
                    "c_payment_cnt",
                    "c_delivery_cnt",
                    "c_data",
                ],
            )],
            (2, "static"),
        )
        .unit(KeyUnit::Div(u64::from(k.customers))),
        TableLayout::whole(t.history, "history"),
        TableLayout::whole(t.new_order, "new_order").unit(KeyUnit::Shift(32)),
        grouped(
            t.order,
            "order",
            OrderRow::FIELDS,
            &[(2, "carrier", &["o_carrier_id"])],
            (1, "row"),
        )
        .unit(KeyUnit::Shift(32)),
        grouped(
            t.order_line,
            "order_line",
            OrderLineRow::FIELDS,
            &[(2, "delivery", &["ol_delivery_d"])],
            (1, "row"),
        )
        .unit(KeyUnit::Shift(36)),
        TableLayout::whole(t.item, "item"),
        grouped(
            t.stock,
            "stock",
            StockRow::FIELDS,
            &[(
                1,
                "quantity",
                &["s_quantity", "s_ytd", "s_order_cnt", "s_remote_cnt"],
            )],
            (2, "static"),
        ),
        TableLayout::whole(t.customer_by_name, "customer_by_name").unit(KeyUnit::Shift(27)),
        TableLayout::whole(t.order_by_customer, "order_by_customer").unit(KeyUnit::Shift(44)),
    ]
}

impl PieceProfiles for Tpcc {
    fn profiles(&self) -> Vec<TxnProfile> {
        profiles(self.tables())
    }

    fn table_layouts(&self) -> Vec<TableLayout> {
        layouts(self.tables(), &self.keys())
    }

    /// The scaled variant (the only one with pieces), with at most [`MAX_PIECED_DISTRICTS`]
    /// districts per warehouse (Delivery and WarehouseYtd have one piece per district).
    fn check_pieced(&self) -> Result<(), Error> {
        let cfg = self.config();
        if !cfg.scaled {
            return Err(Error::invalid(
                "scaled",
                false,
                "true: TPC-C's pieces are defined for ROCOCO's scaled variant (no W_YTD, \
                 WAREHOUSE replicated and never written)",
            ));
        }
        if cfg.districts_per_warehouse > MAX_PIECED_DISTRICTS {
            return Err(Error::invalid(
                "districts_per_warehouse",
                cfg.districts_per_warehouse,
                format!("at most {MAX_PIECED_DISTRICTS} to run as pieces (one per district)"),
            ));
        }
        Ok(())
    }
}

/// The most districts per warehouse a pieced TPC-C may have.
pub const MAX_PIECED_DISTRICTS: u32 = u16::MAX as u32 + 1;

/// Appends `(ConflictKey(table, group, unit), access)`.
fn key(
    out: &mut Vec<(ConflictKey, Access)>,
    table: TableId,
    group: ColumnGroup,
    unit: u64,
    access: Access,
) {
    out.push((ConflictKey::new(table, group, unit), access));
}

impl Pieced for TpccTxn {
    fn profile(&self) -> usize {
        match &self.input {
            TpccInput::NewOrder(_) => profile::NEW_ORDER,
            TpccInput::Payment(_) => profile::PAYMENT,
            TpccInput::Delivery(_) => profile::DELIVERY,
            TpccInput::OrderStatus(_) => profile::ORDER_STATUS,
            TpccInput::StockLevel(_) => profile::STOCK_LEVEL,
            TpccInput::WarehouseYtd(_) => profile::WAREHOUSE_YTD,
        }
    }

    fn plan(&self, out: &mut Vec<PieceRef>) {
        let ctx = &self.ctx;
        match &self.input {
            TpccInput::NewOrder(i) => new_order::plan(ctx, i, out),
            TpccInput::Payment(i) => payment::plan(ctx, i, out),
            TpccInput::Delivery(i) => delivery::plan(ctx, i, out),
            TpccInput::OrderStatus(i) => read_only::order_status_plan(ctx, i, out),
            TpccInput::StockLevel(i) => read_only::stock_level_plan(ctx, i, out),
            TpccInput::WarehouseYtd(i) => read_only::warehouse_ytd_plan(ctx, i, out),
        }
    }

    fn plan_after(&self, done: PieceRef, outputs: &PieceValues, out: &mut Vec<PieceRef>) {
        if let TpccInput::StockLevel(i) = &self.input {
            read_only::stock_level_plan_after(&self.ctx, i, done, outputs, out);
        }
    }

    fn conflict_keys(
        &self,
        p: PieceRef,
        inputs: &PieceValues,
        out: &mut Vec<(ConflictKey, Access)>,
    ) {
        let ctx = &self.ctx;
        match &self.input {
            TpccInput::NewOrder(i) => new_order::conflict_keys(ctx, i, p, out),
            TpccInput::Payment(i) => payment::conflict_keys(ctx, i, p, out),
            TpccInput::Delivery(i) => delivery::conflict_keys(ctx, i, p, out),
            TpccInput::OrderStatus(i) => read_only::order_status_keys(ctx, i, out),
            TpccInput::StockLevel(i) => read_only::stock_level_keys(ctx, i, p, inputs, out),
            TpccInput::WarehouseYtd(i) => read_only::warehouse_ytd_keys(ctx, i, p, out),
        }
    }

    fn run_piece<T: TxOps + ?Sized>(
        &self,
        p: PieceRef,
        inputs: &PieceValues,
        tx: &mut T,
        out: &mut PieceValues,
    ) -> TxResult<()> {
        let ctx = &self.ctx;
        match &self.input {
            TpccInput::NewOrder(i) => new_order::run(ctx, i, p, inputs, tx, out),
            TpccInput::Payment(i) => payment::run(ctx, i, p, inputs, tx, out),
            TpccInput::Delivery(i) => delivery::run(ctx, i, p, tx),
            TpccInput::OrderStatus(i) => read_only::order_status_run(ctx, i, tx, out),
            TpccInput::StockLevel(i) => read_only::stock_level_run(ctx, i, p, inputs, tx, out),
            TpccInput::WarehouseYtd(i) => read_only::warehouse_ytd_run(ctx, i, p, tx, out),
        }
    }
}

/// One instance of piece `piece` per district of warehouse `w`: instance `d - 1`, routed by the
/// district (Delivery, WarehouseYtd). At most [`MAX_PIECED_DISTRICTS`] districts
/// ([`PieceProfiles::check_pieced`]), so instances fit in a `u16`.
fn per_district(ctx: &super::TpccContext, w: u32, piece: u16, out: &mut Vec<PieceRef>) {
    let (t, k) = (ctx.tables, ctx.keys);
    for (n, d) in (0..=u16::MAX).zip(1..=k.districts) {
        out.push(PieceRef::new(piece, n, t.district, k.district_index(w, d)));
    }
}

/// The district (1-based) of a [`per_district`] instance of piece 0, if there is one.
fn district_of(ctx: &super::TpccContext, p: PieceRef) -> Option<u32> {
    let d = u32::from(p.instance) + 1;
    (p.piece == 0 && d <= ctx.keys.districts).then_some(d)
}

/// The error for a piece index the transaction type does not have.
fn no_such_piece(txn: &str, p: PieceRef) -> txlab_core::TxError {
    txlab_core::TxError::Error(txlab_core::Error::invalid(
        "piece",
        p.piece,
        format!("a piece of tpcc {txn} (see tpcc::pieces::profiles)"),
    ))
}
