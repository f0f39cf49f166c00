//! Silo's configuration: the toolkit's [`OccConfig`] with Silo's test-only mutations.

#[cfg(feature = "mutation")]
use txlab_nwr::NwrMutation;
use txlab_occ::OccConfig;

/// A mutation that breaks one of Silo's checks (feature `mutation`, tests only): the correctness
/// kit runs the broken protocol and must report anomalies.
#[cfg(feature = "mutation")]
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Commit without validating the read set.
    SkipReadValidation,
    /// Install writes without locking them first.
    SkipWriteLock,
    /// Skip phantom (stripe) validation of scans.
    SkipPhantomValidation,
    /// A mutation of the non-visible write rule (`txlab_nwr::NwrMutation`), on the engine's NWR
    /// variants.
    Nwr(NwrMutation),
    /// Unlink deleted records as soon as possible instead of two epochs after the delete, so a
    /// key's next incarnation can get a TID below its tombstone's.
    RetireWithoutGrace,
}

/// Without the `mutation` feature there are no mutations.
#[cfg(not(feature = "mutation"))]
pub use txlab_occ::NoMutation as Mutation;

/// How a Silo engine behaves: the epoch (default: advanced every 40 ms), the acknowledgement mode
/// (default: group commit at epoch stability) and how long a read waits for a locked record.
pub type SiloConfig = OccConfig<Mutation>;
