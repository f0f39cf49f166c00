//! The configuration every interactive engine shares, generic over the protocol's test-only
//! mutations `M` and its own settings `X`.
//!
//! `txlab_silo::SiloConfig`, `txlab_tictoc::TicTocConfig` and `txlab_mvto::MvtoConfig` are this
//! type with their protocol's parameters. A build without a protocol's `mutation` feature uses
//! [`NoMutation`], which has no values: [`OccConfig::mutation`] is then always `None` and every
//! mutation branch folds away.

use std::fmt::Debug;
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::{AckMode, Error};

/// Largest accepted value of the interval settings (read waits, MVTO's intervals).
pub const MAX_INTERVAL: u32 = 1 << 20;

/// The mutation type of a build without test-only fault injection: no values at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoMutation {}

/// A protocol's own settings, beyond the shared ones ([`NoSettings`] for none).
pub trait Settings:
    Debug + Clone + Copy + Default + PartialEq + Eq + Send + Sync + 'static
{
    /// Checks every field; the error names the field, its value and the accepted range.
    fn validate(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// No settings beyond the shared ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoSettings;

impl Settings for NoSettings {}

/// How an interactive engine behaves (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OccConfig<M, X = NoSettings> {
    /// How the global epoch advances (default: every 40 ms on a background thread).
    pub epoch: EpochConfig,
    /// When commits are acknowledged (default: once their epoch is stable, Silo's group commit).
    pub ack: AckMode,
    /// How many backoff rounds a read waits for a record a writer holds (or, in MVTO, for a
    /// pending version) before aborting with `ConflictCause::ReadBusy`, `1..=MAX_INTERVAL`
    /// (default 64; the backoff yields after its first few rounds).
    pub read_wait_rounds: u32,
    /// Test-only fault injection (always `None` without the protocol's `mutation` feature).
    pub mutation: Option<M>,
    /// The protocol's own settings.
    pub protocol: X,
}

impl<M, X: Default> Default for OccConfig<M, X> {
    fn default() -> Self {
        Self {
            epoch: EpochConfig::default(),
            ack: AckMode::EpochStable,
            read_wait_rounds: 64,
            mutation: None,
            protocol: X::default(),
        }
    }
}

impl<M: Copy + PartialEq, X: Settings> OccConfig<M, X> {
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

    /// Sets how many backoff rounds a read waits.
    pub fn with_read_wait_rounds(mut self, rounds: u32) -> Self {
        self.read_wait_rounds = rounds;
        self
    }

    /// Sets the protocol's own settings.
    pub fn with_protocol(mut self, settings: X) -> Self {
        self.protocol = settings;
        self
    }

    /// Sets a mutation (tests only).
    pub fn with_mutation(mut self, m: M) -> Self {
        self.mutation = Some(m);
        self
    }

    /// Whether mutation `m` is set.
    #[inline(always)]
    pub fn mutated(&self, m: M) -> bool {
        self.mutation == Some(m)
    }

    /// Checks every field; the error names the field, its value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        check_interval("read_wait_rounds", self.read_wait_rounds)?;
        self.protocol.validate()
    }
}

/// Checks an interval setting: `1..=MAX_INTERVAL`, or an error naming `name` and `value`.
pub fn check_interval(name: &'static str, value: u32) -> Result<(), Error> {
    if value == 0 || value > MAX_INTERVAL {
        return Err(Error::invalid(
            name,
            value,
            format!("in 1..={MAX_INTERVAL}"),
        ));
    }
    Ok(())
}
