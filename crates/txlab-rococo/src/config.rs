//! What every node of a cluster shares: the workload, the protocol, the routing, the profiles
//! and the run's parameters ([`Shared`], built once and validated by [`Shared::new`]), and how
//! histories are recorded ([`Recording`]).

use crate::msg::OrderEntry;
use crate::sc::ScOptions;
use crate::store::Layouts;
use crate::workload::{PiecedWorkload, Routing};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use txlab_core::pieces::{TableLayout, TxnProfile};
use txlab_core::protocol::history::TxnRecord;
use txlab_core::{Error, RetryPolicy};

/// The concurrency control a cluster runs; servers, pieces, storage, coordinators and transport
/// are the same for all three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Protocol {
    /// ROCOCO (§3, §4.1).
    Rococo,
    /// Two-phase locking with wound-wait, and two-phase commit.
    TwoPl,
    /// Optimistic concurrency control validated in two-phase commit's prepare.
    Occ,
}

impl Protocol {
    /// Every protocol.
    pub const ALL: [Protocol; 3] = [Protocol::Rococo, Protocol::TwoPl, Protocol::Occ];

    /// The CLI name (`rococo`, `2pl-2pc`, `occ-2pc`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Rococo => "rococo",
            Protocol::TwoPl => "2pl-2pc",
            Protocol::Occ => "occ-2pc",
        }
    }

    /// Parses a CLI name.
    pub fn from_name(name: &str) -> Result<Self, Error> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| Error::invalid("protocol", name, "rococo, 2pl-2pc or occ-2pc"))
    }
}

/// A deliberately broken variant (tests only); the correctness kit must catch each one. The type
/// exists in every build so that the call sites that test for a mutant compile either way; only
/// with the `mutation` feature can [`Params`] switch one on ([`Params::mutant`] is otherwise
/// always `false` and compiles away).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// ROCOCO sorts a component by transaction id, ignoring `i`-edges.
    SortById,
    /// ROCOCO decides without waiting for ancestors to be `COMMITTING` (no status requests).
    NoCommittingWait,
    /// One-hop tracking takes an edge from the most recent reader only.
    LastReaderOnly,
    /// Read-only transactions commit after a single round.
    SingleRoundReadOnly,
    /// A held read-only read runs at once, without waiting for the unfinished writers it
    /// found (as if its hold made that wait unnecessary).
    HeldReadNoWait,
    /// A held read-only round commits alone, without a second round agreeing with it (as if
    /// the hold made the comparison unnecessary).
    HeldRoundAlone,
    /// GC drops graph entries of the current epoch instead of two epochs back.
    GcWithoutDelay,
    /// 2PL releases its locks when its pieces have run, before 2PC.
    TwoPlEarlyRelease,
    /// OCC commits without validating its reads.
    OccNoValidation,
}

impl Mutant {
    /// Every mutant.
    pub const ALL: [Mutant; 9] = [
        Mutant::SortById,
        Mutant::NoCommittingWait,
        Mutant::LastReaderOnly,
        Mutant::SingleRoundReadOnly,
        Mutant::HeldReadNoWait,
        Mutant::HeldRoundAlone,
        Mutant::GcWithoutDelay,
        Mutant::TwoPlEarlyRelease,
        Mutant::OccNoValidation,
    ];

    /// The protocol the mutant breaks.
    pub fn protocol(self) -> Protocol {
        match self {
            Mutant::TwoPlEarlyRelease => Protocol::TwoPl,
            Mutant::OccNoValidation => Protocol::Occ,
            _ => Protocol::Rococo,
        }
    }
}

/// The run's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// GC epoch period (§3.4); `None` turns GC off.
    pub gc_epoch: Option<Duration>,
    /// How long a request waits for its answer before it is sent again.
    pub retransmit: Duration,
    /// Run every piece through `CheckedOps` (every access checked against its declared keys).
    pub checked: bool,
    /// Rounds a read-only transaction may restart before it is abandoned (§4.1).
    pub ro_max_restarts: u32,
    /// After this many disagreeing rounds a read-only transaction's rounds hold their keys
    /// (`RoRead::hold`, `server::readonly`); `None` never holds (the paper's protocol, whose
    /// read-only transactions never delay writers), `Some(0)` holds from the first round.
    /// Holds are a txlab extension beyond the paper. Default `None`: holds end abandonment
    /// under hot keys but lengthen writers' waits (p99 latency, `docs/results/rococo.md`,
    /// "Read-only holds"), so they are an option, not the default.
    pub ro_hold_after: Option<u32>,
    /// Bounds a hold's effects (`server::readonly`): a start request parked by holds goes on
    /// once it has waited this long, whatever still holds its keys, and a hold is dropped when
    /// it is this old (its transaction's next held round holds again). What ends a wait
    /// between a held read and a writer it keeps back, and what clears a hold whose release
    /// never came. Accepted: 1 µs to [`MAX_RO_HOLD_TIMEOUT`].
    pub ro_hold_timeout: Duration,
    /// Coordinators log each transaction in their `Durable` store before starting it (§3.5).
    pub log_requests: bool,
    /// The baselines' retry backoff (2PL, OCC); one spin stands for `backoff_unit`.
    pub backoff: RetryPolicy,
    /// The delay one backoff spin stands for in a coordinator's retry timer.
    pub backoff_unit: Duration,
    /// Seeds the generators.
    pub seed: u64,
    /// A deliberately broken variant.
    #[cfg(feature = "mutation")]
    pub mutant: Option<Mutant>,
    /// Runs ROCOCO even on profiles the offline checker rejects (tests only: it shows that
    /// the checker's rejections are real, by letting the kit find the violation they allow).
    #[cfg(feature = "mutation")]
    pub unchecked: bool,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            gc_epoch: Some(Duration::from_millis(100)),
            retransmit: Duration::from_millis(500),
            checked: false,
            ro_max_restarts: 16,
            ro_hold_after: None,
            ro_hold_timeout: Duration::from_millis(10),
            log_requests: false,
            backoff: RetryPolicy {
                max_attempts: None,
                initial_spins: 16,
                max_spins: 1 << 12,
            },
            backoff_unit: Duration::from_nanos(250),
            seed: 0,
            #[cfg(feature = "mutation")]
            mutant: None,
            #[cfg(feature = "mutation")]
            unchecked: false,
        }
    }
}

/// The longest accepted `Params::ro_hold_timeout`.
pub const MAX_RO_HOLD_TIMEOUT: Duration = Duration::from_secs(3600);

impl Params {
    /// Checks the fields that have a range; the error names the field, its value and the
    /// accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        let min = Duration::from_micros(1);
        if !(min..=MAX_RO_HOLD_TIMEOUT).contains(&self.ro_hold_timeout) {
            return Err(Error::invalid(
                "ro_hold_timeout",
                format!("{:?}", self.ro_hold_timeout),
                format!("{min:?}..={MAX_RO_HOLD_TIMEOUT:?}"),
            ));
        }
        Ok(())
    }

    /// Whether the offline checker's verdict is ignored (`unchecked`, tests only).
    fn skips_sc_check(&self) -> bool {
        #[cfg(feature = "mutation")]
        return self.unchecked;
        #[cfg(not(feature = "mutation"))]
        false
    }

    /// Whether mutant `m` is on.
    #[cfg(feature = "mutation")]
    pub fn mutant(&self, m: Mutant) -> bool {
        self.mutant == Some(m)
    }

    /// Whether mutant `m` is on (never, without the `mutation` feature).
    #[cfg(not(feature = "mutation"))]
    #[inline(always)]
    pub fn mutant(&self, _m: Mutant) -> bool {
        false
    }
}

/// Everything the nodes of one cluster share (module docs).
pub struct Shared<W: PiecedWorkload> {
    /// The workload.
    pub workload: W,
    /// The concurrency control.
    pub protocol: Protocol,
    /// Where pieces and rows go.
    pub routing: Routing,
    /// The workload's profiles; for ROCOCO with the kinds the checker made effective (a
    /// piece promoted to immediate runs as immediate, `ScReport::effective_profiles`).
    pub profiles: Vec<TxnProfile>,
    /// Its table layouts.
    pub layouts: Layouts,
    /// The same, as a list (for `CheckedOps`).
    pub layout_list: Vec<TableLayout>,
    /// The run's parameters.
    pub params: Params,
}

impl<W: PiecedWorkload> fmt::Debug for Shared<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("workload", &self.workload.name())
            .field("protocol", &self.protocol)
            .field("servers", &self.routing.servers())
            .finish_non_exhaustive()
    }
}

/// The largest number of servers a cluster may have (node ids are `u16`, and client nodes need
/// some).
pub const MAX_SERVERS: u16 = 512;

impl<W: PiecedWorkload> Shared<W> {
    /// Validates the parameters ([`Params::validate`]) and the workload for `protocol` on
    /// `servers` servers: it must run as pieces, and
    /// for ROCOCO its profiles must pass the offline checker (a workload with an unreorderable
    /// SC-cycle is refused with the checker's report and the proposed merge: merged pieces are
    /// not executed), and its pieces run with their effective kinds.
    pub fn new(
        workload: W,
        protocol: Protocol,
        servers: u16,
        params: Params,
    ) -> Result<Arc<Self>, Error> {
        if !(1..=MAX_SERVERS).contains(&servers) {
            return Err(Error::invalid(
                "servers",
                servers,
                format!("1..={MAX_SERVERS}"),
            ));
        }
        params.validate()?;
        workload.check_pieced()?;
        let mut profiles = workload.profiles();
        let layout_list = workload.table_layouts();
        let report = crate::sc::analyze(&profiles, &layout_list, ScOptions::default())?;
        if protocol == Protocol::Rococo {
            if !params.skips_sc_check() {
                report.require_safe()?;
            }
            profiles = report.effective_profiles(&profiles);
        }
        let routing = Routing::new(workload.partitioner(u32::from(servers))?, servers)?;
        Ok(Arc::new(Self {
            layouts: Layouts::new(layout_list.clone()),
            layout_list,
            workload,
            protocol,
            routing,
            profiles,
            params,
        }))
    }

    /// The number of servers.
    pub fn servers(&self) -> u16 {
        self.routing.servers()
    }
}

/// How a run records histories: compiled out when `ENABLED` is false (every
/// `if R::ENABLED { .. }` block is removed), so a measured run pays nothing.
pub trait Recording: Send + Sync + fmt::Debug + 'static {
    /// Whether servers capture reads, writes and their execution order at all.
    const ENABLED: bool;

    /// One finished transaction: its merged record and its piece executions on every server.
    fn record(&self, record: TxnRecord, order: Vec<OrderEntry>);
}

/// Records nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoRecording;

impl Recording for NoRecording {
    const ENABLED: bool = false;

    #[inline(always)]
    fn record(&self, _record: TxnRecord, _order: Vec<OrderEntry>) {}
}

/// Records everything in memory.
#[derive(Debug, Default)]
pub struct MemoryRecording {
    txns: Mutex<Vec<(TxnRecord, Vec<OrderEntry>)>>,
}

impl MemoryRecording {
    /// An empty recording.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes everything recorded so far.
    pub fn take(&self) -> Vec<(TxnRecord, Vec<OrderEntry>)> {
        std::mem::take(&mut *self.txns.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// How many transactions were recorded.
    pub fn len(&self) -> usize {
        self.txns.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Recording for MemoryRecording {
    const ENABLED: bool = true;

    fn record(&self, record: TxnRecord, order: Vec<OrderEntry>) {
        self.txns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((record, order));
    }
}
