//! Configuration of the DOCC engine and of the epoch batches both deterministic engines share.

use crate::seq::Seq;
use std::time::Duration;
use txlab_core::Error;

/// Largest number of worker threads (the harness's limit).
pub const MAX_WORKERS: usize = 1024;

/// How the sequencer cuts its input into batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchConfig {
    /// How long the sequencer collects submissions before it seals a batch (Calvin's and the
    /// paper's epoch; `--batch-epoch-us`). Between 1 µs and 10 s.
    pub epoch: Duration,
    /// A batch is sealed early once it holds this many transactions, `1..=2^24`.
    pub max_txns: usize,
}

impl Default for BatchConfig {
    /// 5 ms epochs (the required default; Calvin uses 10 ms), at most 2^24 transactions each.
    fn default() -> Self {
        Self {
            epoch: Duration::from_millis(5),
            max_txns: Seq::MAX_BATCH as usize,
        }
    }
}

impl BatchConfig {
    /// The longest accepted epoch.
    pub const MAX_EPOCH: Duration = Duration::from_secs(10);

    /// Checks the configuration: an error naming the value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.epoch.is_zero() || self.epoch > Self::MAX_EPOCH {
            return Err(Error::invalid(
                "batch epoch",
                format!("{:?}", self.epoch),
                "between 1µs and 10s",
            ));
        }
        if self.max_txns == 0 || self.max_txns > Seq::MAX_BATCH as usize {
            return Err(Error::invalid(
                "max_txns",
                self.max_txns,
                format!("1..={} transactions per batch", Seq::MAX_BATCH),
            ));
        }
        Ok(())
    }
}

/// A deliberately broken step, for the kit's mutation tests (`mutation` feature, tests only).
#[cfg(feature = "mutation")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Validate without waiting for the dependency to commit.
    SkipWait,
    /// Commit without validating the read set and the scanned stripes.
    SkipValidation,
    /// A transaction counts as settled (run once, without validation) when the chain reached
    /// one rank less than its dependency needs: where the chain transaction before its
    /// dependency is the one just before it (always in the basic layout), that one's commit
    /// suffices while the dependency itself may still be running. It still waits for its
    /// dependency before it commits, so commits stay in order and only the settled decision
    /// is wrong.
    SettleEarly,
    /// Snapshot reads return the newest version, ignoring the transaction's position `N`.
    SnapshotIgnoresBound,
    /// A program claiming `read_only` may write, and its writes are installed (while later
    /// transactions still do not wait for it).
    InstallReadOnlyWrites,
    /// Garbage collection ignores the running transactions' bounds: an install keeps only the
    /// new version and tombstones below the committer are retired (section 3.4's `TID_earliest`
    /// taken as the committer's own `Seq`).
    GcIgnoresRunning,
    /// A prefetching retry takes the first attempt's reference at the same position in the
    /// program (the `i`-th lookup of the table) without checking its key, as if a retry always
    /// looked up the same keys (it does not when what it reads changed them: TPC-C's order ids).
    PrefetchByPosition,
    /// Calvin's lock manager grants one lock of every fourth transaction without queueing it
    /// behind earlier requests (out of order).
    CalvinGrantOutOfOrder,
    /// Calvin's lock manager skips the last lock of every transaction's set.
    CalvinSkipLock,
}

/// DOCC's configuration (`Docc::builder().config(..)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoccConfig {
    /// Worker threads of a driven run (`Docc::run`); `Deterministic::execute_log` takes its own
    /// count. `1..=MAX_WORKERS`.
    pub workers: usize,
    /// Prefetching retry (Algorithm 3): a retry reaches the records its first attempt found
    /// through the references it kept. Needs the `Chain` layout (`docc`); off is
    /// `docc-snapshot`.
    pub prefetch: bool,
    /// Epoch batches of a driven run.
    pub batch: BatchConfig,
    /// Record histories on a logical clock: a transaction of rank `r` in the order begins at
    /// `2r` and ends at `2r + 1`, so `CheckOptions::strict()` checks equivalence to the serial
    /// execution in log order.
    pub sequence_clock: bool,
    /// Test-only fault injection.
    #[cfg(feature = "mutation")]
    pub mutation: Option<Mutation>,
}

impl Default for DoccConfig {
    fn default() -> Self {
        Self {
            workers: 1,
            prefetch: true,
            batch: BatchConfig::default(),
            sequence_clock: false,
            #[cfg(feature = "mutation")]
            mutation: None,
        }
    }
}

impl DoccConfig {
    /// Checks the configuration: an error naming the value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        check_workers(self.workers)?;
        self.batch.validate()
    }

    /// Whether mutation `m` is on (always `false` without the `mutation` feature).
    #[cfg(feature = "mutation")]
    #[inline]
    pub(crate) fn mutated(&self, m: Mutation) -> bool {
        self.mutation == Some(m)
    }
}

/// Checks a worker count: `1..=MAX_WORKERS`.
pub(crate) fn check_workers(workers: usize) -> Result<(), Error> {
    if workers == 0 || workers > MAX_WORKERS {
        return Err(Error::invalid(
            "workers",
            workers,
            format!("1..={MAX_WORKERS}"),
        ));
    }
    Ok(())
}

/// `config.mutated(Mutation::$m)` with the `mutation` feature, `false` (folded away) without.
macro_rules! mutated {
    ($config:expr, $m:ident) => {{
        #[cfg(feature = "mutation")]
        let on = $config.mutated($crate::config::Mutation::$m);
        #[cfg(not(feature = "mutation"))]
        let on = {
            let _ = &$config;
            false
        };
        on
    }};
}
pub(crate) use mutated;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_named_with_their_range() {
        let cfg = |f: fn(&mut DoccConfig)| {
            let mut c = DoccConfig::default();
            f(&mut c);
            c.validate().unwrap_err().to_string()
        };
        assert!(cfg(|c| c.workers = 0).contains("workers = 0"));
        assert!(cfg(|c| c.workers = 1025).contains("1..=1024"));
        assert!(cfg(|c| c.batch.epoch = Duration::ZERO).contains("batch epoch = 0ns"));
        assert!(cfg(|c| c.batch.epoch = Duration::from_secs(11)).contains("between 1µs and 10s"));
        assert!(cfg(|c| c.batch.max_txns = 0).contains("max_txns = 0"));
        assert!(cfg(|c| c.batch.max_txns = (1 << 24) + 1).contains("1..=16777216"));
        DoccConfig::default().validate().unwrap();
    }
}
