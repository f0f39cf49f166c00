//! Input generation (clause 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1) and the mix (clause 5.2.3).
//!
//! Each generator plays one terminal: its home warehouse is `thread % warehouses + 1` (clause
//! 2.1.2 binds a terminal to a warehouse); districts are drawn uniformly per transaction.
//!
//! - NewOrder: `c = NURand(1023, 1, C)`, `ol_cnt` in 5..=15, each item `NURand(8191, 1, I)`,
//!   quantity 1..=10; in 1 % of NewOrders the last item is the unused id `I + 1` (rollback);
//!   each line's supplying warehouse is remote with probability 1 % when `W > 1`.
//! - Payment: amount 1.00..=5000.00; the customer is of the home district in 85 % and of a random
//!   district of a remote warehouse in 15 % (when `W > 1`); by last name in 60 %
//!   (`NURand(255, 0, 999)`) and by `NURand(1023, 1, C)` otherwise.
//! - OrderStatus: customer as in Payment, home warehouse and district.
//! - Delivery: carrier 1..=10.
//! - StockLevel: threshold 10..=20.
//!
//! With fewer than 1000 customers per district the last-name numbers drawn are limited to
//! `0..C` (the population gives customer `c` name number `c - 1`), so every drawn name exists.
//! All draws use the run NURand constants ([`NuRandConstants::for_run`]), shared by all
//! generators of a seed. Dates are a per-generator counter. No allocation per transaction: the
//! generator rewrites one [`TpccTxn`] in place.

use super::delivery::DeliveryInput;
use super::keys::{self, LAST_NAMES};
use super::new_order::{NewOrderInput, OrderLineInput};
use super::order_status::OrderStatusInput;
use super::payment::PaymentInput;
use super::random::{A_CUSTOMER, A_ITEM, A_LAST, NuRandConstants, nurand, uniform};
use super::stock_level::StockLevelInput;
use super::txn::{CustomerSelector, TpccContext, TpccInput, TpccKind, TpccTxn};
use super::warehouse_ytd::WarehouseYtdInput;
use crate::Generator;
use crate::rng::WorkloadRng;
use rand::RngExt;

/// Generates TPC-C transactions for one worker (module docs).
#[derive(Debug)]
pub struct TpccGenerator {
    pub(super) rng: WorkloadRng,
    pub(super) ctx: TpccContext,
    pub(super) weights: [u32; 5],
    pub(super) constants: NuRandConstants,
    pub(super) home: u32,
    pub(super) thread: usize,
    pub(super) seed_tag: u8,
    pub(super) seq: u64,
    pub(super) txn: TpccTxn,
}

impl TpccGenerator {
    /// The run NURand constants this generator uses.
    pub fn constants(&self) -> NuRandConstants {
        self.constants
    }

    fn other_warehouse(&mut self) -> u32 {
        let w = self.ctx.warehouses;
        let r = uniform(&mut self.rng, 1, w - 1);
        if r >= self.home { r + 1 } else { r }
    }

    fn customer_id(&mut self) -> u32 {
        nurand(
            &mut self.rng,
            A_CUSTOMER,
            1,
            self.ctx.keys.customers,
            self.constants.c_id,
        )
    }

    fn customer(&mut self) -> CustomerSelector {
        if uniform(&mut self.rng, 1, 100) <= 60 {
            let max = (LAST_NAMES.min(self.ctx.keys.customers)) - 1;
            CustomerSelector::LastName(nurand(&mut self.rng, A_LAST, 0, max, self.constants.c_last))
        } else {
            CustomerSelector::Id(self.customer_id())
        }
    }

    fn district(&mut self) -> u32 {
        uniform(&mut self.rng, 1, self.ctx.keys.districts)
    }

    fn new_order(&mut self) -> NewOrderInput {
        let d = self.district();
        let c = self.customer_id();
        let ol_cnt = uniform(&mut self.rng, 5, 15);
        let rollback = uniform(&mut self.rng, 1, 100) == 1;
        let items = self.ctx.keys.items;
        let mut lines = [OrderLineInput::default(); 15];
        for (n, line) in (1..=ol_cnt).zip(lines.iter_mut()) {
            let item = if rollback && n == ol_cnt {
                items + 1
            } else {
                nurand(&mut self.rng, A_ITEM, 1, items, self.constants.ol_i_id)
            };
            let supply_w = if self.ctx.warehouses > 1 && uniform(&mut self.rng, 1, 100) == 1 {
                self.other_warehouse()
            } else {
                self.home
            };
            *line = OrderLineInput {
                item,
                supply_w,
                quantity: uniform(&mut self.rng, 1, 10),
            };
        }
        NewOrderInput {
            w: self.home,
            d,
            c,
            lines,
            ol_cnt: ol_cnt as u8,
            entry_d: self.seq + 2,
        }
    }

    fn payment(&mut self) -> PaymentInput {
        let d = self.district();
        let (c_w, c_d) = if self.ctx.warehouses > 1 && uniform(&mut self.rng, 1, 100) > 85 {
            let w = self.other_warehouse();
            (w, self.district())
        } else {
            (self.home, d)
        };
        PaymentInput {
            w: self.home,
            d,
            c_w,
            c_d,
            customer: self.customer(),
            amount: i64::from(uniform(&mut self.rng, 100, 500_000)),
            date: self.seq + 2,
            history_key: keys::history(self.thread, self.seed_tag, self.seq),
        }
    }
}

impl Generator for TpccGenerator {
    type Program = TpccTxn;

    fn next(&mut self) -> &TpccTxn {
        self.seq += 1;
        let mut roll = self.rng.random_range(0..100u32);
        let mut kind = TpccKind::NewOrder;
        for (k, weight) in TpccKind::ALL.into_iter().zip(self.weights) {
            if roll < weight {
                kind = k;
                break;
            }
            roll -= weight;
        }
        self.txn.input = match kind {
            TpccKind::NewOrder => TpccInput::NewOrder(self.new_order()),
            TpccKind::Payment => TpccInput::Payment(self.payment()),
            TpccKind::OrderStatus => TpccInput::OrderStatus(OrderStatusInput {
                w: self.home,
                d: self.district(),
                customer: self.customer(),
            }),
            TpccKind::Delivery => TpccInput::Delivery(DeliveryInput {
                w: self.home,
                carrier: uniform(&mut self.rng, 1, 10) as u8,
                date: self.seq + 2,
            }),
            TpccKind::StockLevel => TpccInput::StockLevel(StockLevelInput {
                w: self.home,
                d: self.district(),
                threshold: uniform(&mut self.rng, 10, 20) as i32,
            }),
            // Not among `TpccKind::ALL`, so never drawn (ROCOCO's mix has no such query; see
            // `warehouse_ytd`); kept total rather than a panic.
            TpccKind::WarehouseYtd => TpccInput::WarehouseYtd(WarehouseYtdInput { w: self.home }),
        };
        &self.txn
    }
}
