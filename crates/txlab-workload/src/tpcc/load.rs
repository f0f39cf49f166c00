//! The initial population (clause 4.3.3.1), scaled to the configuration's sizes.
//!
//! For `W` warehouses, `D` districts per warehouse, `C` customers per district and `I` items
//! (the specification's `D = 10`, `C = 3000`, `I = 100 000`):
//!
//! | table | rows | notes |
//! |---|---|---|
//! | item | `I` | 10 % of `I_DATA` contain "ORIGINAL" |
//! | warehouse | `W` | `W_YTD = D * 30 000.00`; the scaled variant's rows have no `W_YTD` ([`ScaledWarehouseRow`]) |
//! | stock | `W * I` | `S_QUANTITY` in 10..=100, 10 % of `S_DATA` contain "ORIGINAL" |
//! | district | `W * D` | `D_YTD = 30 000.00`, `D_NEXT_O_ID = C + 1` |
//! | customer | `W * D * C` | `C_LAST` of customer `c <= 1000` is name number `c - 1`, others `NURand(255, 0, 999)` with the load constant; 10 % `BC` credit |
//! | customer-by-last-name | `W * D * C` | one entry per customer |
//! | history | `W * D * C` | one row per customer, `H_AMOUNT = 10.00` |
//! | order | `W * D * C` | `O_C_ID` a random permutation of `1..=C`; `O_OL_CNT` in 5..=15 |
//! | order-by-customer | `W * D * C` | one entry per order |
//! | order-line | `sum(O_OL_CNT)` | |
//! | new-order | `W * D * (C * 3 / 10)` | the last 30 % of each district's orders (spec: 900 of 3000) |
//!
//! Orders `o_id <= C - C * 3 / 10` (spec: `< 2101`) are delivered: random carrier, order lines
//! with a delivery date and amount 0; the others have a null carrier, null delivery dates and
//! amounts in `0.01..=9999.99`.
//!
//! Determinism: items draw from stream 0 and warehouse `w` from stream `w` of
//! [`worker_rng`]`(load_seed, ..)`, so the population depends only on the configuration.

use super::keys::{self, LAST_NAMES};
use super::random::{
    A_LAST, NuRandConstants, a_string, data_with_original, last_name, n_string, nurand, uniform,
    zip,
};
use super::schema::{
    CustomerNameRow, CustomerOrderRow, CustomerRow, DistrictRow, HistoryRow, ItemRow, NewOrderRow,
    OrderLineRow, OrderRow, ScaledWarehouseRow, StockRow, TpccTables, WarehouseRow,
};
use super::{LOAD_DATE, Tpcc};
use crate::rng::{WorkloadRng, worker_rng};
use rand::RngExt;
use txlab_core::{Error, TableId};

/// Initial `D_YTD` in cents (30 000.00).
pub const DISTRICT_INITIAL_YTD: i64 = 3_000_000;
/// Initial `C_BALANCE` in cents (-10.00).
pub const CUSTOMER_INITIAL_BALANCE: i64 = -1000;
/// `H_AMOUNT` of a loaded history row in cents (10.00).
pub const HISTORY_INITIAL_AMOUNT: i64 = 1000;

/// A destination for loaded rows (`Engine::load`, or a test's map).
pub type Sink<'a> = dyn FnMut(TableId, u64, &[u8]) -> Result<(), Error> + 'a;

/// Number of undelivered (new-order) orders per district for `c` customers.
pub fn undelivered_per_district(c: u32) -> u32 {
    c * 3 / 10
}

fn address<R: rand::Rng + ?Sized>(rng: &mut R) -> ([u8; 20], [u8; 20], [u8; 20], [u8; 2]) {
    let mut s1 = [0u8; 20];
    let mut s2 = [0u8; 20];
    let mut city = [0u8; 20];
    let mut state = [0u8; 2];
    a_string(rng, &mut s1, 10, 20);
    a_string(rng, &mut s2, 10, 20);
    a_string(rng, &mut city, 10, 20);
    for b in &mut state {
        *b = b'A' + rng.random_range(0..26u8);
    }
    (s1, s2, city, state)
}

/// Writes the whole population into `sink` (module docs).
pub fn populate(tpcc: &Tpcc, sink: &mut Sink<'_>) -> Result<(), Error> {
    let cfg = tpcc.config();
    let t = tpcc.tables();
    let mut rng = worker_rng(cfg.load_seed, 0);
    for i in 1..=cfg.items {
        load_item(&mut rng, t, tpcc, i, sink)?;
    }
    for w in 1..=cfg.warehouses {
        let mut rng = worker_rng(cfg.load_seed, w as usize);
        load_warehouse(&mut rng, tpcc, w, sink)?;
    }
    Ok(())
}

fn load_item(
    rng: &mut WorkloadRng,
    t: &TpccTables,
    tpcc: &Tpcc,
    i: u32,
    sink: &mut Sink<'_>,
) -> Result<(), Error> {
    let mut row = ItemRow {
        i_id: i,
        i_im_id: uniform(rng, 1, 10_000),
        i_name: [0; 24],
        i_price: i64::from(uniform(rng, 100, 10_000)),
        i_data: [0; 50],
    };
    a_string(rng, &mut row.i_name, 14, 24);
    data_with_original(rng, &mut row.i_data);
    let mut buf = [0u8; ItemRow::SIZE];
    row.encode(&mut buf);
    sink(t.item, tpcc.keys().item(i), &buf)
}

fn load_warehouse(
    rng: &mut WorkloadRng,
    tpcc: &Tpcc,
    w: u32,
    sink: &mut Sink<'_>,
) -> Result<(), Error> {
    let cfg = tpcc.config();
    let t = tpcc.tables();
    let k = tpcc.keys();
    let (s1, s2, city, state) = address(rng);
    let mut name = [0u8; 10];
    a_string(rng, &mut name, 6, 10);
    let wh = ScaledWarehouseRow {
        w_id: w,
        w_name: name,
        w_street_1: s1,
        w_street_2: s2,
        w_city: city,
        w_state: state,
        w_zip: zip(rng),
        w_tax: uniform(rng, 0, 2000) as i32,
    };
    if cfg.scaled {
        let mut buf = [0u8; ScaledWarehouseRow::SIZE];
        wh.encode(&mut buf);
        sink(t.warehouse, k.warehouse(w), &buf)?;
    } else {
        let wh = WarehouseRow {
            w_id: wh.w_id,
            w_name: wh.w_name,
            w_street_1: wh.w_street_1,
            w_street_2: wh.w_street_2,
            w_city: wh.w_city,
            w_state: wh.w_state,
            w_zip: wh.w_zip,
            w_tax: wh.w_tax,
            w_ytd: i64::from(cfg.districts_per_warehouse) * DISTRICT_INITIAL_YTD,
        };
        let mut buf = [0u8; WarehouseRow::SIZE];
        wh.encode(&mut buf);
        sink(t.warehouse, k.warehouse(w), &buf)?;
    }

    let mut buf = [0u8; StockRow::SIZE];
    for i in 1..=cfg.items {
        let mut dist = [[0u8; 24]; 10];
        for d in &mut dist {
            a_string(rng, d, 24, 24);
        }
        let mut s = StockRow {
            s_i_id: i,
            s_w_id: w,
            s_quantity: uniform(rng, 10, 100) as i32,
            s_dist_01: dist[0],
            s_dist_02: dist[1],
            s_dist_03: dist[2],
            s_dist_04: dist[3],
            s_dist_05: dist[4],
            s_dist_06: dist[5],
            s_dist_07: dist[6],
            s_dist_08: dist[7],
            s_dist_09: dist[8],
            s_dist_10: dist[9],
            s_ytd: 0,
            s_order_cnt: 0,
            s_remote_cnt: 0,
            s_data: [0; 50],
        };
        data_with_original(rng, &mut s.s_data);
        s.encode(&mut buf);
        sink(t.stock, k.stock(w, i), &buf)?;
    }
    for d in 1..=cfg.districts_per_warehouse {
        load_district(rng, tpcc, w, d, sink)?;
    }
    Ok(())
}

fn load_district(
    rng: &mut WorkloadRng,
    tpcc: &Tpcc,
    w: u32,
    d: u32,
    sink: &mut Sink<'_>,
) -> Result<(), Error> {
    let cfg = tpcc.config();
    let t = tpcc.tables();
    let k = tpcc.keys();
    let load_c: NuRandConstants = tpcc.load_constants();
    let c_count = cfg.customers_per_district;
    let (s1, s2, city, state) = address(rng);
    let mut name = [0u8; 10];
    a_string(rng, &mut name, 6, 10);
    let district = DistrictRow {
        d_id: d,
        d_w_id: w,
        d_name: name,
        d_street_1: s1,
        d_street_2: s2,
        d_city: city,
        d_state: state,
        d_zip: zip(rng),
        d_tax: uniform(rng, 0, 2000) as i32,
        d_ytd: DISTRICT_INITIAL_YTD,
        d_next_o_id: c_count + 1,
    };
    let mut buf = [0u8; DistrictRow::SIZE];
    district.encode(&mut buf);
    sink(t.district, k.district(w, d), &buf)?;

    let mut cbuf = [0u8; CustomerRow::SIZE];
    let mut nbuf = [0u8; CustomerNameRow::SIZE];
    let mut hbuf = [0u8; HistoryRow::SIZE];
    for c in 1..=c_count {
        let name_number = if c <= LAST_NAMES {
            c - 1
        } else {
            nurand(rng, A_LAST, 0, LAST_NAMES - 1, load_c.c_last)
        };
        let (s1, s2, city, state) = address(rng);
        let mut first = [0u8; 16];
        a_string(rng, &mut first, 8, 16);
        let mut phone = [0u8; 16];
        n_string(rng, &mut phone);
        let mut data = [0u8; 500];
        a_string(rng, &mut data, 300, 500);
        let customer = CustomerRow {
            c_id: c,
            c_d_id: d,
            c_w_id: w,
            c_first: first,
            c_middle: *b"OE",
            c_last: last_name(name_number),
            c_street_1: s1,
            c_street_2: s2,
            c_city: city,
            c_state: state,
            c_zip: zip(rng),
            c_phone: phone,
            c_since: LOAD_DATE,
            c_credit: if uniform(rng, 1, 10) == 1 {
                *b"BC"
            } else {
                *b"GC"
            },
            c_credit_lim: 5_000_000,
            c_discount: uniform(rng, 0, 5000) as i32,
            c_balance: CUSTOMER_INITIAL_BALANCE,
            c_ytd_payment: 1000,
            c_payment_cnt: 1,
            c_delivery_cnt: 0,
            c_data: data,
        };
        customer.encode(&mut cbuf);
        let ckey = k.customer(w, d, c);
        sink(t.customer, ckey, &cbuf)?;
        CustomerNameRow {
            c_first: first,
            c_id: c,
        }
        .encode(&mut nbuf);
        sink(
            t.customer_by_name,
            k.customer_name(w, d, name_number, c),
            &nbuf,
        )?;
        let mut h_data = [0u8; 24];
        a_string(rng, &mut h_data, 12, 24);
        HistoryRow {
            h_c_id: c,
            h_c_d_id: d,
            h_c_w_id: w,
            h_d_id: d,
            h_w_id: w,
            h_date: LOAD_DATE,
            h_amount: HISTORY_INITIAL_AMOUNT,
            h_data,
        }
        .encode(&mut hbuf);
        sink(t.history, keys::loaded_history(ckey), &hbuf)?;
    }

    // O_C_ID: a random permutation of 1..=C (Fisher-Yates).
    let mut owners: Vec<u32> = (1..=c_count).collect();
    for i in (1..owners.len()).rev() {
        let j = rng.random_range(0..=i);
        owners.swap(i, j);
    }
    let delivered_up_to = c_count - undelivered_per_district(c_count);
    let mut obuf = [0u8; OrderRow::SIZE];
    let mut olbuf = [0u8; OrderLineRow::SIZE];
    let mut cobuf = [0u8; CustomerOrderRow::SIZE];
    let mut nobuf = [0u8; NewOrderRow::SIZE];
    for (o, &owner) in (1..=c_count).zip(owners.iter()) {
        let delivered = o <= delivered_up_to;
        let ol_cnt = uniform(rng, 5, 15);
        OrderRow {
            o_id: o,
            o_d_id: d,
            o_w_id: w,
            o_c_id: owner,
            o_entry_d: LOAD_DATE,
            o_carrier_id: if delivered {
                uniform(rng, 1, 10) as u8
            } else {
                0
            },
            o_ol_cnt: ol_cnt as u8,
            o_all_local: 1,
        }
        .encode(&mut obuf);
        sink(t.order, k.order(w, d, o), &obuf)?;
        CustomerOrderRow { o_id: o }.encode(&mut cobuf);
        sink(
            t.order_by_customer,
            k.customer_order(w, d, owner, o),
            &cobuf,
        )?;
        for ol in 1..=ol_cnt {
            let mut info = [0u8; 24];
            a_string(rng, &mut info, 24, 24);
            OrderLineRow {
                ol_o_id: o,
                ol_d_id: d,
                ol_w_id: w,
                ol_number: ol as u8,
                ol_i_id: uniform(rng, 1, cfg.items),
                ol_supply_w_id: w,
                ol_delivery_d: if delivered { LOAD_DATE } else { 0 },
                ol_quantity: 5,
                ol_amount: if delivered {
                    0
                } else {
                    i64::from(uniform(rng, 1, 999_999))
                },
                ol_dist_info: info,
            }
            .encode(&mut olbuf);
            sink(t.order_line, k.order_line(w, d, o, ol), &olbuf)?;
        }
        if !delivered {
            NewOrderRow {
                no_o_id: o,
                no_d_id: d,
                no_w_id: w,
            }
            .encode(&mut nobuf);
            sink(t.new_order, k.order(w, d, o), &nobuf)?;
        }
    }
    Ok(())
}
