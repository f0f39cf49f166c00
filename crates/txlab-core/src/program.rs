//! Transaction programs written once for every execution model.
//!
//! A workload produces [`Program`]s: stored-procedure-like values holding their inputs. The same
//! program runs
//!
//! - on an interactive engine, by calling [`Program::run`] on an open transaction;
//! - on a centralized-validator pipeline, by running it against the processor's [`TxOps`] and
//!   shipping the resulting read/write sets;
//! - on a deterministic engine (DOCC, Calvin-style), which also needs the keys up front:
//!   [`Program::declare`] fills an [`AccessSet`] from the inputs alone, before execution;
//! - on a distributed-pieces engine (ROCOCO), which groups the declared accesses by the server
//!   owning each key.
//!
//! A program whose accesses depend on values it reads (TPC-C NewOrder's order id comes from
//! `d_next_o_id`) declares the keys it knows and marks the set [`AccessSet::dependent`].

use crate::error::TxResult;
use crate::table::TableId;
use crate::txn::TxOps;

/// How a key is accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Access {
    /// Read only.
    Read,
    /// Written without being read.
    BlindWrite,
    /// Read, then written.
    ReadWrite,
    /// Inserted.
    Insert,
    /// Deleted.
    Delete,
}

impl Access {
    /// Whether the access reads the key.
    pub fn reads(self) -> bool {
        matches!(self, Access::Read | Access::ReadWrite | Access::Delete)
    }

    /// Whether the access writes the key.
    pub fn writes(self) -> bool {
        !matches!(self, Access::Read)
    }
}

/// The keys a program will access, declared from its inputs before it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AccessSet {
    /// `(table, key, access)` in program order (repeats allowed).
    pub accesses: Vec<(TableId, u64, Access)>,
    /// Whether further keys are determined only by values read during execution.
    pub dependent: bool,
}

impl AccessSet {
    /// Clears for reuse without freeing the buffer.
    pub fn clear(&mut self) {
        self.accesses.clear();
        self.dependent = false;
    }

    /// Adds an access.
    pub fn push(&mut self, table: TableId, key: u64, access: Access) {
        self.accesses.push((table, key, access));
    }
}

/// A transaction program with its inputs.
pub trait Program {
    /// What the program returns on commit.
    type Output;

    /// Runs the program's logic on an open transaction. May be called more than once (retries).
    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<Self::Output>;

    /// Declares the accesses known from the inputs.
    fn declare(&self, out: &mut AccessSet);

    /// A short name of the transaction type (for per-type statistics).
    fn kind(&self) -> &'static str;

    /// Whether the program never writes, whatever it reads. Deterministic engines with
    /// multi-version snapshots let such a program read a snapshot without holding back the ones
    /// after it, and depend only on the last program that claims `false`; a program that claims
    /// `true` and then writes is a misuse those engines report. The default, `false`, is always
    /// safe.
    fn read_only(&self) -> bool {
        false
    }
}
