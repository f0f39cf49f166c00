//! The static extension point where the non-visible write rule (NWR) will plug into TicToc.
//!
//! NWR (the "non-visible write rule" paper, §4.1 and §6.1.1) interrupts a baseline protocol at a
//! transaction's commit request and tries to *omit* all of its writes by ordering them just before
//! each key's pivot version; if its own validation fails, it hands control back to the baseline,
//! which then commits or aborts as usual ("no false aborts"). For TicToc the authors shrink the
//! timestamp word to 32 bits and keep the epoch in the other 32 (§6.1.1).
//!
//! The engine is generic over a [`WriteOmission`] policy: `TicToc<Rec, NoNwr>` (the default, this
//! crate) is plain TicToc, and a future `TicToc<Rec, Nwr>` supplies the NWR path. The call site is
//! the block marked `NWR HOOK` in [`crate::commit`]: after the read set is known and before the
//! write set is locked. Because [`WriteOmission::ENABLED`] is an associated constant, the block is
//! compiled out for [`NoNwr`].
//!
//! Not implemented here: the pivot-version objects, the omitted path, and the extra history events
//! (omitted writes are recorded with `visible = false` and an explicit `order` just below the
//! pivot's, see `txlab_core::history`).

use std::fmt::Debug;

/// A policy deciding whether a committing transaction's writes may be omitted (see module docs).
pub trait WriteOmission: Debug + Default + Send + Sync + 'static {
    /// Whether the commit path consults the policy at all (`false` compiles the hook out).
    const ENABLED: bool;

    /// The engine's name as `Engine::name` reports it (`tictoc` for plain TicToc).
    const ENGINE_NAME: &'static str;
}

/// Plain TicToc: never omit a write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoNwr;

impl WriteOmission for NoNwr {
    const ENABLED: bool = false;
    const ENGINE_NAME: &'static str = "tictoc";
}
