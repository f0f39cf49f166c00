//! The workloads the harness can run, by name ([`WorkloadKind`]), their parameters
//! ([`WorkloadParams`]) and the built workload ([`AnyWorkload`]) that protocol drivers visit
//! generically ([`WorkloadVisitor`]), so each protocol is written once for every workload.

use crate::noop::NoopWorkload;
use serde::Serialize;
use txlab_core::Error;
use txlab_workload::{Micro, MicroConfig, SmallBank, SmallBankConfig, Workload};
use txlab_workload::{Tpcc, TpccConfig, TpccMix};
use txlab_workload::{Ycsb, YcsbConfig, YcsbPreset};

/// A workload the harness can run.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkloadKind {
    /// A YCSB core workload (A, B, C or F).
    Ycsb(YcsbKind),
    /// The read/write micro benchmark.
    Micro,
    /// SmallBank.
    SmallBank,
    /// TPC-C, the full five-transaction mix.
    Tpcc,
    /// TPC-C, NewOrder and Payment only.
    TpccNp,
    /// Empty transactions (hidden; measures the harness).
    Noop,
}

/// The YCSB presets, mirrored here so [`WorkloadKind`] can be ordered and hashed.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum YcsbKind {
    /// 50 % reads, 50 % blind updates.
    A,
    /// 95 % reads, 5 % blind updates.
    B,
    /// Read only.
    C,
    /// 50 % reads, 50 % read-modify-writes.
    F,
}

impl WorkloadKind {
    /// Every workload, hidden ones included.
    pub const ALL: [WorkloadKind; 9] = [
        WorkloadKind::Ycsb(YcsbKind::A),
        WorkloadKind::Ycsb(YcsbKind::B),
        WorkloadKind::Ycsb(YcsbKind::C),
        WorkloadKind::Ycsb(YcsbKind::F),
        WorkloadKind::Micro,
        WorkloadKind::SmallBank,
        WorkloadKind::Tpcc,
        WorkloadKind::TpccNp,
        WorkloadKind::Noop,
    ];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Ycsb(YcsbKind::A) => "ycsb-a",
            WorkloadKind::Ycsb(YcsbKind::B) => "ycsb-b",
            WorkloadKind::Ycsb(YcsbKind::C) => "ycsb-c",
            WorkloadKind::Ycsb(YcsbKind::F) => "ycsb-f",
            WorkloadKind::Micro => "micro",
            WorkloadKind::SmallBank => "smallbank",
            WorkloadKind::Tpcc => "tpcc",
            WorkloadKind::TpccNp => "tpcc-np",
            WorkloadKind::Noop => "noop",
        }
    }

    /// One line for `txlab list`.
    pub fn description(self) -> &'static str {
        match self {
            WorkloadKind::Ycsb(YcsbKind::A) => {
                "YCSB A: update heavy, 50% reads / 50% blind updates"
            }
            WorkloadKind::Ycsb(YcsbKind::B) => "YCSB B: read mostly, 95% reads / 5% blind updates",
            WorkloadKind::Ycsb(YcsbKind::C) => "YCSB C: read only",
            WorkloadKind::Ycsb(YcsbKind::F) => "YCSB F: 50% reads / 50% read-modify-writes",
            WorkloadKind::Micro => {
                "micro: --reads keys read and --writes keys written per transaction"
            }
            WorkloadKind::SmallBank => "SmallBank: six banking transactions over savings/checking",
            WorkloadKind::Tpcc => {
                "TPC-C 5.11: NewOrder 45, Payment 43, OrderStatus/Delivery/StockLevel 4 each (--warehouses, --districts, --items)"
            }
            WorkloadKind::TpccNp => "TPC-C NewOrder + Payment only, 50/50",
            WorkloadKind::Noop => "empty transactions; measures the harness's own overhead",
        }
    }

    /// Whether `txlab list` leaves it out.
    pub fn hidden(self) -> bool {
        matches!(self, WorkloadKind::Noop)
    }

    /// The visible workloads.
    pub fn visible() -> impl Iterator<Item = WorkloadKind> {
        Self::ALL.into_iter().filter(|w| !w.hidden())
    }

    /// Whether it is TPC-C (either mix).
    pub fn is_tpcc(self) -> bool {
        matches!(self, WorkloadKind::Tpcc | WorkloadKind::TpccNp)
    }

    /// Whether its transactions use range scans (which the OCC-batching pipeline lacks).
    pub fn scans(self) -> bool {
        self.is_tpcc()
    }

    /// Whether the workload has a Zipf skew parameter.
    pub fn has_theta(self) -> bool {
        !matches!(
            self,
            WorkloadKind::Noop | WorkloadKind::Tpcc | WorkloadKind::TpccNp
        )
    }

    /// The workload flags this workload reads (the others do not apply to it).
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            WorkloadKind::Ycsb(_) => &["--records", "--ops-per-txn", "--payload", "--theta"],
            WorkloadKind::Micro => &["--records", "--reads", "--writes", "--payload", "--theta"],
            WorkloadKind::SmallBank => &["--customers", "--theta"],
            WorkloadKind::Tpcc | WorkloadKind::TpccNp => &[
                "--warehouses",
                "--districts",
                "--district-customers",
                "--items",
                "--tpcc-scaled",
            ],
            WorkloadKind::Noop => &[],
        }
    }

    /// Parses a CLI name.
    pub fn from_name(name: &str) -> Result<WorkloadKind, Error> {
        Self::ALL
            .into_iter()
            .find(|w| w.name() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "workload",
                    name,
                    format!(
                        "one of {}",
                        Self::visible()
                            .map(Self::name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })
    }
}

impl Serialize for WorkloadKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Workload parameters shared by the CLI flags (each workload uses the ones it has).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WorkloadParams {
    /// YCSB records and micro keys.
    pub records: u64,
    /// YCSB operations per transaction.
    pub ops_per_txn: usize,
    /// YCSB payload and micro value size in bytes.
    pub payload: usize,
    /// SmallBank customers.
    pub customers: u64,
    /// Micro: keys read per transaction.
    pub reads: usize,
    /// Micro: keys written per transaction.
    pub writes: usize,
    /// Zipf skew.
    pub theta: f64,
    /// SmallBank: track money flows so `check` can verify conservation (set by `--check`).
    pub audit: bool,
    /// TPC-C warehouses.
    pub warehouses: u32,
    /// TPC-C districts per warehouse.
    pub districts: u32,
    /// TPC-C customers per district.
    pub district_customers: u32,
    /// TPC-C items.
    pub items: u32,
    /// TPC-C: ROCOCO's scaled variant (no `W_YTD` updates; `TpccConfig::scaled`).
    pub tpcc_scaled: bool,
}

impl Default for WorkloadParams {
    fn default() -> Self {
        Self {
            records: 100_000,
            ops_per_txn: 10,
            payload: 100,
            customers: 100_000,
            reads: 5,
            writes: 5,
            theta: 0.0,
            audit: false,
            warehouses: 1,
            districts: 10,
            district_customers: 3_000,
            items: 100_000,
            tpcc_scaled: false,
        }
    }
}

/// Checks that `workload` can be built from `params` (so bad flags are found before any run).
pub fn validate_workload(kind: WorkloadKind, params: &WorkloadParams) -> Result<(), Error> {
    AnyWorkload::new(kind, params).map(|_| ())
}

fn tpcc_config(kind: WorkloadKind, p: &WorkloadParams) -> TpccConfig {
    TpccConfig {
        warehouses: p.warehouses,
        districts_per_warehouse: p.districts,
        customers_per_district: p.district_customers,
        items: p.items,
        scaled: p.tpcc_scaled,
        mix: if kind == WorkloadKind::TpccNp {
            TpccMix::NewOrderPayment
        } else {
            TpccMix::Full
        },
        ..TpccConfig::default()
    }
}

fn ycsb_config(y: YcsbKind, p: &WorkloadParams) -> YcsbConfig {
    let preset = match y {
        YcsbKind::A => YcsbPreset::A,
        YcsbKind::B => YcsbPreset::B,
        YcsbKind::C => YcsbPreset::C,
        YcsbKind::F => YcsbPreset::F,
    };
    let mut c = YcsbConfig::preset(preset);
    c.records = p.records;
    c.ops_per_txn = p.ops_per_txn;
    c.payload_bytes = p.payload;
    c.theta = p.theta;
    c
}

fn micro_config(p: &WorkloadParams) -> MicroConfig {
    MicroConfig {
        keys: p.records,
        reads: p.reads,
        writes: p.writes,
        theta: p.theta,
        value_bytes: p.payload,
    }
}

fn smallbank_config(p: &WorkloadParams) -> SmallBankConfig {
    SmallBankConfig {
        customers: p.customers,
        theta: p.theta,
        audit: p.audit,
        ..SmallBankConfig::default()
    }
}

/// A built workload of any kind (what [`AnyWorkload::visit`] hands to a protocol's driver).
#[derive(Debug)]
pub enum AnyWorkload {
    /// YCSB.
    Ycsb(Ycsb),
    /// The micro benchmark.
    Micro(Micro),
    /// SmallBank.
    SmallBank(SmallBank),
    /// TPC-C (either mix).
    Tpcc(Tpcc),
    /// Empty transactions.
    Noop(NoopWorkload),
}

/// Code generic over the workload type, run by [`AnyWorkload::visit`].
pub trait WorkloadVisitor {
    /// What the visit returns.
    type Output;
    /// Runs on the concrete workload.
    fn visit<W>(self, workload: &W) -> Self::Output
    where
        W: Workload + Sync,
        W::Program: Clone + Send + Sync + 'static;
}

impl AnyWorkload {
    /// Builds the workload `kind` from `params` (the error names the bad parameter).
    pub fn new(kind: WorkloadKind, params: &WorkloadParams) -> Result<Self, Error> {
        Ok(match kind {
            WorkloadKind::Ycsb(y) => AnyWorkload::Ycsb(Ycsb::new(ycsb_config(y, params))?),
            WorkloadKind::Micro => AnyWorkload::Micro(Micro::new(micro_config(params))?),
            WorkloadKind::SmallBank => {
                AnyWorkload::SmallBank(SmallBank::new(smallbank_config(params))?)
            }
            WorkloadKind::Tpcc | WorkloadKind::TpccNp => {
                AnyWorkload::Tpcc(Tpcc::new(tpcc_config(kind, params))?)
            }
            WorkloadKind::Noop => AnyWorkload::Noop(NoopWorkload),
        })
    }

    /// Runs `visitor` on the concrete workload.
    pub fn visit<V: WorkloadVisitor>(&self, visitor: V) -> V::Output {
        match self {
            AnyWorkload::Ycsb(w) => visitor.visit(w),
            AnyWorkload::Micro(w) => visitor.visit(w),
            AnyWorkload::SmallBank(w) => visitor.visit(w),
            AnyWorkload::Tpcc(w) => visitor.visit(w),
            AnyWorkload::Noop(w) => visitor.visit(w),
        }
    }

    /// A lower bound of the memory its loaded tables take: every dense table's capacity times
    /// its value size plus 16 bytes of record header (engines add more: version lists, indexes
    /// of the ordered tables, which this leaves out).
    pub fn table_bytes(&self) -> u64 {
        self.schema()
            .tables()
            .iter()
            .map(|t| match t.index {
                txlab_core::IndexKind::Dense { capacity } => {
                    capacity.saturating_mul(t.value_size as u64 + 16)
                }
                _ => 0,
            })
            .fold(0u64, u64::saturating_add)
    }

    /// The workload's schema.
    pub fn schema(&self) -> txlab_core::Schema {
        struct Schema;
        impl WorkloadVisitor for Schema {
            type Output = txlab_core::Schema;
            fn visit<W>(self, workload: &W) -> txlab_core::Schema
            where
                W: Workload + Sync,
                W::Program: Clone + Send + 'static,
            {
                workload.schema()
            }
        }
        self.visit(Schema)
    }
}
