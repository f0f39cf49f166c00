//! Silo's configuration.

use txlab_core::AckMode;
use txlab_core::epoch::EpochConfig;

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
    /// Silo+NWR: omit writes to records that have no version of the current epoch.
    NwrSkipEpochCheck,
    /// Silo+NWR: omit writes even when a transaction of this epoch read the older version (mRS).
    NwrSkipMergedReadCheck,
    /// Silo+NWR: replace the shipped rule by the NWR paper's Algorithms 2 and 3 as printed
    /// (`txlab_nwr::printed`), which misses cycles that run through items the omitted transaction
    /// does not write (`docs/protocols/nwr.md`, "The printed algorithm, measured").
    NwrPrintedAlgorithm,
    /// Silo+NWR with single-write omitters: validate the omitter's reads before observing the
    /// pivot instead of after (`txlab_nwr::NwrMutation::ValidateReadsBeforePivot`).
    NwrValidateReadsBeforePivot,
    /// Unlink deleted records as soon as possible instead of two epochs after the delete, so a
    /// key's next incarnation can get a TID below its tombstone's.
    RetireWithoutGrace,
}

/// How a Silo engine behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SiloConfig {
    /// How the global epoch advances (default: every 40 ms on a background thread).
    pub epoch: EpochConfig,
    /// When commits are acknowledged (default: once their epoch is stable, Silo's group commit).
    pub ack: AckMode,
    /// How many backoff rounds a read waits for a locked record before aborting with
    /// `ConflictCause::ReadBusy` (default 64; the backoff yields after its first few rounds).
    pub read_wait_rounds: u32,
    /// Test-only fault injection.
    #[cfg(feature = "mutation")]
    pub mutation: Option<Mutation>,
}

impl Default for SiloConfig {
    fn default() -> Self {
        Self {
            epoch: EpochConfig::default(),
            ack: AckMode::EpochStable,
            read_wait_rounds: 64,
            #[cfg(feature = "mutation")]
            mutation: None,
        }
    }
}

impl SiloConfig {
    /// Epochs advanced by hand and acknowledgement at commit: what deterministic tests want.
    pub fn manual() -> Self {
        Self {
            epoch: EpochConfig::manual(),
            ack: AckMode::AtCommit,
            ..Self::default()
        }
    }

    /// Sets the epoch configuration.
    pub fn with_epoch(mut self, epoch: EpochConfig) -> Self {
        self.epoch = epoch;
        self
    }

    /// Sets the acknowledgement mode.
    pub fn with_ack(mut self, ack: AckMode) -> Self {
        self.ack = ack;
        self
    }

    /// How many epochs a deleted record waits before it is unlinked (`crate::retire`).
    #[inline]
    pub(crate) fn retire_grace(&self) -> u64 {
        #[cfg(feature = "mutation")]
        if self.mutation == Some(Mutation::RetireWithoutGrace) {
            return 0;
        }
        crate::retire::GRACE_EPOCHS
    }

    /// Sets a mutation (tests only).
    #[cfg(feature = "mutation")]
    pub fn with_mutation(mut self, m: Mutation) -> Self {
        self.mutation = Some(m);
        self
    }
}
