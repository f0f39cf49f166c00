//! TPC-C partitioners: [`ByWarehouse`] (DOCC's, and the usual one of partitioned TPC-C) and
//! [`ByDistrict`] (ROCOCO's scaled TPC-C, OSDI 2014 Figure 12).
//!
//! Both decode the owner from the key layouts of [`keys`](super::keys): every district-related
//! key carries its district index `dx`, whose warehouse is `dx / districts_per_warehouse + 1`.
//! Owners are contiguous blocks: warehouse `w` of `W` is at partition `(w - 1) * n / W`, district
//! `dx` of `D` at `dx * n / D`, item `i` of `I` at `(i - 1) * n / I`.
//!
//! | table | [`ByWarehouse`] | [`ByDistrict`] |
//! |---|---|---|
//! | WAREHOUSE | by warehouse | replicated (read-only in the scaled variant) |
//! | DISTRICT, CUSTOMER, ORDER, NEW-ORDER, ORDER-LINE, ORDER-BY-CUSTOMER, CUSTOMER-BY-NAME | by warehouse | by district |
//! | STOCK | by warehouse | by item |
//! | ITEM | replicated | replicated |
//! | HISTORY | follows home | follows home |

use super::TpccConfig;
use super::keys::Keys;
use super::schema::{TpccTables, keys_of};
use txlab_core::partition::{Partitioner, Placement, check_partitions, not_partitioned};
use txlab_core::{Error, TableId};

/// The part of a key that decides its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Warehouse(u32),
    District(u64),
    /// A STOCK row: its warehouse and item (1-based).
    Stock {
        w: u32,
        i: u32,
    },
}

/// Decodes keys of one configuration into their owners.
#[derive(Debug, Clone)]
struct Decoder {
    tables: TpccTables,
    keys: Keys,
    warehouses: u32,
}

impl Decoder {
    fn new(cfg: &TpccConfig, tables: TpccTables) -> Self {
        Self {
            tables,
            keys: keys_of(cfg),
            warehouses: cfg.warehouses,
        }
    }

    fn districts(&self) -> u64 {
        u64::from(self.warehouses) * u64::from(self.keys.districts)
    }

    /// Whose `key` of `table` is, or `None` for tables not placed by key (ITEM, HISTORY).
    fn owner(&self, table: TableId, key: u64) -> Result<Option<Owner>, Error> {
        let t = &self.tables;
        let k = &self.keys;
        let beyond = |size: u64| key >= size;
        let owner = if table == t.warehouse {
            if beyond(u64::from(self.warehouses)) {
                return Err(out_of_range(table, key));
            }
            Owner::Warehouse(key as u32 + 1)
        } else if table == t.district {
            Owner::District(key)
        } else if table == t.customer {
            Owner::District(key / u64::from(k.customers))
        } else if table == t.stock {
            let items = u64::from(k.items);
            if beyond(u64::from(self.warehouses) * items) {
                return Err(out_of_range(table, key));
            }
            Owner::Stock {
                w: (key / items) as u32 + 1,
                i: (key % items) as u32 + 1,
            }
        } else if table == t.order || table == t.new_order {
            Owner::District(key >> 32)
        } else if table == t.order_line {
            Owner::District(key >> 36)
        } else if table == t.order_by_customer {
            Owner::District(key >> 44)
        } else if table == t.customer_by_name {
            Owner::District(key >> 27)
        } else if table == t.item || table == t.history {
            return Ok(None);
        } else {
            return Err(Error::UnknownTable {
                id: table.0,
                count: TpccTables::COUNT,
            });
        };
        match owner {
            Owner::District(dx) if dx >= self.districts() => Err(out_of_range(table, key)),
            o => Ok(Some(o)),
        }
    }
}

fn out_of_range(table: TableId, key: u64) -> Error {
    Error::invalid(
        "key",
        format!("{key:#x}"),
        format!(
            "table {}: no TPC-C row of this configuration has this key",
            table.0
        ),
    )
}

/// Contiguous block of `0..of` that `i` falls into, of `n` blocks.
fn block(i: u64, of: u64, n: u32) -> u32 {
    (u128::from(i) * u128::from(n) / u128::from(of)) as u32
}

/// TPC-C partitioned by warehouse (module docs): every table by its rows' warehouse, ITEM
/// replicated, HISTORY at the home partition.
#[derive(Debug, Clone)]
pub struct ByWarehouse {
    decoder: Decoder,
    partitions: u32,
}

impl ByWarehouse {
    /// `partitions` partitions of the warehouses of `cfg` (at least one warehouse each).
    pub fn new(cfg: &TpccConfig, tables: TpccTables, partitions: u32) -> Result<Self, Error> {
        check_partitions(partitions)?;
        if cfg.warehouses < partitions {
            return Err(Error::invalid(
                "partitions",
                partitions,
                format!(
                    "at most the number of warehouses ({}): every partition owns at least one",
                    cfg.warehouses
                ),
            ));
        }
        Ok(Self {
            decoder: Decoder::new(cfg, tables),
            partitions,
        })
    }

    /// The partition of warehouse `w` (1-based).
    pub fn partition_of_warehouse(&self, w: u32) -> u32 {
        block(
            u64::from(w - 1),
            u64::from(self.decoder.warehouses),
            self.partitions,
        )
    }
}

impl Partitioner for ByWarehouse {
    fn partitions(&self) -> u32 {
        self.partitions
    }

    fn placement(&self, table: TableId) -> Placement {
        let t = &self.decoder.tables;
        if table == t.item {
            Placement::Replicated
        } else if table == t.history {
            Placement::FollowsHome
        } else {
            Placement::Partitioned
        }
    }

    fn partition_of(&self, table: TableId, key: u64) -> Result<u32, Error> {
        let per = u64::from(self.decoder.keys.districts);
        match self.decoder.owner(table, key)? {
            None => Err(not_partitioned(table, self.placement(table))),
            Some(Owner::Warehouse(w) | Owner::Stock { w, .. }) => {
                Ok(self.partition_of_warehouse(w))
            }
            Some(Owner::District(dx)) => Ok(self.partition_of_warehouse((dx / per) as u32 + 1)),
        }
    }
}

/// ROCOCO's scaled TPC-C partitioned by district (module docs): district-related tables by
/// district index, STOCK by item, WAREHOUSE and ITEM replicated, HISTORY at the home partition.
/// Needs the scaled variant (no `W_YTD`), since WAREHOUSE is replicated and must not be written.
#[derive(Debug, Clone)]
pub struct ByDistrict {
    decoder: Decoder,
    partitions: u32,
}

impl ByDistrict {
    /// `partitions` partitions of the districts of `cfg` (at least one district and one item
    /// each).
    pub fn new(cfg: &TpccConfig, tables: TpccTables, partitions: u32) -> Result<Self, Error> {
        check_partitions(partitions)?;
        if !cfg.scaled {
            return Err(Error::invalid(
                "scaled",
                false,
                "partitioning by district replicates WAREHOUSE, which only the scaled variant \
                 (no W_YTD) never writes",
            ));
        }
        let decoder = Decoder::new(cfg, tables);
        if decoder.districts() < u64::from(partitions) || cfg.items < partitions {
            return Err(Error::invalid(
                "partitions",
                partitions,
                format!(
                    "at most the number of districts ({}) and of items ({})",
                    decoder.districts(),
                    cfg.items
                ),
            ));
        }
        Ok(Self {
            decoder,
            partitions,
        })
    }

    /// The partition of district index `dx`.
    pub fn partition_of_district(&self, dx: u64) -> u32 {
        block(dx, self.decoder.districts(), self.partitions)
    }

    /// The partition of item `i` (1-based), which holds every warehouse's STOCK row of it.
    pub fn partition_of_item(&self, i: u32) -> u32 {
        block(
            u64::from(i - 1),
            u64::from(self.decoder.keys.items),
            self.partitions,
        )
    }
}

impl Partitioner for ByDistrict {
    fn partitions(&self) -> u32 {
        self.partitions
    }

    fn placement(&self, table: TableId) -> Placement {
        let t = &self.decoder.tables;
        if table == t.item || table == t.warehouse {
            Placement::Replicated
        } else if table == t.history {
            Placement::FollowsHome
        } else {
            Placement::Partitioned
        }
    }

    fn partition_of(&self, table: TableId, key: u64) -> Result<u32, Error> {
        match self.decoder.owner(table, key)? {
            None | Some(Owner::Warehouse(_)) => Err(not_partitioned(table, self.placement(table))),
            Some(Owner::District(dx)) => Ok(self.partition_of_district(dx)),
            Some(Owner::Stock { i, .. }) => Ok(self.partition_of_item(i)),
        }
    }
}
