//! TicToc's configuration: the toolkit's [`OccConfig`] with TicToc's test-only mutations.

#[cfg(feature = "mutation")]
use txlab_nwr::NwrMutation;
use txlab_occ::OccConfig;

/// A mutation that breaks one of TicToc's checks (feature `mutation`, tests only): the
/// correctness kit runs the broken protocol and must report anomalies.
#[cfg(feature = "mutation")]
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Commit without validating the read set (no `wts` comparison, no `rts` extension).
    SkipReadValidation,
    /// Validate the read set's `wts` but never extend `rts`: a later writer may then pick a
    /// commit timestamp inside an interval a committed reader relied on.
    SkipRtsExtension,
    /// Install writes without locking them first.
    SkipWriteLock,
    /// Skip phantom (stripe) validation of scans.
    SkipPhantomValidation,
    /// First writes of new keys ignore the stripes' scan timestamps (`crate::stripe_clock`): the
    /// scanner side is unchanged, so the time-travel phantom a physical check alone admits is
    /// back.
    SkipStripeTimestamps,
    /// A mutation of the non-visible write rule (`txlab_nwr::NwrMutation`), on the engine's NWR
    /// variants.
    Nwr(NwrMutation),
    /// Unlink deleted records without raising the retire floor (`crate::retire`): a key's fresh
    /// record may then be read or written at a timestamp below its retired tombstone's.
    RetireWithoutFloor,
}

/// Without the `mutation` feature there are no mutations.
#[cfg(not(feature = "mutation"))]
pub use txlab_occ::NoMutation as Mutation;

/// How a TicToc engine behaves: the toolkit's [`OccConfig`] with TicToc's mutations. TicToc's
/// timestamps do not need epochs; they serve group commit only.
pub type TicTocConfig = OccConfig<Mutation>;
