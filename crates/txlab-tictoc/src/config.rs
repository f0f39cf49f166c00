//! TicToc's configuration (mirrors `txlab_silo::SiloConfig`).

use txlab_core::AckMode;
use txlab_core::epoch::EpochConfig;

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
    /// scanner side is unchanged, so only the time-travel phantom of the old physical check
    /// remains.
    SkipStripeTimestamps,
    /// TicToc+NWR: omit writes even when an item has no version of the current epoch
    /// (`txlab_nwr::NwrMutation::SkipEpochCheck`).
    NwrSkipEpochCheck,
    /// TicToc+NWR: omit writes even when a transaction of this epoch read the version the write
    /// would be ordered after (`txlab_nwr::NwrMutation::SkipMergedReadCheck`).
    NwrSkipMergedReadCheck,
    /// `tictoc-nwr-single`: validate (and extend) the omitter's reads before observing the pivot,
    /// so they are extended to the epoch's floor only, not to the pivot's timestamp
    /// (`txlab_nwr::NwrMutation::ValidateReadsBeforePivot`).
    NwrValidateReadsBeforePivot,
    /// Unlink deleted records without raising the retire floor (`crate::retire`): a key's fresh
    /// record may then be read or written at a timestamp below its retired tombstone's.
    RetireWithoutFloor,
}

/// How a TicToc engine behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TicTocConfig {
    /// How the global epoch advances (default: every 40 ms on a background thread). TicToc's
    /// timestamps do not need epochs; they serve group commit only.
    pub epoch: EpochConfig,
    /// When commits are acknowledged (default: once their epoch is stable, Silo-style group
    /// commit).
    pub ack: AckMode,
    /// How many backoff rounds a read waits for a locked record before aborting with
    /// `ConflictCause::ReadBusy` (default 64; the backoff yields after its first few rounds).
    pub read_wait_rounds: u32,
    /// Test-only fault injection.
    #[cfg(feature = "mutation")]
    pub mutation: Option<Mutation>,
}

impl Default for TicTocConfig {
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

impl TicTocConfig {
    /// Whether retirements raise the retire floor (`crate::retire`; always, but for a mutant).
    #[inline]
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

    /// Sets how many backoff rounds a read waits for a locked record.
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
}
