//! The TPC-C transaction program ([`TpccTxn`]): one of the five transaction types (or the scaled
//! variant's read-only [`WarehouseYtd`](TpccKind::WarehouseYtd) query) with its inputs, run
//! against any [`TxOps`], plus the row-access helpers they share.
//!
//! Missing rows are handled in two ways:
//!
//! - rows that only the population creates (warehouse, district, customer, item, stock, the name
//!   index) must exist: a missing one is [`Error::Invariant`] naming the table and key, never a
//!   panic. The only expected absence is NewOrder's unused item id, which rolls the transaction
//!   back with [`TxError::UserAbort`] (clause 2.4.2.3);
//! - for rows that transactions insert and delete (order, new-order, order-line), an observation
//!   no serializable execution can produce (a fresh order id whose key is already present, an
//!   order the new-order scan found but that reads absent, a new-order that vanished between scan
//!   and delete) means an optimistic engine let the transaction see an inconsistent state that
//!   its commit validation would reject (Silo, for one, does not guarantee opacity). The program
//!   then stops with a retryable [`inconsistent`] conflict
//!   (`ConflictCause::InconsistentRead`) instead of an error.

use super::delivery::{self, DeliveryInput};
use super::keys::Keys;
use super::new_order::{self, NewOrderInput};
use super::order_status::{self, OrderStatusInput};
use super::payment::{self, PaymentInput};
use super::schema::{ScaledWarehouseRow, TpccTables, WarehouseRow};
use super::stock_level::{self, StockLevelInput};
use super::warehouse_ytd::{self, WarehouseYtdInput};
use txlab_core::{
    AccessSet, Conflict, ConflictCause, Error, Program, TableId, TxError, TxOps, TxResult,
};

/// What every transaction needs to know about the database (cheap to copy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TpccContext {
    /// Table ids.
    pub tables: TpccTables,
    /// Key packing.
    pub keys: Keys,
    /// Number of warehouses.
    pub warehouses: u32,
    /// ROCOCO's scaled variant (no `W_YTD` column; see [`warehouse_ytd`]).
    pub scaled: bool,
}

/// The five transaction types, and the scaled variant's read-only warehouse total.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TpccKind {
    /// Clause 2.4.
    NewOrder,
    /// Clause 2.5.
    Payment,
    /// Clause 2.6.
    OrderStatus,
    /// Clause 2.7.
    Delivery,
    /// Clause 2.8.
    StockLevel,
    /// The read-only sum of a warehouse's `D_YTD` that replaces `W_YTD` in ROCOCO's scaled
    /// variant ([`warehouse_ytd`]). Not part of any mix (no generator issues it).
    WarehouseYtd,
}

impl TpccKind {
    /// The five kinds of the mix, in the order of [`TpccMix::weights`](super::TpccMix::weights)
    /// ([`TpccKind::WarehouseYtd`] is not among them).
    pub const ALL: [TpccKind; 5] = [
        TpccKind::NewOrder,
        TpccKind::Payment,
        TpccKind::OrderStatus,
        TpccKind::Delivery,
        TpccKind::StockLevel,
    ];

    /// Whether transactions of this kind never write: OrderStatus, StockLevel and WarehouseYtd.
    pub fn read_only(self) -> bool {
        matches!(
            self,
            TpccKind::OrderStatus | TpccKind::StockLevel | TpccKind::WarehouseYtd
        )
    }

    /// A short, stable name (per-type statistics).
    pub fn name(self) -> &'static str {
        match self {
            TpccKind::NewOrder => "new_order",
            TpccKind::Payment => "payment",
            TpccKind::OrderStatus => "order_status",
            TpccKind::Delivery => "delivery",
            TpccKind::StockLevel => "stock_level",
            TpccKind::WarehouseYtd => "warehouse_ytd",
        }
    }
}

/// A transaction's inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TpccInput {
    /// NewOrder.
    NewOrder(NewOrderInput),
    /// Payment.
    Payment(PaymentInput),
    /// OrderStatus.
    OrderStatus(OrderStatusInput),
    /// Delivery.
    Delivery(DeliveryInput),
    /// StockLevel.
    StockLevel(StockLevelInput),
    /// The read-only warehouse total (scaled variant's replacement for reading `W_YTD`).
    WarehouseYtd(WarehouseYtdInput),
}

/// How Payment and OrderStatus select their customer (clause 2.5.1.2, 2.6.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CustomerSelector {
    /// By `C_ID` (40 %).
    Id(u32),
    /// By last-name number `0..=999` (60 %): the customer at position `ceil(n / 2)` of the `n`
    /// customers with that last name in the district, sorted by `C_FIRST`.
    LastName(u32),
}

/// A TPC-C transaction with its inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TpccTxn {
    pub(super) ctx: TpccContext,
    pub(super) input: TpccInput,
}

impl TpccTxn {
    /// A transaction with explicit inputs (generators build them; tests may too).
    pub fn new(ctx: TpccContext, input: TpccInput) -> Self {
        TpccTxn { ctx, input }
    }

    /// The transaction type.
    pub fn txn_kind(&self) -> TpccKind {
        match self.input {
            TpccInput::NewOrder(_) => TpccKind::NewOrder,
            TpccInput::Payment(_) => TpccKind::Payment,
            TpccInput::OrderStatus(_) => TpccKind::OrderStatus,
            TpccInput::Delivery(_) => TpccKind::Delivery,
            TpccInput::StockLevel(_) => TpccKind::StockLevel,
            TpccInput::WarehouseYtd(_) => TpccKind::WarehouseYtd,
        }
    }

    /// The inputs.
    pub fn input(&self) -> &TpccInput {
        &self.input
    }
}

impl Program for TpccTxn {
    type Output = ();

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<()> {
        match &self.input {
            TpccInput::NewOrder(i) => new_order::run(&self.ctx, i, tx).map(|_| ()),
            TpccInput::Payment(i) => payment::run(&self.ctx, i, tx),
            TpccInput::OrderStatus(i) => order_status::run(&self.ctx, i, tx).map(|_| ()),
            TpccInput::Delivery(i) => delivery::run(&self.ctx, i, tx).map(|_| ()),
            TpccInput::StockLevel(i) => stock_level::run(&self.ctx, i, tx).map(|_| ()),
            TpccInput::WarehouseYtd(i) => warehouse_ytd::run(&self.ctx, i, tx).map(|_| ()),
        }
    }

    fn declare(&self, out: &mut AccessSet) {
        match &self.input {
            TpccInput::NewOrder(i) => new_order::declare(&self.ctx, i, out),
            TpccInput::Payment(i) => payment::declare(&self.ctx, i, out),
            TpccInput::OrderStatus(i) => order_status::declare(&self.ctx, i, out),
            TpccInput::Delivery(i) => delivery::declare(&self.ctx, i, out),
            TpccInput::StockLevel(i) => stock_level::declare(&self.ctx, i, out),
            TpccInput::WarehouseYtd(i) => warehouse_ytd::declare(&self.ctx, i, out),
        }
    }

    fn kind(&self) -> &'static str {
        self.txn_kind().name()
    }

    fn read_only(&self) -> bool {
        self.txn_kind().read_only()
    }
}

/// The error for a row that must exist but does not.
pub fn missing(table: TableId, what: &str, key: u64) -> TxError {
    TxError::Error(Error::Invariant(format!(
        "tpcc: {what} row (table {}, key {key:#x}) is absent (was the workload loaded?)",
        table.0
    )))
}

/// The retryable conflict for an observation only an inconsistent snapshot can produce (module
/// docs).
pub fn inconsistent(table: TableId, key: u64) -> TxError {
    TxError::Conflict(Conflict::at(ConflictCause::InconsistentRead, table, key))
}

/// Reads and decodes a row that a transaction inserted and whose presence the caller inferred
/// from another read: absence is an [`inconsistent`] conflict.
pub fn read_inserted_row_for_update<T, R>(
    tx: &mut T,
    table: TableId,
    key: u64,
    decode: fn(&[u8]) -> Result<R, Error>,
) -> TxResult<R>
where
    T: TxOps + ?Sized,
{
    match tx.read_for_update(table, key)? {
        Some(bytes) => Ok(decode(bytes)?),
        None => Err(inconsistent(table, key)),
    }
}

/// Reads and decodes a row that must exist.
pub fn read_row<T, R>(
    tx: &mut T,
    table: TableId,
    key: u64,
    what: &str,
    decode: fn(&[u8]) -> Result<R, Error>,
) -> TxResult<R>
where
    T: TxOps + ?Sized,
{
    match tx.read(table, key)? {
        Some(bytes) => Ok(decode(bytes)?),
        None => Err(missing(table, what, key)),
    }
}

/// Reads (for update) and decodes a row that must exist.
pub fn read_row_for_update<T, R>(
    tx: &mut T,
    table: TableId,
    key: u64,
    what: &str,
    decode: fn(&[u8]) -> Result<R, Error>,
) -> TxResult<R>
where
    T: TxOps + ?Sized,
{
    match tx.read_for_update(table, key)? {
        Some(bytes) => Ok(decode(bytes)?),
        None => Err(missing(table, what, key)),
    }
}

/// Reads WAREHOUSE `w` (read only) and returns the columns both layouts share: the scaled
/// variant stores [`ScaledWarehouseRow`], the standard one [`WarehouseRow`], whose `W_YTD` is
/// dropped here. NewOrder (`W_TAX`) and the scaled Payment (`W_NAME`, address) use it.
pub fn read_warehouse<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    tx: &mut T,
    w: u32,
) -> TxResult<ScaledWarehouseRow> {
    let decode: fn(&[u8]) -> Result<ScaledWarehouseRow, Error> = if ctx.scaled {
        ScaledWarehouseRow::decode
    } else {
        |bytes| WarehouseRow::decode(bytes).map(ScaledWarehouseRow::from)
    };
    read_row(
        tx,
        ctx.tables.warehouse,
        ctx.keys.warehouse(w),
        "warehouse",
        decode,
    )
}

/// Finds the customer selected by last name (clause 2.5.2.2): scans the district's entries for
/// `name`, sorts them by `C_FIRST` and returns the `C_ID` at position `ceil(n / 2)` (1-based).
pub fn customer_by_last_name<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    tx: &mut T,
    w: u32,
    d: u32,
    name: u32,
) -> TxResult<u32> {
    let (lo, hi) = ctx.keys.customers_named(w, d, name);
    let mut found: Vec<([u8; 16], u32)> = Vec::with_capacity(8);
    let mut bad = None;
    tx.scan(ctx.tables.customer_by_name, lo, hi, &mut |key, value| {
        match super::schema::CustomerNameRow::decode(value) {
            Ok(row) => found.push((row.c_first, Keys::customer_of_name_key(key))),
            Err(e) => bad = Some(e),
        }
        true
    })?;
    if let Some(e) = bad {
        return Err(e.into());
    }
    if found.is_empty() {
        return Err(TxError::Error(Error::Invariant(format!(
            "tpcc: no customer of warehouse {w} district {d} has last-name number {name}"
        ))));
    }
    found.sort_unstable();
    Ok(found[(found.len() - 1) / 2].1)
}

/// Resolves a [`CustomerSelector`].
pub fn select_customer<T: TxOps + ?Sized>(
    ctx: &TpccContext,
    tx: &mut T,
    w: u32,
    d: u32,
    sel: CustomerSelector,
) -> TxResult<u32> {
    match sel {
        CustomerSelector::Id(c) => Ok(c),
        CustomerSelector::LastName(n) => customer_by_last_name(ctx, tx, w, d, n),
    }
}
