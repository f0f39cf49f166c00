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
//! The switch itself ([`WriteOmission`], [`NoNwr`]) lives in `txlab-nwr`, shared with Silo+NWR
//! and MVTO; it is re-exported here. Not implemented here yet: TicToc's `txlab_nwr::NwrBaseline`
//! hooks and the omitted path (see `docs/protocols/nwr.md`).

pub use txlab_nwr::{NoNwr, WriteOmission};
