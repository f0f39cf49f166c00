//! MVTO's configuration: the toolkit's [`OccConfig`] with MVTO's mutations and settings.

use txlab_core::Error;
#[cfg(feature = "mutation")]
use txlab_nwr::NwrMutation;
use txlab_occ::{OccConfig, Settings, check_interval};

/// A mutation that breaks one of MVTO's checks (feature `mutation`, tests only): the correctness
/// kit runs the broken protocol and must report anomalies.
#[cfg(feature = "mutation")]
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Install writes without the read-timestamp check (`WriteTooLate`): a write may slip under a
    /// version a later transaction already read.
    SkipWriteTooLate,
    /// A mutation of the non-visible write rule (`txlab_nwr::NwrMutation`), on the engine's NWR
    /// variants.
    Nwr(NwrMutation),
    /// MVTO+NWR: let a transaction commit a read of a pre-epoch version although a write ordered
    /// after that version was omitted in its epoch (the old-version-reader check of `crate::nwr`).
    NwrSkipOldReaderCheck,
    /// Unlink deleted records without raising the key's absent floor (`crate::retire`): a key's
    /// fresh record may then get a version below reads of its retired tombstone.
    RetireWithoutFloor,
}

/// Without the `mutation` feature there are no mutations.
#[cfg(not(feature = "mutation"))]
pub use txlab_occ::NoMutation as Mutation;

/// MVTO's own settings (Cicada's intervals), beside the toolkit's shared ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MvtoSettings {
    /// A worker recomputes the garbage-collection horizon (the minimum timestamp any active or
    /// future transaction can have) once every this many committed writing transactions
    /// (default 16), `1..=MAX_INTERVAL`. Garbage collection itself runs at every commit.
    pub horizon_interval: u32,
    /// A worker synchronizes its clock one-sidedly with one other worker's clock once every this
    /// many transactions (default 64), `1..=MAX_INTERVAL` (Cicada §3.1).
    pub clock_sync_interval: u32,
}

impl Default for MvtoSettings {
    fn default() -> Self {
        Self {
            horizon_interval: 16,
            clock_sync_interval: 64,
        }
    }
}

impl Settings for MvtoSettings {
    fn validate(&self) -> Result<(), Error> {
        check_interval("horizon_interval", self.horizon_interval)?;
        check_interval("clock_sync_interval", self.clock_sync_interval)
    }
}

/// How an MVTO engine behaves: the toolkit's [`OccConfig`] (epochs; acknowledgement, by default
/// once the epoch is stable, which makes MVTO's loosely synchronized clocks strictly
/// serializable, `crate::timestamp`; how long a read waits for a pending version) with MVTO's
/// mutations and [`MvtoSettings`].
pub type MvtoConfig = OccConfig<Mutation, MvtoSettings>;

/// Builders for [`MvtoSettings`] on an [`MvtoConfig`].
pub trait MvtoConfigExt: Sized {
    /// Sets how often the garbage-collection horizon is recomputed.
    fn with_horizon_interval(self, commits: u32) -> Self;
    /// Sets how often a worker synchronizes its clock with another worker's.
    fn with_clock_sync_interval(self, txns: u32) -> Self;
}

impl MvtoConfigExt for MvtoConfig {
    fn with_horizon_interval(mut self, commits: u32) -> Self {
        self.protocol.horizon_interval = commits;
        self
    }

    fn with_clock_sync_interval(mut self, txns: u32) -> Self {
        self.protocol.clock_sync_interval = txns;
        self
    }
}
