//! TPC-C parameters ([`TpccConfig`]) and the transaction mix ([`TpccMix`]).
//!
//! Defaults are the specification's (TPC-C 5.11, clause 1.2 and 4.3.3.1): 1 warehouse, 10
//! districts per warehouse, 3000 customers per district, 100 000 items, the full mix of clause
//! 5.2.3, the standard (unscaled) schema. Smaller sizes are accepted for tests; they change the
//! population proportionally (see `load`) and are reported by `Workload::parameters`.
//!
//! The *scaled* variant follows ROCOCO (Mu, Cui, Zhang, Lloyd, Li, OSDI 2014, §5 Evaluation,
//! subsection "Scaled TPC-C", paragraph "Partition Strategy"): many districts per warehouse
//! (customer:district:warehouse = 3M:1K:1, [`TpccConfig::rococo_scaled`]), and `W_YTD` is
//! removed: the WAREHOUSE row has no such column, Payment only reads the warehouse's name and
//! address, and the warehouse's year-to-date total is the read-only sum of its districts'
//! `D_YTD` ([`warehouse_ytd`](super::warehouse_ytd), not part of the mix; consistency condition 1
//! is checked in a scaled form, see [`consistency`](super::consistency)).

use super::keys::{MAX_CUSTOMERS_PER_DISTRICT, MAX_DISTRICTS_TOTAL, MAX_ITEMS};
use txlab_core::Error;

/// Which transactions a run issues.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TpccMix {
    /// Clause 5.2.3's minimum mix: NewOrder 45 %, Payment 43 %, OrderStatus 4 %, Delivery 4 %,
    /// StockLevel 4 % (workload name `tpcc`).
    Full,
    /// NewOrder 50 %, Payment 50 %: the two read-write transactions that dominate contention, as
    /// in many concurrency-control evaluations (workload name `tpcc-np`).
    NewOrderPayment,
}

impl TpccMix {
    /// Weights in percent of NewOrder, Payment, OrderStatus, Delivery, StockLevel (sum 100).
    pub fn weights(self) -> [u32; 5] {
        match self {
            TpccMix::Full => [45, 43, 4, 4, 4],
            TpccMix::NewOrderPayment => [50, 50, 0, 0, 0],
        }
    }

    /// A short, stable name.
    pub fn name(self) -> &'static str {
        match self {
            TpccMix::Full => "full",
            TpccMix::NewOrderPayment => "new_order_payment",
        }
    }
}

/// TPC-C parameters (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TpccConfig {
    /// Number of warehouses, `1..=MAX_WAREHOUSES` (default 1).
    pub warehouses: u32,
    /// Districts per warehouse (default 10; `warehouses * districts_per_warehouse` at most
    /// `MAX_DISTRICTS_TOTAL`).
    pub districts_per_warehouse: u32,
    /// Customers per district, `1..=MAX_CUSTOMERS_PER_DISTRICT` (default 3000). Also the number
    /// of orders loaded per district (clause 4.3.3.1).
    pub customers_per_district: u32,
    /// Number of items, `15..=MAX_ITEMS` (default 100 000; at least one NewOrder's worth).
    pub items: u32,
    /// The transaction mix (default [`TpccMix::Full`]).
    pub mix: TpccMix,
    /// ROCOCO's scaled variant: no `W_YTD` column, its total read as `sum(D_YTD)` (module
    /// docs). Default `false`.
    pub scaled: bool,
    /// Seed of the population and of the load-time NURand constants (default 0x7bcc).
    pub load_seed: u64,
}

/// Largest accepted number of warehouses.
pub const MAX_WAREHOUSES: u32 = 65_535;

impl Default for TpccConfig {
    fn default() -> Self {
        TpccConfig {
            warehouses: 1,
            districts_per_warehouse: 10,
            customers_per_district: 3000,
            items: 100_000,
            mix: TpccMix::Full,
            scaled: false,
            load_seed: 0x7bcc,
        }
    }
}

impl TpccConfig {
    /// ROCOCO's scaled configuration (OSDI 2014, §5 "Scaled TPC-C"): 1 warehouse of 1000 districts with 3000
    /// customers each (3M customers), no `W_YTD`.
    pub fn rococo_scaled() -> Self {
        TpccConfig {
            districts_per_warehouse: 1000,
            scaled: true,
            ..TpccConfig::default()
        }
    }

    /// A small configuration for tests: `warehouses` warehouses, 1000 items, 10 districts of 100
    /// customers.
    pub fn tiny(warehouses: u32) -> Self {
        TpccConfig {
            warehouses,
            customers_per_district: 100,
            items: 1000,
            ..TpccConfig::default()
        }
    }

    /// Checks every field; the error names the field, its value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        if !(1..=MAX_WAREHOUSES).contains(&self.warehouses) {
            return Err(Error::invalid(
                "warehouses",
                self.warehouses,
                format!("in 1..={MAX_WAREHOUSES}"),
            ));
        }
        let districts = u64::from(self.warehouses) * u64::from(self.districts_per_warehouse);
        if self.districts_per_warehouse == 0 || districts > MAX_DISTRICTS_TOTAL {
            return Err(Error::invalid(
                "districts_per_warehouse",
                self.districts_per_warehouse,
                format!(
                    "at least 1, with warehouses * districts_per_warehouse <= {MAX_DISTRICTS_TOTAL} \
                     (here {} warehouses)",
                    self.warehouses
                ),
            ));
        }
        if !(1..=MAX_CUSTOMERS_PER_DISTRICT).contains(&self.customers_per_district) {
            return Err(Error::invalid(
                "customers_per_district",
                self.customers_per_district,
                format!("in 1..={MAX_CUSTOMERS_PER_DISTRICT}"),
            ));
        }
        if !(15..=MAX_ITEMS).contains(&self.items) {
            return Err(Error::invalid(
                "items",
                self.items,
                format!("in 15..={MAX_ITEMS}"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_presets_are_valid() {
        TpccConfig::default().validate().unwrap();
        TpccConfig::rococo_scaled().validate().unwrap();
        TpccConfig::tiny(2).validate().unwrap();
        for mix in [TpccMix::Full, TpccMix::NewOrderPayment] {
            assert_eq!(mix.weights().iter().sum::<u32>(), 100, "{}", mix.name());
        }
    }

    #[test]
    fn bad_configs_name_the_value_and_range() {
        let cases: [(TpccConfig, &str); 6] = [
            (
                TpccConfig {
                    warehouses: 0,
                    ..TpccConfig::default()
                },
                "warehouses = 0",
            ),
            (
                TpccConfig {
                    districts_per_warehouse: 0,
                    ..TpccConfig::default()
                },
                "districts_per_warehouse = 0",
            ),
            (
                TpccConfig {
                    warehouses: 65_535,
                    districts_per_warehouse: 1000,
                    ..TpccConfig::default()
                },
                "districts_per_warehouse = 1000",
            ),
            (
                TpccConfig {
                    customers_per_district: 0,
                    ..TpccConfig::default()
                },
                "customers_per_district = 0",
            ),
            (
                TpccConfig {
                    customers_per_district: 200_000,
                    ..TpccConfig::default()
                },
                "customers_per_district = 200000",
            ),
            (
                TpccConfig {
                    items: 14,
                    ..TpccConfig::default()
                },
                "items = 14",
            ),
        ];
        for (cfg, needle) in cases {
            let e = cfg.validate().unwrap_err().to_string();
            assert!(
                e.contains(needle) && (e.contains("..=") || e.contains("<=")),
                "{needle}: {e}"
            );
        }
    }
}
