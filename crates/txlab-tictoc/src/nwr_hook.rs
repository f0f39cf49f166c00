//! The static extension point where the non-visible write rule (NWR) plugs into TicToc.
//!
//! NWR (the "non-visible write rule" paper, §4.1 and §6.1.1) interrupts a baseline protocol at a
//! transaction's commit request and tries to *omit* all of its writes by ordering them just before
//! each key's pivot version; if its own validation fails, it hands control back to the baseline,
//! which then commits or aborts as usual ("no false aborts"). For TicToc the authors shrink the
//! timestamp word to 32 bits and keep the epoch in the other 32 (§6.1.1); txlab keeps its 47-bit
//! timestamps and prefixes them with the epoch instead (`crate::word`).
//!
//! The engine is generic over a [`WriteOmission`] policy: `TicToc<Rec, NoNwr>` (the default) is
//! plain TicToc, and `TicToc<Rec, Nwr>` (`crate::TicTocNwr`) is TicToc+NWR. The call site is the
//! block marked `NWR HOOK` in [`crate::commit`]: after the read set is known and before the write
//! set is locked; TicToc's hooks for the rule (`txlab_nwr::NwrBaseline`) are in the same module.
//! Because [`WriteOmission::ENABLED`] is an associated constant, every NWR branch is compiled out
//! for [`NoNwr`], which keeps no pivot objects (TicToc+NWR keeps them beside the records, in
//! `TicToc::pivots`).
//!
//! The switch itself ([`WriteOmission`], [`NoNwr`], [`Nwr`]) lives in `txlab-nwr`, shared with
//! Silo+NWR and MVTO+NWR; it is re-exported here.

pub use txlab_nwr::{NoNwr, Nwr, NwrSingleWrite, WriteOmission};
