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

use std::fmt::Debug;

/// A policy deciding whether a committing transaction's writes may be omitted.
pub trait WriteOmission: Debug + Default + Send + Sync + 'static {
    /// Whether the commit path consults the rule at all (`false` compiles the hook out).
    const ENABLED: bool;

    /// Whether omitters are restricted to transactions that write exactly one item, so that only
    /// the pivot writer's read of its own item is marked ([`NwrSingleWrite`]; the rule is
    /// [`crate::rule::try_omit_single`], the argument in `docs/protocols/nwr.md`, "A rule with
    /// fewer read marks"). `false` for [`Nwr`]: any number of writes, every pre-epoch read marked.
    /// Silo, TicToc and MVTO implement it (MVTO places its omitter by timestamp instead).
    const SINGLE_WRITE_OMITTERS: bool = false;

    /// The engine's name: `baseline` without NWR, `extended` with it, `single` with
    /// single-write omitters.
    fn engine_name(
        baseline: &'static str,
        extended: &'static str,
        single: &'static str,
    ) -> &'static str {
        match (Self::ENABLED, Self::SINGLE_WRITE_OMITTERS) {
            (_, true) => single,
            (true, false) => extended,
            (false, false) => baseline,
        }
    }
}

/// The baseline protocol: never omit a write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoNwr;

impl WriteOmission for NoNwr {
    const ENABLED: bool = false;
}

/// The NWR-extended protocol: try to omit blind writes at commit (the NWR paper, §4–§5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Nwr;

impl WriteOmission for Nwr {
    const ENABLED: bool = true;
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
    const ENABLED: bool = true;
    const SINGLE_WRITE_OMITTERS: bool = true;
}

/// Checks that the 128-bit CAS is lock-free in this build (required by NWR; call it when
/// constructing an engine with `W::ENABLED`).
pub fn require_lock_free_pivot() -> Result<(), txlab_core::Error> {
    if txlab_core::sync::atomic_u128_is_lock_free() {
        Ok(())
    } else {
        Err(txlab_core::Error::invalid(
            "target cpu",
            "without a lock-free 128-bit compare-and-swap",
            "a CPU with cmpxchg16b (detected at run time, or compiled in with -C target-cpu=x86-64-v2); NWR's pivot objects need it",
        ))
    }
}
