//! The TPC-C tables (clause 1.3) as fixed-size rows, and the schema built from a configuration.
//!
//! Representation choices (the specification leaves them to the implementation, clause 1.3.1):
//!
//! - money (`*_YTD`, `*_BALANCE`, `*_AMOUNT`, `*_PRICE`, `C_CREDIT_LIM`) is an `i64` number of
//!   cents; rates (`W_TAX`, `D_TAX`, `C_DISCOUNT`, signed numeric(4,4)) are `i32` ten-thousandths;
//! - dates are `u64` logical timestamps supplied by the generator; `0` encodes a null date and a
//!   null `O_CARRIER_ID` (carriers are 1..=10);
//! - CHAR/VARCHAR(n) columns are NUL-padded `[u8; n]` ([`codec::text`](super::codec::text)).
//!
//! Besides the nine tables there are two secondary indexes, kept as ordered tables maintained by
//! the transactions in the same transaction as the base rows:
//!
//! - `customer_by_name` ([`CustomerNameRow`]): `(w, d, last-name number, c_id) -> c_first`, loaded
//!   once (names never change) and scanned by Payment and OrderStatus (clause 2.5.2.2, 2.6.2.2);
//! - `order_by_customer` ([`CustomerOrderRow`]): `(w, d, c_id, o_id)`, inserted by NewOrder and
//!   scanned by OrderStatus to find the customer's latest order (clause 2.6.2.2: "the row in the
//!   ORDER table with matching O_W_ID, O_D_ID, O_C_ID and with the largest existing O_ID").
//!
//! Index kinds: dense where the key space is dense and fixed (warehouse, district, customer, item,
//! stock), ordered where TPC-C inserts or scans. Key layouts are in [`keys`](super::keys).
//!
//! Phantom stripes: every scan TPC-C runs stays inside one district, so the ordered tables it
//! scans or inserts into (NEW-ORDER, ORDER, ORDER-LINE and both secondary indexes) group their
//! keys onto phantom stripes by district ([`StripeLayout::partitioned`] on the bits of `dx`): a
//! district has stripes of its own, and an insert or delete in one district never changes the
//! stripes a scan of another read (up to [`StripeLayout::MAX_STRIPES`] districts, beyond which
//! districts share stripes modulo that count: false conflicts only). ORDER-BY-CUSTOMER also hashes
//! customers onto 8 stripes per district (OrderStatus scans one customer's orders while NewOrder
//! inserts another's). HISTORY is never scanned by the transactions and keeps the default layout.

use super::codec::tpcc_row;
use super::config::TpccConfig;
use super::keys::{
    CUSTOMER_NAME_DISTRICT_SHIFT, CUSTOMER_ORDER_CUSTOMER_SHIFT, CUSTOMER_ORDER_DISTRICT_SHIFT,
    Keys, ORDER_DISTRICT_SHIFT, ORDER_LINE_DISTRICT_SHIFT,
};
use txlab_core::protocol::storage::StripeLayout;
use txlab_core::{Error, Schema, TableId, TableSpec};

tpcc_row! {
    /// WAREHOUSE (clause 1.3.1) of the standard schema. The scaled variant stores
    /// [`ScaledWarehouseRow`] instead (no `W_YTD` column).
    pub struct WarehouseRow {
        pub w_id: u32,
        pub w_name: [u8; 10],
        pub w_street_1: [u8; 20],
        pub w_street_2: [u8; 20],
        pub w_city: [u8; 20],
        pub w_state: [u8; 2],
        pub w_zip: [u8; 9],
        /// Ten-thousandths, 0..=2000.
        pub w_tax: i32,
        /// Cents.
        pub w_ytd: i64,
    }
}

tpcc_row! {
    /// WAREHOUSE of ROCOCO's scaled variant (OSDI 2014, §5 "Scaled TPC-C", which drops
    /// `W_YTD`): the columns of [`WarehouseRow`] without `W_YTD`. The warehouse's year-to-date
    /// total is the read-only sum of its districts' `D_YTD` ([`warehouse_ytd`](super::warehouse_ytd)).
    ///
    /// It is also what [`read_warehouse`](super::txn::read_warehouse) returns in both variants:
    /// the columns NewOrder (`W_TAX`) and Payment (`W_NAME` and the address) read.
    pub struct ScaledWarehouseRow {
        pub w_id: u32,
        pub w_name: [u8; 10],
        pub w_street_1: [u8; 20],
        pub w_street_2: [u8; 20],
        pub w_city: [u8; 20],
        pub w_state: [u8; 2],
        pub w_zip: [u8; 9],
        /// Ten-thousandths, 0..=2000.
        pub w_tax: i32,
    }
}

impl From<WarehouseRow> for ScaledWarehouseRow {
    /// Drops `W_YTD`.
    fn from(w: WarehouseRow) -> Self {
        ScaledWarehouseRow {
            w_id: w.w_id,
            w_name: w.w_name,
            w_street_1: w.w_street_1,
            w_street_2: w.w_street_2,
            w_city: w.w_city,
            w_state: w.w_state,
            w_zip: w.w_zip,
            w_tax: w.w_tax,
        }
    }
}

/// The value size of the WAREHOUSE table: [`ScaledWarehouseRow::SIZE`] in the scaled variant,
/// [`WarehouseRow::SIZE`] otherwise.
pub fn warehouse_row_size(scaled: bool) -> usize {
    if scaled {
        ScaledWarehouseRow::SIZE
    } else {
        WarehouseRow::SIZE
    }
}

tpcc_row! {
    /// DISTRICT (clause 1.3.1).
    pub struct DistrictRow {
        pub d_id: u32,
        pub d_w_id: u32,
        pub d_name: [u8; 10],
        pub d_street_1: [u8; 20],
        pub d_street_2: [u8; 20],
        pub d_city: [u8; 20],
        pub d_state: [u8; 2],
        pub d_zip: [u8; 9],
        /// Ten-thousandths, 0..=2000.
        pub d_tax: i32,
        /// Cents.
        pub d_ytd: i64,
        pub d_next_o_id: u32,
    }
}

tpcc_row! {
    /// CUSTOMER (clause 1.3.1).
    pub struct CustomerRow {
        pub c_id: u32,
        pub c_d_id: u32,
        pub c_w_id: u32,
        pub c_first: [u8; 16],
        pub c_middle: [u8; 2],
        pub c_last: [u8; 16],
        pub c_street_1: [u8; 20],
        pub c_street_2: [u8; 20],
        pub c_city: [u8; 20],
        pub c_state: [u8; 2],
        pub c_zip: [u8; 9],
        pub c_phone: [u8; 16],
        pub c_since: u64,
        /// `GC` or `BC`.
        pub c_credit: [u8; 2],
        /// Cents.
        pub c_credit_lim: i64,
        /// Ten-thousandths, 0..=5000.
        pub c_discount: i32,
        /// Cents.
        pub c_balance: i64,
        /// Cents.
        pub c_ytd_payment: i64,
        pub c_payment_cnt: u32,
        pub c_delivery_cnt: u32,
        pub c_data: [u8; 500],
    }
}

tpcc_row! {
    /// HISTORY (clause 1.3.1).
    pub struct HistoryRow {
        pub h_c_id: u32,
        pub h_c_d_id: u32,
        pub h_c_w_id: u32,
        pub h_d_id: u32,
        pub h_w_id: u32,
        pub h_date: u64,
        /// Cents.
        pub h_amount: i64,
        pub h_data: [u8; 24],
    }
}

tpcc_row! {
    /// NEW-ORDER (clause 1.3.1).
    pub struct NewOrderRow {
        pub no_o_id: u32,
        pub no_d_id: u32,
        pub no_w_id: u32,
    }
}

tpcc_row! {
    /// ORDER (clause 1.3.1). `o_carrier_id == 0` is null.
    pub struct OrderRow {
        pub o_id: u32,
        pub o_d_id: u32,
        pub o_w_id: u32,
        pub o_c_id: u32,
        pub o_entry_d: u64,
        pub o_carrier_id: u8,
        pub o_ol_cnt: u8,
        pub o_all_local: u8,
    }
}

tpcc_row! {
    /// ORDER-LINE (clause 1.3.1). `ol_delivery_d == 0` is null.
    pub struct OrderLineRow {
        pub ol_o_id: u32,
        pub ol_d_id: u32,
        pub ol_w_id: u32,
        pub ol_number: u8,
        pub ol_i_id: u32,
        pub ol_supply_w_id: u32,
        pub ol_delivery_d: u64,
        pub ol_quantity: u8,
        /// Cents.
        pub ol_amount: i64,
        pub ol_dist_info: [u8; 24],
    }
}

tpcc_row! {
    /// ITEM (clause 1.3.1).
    pub struct ItemRow {
        pub i_id: u32,
        pub i_im_id: u32,
        pub i_name: [u8; 24],
        /// Cents.
        pub i_price: i64,
        pub i_data: [u8; 50],
    }
}

tpcc_row! {
    /// STOCK (clause 1.3.1). District `d` uses `s_dist[(d - 1) % 10]` (the scaled variant has
    /// more than 10 districts; see [`StockRow::dist`]).
    pub struct StockRow {
        pub s_i_id: u32,
        pub s_w_id: u32,
        pub s_quantity: i32,
        pub s_dist_01: [u8; 24],
        pub s_dist_02: [u8; 24],
        pub s_dist_03: [u8; 24],
        pub s_dist_04: [u8; 24],
        pub s_dist_05: [u8; 24],
        pub s_dist_06: [u8; 24],
        pub s_dist_07: [u8; 24],
        pub s_dist_08: [u8; 24],
        pub s_dist_09: [u8; 24],
        pub s_dist_10: [u8; 24],
        pub s_ytd: i64,
        pub s_order_cnt: u32,
        pub s_remote_cnt: u32,
        pub s_data: [u8; 50],
    }
}

impl StockRow {
    /// `S_DIST_xx` for district `d` (1-based; wraps modulo 10 beyond 10 districts).
    pub fn dist(&self, d: u32) -> &[u8; 24] {
        match (d.max(1) - 1) % 10 {
            0 => &self.s_dist_01,
            1 => &self.s_dist_02,
            2 => &self.s_dist_03,
            3 => &self.s_dist_04,
            4 => &self.s_dist_05,
            5 => &self.s_dist_06,
            6 => &self.s_dist_07,
            7 => &self.s_dist_08,
            8 => &self.s_dist_09,
            _ => &self.s_dist_10,
        }
    }
}

tpcc_row! {
    /// A CUSTOMER-BY-LAST-NAME entry: the key carries `(w, d, name, c_id)`, the value `c_first`
    /// (so the sort by first name of clause 2.5.2.2 needs no customer reads).
    pub struct CustomerNameRow {
        pub c_first: [u8; 16],
        pub c_id: u32,
    }
}

tpcc_row! {
    /// An ORDER-BY-CUSTOMER entry (the key carries everything; the value repeats `o_id`).
    pub struct CustomerOrderRow {
        pub o_id: u32,
    }
}

/// The table ids of a TPC-C database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TpccTables {
    /// WAREHOUSE (dense).
    pub warehouse: TableId,
    /// DISTRICT (dense).
    pub district: TableId,
    /// CUSTOMER (dense).
    pub customer: TableId,
    /// HISTORY (ordered).
    pub history: TableId,
    /// NEW-ORDER (ordered).
    pub new_order: TableId,
    /// ORDER (ordered).
    pub order: TableId,
    /// ORDER-LINE (ordered).
    pub order_line: TableId,
    /// ITEM (dense, one spare key for the unused item id).
    pub item: TableId,
    /// STOCK (dense).
    pub stock: TableId,
    /// Secondary index CUSTOMER-BY-LAST-NAME (ordered).
    pub customer_by_name: TableId,
    /// Secondary index ORDER-BY-CUSTOMER (ordered).
    pub order_by_customer: TableId,
}

impl TpccTables {
    /// Number of TPC-C tables.
    pub const COUNT: usize = 11;
}

/// The key packing of a configuration.
pub fn keys_of(cfg: &TpccConfig) -> Keys {
    Keys {
        districts: cfg.districts_per_warehouse,
        customers: cfg.customers_per_district,
        items: cfg.items,
    }
}

/// Builds the schema of a validated configuration.
pub fn build(cfg: &TpccConfig) -> Result<(Schema, TpccTables), Error> {
    cfg.validate()?;
    let w = u64::from(cfg.warehouses);
    let districts = w * u64::from(cfg.districts_per_warehouse);
    // One partition per district (`dx` starts at bit `shift`), `per_district` stripes each over
    // buckets of `2^bucket_shift` keys.
    let by_district = |shift: u32, bucket_shift: u32, per_district: u32| {
        let partitions = districts.min(u64::from(StripeLayout::MAX_STRIPES / per_district)) as u32;
        StripeLayout::partitioned(shift, partitions).with_buckets(bucket_shift, per_district)
    };
    let mut s = Schema::new();
    let tables = TpccTables {
        warehouse: s.add(TableSpec::dense(
            "warehouse",
            warehouse_row_size(cfg.scaled),
            w,
        ))?,
        district: s.add(TableSpec::dense("district", DistrictRow::SIZE, districts))?,
        customer: s.add(TableSpec::dense(
            "customer",
            CustomerRow::SIZE,
            districts * u64::from(cfg.customers_per_district),
        ))?,
        history: s.add(TableSpec::ordered("history", HistoryRow::SIZE))?,
        new_order: s.add(
            TableSpec::ordered("new_order", NewOrderRow::SIZE).with_stripes(by_district(
                ORDER_DISTRICT_SHIFT,
                0,
                1,
            )),
        )?,
        order: s.add(
            TableSpec::ordered("order", OrderRow::SIZE).with_stripes(by_district(
                ORDER_DISTRICT_SHIFT,
                0,
                1,
            )),
        )?,
        order_line: s.add(
            TableSpec::ordered("order_line", OrderLineRow::SIZE).with_stripes(by_district(
                ORDER_LINE_DISTRICT_SHIFT,
                0,
                1,
            )),
        )?,
        item: s.add(TableSpec::dense(
            "item",
            ItemRow::SIZE,
            u64::from(cfg.items) + 1,
        ))?,
        stock: s.add(TableSpec::dense(
            "stock",
            StockRow::SIZE,
            w * u64::from(cfg.items),
        ))?,
        customer_by_name: s.add(
            TableSpec::ordered("customer_by_name", CustomerNameRow::SIZE)
                .with_stripes(by_district(CUSTOMER_NAME_DISTRICT_SHIFT, 0, 1)),
        )?,
        order_by_customer: s.add(
            TableSpec::ordered("order_by_customer", CustomerOrderRow::SIZE).with_stripes(
                by_district(
                    CUSTOMER_ORDER_DISTRICT_SHIFT,
                    CUSTOMER_ORDER_CUSTOMER_SHIFT,
                    8,
                ),
            ),
        )?,
    };
    Ok((s, tables))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::codec::text;

    fn round_trip<T: std::fmt::Debug + PartialEq>(
        row: &T,
        size: usize,
        enc: impl Fn(&T, &mut [u8]),
        dec: impl Fn(&[u8]) -> Result<T, Error>,
    ) {
        let mut buf = vec![0u8; size];
        enc(row, &mut buf);
        assert_eq!(&dec(&buf).unwrap(), row);
        let e = dec(&buf[..size - 1]).unwrap_err().to_string();
        assert!(e.contains(&format!("{size} bytes")), "{e}");
    }

    #[test]
    fn row_codecs_round_trip_and_reject_wrong_sizes() {
        let c = CustomerRow {
            c_id: 3000,
            c_d_id: 10,
            c_w_id: 7,
            c_first: text(b"abcdefgh"),
            c_middle: *b"OE",
            c_last: text(b"BARBARBAR"),
            c_street_1: text(b"s1"),
            c_street_2: text(b"s2"),
            c_city: text(b"city"),
            c_state: *b"CA",
            c_zip: *b"123411111",
            c_phone: text(b"0123456789012345"),
            c_since: u64::MAX - 1,
            c_credit: *b"BC",
            c_credit_lim: 5_000_000,
            c_discount: 4999,
            c_balance: -1000,
            c_ytd_payment: 1000,
            c_payment_cnt: 1,
            c_delivery_cnt: 0,
            c_data: [b'x'; 500],
        };
        round_trip(
            &c,
            CustomerRow::SIZE,
            CustomerRow::encode,
            CustomerRow::decode,
        );
        assert_eq!(
            CustomerRow::SIZE,
            4 * 3 + 16 + 2 + 16 + 60 + 2 + 9 + 16 + 8 + 2 + 8 + 4 + 16 + 8 + 500
        );
        let o = OrderLineRow {
            ol_o_id: 1 << 26,
            ol_d_id: 3,
            ol_w_id: 2,
            ol_number: 15,
            ol_i_id: 99_999,
            ol_supply_w_id: 1,
            ol_delivery_d: 0,
            ol_quantity: 5,
            ol_amount: 999_999,
            ol_dist_info: [b'd'; 24],
        };
        round_trip(
            &o,
            OrderLineRow::SIZE,
            OrderLineRow::encode,
            OrderLineRow::decode,
        );
        let mut s = StockRow {
            s_i_id: 1,
            s_w_id: 1,
            s_quantity: -3,
            s_dist_01: [1; 24],
            s_dist_02: [2; 24],
            s_dist_03: [3; 24],
            s_dist_04: [4; 24],
            s_dist_05: [5; 24],
            s_dist_06: [6; 24],
            s_dist_07: [7; 24],
            s_dist_08: [8; 24],
            s_dist_09: [9; 24],
            s_dist_10: [10; 24],
            s_ytd: 12,
            s_order_cnt: 3,
            s_remote_cnt: 2,
            s_data: [b'o'; 50],
        };
        round_trip(&s, StockRow::SIZE, StockRow::encode, StockRow::decode);
        assert_eq!(s.dist(1)[0], 1);
        assert_eq!(s.dist(10)[0], 10);
        assert_eq!(s.dist(13)[0], 3, "districts beyond 10 wrap");
        s.s_quantity = 91;
        round_trip(&s, StockRow::SIZE, StockRow::encode, StockRow::decode);
        let d = DistrictRow {
            d_id: 1000,
            d_w_id: 1,
            d_name: text(b"n"),
            d_street_1: text(b""),
            d_street_2: text(b""),
            d_city: text(b""),
            d_state: *b"NY",
            d_zip: *b"000011111",
            d_tax: 2000,
            d_ytd: 3_000_000,
            d_next_o_id: 3001,
        };
        round_trip(
            &d,
            DistrictRow::SIZE,
            DistrictRow::encode,
            DistrictRow::decode,
        );
        let w = WarehouseRow {
            w_id: 7,
            w_name: text(b"wname"),
            w_street_1: text(b"a"),
            w_street_2: text(b"b"),
            w_city: text(b"c"),
            w_state: *b"CA",
            w_zip: *b"123411111",
            w_tax: 1234,
            w_ytd: 30_000_000,
        };
        round_trip(
            &w,
            WarehouseRow::SIZE,
            WarehouseRow::encode,
            WarehouseRow::decode,
        );
        let sw = ScaledWarehouseRow::from(w.clone());
        assert_eq!((sw.w_id, sw.w_name, sw.w_tax), (7, w.w_name, 1234));
        round_trip(
            &sw,
            ScaledWarehouseRow::SIZE,
            ScaledWarehouseRow::encode,
            ScaledWarehouseRow::decode,
        );
        // The scaled row is the standard one without the 8-byte W_YTD.
        assert_eq!(ScaledWarehouseRow::SIZE + 8, WarehouseRow::SIZE);
    }

    #[test]
    fn schema_has_eleven_tables_with_expected_kinds() {
        let cfg = TpccConfig::tiny(2);
        let (s, t) = build(&cfg).unwrap();
        assert_eq!(s.len(), 11);
        let spec = s.table(t.customer).unwrap();
        assert_eq!(
            spec.index,
            txlab_core::IndexKind::Dense {
                capacity: 2 * 10 * 100
            }
        );
        assert_eq!(
            s.table(t.item).unwrap().index,
            txlab_core::IndexKind::Dense { capacity: 1001 }
        );
        assert_eq!(
            s.table(t.order_line).unwrap().index,
            txlab_core::IndexKind::Ordered
        );
        assert_eq!(s.table(t.stock).unwrap().value_size, StockRow::SIZE);
        assert_eq!(s.table(t.warehouse).unwrap().value_size, WarehouseRow::SIZE);
        let (s, t) = build(&TpccConfig {
            scaled: true,
            ..cfg
        })
        .unwrap();
        assert_eq!(
            s.table(t.warehouse).unwrap().value_size,
            ScaledWarehouseRow::SIZE,
            "the scaled WAREHOUSE has no W_YTD column"
        );
    }
}
