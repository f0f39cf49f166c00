//! Counters of the DOCC engine, accumulated per worker and merged when a run ends.

/// What DOCC's workers did (engine-wide, over every run so far; `Docc::stats`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DoccStats {
    /// Transactions committed (read-only ones included).
    pub committed: u64,
    /// Transactions the program rolled back (deterministic: decided on validated reads).
    pub user_aborts: u64,
    /// Transactions that ended with a real error (e.g. a read-only claim that wrote).
    pub errors: u64,
    /// Retries (Algorithm 3): attempts whose validation failed, or whose program reported a
    /// conflict on an inconsistent read (`docc_retries`).
    pub retries: u64,
    /// Of those, attempts whose read set or scanned stripes changed.
    pub validation_failures: u64,
    /// Lookups of retries answered from the first attempt's references
    /// (`docc_retry_lookups_saved`).
    pub retry_lookups_saved: u64,
    /// Lookups of retries whose key the first attempt had looked up (with prefetching, equal to
    /// the lookups saved unless a kept record was sealed meanwhile).
    pub retry_lookups_seen_before: u64,
    /// Transactions that had to wait for their dependency.
    pub waits: u64,
    /// Nanoseconds spent waiting for dependencies.
    pub wait_ns: u64,
    /// Transactions whose dependency had committed before they began: run once, without
    /// waiting or validation (`docc_settled`).
    pub settled: u64,
}

impl DoccStats {
    /// Adds `other` to `self`.
    pub fn merge(&mut self, other: &DoccStats) {
        self.committed += other.committed;
        self.user_aborts += other.user_aborts;
        self.errors += other.errors;
        self.retries += other.retries;
        self.validation_failures += other.validation_failures;
        self.retry_lookups_saved += other.retry_lookups_saved;
        self.retry_lookups_seen_before += other.retry_lookups_seen_before;
        self.waits += other.waits;
        self.wait_ns += other.wait_ns;
        self.settled += other.settled;
    }

    /// `self - before`, field by field (counters of one run from two snapshots).
    pub fn since(&self, before: &DoccStats) -> DoccStats {
        DoccStats {
            committed: self.committed - before.committed,
            user_aborts: self.user_aborts - before.user_aborts,
            errors: self.errors - before.errors,
            retries: self.retries - before.retries,
            validation_failures: self.validation_failures - before.validation_failures,
            retry_lookups_saved: self.retry_lookups_saved - before.retry_lookups_saved,
            retry_lookups_seen_before: self.retry_lookups_seen_before
                - before.retry_lookups_seen_before,
            waits: self.waits - before.waits,
            wait_ns: self.wait_ns - before.wait_ns,
            settled: self.settled - before.settled,
        }
    }

    /// `(name, value)` pairs, the harness's counter columns.
    pub fn counters(&self) -> [(&'static str, u64); 8] {
        [
            ("docc_retries", self.retries),
            ("docc_validation_failures", self.validation_failures),
            ("docc_retry_lookups_saved", self.retry_lookups_saved),
            (
                "docc_retry_lookups_seen_before",
                self.retry_lookups_seen_before,
            ),
            ("docc_waits", self.waits),
            ("docc_wait_ns", self.wait_ns),
            ("docc_settled", self.settled),
            ("docc_errors", self.errors),
        ]
    }
}
