//! MVTO's configuration.

use txlab_core::epoch::EpochConfig;
use txlab_core::{AckMode, Error};

/// A mutation that breaks one of MVTO's checks (feature `mutation`, tests only): the correctness
/// kit runs the broken protocol and must report anomalies.
#[cfg(feature = "mutation")]
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Install writes without the read-timestamp check (`WriteTooLate`): a write may slip under a
    /// version a later transaction already read.
    SkipWriteTooLate,
    /// MVTO+NWR: omit a blind write even when its item has no committed version of the epoch
    /// (`txlab_nwr::NwrMutation::SkipEpochCheck`).
    NwrSkipEpochCheck,
    /// MVTO+NWR: omit a blind write even when a transaction of the epoch read the item's older
    /// version (`txlab_nwr::NwrMutation::SkipMergedReadCheck`).
    NwrSkipMergedReadCheck,
    /// MVTO+NWR: let a transaction commit a read of a pre-epoch version although a write ordered
    /// after that version was omitted in its epoch (the old-version-reader check of `crate::nwr`).
    NwrSkipOldReaderCheck,
    /// `mvto-nwr-single`: validate the omitter's reads before the pivot is chosen, at the
    /// transaction's own timestamp, instead of at the pivot's (no `rts` raise)
    /// (`txlab_nwr::NwrMutation::ValidateReadsBeforePivot`).
    NwrValidateReadsBeforePivot,
    /// Unlink deleted records without raising the key's absent floor (`crate::retire`): a key's
    /// fresh record may then get a version below reads of its retired tombstone.
    RetireWithoutFloor,
}

/// Largest accepted value of the interval settings of [`MvtoConfig`].
pub const MAX_INTERVAL: u32 = 1 << 20;

/// How an MVTO engine behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MvtoConfig {
    /// How the global epoch advances (default: every 40 ms on a background thread).
    pub epoch: EpochConfig,
    /// When commits are acknowledged (default: once their epoch is stable, which makes MVTO's
    /// loosely synchronized clocks strictly serializable; see `crate::timestamp`).
    pub ack: AckMode,
    /// How many backoff rounds a read waits for a pending version below its timestamp before
    /// aborting with `ConflictCause::ReadBusy` (default 64), `1..=MAX_INTERVAL`.
    pub read_wait_rounds: u32,
    /// A worker recomputes the garbage-collection horizon (the minimum timestamp any active or
    /// future transaction can have) once every this many committed writing transactions
    /// (default 16), `1..=MAX_INTERVAL`. Garbage collection itself runs at every commit.
    pub horizon_interval: u32,
    /// A worker synchronizes its clock one-sidedly with one other worker's clock once every this
    /// many transactions (default 64), `1..=MAX_INTERVAL` (Cicada §3.1).
    pub clock_sync_interval: u32,
    /// Test-only fault injection.
    #[cfg(feature = "mutation")]
    pub mutation: Option<Mutation>,
}

impl Default for MvtoConfig {
    fn default() -> Self {
        Self {
            epoch: EpochConfig::default(),
            ack: AckMode::EpochStable,
            read_wait_rounds: 64,
            horizon_interval: 16,
            clock_sync_interval: 64,
            #[cfg(feature = "mutation")]
            mutation: None,
        }
    }
}

impl MvtoConfig {
    /// Whether retirements raise the absent floor (`crate::retire`; always, but for a mutant).
    #[inline(always)]
    pub(crate) fn retire_raises_floor(&self) -> bool {
        #[cfg(feature = "mutation")]
        if self.mutation == Some(Mutation::RetireWithoutFloor) {
            return false;
        }
        true
    }

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

    /// Sets how often the garbage-collection horizon is recomputed.
    pub fn with_horizon_interval(mut self, commits: u32) -> Self {
        self.horizon_interval = commits;
        self
    }

    /// Sets how often a worker synchronizes its clock with another worker's.
    pub fn with_clock_sync_interval(mut self, txns: u32) -> Self {
        self.clock_sync_interval = txns;
        self
    }

    /// Sets how long a read waits for a pending version.
    pub fn with_read_wait_rounds(mut self, rounds: u32) -> Self {
        self.read_wait_rounds = rounds;
        self
    }

    /// Sets a mutation (tests only).
    #[cfg(feature = "mutation")]
    pub fn with_mutation(mut self, m: Mutation) -> Self {
        self.mutation = Some(m);
        self
    }

    /// Checks every field; the error names the field, its value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        for (name, value) in [
            ("read_wait_rounds", self.read_wait_rounds),
            ("horizon_interval", self.horizon_interval),
            ("clock_sync_interval", self.clock_sync_interval),
        ] {
            if value == 0 || value > MAX_INTERVAL {
                return Err(Error::invalid(
                    name,
                    value,
                    format!("in 1..={MAX_INTERVAL}"),
                ));
            }
        }
        Ok(())
    }
}
