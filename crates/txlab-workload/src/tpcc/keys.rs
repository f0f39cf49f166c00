//! Composite TPC-C keys packed into `u64`, with the bit layouts chosen so that every range TPC-C
//! scans is one contiguous, ascending key range.
//!
//! All ids are the specification's 1-based ids (`w_id`, `d_id`, `c_id`, `o_id`, `i_id`,
//! `ol_number`). A district is identified across warehouses by its *district index*
//! `dx = (w_id - 1) * districts_per_warehouse + (d_id - 1)`, `dx < 2^20`.
//!
//! | table | index | key |
//! |---|---|---|
//! | warehouse | dense | `w_id - 1` |
//! | district | dense | `dx` |
//! | customer | dense | `dx * customers_per_district + (c_id - 1)` |
//! | item | dense | `i_id - 1` (capacity `items + 1`: key `items` is the never-loaded "unused" item of NewOrder's rollback, clause 2.4.1.4) |
//! | stock | dense | `(w_id - 1) * items + (i_id - 1)` |
//! | order, new-order | ordered | `dx << 32 \| o_id` |
//! | order-line | ordered | `dx << 36 \| o_id << 4 \| ol_number` |
//! | order-by-customer | ordered | `dx << 44 \| c_id << 27 \| o_id` |
//! | customer-by-last-name | ordered | `dx << 27 \| name_number << 17 \| c_id` |
//! | history | ordered | `(thread mod 2^15) << 48 \| seed_tag << 40 \| sequence`; loaded rows `0xFFFF << 48 \| customer key` (history has no primary key, clause 1.3.1) |
//!
//! Bit budgets: `dx` 20 bits ([`MAX_DISTRICTS_TOTAL`]), `c_id` 17 bits
//! ([`MAX_CUSTOMERS_PER_DISTRICT`] < 2^17), `o_id` 27 bits ([`MAX_ORDER_ID`]), `ol_number` 4 bits
//! (1..=15), last-name number 10 bits (0..=999). Hence for a fixed district the orders, new-orders
//! and order-lines are sorted by `o_id` (then `ol_number`), a customer's orders by `o_id`, and the
//! name index by `(name, c_id)`; the oldest new-order of a district is the first key of its range.
//!
//! Invariant: every `pack` function is injective on valid ids and its `unpack_*` function inverts it
//! (property-tested below together with the order preservation).

/// Where `dx` starts in ORDER and NEW-ORDER keys (the bits below are the district's order ids).
pub const ORDER_DISTRICT_SHIFT: u32 = 32;
/// Where `dx` starts in ORDER-LINE keys.
pub const ORDER_LINE_DISTRICT_SHIFT: u32 = 36;
/// Where `dx` starts in ORDER-BY-CUSTOMER keys.
pub const CUSTOMER_ORDER_DISTRICT_SHIFT: u32 = 44;
/// Where `c_id` starts in ORDER-BY-CUSTOMER keys (the bits below are the customer's order ids).
pub const CUSTOMER_ORDER_CUSTOMER_SHIFT: u32 = 27;
/// Where `dx` starts in CUSTOMER-BY-LAST-NAME keys.
pub const CUSTOMER_NAME_DISTRICT_SHIFT: u32 = 27;

/// Largest number of districts over all warehouses (`dx` has 20 bits).
pub const MAX_DISTRICTS_TOTAL: u64 = 1 << 20;
/// Largest number of customers per district (`c_id` has 17 bits).
pub const MAX_CUSTOMERS_PER_DISTRICT: u32 = 100_000;
/// Largest number of items.
pub const MAX_ITEMS: u32 = 1_000_000;
/// Largest order id (`o_id` has 27 bits); NewOrder fails with an error beyond it.
pub const MAX_ORDER_ID: u32 = (1 << 27) - 1;
/// Largest order-line number (clause 2.4.1.3: 5..=15 lines).
pub const MAX_ORDER_LINES: u32 = 15;
/// Number of distinct last names (clause 4.3.2.3: 0..=999).
pub const LAST_NAMES: u32 = 1000;

/// Key packing for one configuration's sizes (module docs for the layouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Keys {
    /// Districts per warehouse.
    pub districts: u32,
    /// Customers per district.
    pub customers: u32,
    /// Items.
    pub items: u32,
}

/// Decoded ids of an ordered-table key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderLineId {
    /// Warehouse id.
    pub w: u32,
    /// District id.
    pub d: u32,
    /// Order id.
    pub o: u32,
    /// Order-line number (0 for order and new-order keys).
    pub ol: u32,
}

impl Keys {
    /// The district index `dx` of `(w, d)`.
    #[inline]
    pub fn district_index(&self, w: u32, d: u32) -> u64 {
        debug_assert!(w >= 1 && (1..=self.districts).contains(&d));
        u64::from(w - 1) * u64::from(self.districts) + u64::from(d - 1)
    }

    /// `(w, d)` of a district index.
    #[inline]
    pub fn district_ids(&self, dx: u64) -> (u32, u32) {
        let per = u64::from(self.districts);
        ((dx / per) as u32 + 1, (dx % per) as u32 + 1)
    }

    /// WAREHOUSE key.
    #[inline]
    pub fn warehouse(&self, w: u32) -> u64 {
        u64::from(w - 1)
    }

    /// DISTRICT key.
    #[inline]
    pub fn district(&self, w: u32, d: u32) -> u64 {
        self.district_index(w, d)
    }

    /// CUSTOMER key.
    #[inline]
    pub fn customer(&self, w: u32, d: u32, c: u32) -> u64 {
        debug_assert!((1..=self.customers).contains(&c));
        self.district_index(w, d) * u64::from(self.customers) + u64::from(c - 1)
    }

    /// ITEM key (`i == items + 1` is the unused id of a rolled-back NewOrder).
    #[inline]
    pub fn item(&self, i: u32) -> u64 {
        debug_assert!((1..=self.items + 1).contains(&i));
        u64::from(i - 1)
    }

    /// STOCK key.
    #[inline]
    pub fn stock(&self, w: u32, i: u32) -> u64 {
        debug_assert!((1..=self.items).contains(&i));
        u64::from(w - 1) * u64::from(self.items) + u64::from(i - 1)
    }

    /// ORDER and NEW-ORDER key.
    #[inline]
    pub fn order(&self, w: u32, d: u32, o: u32) -> u64 {
        debug_assert!(o <= MAX_ORDER_ID);
        self.district_index(w, d) << ORDER_DISTRICT_SHIFT | u64::from(o)
    }

    /// The ORDER / NEW-ORDER key range of a district (all order ids).
    #[inline]
    pub fn district_orders(&self, w: u32, d: u32) -> (u64, u64) {
        (self.order(w, d, 0), self.order(w, d, MAX_ORDER_ID))
    }

    /// ORDER-LINE key.
    #[inline]
    pub fn order_line(&self, w: u32, d: u32, o: u32, ol: u32) -> u64 {
        debug_assert!(o <= MAX_ORDER_ID && ol <= MAX_ORDER_LINES);
        self.district_index(w, d) << ORDER_LINE_DISTRICT_SHIFT | u64::from(o) << 4 | u64::from(ol)
    }

    /// The ORDER-LINE key range of orders `first..=last` of a district.
    #[inline]
    pub fn order_lines(&self, w: u32, d: u32, first: u32, last: u32) -> (u64, u64) {
        (
            self.order_line(w, d, first, 0),
            self.order_line(w, d, last, MAX_ORDER_LINES),
        )
    }

    /// ORDER-BY-CUSTOMER key.
    #[inline]
    pub fn customer_order(&self, w: u32, d: u32, c: u32, o: u32) -> u64 {
        self.district_index(w, d) << CUSTOMER_ORDER_DISTRICT_SHIFT
            | u64::from(c) << CUSTOMER_ORDER_CUSTOMER_SHIFT
            | u64::from(o)
    }

    /// The ORDER-BY-CUSTOMER key range of one customer's orders.
    #[inline]
    pub fn customer_orders(&self, w: u32, d: u32, c: u32) -> (u64, u64) {
        (
            self.customer_order(w, d, c, 0),
            self.customer_order(w, d, c, MAX_ORDER_ID),
        )
    }

    /// CUSTOMER-BY-LAST-NAME key.
    #[inline]
    pub fn customer_name(&self, w: u32, d: u32, name: u32, c: u32) -> u64 {
        debug_assert!(name < LAST_NAMES);
        self.district_index(w, d) << CUSTOMER_NAME_DISTRICT_SHIFT
            | u64::from(name) << 17
            | u64::from(c)
    }

    /// The CUSTOMER-BY-LAST-NAME key range of one last name in a district.
    #[inline]
    pub fn customers_named(&self, w: u32, d: u32, name: u32) -> (u64, u64) {
        (
            self.customer_name(w, d, name, 0),
            self.customer_name(w, d, name, (1 << 17) - 1),
        )
    }

    /// `c_id` of a CUSTOMER-BY-LAST-NAME key.
    #[inline]
    pub fn customer_of_name_key(key: u64) -> u32 {
        (key & ((1 << 17) - 1)) as u32
    }

    /// `o_id` of an ORDER, NEW-ORDER or ORDER-BY-CUSTOMER key.
    #[inline]
    pub fn order_of_key(key: u64) -> u32 {
        (key & u64::from(MAX_ORDER_ID)) as u32
    }

    /// Decodes an ORDER-LINE key.
    #[inline]
    pub fn unpack_order_line(&self, key: u64) -> OrderLineId {
        let (w, d) = self.district_ids(key >> ORDER_LINE_DISTRICT_SHIFT);
        OrderLineId {
            w,
            d,
            o: ((key >> 4) & ((1 << 32) - 1)) as u32,
            ol: (key & 0xF) as u32,
        }
    }

    /// Decodes an ORDER / NEW-ORDER key.
    #[inline]
    pub fn unpack_order(&self, key: u64) -> OrderLineId {
        let (w, d) = self.district_ids(key >> ORDER_DISTRICT_SHIFT);
        OrderLineId {
            w,
            d,
            o: (key & ((1 << 32) - 1)) as u32,
            ol: 0,
        }
    }
}

/// HISTORY key of the `seq`-th Payment of generator `thread` (module docs).
#[inline]
pub fn history(thread: usize, seed_tag: u8, seq: u64) -> u64 {
    ((thread as u64) & 0x7FFF) << 48 | u64::from(seed_tag) << 40 | (seq & ((1 << 40) - 1))
}

/// HISTORY key of the row loaded for customer key `customer_key` (thread field `0xFFFF`, never a
/// generator's: [`history`] keeps 15 bits of the thread number).
#[inline]
pub fn loaded_history(customer_key: u64) -> u64 {
    0xFFFF << 48 | (customer_key & ((1 << 48) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const K: Keys = Keys {
        districts: 1000,
        customers: MAX_CUSTOMERS_PER_DISTRICT,
        items: MAX_ITEMS,
    };

    fn ids() -> impl Strategy<Value = (u32, u32, u32, u32, u32)> {
        (
            1u32..=1048,
            1u32..=1000,
            1u32..=MAX_ORDER_ID,
            1u32..=15,
            1u32..=K.customers,
        )
    }

    proptest! {
        #[test]
        fn order_and_order_line_keys_round_trip((w, d, o, ol, _c) in ids()) {
            let id = K.unpack_order_line(K.order_line(w, d, o, ol));
            prop_assert_eq!(id, OrderLineId { w, d, o, ol });
            let id = K.unpack_order(K.order(w, d, o));
            prop_assert_eq!(id, OrderLineId { w, d, o, ol: 0 });
            prop_assert_eq!(Keys::order_of_key(K.order(w, d, o)), o);
            prop_assert_eq!(Keys::order_of_key(K.customer_order(w, d, 7, o)), o);
            prop_assert_eq!(K.district_ids(K.district_index(w, d)), (w, d));
        }

        #[test]
        fn keys_sort_like_their_id_tuples(
            a in ids(), b in ids(), na in 0u32..LAST_NAMES, nb in 0u32..LAST_NAMES,
        ) {
            let (wa, da, oa, la, ca) = a;
            let (wb, db, ob, lb, cb) = b;
            prop_assert_eq!(
                K.order_line(wa, da, oa, la).cmp(&K.order_line(wb, db, ob, lb)),
                (wa, da, oa, la).cmp(&(wb, db, ob, lb))
            );
            prop_assert_eq!(
                K.order(wa, da, oa).cmp(&K.order(wb, db, ob)),
                (wa, da, oa).cmp(&(wb, db, ob))
            );
            prop_assert_eq!(
                K.customer_order(wa, da, ca, oa).cmp(&K.customer_order(wb, db, cb, ob)),
                (wa, da, ca, oa).cmp(&(wb, db, cb, ob))
            );
            prop_assert_eq!(
                K.customer_name(wa, da, na, ca).cmp(&K.customer_name(wb, db, nb, cb)),
                (wa, da, na, ca).cmp(&(wb, db, nb, cb))
            );
            prop_assert_eq!(Keys::customer_of_name_key(K.customer_name(wa, da, na, ca)), ca);
        }

        #[test]
        fn ranges_hold_exactly_their_district_or_customer((w, d, o, ol, c) in ids()) {
            let (lo, hi) = K.district_orders(w, d);
            prop_assert!((lo..=hi).contains(&K.order(w, d, o)));
            if d < K.districts {
                prop_assert!(!(lo..=hi).contains(&K.order(w, d + 1, 1)));
            }
            let (lo, hi) = K.order_lines(w, d, o, o);
            prop_assert!((lo..=hi).contains(&K.order_line(w, d, o, ol)));
            if o < MAX_ORDER_ID {
                prop_assert!(!(lo..=hi).contains(&K.order_line(w, d, o + 1, 1)));
            }
            let (lo, hi) = K.customer_orders(w, d, c);
            prop_assert!((lo..=hi).contains(&K.customer_order(w, d, c, o)));
            if c < K.customers {
                prop_assert!(!(lo..=hi).contains(&K.customer_order(w, d, c + 1, 1)));
            }
        }
    }

    #[test]
    fn dense_keys_fill_their_capacity_exactly() {
        let k = Keys {
            districts: 3,
            customers: 5,
            items: 7,
        };
        let w = 2;
        let mut seen = Vec::new();
        for wi in 1..=w {
            for d in 1..=3 {
                for c in 1..=5 {
                    seen.push(k.customer(wi, d, c));
                }
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..(w as u64 * 15)).collect::<Vec<_>>());
        assert_eq!(k.stock(2, 7), 13);
        assert_eq!(k.item(8), 7, "the unused item id maps to the extra key");
        assert_ne!(history(3, 1, 5), history(4, 1, 5));
        assert_ne!(history(3, 1, 5), history(3, 2, 5));
        assert_eq!(loaded_history(5) >> 48, 0xFFFF);
    }
}
