//! The static switch every NWR-extendable engine is generic over.
//!
//! An engine `E<Rec, W: WriteOmission = NoNwr>` consults `W::ENABLED` (an associated constant) at
//! its commit hook, so with [`NoNwr`] the whole NWR path, the pivot objects and the read merging
//! are compiled out and the baseline's record layout is unchanged. With [`Nwr`] every item has a
//! [`crate::PivotCell`], kept beside the records (`txlab_storage::Companions`), since only
//! omitters touch it. Silo+NWR and TicToc+NWR keep check (4)'s read mark in a word of their own
//! record layouts; MVTO+NWR keeps its read-and-omit marks ([`crate::read_omit`]) in the spare
//! bits of its record's head word (`txlab_mvto::head`).
//!
//! Silo uses it as `Silo<Rec, Nwr>` (`txlab-silo`); TicToc and MVTO have the same hook point
//! (their `NWR HOOK` blocks) and plug in by implementing [`crate::NwrBaseline`] for their commit
//! context (see `docs/protocols/nwr.md`).

use std::fmt::{self, Debug};

/// Which write-omission rule an engine runs: the run-time image of a [`WriteOmission`] policy
/// (`W::MODE`), and what a protocol name's suffix selects (`silo`, `silo-nwr`, `silo-nwr-single`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NwrMode {
    /// The baseline protocol ([`NoNwr`]).
    Off,
    /// The non-visible write rule with pivot objects ([`Nwr`]).
    Full,
    /// The rule with single-write omitters and fewer read marks ([`NwrSingleWrite`]).
    SingleWrite,
}

impl NwrMode {
    /// Every mode, in the order protocol lists name them.
    pub const ALL: [NwrMode; 3] = [NwrMode::Off, NwrMode::Full, NwrMode::SingleWrite];

    /// Whether the commit path consults the rule at all.
    pub const fn enabled(self) -> bool {
        !matches!(self, NwrMode::Off)
    }

    /// Whether only transactions that write exactly one item may be omitted.
    pub const fn single_write_omitters(self) -> bool {
        matches!(self, NwrMode::SingleWrite)
    }

    /// What follows a baseline's name in the protocol name of this mode: `""`, `"-nwr"`,
    /// `"-nwr-single"`.
    pub const fn suffix(self) -> &'static str {
        match self {
            NwrMode::Off => "",
            NwrMode::Full => "-nwr",
            NwrMode::SingleWrite => "-nwr-single",
        }
    }

    /// The mode whose protocol name over `baseline` is `name` (`("silo", "silo-nwr")` gives
    /// [`NwrMode::Full`]); `None` if `name` is no variant of `baseline`.
    pub fn of_protocol(baseline: &str, name: &str) -> Option<NwrMode> {
        let suffix = name.strip_prefix(baseline)?;
        Self::ALL.into_iter().find(|m| m.suffix() == suffix)
    }

    /// Whether this mode needs a lock-free 128-bit compare-and-swap (its pivot objects).
    pub const fn needs_lock_free_pivot(self) -> bool {
        matches!(self, NwrMode::Full)
    }
}

impl fmt::Display for NwrMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NwrMode::Off => "off",
            NwrMode::Full => "nwr",
            NwrMode::SingleWrite => "nwr-single",
        })
    }
}

mod seal {
    /// Seals [`WriteOmission`](super::WriteOmission): the engines' NWR paths are sound only for
    /// the three policies of this module.
    pub trait Sealed {}
    impl Sealed for super::NoNwr {}
    impl Sealed for super::Nwr {}
    impl Sealed for super::NwrSingleWrite {}
}

/// A write-omission policy: the static switch an engine's commit path is compiled for. Sealed:
/// exactly [`NoNwr`], [`Nwr`] and [`NwrSingleWrite`], one per [`NwrMode`].
pub trait WriteOmission: seal::Sealed + Debug + Default + Send + Sync + 'static {
    /// The mode this policy compiles in.
    const MODE: NwrMode;

    /// Whether the commit path consults the rule at all (`false` compiles the hook out).
    const ENABLED: bool = Self::MODE.enabled();

    /// Whether omitters are restricted to transactions that write exactly one item, so that only
    /// the pivot writer's read of its own item is marked ([`NwrSingleWrite`]; the rule is
    /// [`crate::rule::try_omit_single`], the argument in `docs/protocols/nwr.md`, "A rule with
    /// fewer read marks"). `false` for [`Nwr`]: any number of writes, every pre-epoch read marked.
    /// Silo, TicToc and MVTO implement it (MVTO places its omitter by timestamp instead).
    const SINGLE_WRITE_OMITTERS: bool = Self::MODE.single_write_omitters();

    /// The engine's name: `baseline` without NWR, `extended` with it, `single` with
    /// single-write omitters.
    fn engine_name(
        baseline: &'static str,
        extended: &'static str,
        single: &'static str,
    ) -> &'static str {
        match Self::MODE {
            NwrMode::Off => baseline,
            NwrMode::Full => extended,
            NwrMode::SingleWrite => single,
        }
    }
}

/// The baseline protocol: never omit a write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoNwr;

impl WriteOmission for NoNwr {
    const MODE: NwrMode = NwrMode::Off;
}

/// The NWR-extended protocol: try to omit blind writes at commit (the NWR paper, §4–§5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Nwr;

impl WriteOmission for Nwr {
    const MODE: NwrMode = NwrMode::Full;
}

/// The NWR-extended protocol with *single-write omitters*: only a transaction that writes exactly
/// one item (blind) may be omitted, and in exchange read-only transactions, and the reads of
/// items a transaction does not write, leave no mark (`docs/protocols/nwr.md`, "A rule with
/// fewer read marks"). The one mark left is the pivot writer's own read of its item, and the
/// pivot's writer can publish it together with the pivot, in the item's version word
/// ([`crate::NwrBaseline::single_write_pivot`]). So there is no pivot object at all (no engine keeps a
/// companion of objects, and no record carries read-and-omit marks) and an omitter does no atomic
/// read-modify-write on one. Silo (`txlab_silo::SiloNwrSingle`, engine `silo-nwr-single`, the mark a TID bit) and
/// TicToc (`txlab_tictoc::TicTocNwrSingle`, engine `tictoc-nwr-single`, the mark a bit of the
/// history tag; its omitter extends its reads' `rts` by CAS, as TicToc+NWR's does), and MVTO
/// (`txlab_mvto::MvtoNwrSingle`, engine `mvto-nwr-single`: the omitter sits by timestamp just below
/// a committed version whose writer did not read the item, which the older version's `rts`
/// tells, and raises its reads' `rts` to that version's timestamp).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NwrSingleWrite;

impl WriteOmission for NwrSingleWrite {
    const MODE: NwrMode = NwrMode::SingleWrite;
}

/// Checks that the 128-bit CAS is lock-free in this build (required by NWR; call it when
/// constructing an engine with `W::ENABLED`).
pub fn require_lock_free_pivot() -> Result<(), txlab_core::Error> {
    if txlab_core::protocol::sync::atomic_u128_is_lock_free() {
        Ok(())
    } else {
        Err(txlab_core::Error::invalid(
            "target cpu",
            "without a lock-free 128-bit compare-and-swap",
            "a CPU with cmpxchg16b (detected at run time, or compiled in with -C target-cpu=x86-64-v2); NWR's pivot objects need it",
        ))
    }
}
