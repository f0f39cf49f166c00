//! The registry: the protocols and workloads the CLI can run, by name, and the one function that
//! turns a (protocol, workload, parameters) point into a finished run.
//!
//! The runner is generic; this file is where concrete engine and workload types meet. Adding a
//! protocol means adding a [`Protocol`] variant, its name and description, and one match arm in
//! [`run_point`] (two if it supports history recording for `--check`).
//!
//! The OCC-batching engines (`batch-*`, `silo-ta`) have their own drivers; their arms call
//! [`crate::batch`], which converts the drivers' statistics into a [`RunResult`].
//!
//! Hidden entries (`noop`) exist for measuring the harness itself; `txlab list` does not show
//! them, but `--protocol noop --workload noop` runs them.
//!
//! With the test-only cargo feature `mutants` (off by default; it turns on `txlab-silo`'s
//! `mutation` fault injection, which normal builds compile out), the hidden protocol
//! `silo-mutant-skip-read-validation` (Silo committing without validating its read set) also
//! exists, so tests can show that `txlab run --check` fails on a really broken engine:
//! `cargo test -p txlab-harness --features mutants --test check_mutant`.

use crate::batch::{BatchParams, pipeline_mode, run_pipeline, run_silo_ta};
use crate::noop::{NoopEngine, NoopWorkload};
use crate::runner::{RunConfig, RunResult, run_workload};
use serde::Serialize;
use std::time::Duration;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::epoch::EpochConfig;
use txlab_core::sync::Arc;
use txlab_core::{AckMode, Engine, Error};
use txlab_mvto::{Mvto, MvtoConfig, MvtoNwrSingle};
use txlab_silo::{Silo, SiloConfig, SiloNwrSingle};
use txlab_tictoc::{TicToc, TicTocConfig, TicTocNwrSingle};
use txlab_workload::{Micro, MicroConfig, SmallBank, SmallBankConfig, Workload};
use txlab_workload::{Tpcc, TpccConfig, TpccMix};
use txlab_workload::{Ycsb, YcsbConfig, YcsbPreset};

/// A concurrency-control protocol the harness can run.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Protocol {
    /// Silo (Tu et al., SOSP 2013).
    Silo,
    /// TicToc (Yu et al., SIGMOD 2016).
    TicToc,
    /// Multi-version timestamp ordering, Cicada style (Lim et al., SIGMOD 2017).
    Mvto,
    /// Silo with the non-visible write rule (Nakazono et al.), txlab's sound rule.
    SiloNwr,
    /// Silo with the non-visible write rule restricted to single-write omitters, which lets
    /// read-only transactions leave no mark (`docs/protocols/nwr.md`).
    SiloNwrSingle,
    /// TicToc with the non-visible write rule (epoch-prefixed timestamps).
    TicTocNwr,
    /// TicToc with the non-visible write rule restricted to single-write omitters; no reader
    /// leaves a mark (`docs/protocols/tictoc.md`).
    TicTocNwrSingle,
    /// MVTO with the non-visible write rule (Silo's overwriter check).
    MvtoNwr,
    /// MVTO with the non-visible write rule restricted to single-write omitters, placed by
    /// timestamp just below a pivot; no reader leaves a mark (`docs/protocols/mvto.md`).
    MvtoNwrSingle,
    /// The OCC-batching pipeline (Ding et al., VLDB 2018), mode `base`: no batching.
    BatchBase,
    /// The OCC-batching pipeline, mode `batch`: storage and validator batching, no reordering.
    BatchBatch,
    /// The OCC-batching pipeline, mode `sr`: storage batching with reordering.
    BatchSr,
    /// The OCC-batching pipeline, mode `vc`: validator batching with reordering.
    BatchVc,
    /// The OCC-batching pipeline, mode `srvc`: storage and validator reordering.
    BatchSrvc,
    /// Thread-aware batching (Ding et al., VLDB 2018, §4.2) over Silo.
    SiloTa,
    /// Transactions that do nothing (hidden; measures the harness).
    Noop,
    /// Silo without read validation (hidden, feature `mutants` only: a broken engine for testing
    /// `--check`).
    #[cfg(feature = "mutants")]
    SiloMutantSkipReadValidation,
}

impl Protocol {
    /// Every protocol, hidden ones included.
    pub const ALL: [Protocol; 16] = [
        Protocol::Silo,
        Protocol::TicToc,
        Protocol::Mvto,
        Protocol::SiloNwr,
        Protocol::SiloNwrSingle,
        Protocol::TicTocNwr,
        Protocol::TicTocNwrSingle,
        Protocol::MvtoNwr,
        Protocol::MvtoNwrSingle,
        Protocol::BatchBase,
        Protocol::BatchBatch,
        Protocol::BatchSr,
        Protocol::BatchVc,
        Protocol::BatchSrvc,
        Protocol::SiloTa,
        Protocol::Noop,
    ];

    /// The test-only broken engines (feature `mutants`; none without it). Hidden.
    #[cfg(feature = "mutants")]
    pub const MUTANTS: &'static [Protocol] = &[Protocol::SiloMutantSkipReadValidation];
    /// The test-only broken engines (feature `mutants`; none without it). Hidden.
    #[cfg(not(feature = "mutants"))]
    pub const MUTANTS: &'static [Protocol] = &[];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "mutants")]
            Protocol::SiloMutantSkipReadValidation => "silo-mutant-skip-read-validation",
            Protocol::Silo => "silo",
            Protocol::TicToc => "tictoc",
            Protocol::Mvto => "mvto",
            Protocol::SiloNwr => "silo-nwr",
            Protocol::SiloNwrSingle => "silo-nwr-single",
            Protocol::TicTocNwr => "tictoc-nwr",
            Protocol::TicTocNwrSingle => "tictoc-nwr-single",
            Protocol::MvtoNwr => "mvto-nwr",
            Protocol::MvtoNwrSingle => "mvto-nwr-single",
            Protocol::BatchBase => "batch-base",
            Protocol::BatchBatch => "batch-batch",
            Protocol::BatchSr => "batch-sr",
            Protocol::BatchVc => "batch-vc",
            Protocol::BatchSrvc => "batch-srvc",
            Protocol::SiloTa => "silo-ta",
            Protocol::Noop => "noop",
        }
    }

    /// One line for `txlab list`.
    pub fn description(self) -> &'static str {
        match self {
            Protocol::Silo => {
                "Silo OCC: epoch-based group commit, read validation, phantom stripes (SOSP 2013)"
            }
            Protocol::TicToc => {
                "TicToc OCC: commit timestamps computed from data (wts/rts), no global counter (SIGMOD 2016)"
            }
            Protocol::Mvto => {
                "MVTO, Cicada style: per-worker clocks, version lists, rapid GC, group commit (SIGMOD 2017)"
            }
            Protocol::SiloNwr => {
                "Silo + non-visible write rule: blind writes omitted via a 128-bit pivot CAS (sound variant)"
            }
            Protocol::SiloNwrSingle => {
                "Silo + non-visible write rule for single blind writes only; read-only transactions mark nothing"
            }
            Protocol::TicTocNwr => {
                "TicToc + non-visible write rule: epoch-prefixed timestamps, 128-bit pivot CAS (sound variant)"
            }
            Protocol::TicTocNwrSingle => {
                "TicToc + non-visible write rule for single blind writes only; no reader marks anything"
            }
            Protocol::MvtoNwr => {
                "MVTO + non-visible write rule: omitted blind writes link no version (sound variant)"
            }
            Protocol::MvtoNwrSingle => {
                "MVTO + non-visible write rule for single blind writes, placed just below a pivot by timestamp; no reader marks anything"
            }
            Protocol::BatchBase => {
                "OCC-batching pipeline, centralized validator, no batching (VLDB 2018 `base`)"
            }
            Protocol::BatchBatch => {
                "OCC-batching pipeline: storage + validator batching in arrival order (`batch`)"
            }
            Protocol::BatchSr => {
                "OCC-batching pipeline: storage batching with writes-first reordering (`sr`)"
            }
            Protocol::BatchVc => {
                "OCC-batching pipeline: validator batching with FVS reordering (`vc`)"
            }
            Protocol::BatchSrvc => {
                "OCC-batching pipeline: storage + validator reordering (`srvc`, the paper's best)"
            }
            Protocol::SiloTa => {
                "Silo with thread-aware batching: conflicting transactions run on one thread (VLDB 2018 §4.2)"
            }
            Protocol::Noop => "transactions that do nothing; measures the harness's own overhead",
            #[cfg(feature = "mutants")]
            Protocol::SiloMutantSkipReadValidation => {
                "BROKEN on purpose (tests only): Silo committing without read validation"
            }
        }
    }

    /// Whether `txlab list` and `txlab compare` leave it out.
    pub fn hidden(self) -> bool {
        matches!(self, Protocol::Noop) || Self::MUTANTS.contains(&self)
    }

    /// Whether the generic interactive runner ([`crate::runner`]) drives it. `txlab compare`
    /// runs only these: the batching engines (`batch-*`, `silo-ta`) have their own drivers, take
    /// longer per point and measure a different architecture (a centralized validator, or a
    /// batcher choosing each transaction's thread), so they are run explicitly with `txlab run`.
    pub fn interactive(self) -> bool {
        pipeline_mode(self).is_none() && self != Protocol::SiloTa
    }

    /// The visible protocols.
    pub fn visible() -> impl Iterator<Item = Protocol> {
        Self::ALL.into_iter().filter(|p| !p.hidden())
    }

    /// Parses a CLI name.
    pub fn from_name(name: &str) -> Result<Protocol, Error> {
        Self::ALL
            .into_iter()
            .chain(Self::MUTANTS.iter().copied())
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "protocol",
                    name,
                    format!("one of {}", names(Self::visible().map(Self::name))),
                )
            })
    }
}

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

    /// Parses a CLI name.
    pub fn from_name(name: &str) -> Result<WorkloadKind, Error> {
        Self::ALL
            .into_iter()
            .find(|w| w.name() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "workload",
                    name,
                    format!("one of {}", names(Self::visible().map(Self::name))),
                )
            })
    }
}

impl Serialize for Protocol {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl Serialize for WorkloadKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

fn names(it: impl Iterator<Item = &'static str>) -> String {
    it.collect::<Vec<_>>().join(", ")
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

/// Engine parameters shared by the CLI flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EngineParams {
    /// Epoch length (Silo's global epoch advance period); serialized in seconds.
    #[serde(serialize_with = "ser_secs")]
    pub epoch: Duration,
    /// Acknowledge at commit or once the epoch is stable.
    #[serde(serialize_with = "ser_ack")]
    pub ack: AckMode,
    /// The batching engines' parameters (`batch-*`, `silo-ta`).
    pub batch: BatchParams,
}

/// Serializes a duration as fractional seconds.
pub fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn ser_ack<S: serde::Serializer>(a: &AckMode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(ack_name(*a))
}

/// `commit` or `epoch`.
pub fn ack_name(a: AckMode) -> &'static str {
    match a {
        AckMode::AtCommit => "commit",
        _ => "epoch",
    }
}

impl Default for EngineParams {
    fn default() -> Self {
        Self {
            epoch: EpochConfig::DEFAULT_INTERVAL,
            ack: AckMode::EpochStable,
            batch: BatchParams::default(),
        }
    }
}

/// What `--check` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckSummary {
    /// Whether the history checker recorded the run (protocols without recording only check the
    /// workload's invariants).
    pub history_checked: bool,
    /// Committed transactions in the checked history.
    pub committed: usize,
    /// Anomalies found, as `kind: count` lines; empty when serializable.
    pub anomalies: Vec<String>,
    /// The workload's invariant violation, if any.
    pub invariant: Option<String>,
}

impl CheckSummary {
    /// Whether the run passed.
    pub fn passed(&self) -> bool {
        self.anomalies.is_empty() && self.invariant.is_none()
    }
}

/// The result of [`run_point`].
#[derive(Debug, Clone)]
pub struct PointOutcome {
    /// The measurement.
    pub result: RunResult,
    /// The workload's parameters as it reports them.
    pub parameters: Vec<(String, String)>,
    /// Present iff checking was asked for.
    pub check: Option<CheckSummary>,
}

/// Checks that `workload` can be built from `params` (so bad flags are found before any run).
pub fn validate_workload(kind: WorkloadKind, params: &WorkloadParams) -> Result<(), Error> {
    match kind {
        WorkloadKind::Ycsb(y) => Ycsb::new(ycsb_config(y, params)).map(|_| ()),
        WorkloadKind::Micro => Micro::new(micro_config(params)).map(|_| ()),
        WorkloadKind::SmallBank => SmallBank::new(smallbank_config(params)).map(|_| ()),
        WorkloadKind::Tpcc | WorkloadKind::TpccNp => {
            Tpcc::new(tpcc_config(kind, params)).map(|_| ())
        }
        WorkloadKind::Noop => Ok(()),
    }
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

/// Builds, loads and runs one point; with `check`, records the history (where the protocol
/// supports it), checks it for serializability anomalies and checks the workload's invariants.
pub fn run_point(
    protocol: Protocol,
    workload: WorkloadKind,
    params: &WorkloadParams,
    engine: &EngineParams,
    run: &RunConfig,
    check: bool,
) -> Result<PointOutcome, Error> {
    match workload {
        WorkloadKind::Ycsb(y) => {
            let w = Ycsb::new(ycsb_config(y, params))?;
            with_workload(protocol, &w, engine, run, check)
        }
        WorkloadKind::Micro => {
            let w = Micro::new(micro_config(params))?;
            with_workload(protocol, &w, engine, run, check)
        }
        WorkloadKind::SmallBank => {
            let w = SmallBank::new(smallbank_config(params))?;
            with_workload(protocol, &w, engine, run, check)
        }
        WorkloadKind::Tpcc | WorkloadKind::TpccNp => {
            let w = Tpcc::new(tpcc_config(workload, params))?;
            with_workload(protocol, &w, engine, run, check)
        }
        WorkloadKind::Noop => with_workload(protocol, &NoopWorkload, engine, run, check),
    }
}

pub(crate) fn silo_config(p: &EngineParams) -> Result<SiloConfig, Error> {
    Ok(SiloConfig::default()
        .with_epoch(EpochConfig::every(p.epoch)?)
        .with_ack(p.ack))
}

fn with_workload<W>(
    protocol: Protocol,
    workload: &W,
    params: &EngineParams,
    run: &RunConfig,
    check: bool,
) -> Result<PointOutcome, Error>
where
    W: Workload,
    W::Program: Clone + Send + 'static,
{
    let schema = workload.schema();
    // An interactive engine built with a recorder (then the history is checked) or without.
    macro_rules! interactive {
        ($check:expr, |$rec:ident| $recorded:expr, $plain:expr) => {{
            if $check {
                let recorder = Arc::new(MemoryRecorder::new());
                let $rec = Arc::clone(&recorder);
                let engine = $recorded;
                let out = measure(&engine, workload, run, true)?;
                Ok(with_history_check(out, &recorder))
            } else {
                let engine = $plain;
                measure(&engine, workload, run, false)
            }
        }};
    }
    if let Some(mode) = pipeline_mode(protocol) {
        return run_pipeline(mode, workload, params, run, check);
    }
    match protocol {
        Protocol::Silo => interactive!(
            check,
            |rec| Silo::with_recorder(&schema, silo_config(params)?, rec)?,
            Silo::new(&schema, silo_config(params)?)?
        ),
        Protocol::TicToc => interactive!(
            check,
            |rec| TicToc::with_recorder(&schema, tictoc_config(params)?, rec)?,
            TicToc::new(&schema, tictoc_config(params)?)?
        ),
        Protocol::Mvto => interactive!(
            check,
            |rec| Mvto::with_recorder(&schema, mvto_config(params)?, rec)?,
            Mvto::new(&schema, mvto_config(params)?)?
        ),
        Protocol::SiloNwr => interactive!(
            check,
            |rec| Silo::nwr_with_recorder(&schema, silo_config(params)?, rec)?,
            Silo::new_nwr(&schema, silo_config(params)?)?
        ),
        Protocol::SiloNwrSingle => interactive!(
            check,
            |rec| SiloNwrSingle::with_omission(&schema, silo_config(params)?, rec)?,
            SiloNwrSingle::new_with_omission(&schema, silo_config(params)?)?
        ),
        Protocol::TicTocNwr => interactive!(
            check,
            |rec| TicToc::nwr_with_recorder(&schema, tictoc_config(params)?, rec)?,
            TicToc::new_nwr(&schema, tictoc_config(params)?)?
        ),
        Protocol::TicTocNwrSingle => interactive!(
            check,
            |rec| TicTocNwrSingle::nwr_single_with_recorder(&schema, tictoc_config(params)?, rec)?,
            TicTocNwrSingle::new_nwr_single(&schema, tictoc_config(params)?)?
        ),
        Protocol::MvtoNwr => interactive!(
            check,
            |rec| Mvto::nwr_with_recorder(&schema, mvto_config(params)?, rec)?,
            Mvto::new_nwr(&schema, mvto_config(params)?)?
        ),
        Protocol::MvtoNwrSingle => interactive!(
            check,
            |rec| MvtoNwrSingle::nwr_single_with_recorder(&schema, mvto_config(params)?, rec)?,
            MvtoNwrSingle::new_nwr_single(&schema, mvto_config(params)?)?
        ),
        #[cfg(feature = "mutants")]
        Protocol::SiloMutantSkipReadValidation => {
            let config =
                silo_config(params)?.with_mutation(txlab_silo::Mutation::SkipReadValidation);
            interactive!(
                check,
                |rec| Silo::with_recorder(&schema, config, rec)?,
                Silo::new(&schema, config)?
            )
        }
        Protocol::SiloTa => run_silo_ta(workload, params, run, check),
        Protocol::Noop => measure(&NoopEngine::new(&schema), workload, run, check),
        Protocol::BatchBase
        | Protocol::BatchBatch
        | Protocol::BatchSr
        | Protocol::BatchVc
        | Protocol::BatchSrvc => Err(Error::Internal(format!(
            "{} is a pipeline protocol but has no mode",
            protocol.name()
        ))),
    }
}

fn mvto_config(p: &EngineParams) -> Result<MvtoConfig, Error> {
    Ok(MvtoConfig::default()
        .with_epoch(EpochConfig::every(p.epoch)?)
        .with_ack(p.ack))
}

fn tictoc_config(p: &EngineParams) -> Result<TicTocConfig, Error> {
    Ok(TicTocConfig::default()
        .with_epoch(EpochConfig::every(p.epoch)?)
        .with_ack(p.ack))
}

/// Checks the recorded history for serializability anomalies and adds the finding to `out`.
pub(crate) fn with_history_check(mut out: PointOutcome, recorder: &MemoryRecorder) -> PointOutcome {
    let report = check(&recorder.take(), CheckOptions::serializable());
    if let Some(c) = out.check.as_mut() {
        c.history_checked = true;
        c.committed = report.committed;
        c.anomalies = report
            .counts
            .iter()
            .map(|(k, n)| format!("{k:?}: {n}"))
            .collect();
    }
    out
}

fn measure<E: Engine, W: Workload>(
    engine: &E,
    workload: &W,
    run: &RunConfig,
    check: bool,
) -> Result<PointOutcome, Error> {
    workload.load(engine)?;
    let result = run_workload(engine, workload, run)?;
    let parameters = workload
        .parameters()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let check = check.then(|| CheckSummary {
        history_checked: false,
        committed: 0,
        anomalies: Vec::new(),
        invariant: workload.check(engine).err().map(|e| e.to_string()),
    });
    Ok(PointOutcome {
        result,
        parameters,
        check,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for p in Protocol::ALL {
            assert_eq!(Protocol::from_name(p.name()).unwrap(), p);
        }
        for w in WorkloadKind::ALL {
            assert_eq!(WorkloadKind::from_name(w.name()).unwrap(), w);
        }
        let e = Protocol::from_name("2pl").unwrap_err().to_string();
        assert!(e.contains("protocol = 2pl") && e.contains("silo"), "{e}");
        assert!(
            !e.contains("noop"),
            "hidden protocols are not advertised: {e}"
        );
        let e = WorkloadKind::from_name("tpch").unwrap_err().to_string();
        assert!(e.contains("workload = tpch") && e.contains("ycsb-a") && e.contains("tpcc"));
    }

    #[test]
    fn every_protocol_runs_ycsb_and_smallbank_with_checking() {
        let params = WorkloadParams {
            records: 1000,
            customers: 100,
            audit: true,
            ..Default::default()
        };
        let engine = EngineParams {
            epoch: Duration::from_millis(1),
            ack: AckMode::EpochStable,
            // Small batches and few live transactions keep the checked histories short.
            batch: BatchParams {
                batch_size: 8,
                concurrency: 32,
                reorder_workers: 1,
                ..BatchParams::default()
            },
        };
        let run = RunConfig {
            threads: 2,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(100),
            ..RunConfig::default()
        };
        // Every visible protocol, the batching engines (their own drivers) included.
        let protocols: Vec<Protocol> = Protocol::visible().collect();
        assert_eq!(protocols.len(), 15);
        for p in protocols {
            for w in [WorkloadKind::Ycsb(YcsbKind::A), WorkloadKind::SmallBank] {
                let out = run_point(p, w, &params, &engine, &run, true).unwrap();
                assert!(out.result.commits > 0, "{p:?} {w:?}");
                let c = out.check.unwrap();
                assert!(
                    c.history_checked && c.committed as u64 >= out.result.commits,
                    "{p:?} {w:?}: {c:?}"
                );
                assert!(c.passed(), "{p:?} {w:?}: {c:?}");
                assert!(out.parameters.iter().any(|(k, _)| k == "theta"));
                let r = &out.result;
                assert_eq!(r.threads, 2);
                assert!(r.elapsed_s >= 0.1, "{p:?} {w:?}: {}", r.elapsed_s);
                assert!(r.throughput_tps > 0.0 && r.latency.p50_us > 0.0);
                assert!(
                    r.latency.p50_us <= r.latency.p99_us && r.latency.p99_us <= r.latency.max_us
                );
                assert_eq!(
                    r.latency_ns.len(),
                    r.commits,
                    "{p:?} {w:?}: one sample per commit"
                );
            }
        }
    }

    #[test]
    fn tpcc_runs_on_every_protocol_with_its_consistency_conditions_checked() {
        let params = WorkloadParams {
            warehouses: 2,
            items: 1_000,
            district_customers: 100,
            ..Default::default()
        };
        // Group commit (1 ms epochs), so the NWR variants actually try their rule.
        let engine = EngineParams {
            epoch: Duration::from_millis(1),
            ack: AckMode::EpochStable,
            ..EngineParams::default()
        };
        let run = RunConfig {
            threads: 2,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(150),
            ..RunConfig::default()
        };
        for p in [
            Protocol::Silo,
            Protocol::TicToc,
            Protocol::Mvto,
            Protocol::SiloNwr,
            Protocol::SiloNwrSingle,
            Protocol::TicTocNwr,
            Protocol::TicTocNwrSingle,
            Protocol::MvtoNwr,
            Protocol::MvtoNwrSingle,
        ] {
            for w in [WorkloadKind::Tpcc, WorkloadKind::TpccNp] {
                let out = run_point(p, w, &params, &engine, &run, true).unwrap();
                assert!(out.result.commits > 0, "{p:?} {w:?}");
                let c = out.check.unwrap();
                assert!(c.history_checked && c.passed(), "{p:?} {w:?}: {c:?}");
                assert!(
                    out.parameters
                        .iter()
                        .any(|(k, v)| k == "warehouses" && v == "2")
                );
            }
        }
    }

    #[test]
    fn batching_engines_warm_up_and_report_their_counters() {
        let params = WorkloadParams {
            records: 1000,
            theta: 0.9,
            ..Default::default()
        };
        let engine = EngineParams {
            ack: AckMode::AtCommit,
            ..EngineParams::default()
        };
        let run = RunConfig {
            threads: 2,
            warmup: Duration::from_millis(30),
            duration: Duration::from_millis(60),
            ..RunConfig::default()
        };
        let out = run_point(
            Protocol::BatchSrvc,
            WorkloadKind::Micro,
            &params,
            &engine,
            &run,
            false,
        )
        .unwrap();
        let r = &out.result;
        assert!(r.commits > 0 && out.check.is_none());
        assert!(r.counters["batches"] > 0, "{:?}", r.counters);
        assert!(r.counters.contains_key("validation_aborts"));
        assert_eq!(r.retries, r.conflicts);
        let out = run_point(
            Protocol::SiloTa,
            WorkloadKind::Micro,
            &params,
            &engine,
            &run,
            false,
        )
        .unwrap();
        assert!(out.result.counters["batches"] > 0);
        // Bad batching parameters are refused before anything runs, naming the flag.
        let bad = EngineParams {
            batch: BatchParams {
                batch_size: 0,
                ..BatchParams::default()
            },
            ..EngineParams::default()
        };
        let e = run_point(
            Protocol::BatchBase,
            WorkloadKind::Micro,
            &params,
            &bad,
            &run,
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("--batch-size = 0"), "{e}");
    }

    #[test]
    fn bad_workload_parameters_are_reported_before_running() {
        let params = WorkloadParams {
            records: 0,
            ..Default::default()
        };
        let e = validate_workload(WorkloadKind::Ycsb(YcsbKind::A), &params).unwrap_err();
        assert!(e.to_string().contains("records"), "{e}");
        let params = WorkloadParams {
            theta: 11.0,
            ..Default::default()
        };
        assert!(validate_workload(WorkloadKind::SmallBank, &params).is_err());
    }
}
