//! NWR statistics, reported through `txlab_core::Worker::drain_counters`.

/// Why an NWR validation handed control back to the baseline protocol.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NwrFailure {
    /// A write is not blind (an insert, delete, read-modify-write, or a key the transaction read).
    NotBlind,
    /// The transaction scanned a range (its predicate reads are left to the baseline).
    Scan,
    /// A written item has no version of the current epoch to order the write before (ST-Rule, the
    /// paper's epoch check (2) of Algorithm 2).
    Epoch,
    /// A transaction of this epoch read a version the omitted write would be ordered after
    /// (the mRS check (4) of Algorithm 2; under [`crate::NwrSingleWrite`], the pivot's writer
    /// read the item's older version).
    MergedReadSet,
    /// The transaction read a version written in this epoch, which may have been written by a
    /// successor of the pivot (the mWS check (3) of Algorithm 2, in its conservative form).
    MergedWriteSet,
    /// A 4-bit slot or the pivot counter saturated, so the order cannot be decided.
    Saturated,
    /// The pivot object kept changing under concurrent updates (CAS retries exhausted).
    CasRetry,
    /// The baseline's validation of overwriters (the read set) failed.
    Overwriters,
    /// The transaction writes more than one item, and the policy omits only single writes
    /// ([`crate::NwrSingleWrite`]).
    MultiWrite,
}

impl NwrFailure {
    /// Every failure reason, in counter order.
    pub const ALL: [NwrFailure; 9] = [
        NwrFailure::NotBlind,
        NwrFailure::Scan,
        NwrFailure::Epoch,
        NwrFailure::MergedReadSet,
        NwrFailure::MergedWriteSet,
        NwrFailure::Saturated,
        NwrFailure::CasRetry,
        NwrFailure::Overwriters,
        NwrFailure::MultiWrite,
    ];

    /// The counter name reported by `drain_counters`.
    pub const fn counter(self) -> &'static str {
        match self {
            NwrFailure::NotBlind => "nwr_fail_not_blind",
            NwrFailure::Scan => "nwr_fail_scan",
            NwrFailure::Epoch => "nwr_fail_epoch",
            NwrFailure::MergedReadSet => "nwr_fail_mrs",
            NwrFailure::MergedWriteSet => "nwr_fail_mws",
            NwrFailure::Saturated => "nwr_fail_saturated",
            NwrFailure::CasRetry => "nwr_fail_cas_retry",
            NwrFailure::Overwriters => "nwr_fail_overwriters",
            NwrFailure::MultiWrite => "nwr_fail_multi_write",
        }
    }

    const fn index(self) -> usize {
        match self {
            NwrFailure::NotBlind => 0,
            NwrFailure::Scan => 1,
            NwrFailure::Epoch => 2,
            NwrFailure::MergedReadSet => 3,
            NwrFailure::MergedWriteSet => 4,
            NwrFailure::Saturated => 5,
            NwrFailure::CasRetry => 6,
            NwrFailure::Overwriters => 7,
            NwrFailure::MultiWrite => 8,
        }
    }
}

/// Per-worker NWR counters (plain integers: a worker is driven by one thread).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NwrStats {
    /// Writing transactions committed with the NWR version order (all writes omitted).
    pub commits_omitted: u64,
    /// Writing transactions committed by the baseline protocol (NWR validation failed).
    pub commits_baseline: u64,
    /// Writes omitted.
    pub omitted_writes: u64,
    /// Pivot-object CAS attempts that failed and were retried (omissions; and reads' merges into
    /// mRS, which only the printed-algorithm mutant still makes).
    pub cas_retries: u64,
    /// Read-only transactions that reached validation and left no mark (counted
    /// before validation, so some of them then abort): with [`crate::Nwr`], those that read only
    /// pre-epoch versions ([`crate::rule::is_pre_epoch_reader`]); with
    /// [`crate::NwrSingleWrite`], every one.
    pub unmarked_readers: u64,
    /// Read marks that [`crate::rule::merge_reads`] wrote into a read-epoch word (Silo and
    /// TicToc readers; always 0 for MVTO+NWR, which marks with its own loop): the first mark of
    /// a record in an epoch, one `fetch_max` each (two readers racing on one record may both
    /// count). What check (4) costs readers beyond a load. Writers' scan-miss marks are not
    /// counted.
    pub read_marks_written: u64,
    failures: [u64; 9],
}

impl NwrStats {
    /// Counts a failed validation.
    #[inline]
    pub fn fail(&mut self, why: NwrFailure) {
        self.failures[why.index()] += 1;
    }

    /// How many validations failed for `why`.
    pub fn failures(&self, why: NwrFailure) -> u64 {
        self.failures[why.index()]
    }

    /// Reports every counter as `(name, delta)` and resets them.
    pub fn drain(&mut self, sink: &mut dyn FnMut(&'static str, u64)) {
        sink("nwr_commits_omitted", self.commits_omitted);
        sink("nwr_commits_baseline", self.commits_baseline);
        sink("nwr_omitted_writes", self.omitted_writes);
        sink("nwr_cas_retries", self.cas_retries);
        sink("nwr_unmarked_readers", self.unmarked_readers);
        sink("nwr_read_marks_written", self.read_marks_written);
        for why in NwrFailure::ALL {
            sink(why.counter(), self.failures[why.index()]);
        }
        *self = Self::default();
    }
}
