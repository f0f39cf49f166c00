//! Errors: a retryable [`Conflict`] is kept apart from a real [`Error`].
//!
//! Every transactional operation returns [`TxResult<T>`], i.e. `Result<T, TxError>`, where
//! [`TxError`] is one of
//!
//! - [`TxError::Conflict`]: concurrency control decided the transaction cannot commit as executed.
//!   The transaction has been aborted; running it again from the start may succeed. The
//!   [`ConflictCause`] says which check failed, so harnesses can count aborts by cause.
//! - [`TxError::UserAbort`]: the program itself asked to roll back (e.g. TPC-C's invalid item).
//!   Not retried.
//! - [`TxError::Error`]: a real error (unknown table, key out of range, wrong value size, ...).
//!   Not retried; retrying would fail the same way.

use crate::table::TableId;
use std::borrow::Cow;
use std::fmt;

/// Which concurrency-control check made a transaction abort.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ConflictCause {
    /// A record in the read set changed (or was locked by another writer) before commit.
    ReadValidation,
    /// A record was locked by another transaction and the protocol chose not to wait.
    LockBusy,
    /// A record could not be read consistently after bounded retries (a writer kept it busy).
    ReadBusy,
    /// A scanned key range changed (an insert or unlink happened inside it): a phantom.
    PhantomValidation,
    /// The record was retired from its index while the transaction used it.
    RecordRetired,
    /// A write arrived too late for the protocol's timestamp order (timestamp-ordering protocols).
    WriteTooLate,
    /// A read arrived too late for the protocol's timestamp order (timestamp-ordering protocols).
    ReadTooLate,
    /// The validator or sequencer aborted the transaction to break a dependency cycle.
    Reordering,
    /// The protocol ran out of timestamps in its current range (TicToc+NWR: a commit timestamp
    /// would spill into the next epoch's range); retrying later, in a new range, succeeds.
    TimestampsExhausted,
    /// The program observed a combination of values that only an inconsistent snapshot can
    /// produce (e.g. a TPC-C row another read implies is present is absent); validation would
    /// fail anyway, so the program aborts early.
    InconsistentRead,
}

impl ConflictCause {
    /// A short, stable, snake_case name (used as CSV column suffixes and in reports).
    pub fn name(&self) -> &'static str {
        match self {
            ConflictCause::ReadValidation => "read_validation",
            ConflictCause::LockBusy => "lock_busy",
            ConflictCause::ReadBusy => "read_busy",
            ConflictCause::PhantomValidation => "phantom_validation",
            ConflictCause::RecordRetired => "record_retired",
            ConflictCause::WriteTooLate => "write_too_late",
            ConflictCause::ReadTooLate => "read_too_late",
            ConflictCause::Reordering => "reordering",
            ConflictCause::TimestampsExhausted => "timestamps_exhausted",
            ConflictCause::InconsistentRead => "inconsistent_read",
        }
    }
}

impl fmt::Display for ConflictCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A retryable abort: the transaction lost a race; running it again may succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    /// Which check failed.
    pub cause: ConflictCause,
    /// The table of the record involved, when known.
    pub table: Option<TableId>,
    /// The key involved, when known.
    pub key: Option<u64>,
}

impl Conflict {
    /// A conflict with a cause and no location.
    pub const fn new(cause: ConflictCause) -> Self {
        Self {
            cause,
            table: None,
            key: None,
        }
    }

    /// A conflict at a given record.
    pub const fn at(cause: ConflictCause, table: TableId, key: u64) -> Self {
        Self {
            cause,
            table: Some(table),
            key: Some(key),
        }
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "conflict ({})", self.cause)?;
        if let (Some(t), Some(k)) = (self.table, self.key) {
            write!(f, " on table {} key {}", t.0, k)?;
        }
        Ok(())
    }
}

/// A real error: bad input or misuse. Retrying does not help.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The table id names no table of this database.
    #[error("unknown table id {id} (this database has {count} tables, ids 0..{count})")]
    UnknownTable {
        /// The id asked for.
        id: u16,
        /// How many tables exist.
        count: usize,
    },
    /// A key outside a fixed-capacity index's range.
    #[error("key {key} is out of range for table {table} (accepted: 0..{capacity})")]
    KeyOutOfRange {
        /// The table.
        table: u16,
        /// The key asked for.
        key: u64,
        /// The index's capacity; keys must be below it.
        capacity: u64,
    },
    /// A value whose length differs from the table's fixed value size.
    #[error("value of {got} bytes written to table {table}, whose values are {expected} bytes")]
    ValueSize {
        /// The table.
        table: u16,
        /// The table's value size.
        expected: usize,
        /// The length supplied.
        got: usize,
    },
    /// A range scan on a table whose index is not ordered.
    #[error("table {table} has a {kind} index, which does not support range scans")]
    ScanUnsupported {
        /// The table.
        table: u16,
        /// The index kind.
        kind: &'static str,
    },
    /// A stored value read as a type of a different size ([`FixedValue`](crate::FixedValue)).
    #[error(
        "table {table} holds {value_size}-byte values, but type {type_name} is {type_size} bytes"
    )]
    TypeSize {
        /// The table.
        table: u16,
        /// The type asked for (`std::any::type_name`).
        type_name: &'static str,
        /// The type's encoded size.
        type_size: usize,
        /// The stored value's size.
        value_size: usize,
    },
    /// An invalid configuration value (a workload, engine or index parameter).
    #[error("invalid {name} = {value}: {expected}")]
    InvalidConfig {
        /// The parameter's name.
        name: &'static str,
        /// The value given, printed.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// The same key was written twice in one transaction in a way the protocol cannot merge.
    #[error("{0}")]
    Misuse(&'static str),
    /// A workload invariant does not hold after a run (e.g. SmallBank's total balance changed).
    #[error("invariant violated: {0}")]
    Invariant(String),
    /// The engine's invariants were violated (a bug; reported instead of panicking).
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// Shorthand for [`Error::InvalidConfig`].
    pub fn invalid(
        name: &'static str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Error::InvalidConfig {
            name,
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}

/// Why a transactional operation did not succeed.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TxError {
    /// Retryable: the protocol aborted the transaction.
    #[error("{0}")]
    Conflict(Conflict),
    /// The program asked to roll back, saying why. Not retried. A static reason
    /// (`"insufficient funds".into()`, or [`TxError::user_abort`]) allocates nothing; a
    /// formatted one is owned.
    #[error("aborted by the transaction program: {0}")]
    UserAbort(Cow<'static, str>),
    /// A real error. Not retried.
    #[error(transparent)]
    Error(#[from] Error),
}

impl TxError {
    /// A [`TxError::UserAbort`] with `reason` (a `&'static str` or a `String`).
    pub fn user_abort(reason: impl Into<Cow<'static, str>>) -> Self {
        TxError::UserAbort(reason.into())
    }

    /// Whether running the transaction again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, TxError::Conflict(_))
    }

    /// The conflict, if this is one.
    pub fn conflict(&self) -> Option<&Conflict> {
        match self {
            TxError::Conflict(c) => Some(c),
            _ => None,
        }
    }
}

impl From<Conflict> for TxError {
    fn from(c: Conflict) -> Self {
        TxError::Conflict(c)
    }
}

/// Result of a transactional operation.
pub type TxResult<T> = Result<T, TxError>;
