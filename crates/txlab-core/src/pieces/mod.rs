//! Transactions as pieces: the distributed-pieces execution model (ROCOCO, and 2PL/OCC with 2PC
//! on the same servers).
//!
//! S. Mu, Y. Cui, Y. Zhang, W. Lloyd, J. Li, *Extracting More Concurrency from Distributed
//! Transactions*, OSDI 2014, §2 and §3.1: a transaction is a set of **pieces**, stored procedures
//! that each run atomically on the one server owning their data. A piece whose output is the
//! input of another piece is **immediate** (it runs when it arrives, in the first round); every
//! other piece is **deferrable** (a server buffers it and may reorder it before running it in the
//! second round).
//!
//! Two definitions of one transaction, kept honest by tests in the workload crate:
//!
//! - the [`Program`] (`run` against any [`TxOps`]), which every other execution model uses;
//! - its pieces ([`Pieced`]): a static profile per transaction type ([`TxnProfile`], what the
//!   offline checker `txlab_rococo::sc` analyses) and, per transaction, the piece instances
//!   ([`Pieced::plan`]), the conflict keys each instance declares before it runs
//!   ([`Pieced::conflict_keys`]) and its logic ([`Pieced::run_piece`]).
//!
//! # Column groups and conflict keys
//!
//! A table's columns may be split into [`ColumnGroup`]s (TPC-C's DISTRICT: `next_o_id`, `ytd`,
//! the static rest). Two pieces writing different groups of one row commute, so ROCOCO does not
//! order them. Group `0` ([`ColumnGroup::ROW`]) is the whole row, used by tables without groups;
//! a table either has groups `1..=15` or only group `0` (its [`TableLayout`] says which, and the
//! checker rejects a profile that mixes them).
//!
//! A [`ConflictKey`] is `(table, group, unit)`, where the unit is the key itself or, for tables
//! read by ranges, a coarse unit containing the range (TPC-C: the district), declared by every
//! access to the table, inserts and deletes included ([`KeyUnit`]). Two declared accesses conflict
//! iff their conflict keys are equal and at least one writes ([`conflicts`]).
//!
//! # Invariants the workloads keep (and test)
//!
//! 1. Running a transaction's pieces in plan order (then the instances
//!    [`Pieced::plan_after`] adds) on a serial engine gives the same final state and outcome as
//!    [`Program::run`].
//! 2. A deferrable piece's conflict keys depend only on the program's inputs and on the outputs of
//!    the pieces named in its profile's `inputs_from` (all of which are immediate and earlier).
//! 3. Every runtime conflict key's `(table, group, access)` is in the piece's profile, and every
//!    access the piece makes is covered by a declared conflict key ([`CheckedOps`] checks it).
//! 4. Two piece instances whose conflict keys do not conflict commute.
//! 5. A user abort ([`TxError::UserAbort`](crate::TxError::UserAbort)) comes only from pieces
//!    that every writing piece (transitively) takes inputs from, so it happens before any writing
//!    piece is dispatched.
//!
//! # Histories
//!
//! ROCOCO orders transactions per conflict key, so its histories are recorded at column-group
//! granularity: each `(table, group)` is its own history table ([`history_table`]), otherwise two
//! commuting writes of different groups of one row would appear as a false conflict.

mod guard;
mod layout;
mod values;

pub use guard::CheckedOps;
pub use layout::{GroupLayout, KeyUnit, TableLayout};
pub use values::PieceValues;

use crate::error::{Error, TxResult};
use crate::program::{Access, Program};
use crate::table::TableId;
use crate::txn::TxOps;
use std::fmt;

/// Whether a piece runs when it arrives or may be deferred and reordered (module docs).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PieceKind {
    /// Its output is another piece's input: it runs in the first round and cannot be reordered.
    Immediate,
    /// Its output goes only to the client: a server buffers it and runs it at commit time.
    Deferrable,
}

impl PieceKind {
    /// `I` or `D`, as in the paper's figures.
    pub fn letter(self) -> char {
        match self {
            PieceKind::Immediate => 'I',
            PieceKind::Deferrable => 'D',
        }
    }
}

/// A group of a table's columns (module docs). `0` is the whole row; groups are `0..=15`.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnGroup(pub u8);

impl ColumnGroup {
    /// The whole row (tables without column groups).
    pub const ROW: ColumnGroup = ColumnGroup(0);
    /// The largest group number ([`history_table`] keeps 4 bits for it).
    pub const MAX: u8 = 15;
}

/// What a server orders pieces by: a `(table, column group, unit)` triple (module docs).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConflictKey {
    /// The table.
    pub table: TableId,
    /// The column group.
    pub group: ColumnGroup,
    /// The key, or the coarse unit containing it ([`KeyUnit`]).
    pub key: u64,
}

impl ConflictKey {
    /// A conflict key.
    pub const fn new(table: TableId, group: ColumnGroup, key: u64) -> Self {
        Self { table, group, key }
    }
}

impl fmt::Display for ConflictKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}.g{}/{}", self.table.0, self.group.0, self.key)
    }
}

/// Whether two declared accesses conflict: the same conflict key, at least one writing.
pub fn conflicts(a: (ConflictKey, Access), b: (ConflictKey, Access)) -> bool {
    a.0 == b.0 && (a.1.writes() || b.1.writes())
}

/// Whether a declared access `declared` permits an access `used` (it reads if `used` reads and
/// writes if `used` writes).
pub fn permits(declared: Access, used: Access) -> bool {
    (!used.reads() || declared.reads()) && (!used.writes() || declared.writes())
}

/// One piece of a transaction type, as the offline checker sees it (§3.1: its kind and the
/// tables and columns it reads or writes, not the rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PieceProfile {
    /// A short name, unique in its transaction type.
    pub name: &'static str,
    /// Immediate or deferrable.
    pub kind: PieceKind,
    /// `(table, group, access)` of every access the piece may make.
    pub accesses: Vec<(TableId, ColumnGroup, Access)>,
    /// Indices (in [`TxnProfile::pieces`]) of the pieces whose outputs this piece takes as
    /// inputs; each must be earlier and immediate. An instance waits for every planned instance
    /// of these pieces.
    pub inputs_from: Vec<usize>,
    /// Whether a transaction may run several instances (one per order line, per district, ...).
    pub repeated: bool,
}

impl PieceProfile {
    /// A piece with no accesses, inputs or repetition yet (add them with the builder methods).
    pub fn new(name: &'static str, kind: PieceKind) -> Self {
        Self {
            name,
            kind,
            accesses: Vec::new(),
            inputs_from: Vec::new(),
            repeated: false,
        }
    }

    /// Adds an access.
    pub fn access(mut self, table: TableId, group: ColumnGroup, access: Access) -> Self {
        self.accesses.push((table, group, access));
        self
    }

    /// Sets the pieces this one takes inputs from.
    pub fn inputs_from(mut self, pieces: &[usize]) -> Self {
        self.inputs_from = pieces.to_vec();
        self
    }

    /// Marks the piece as repeated.
    pub fn repeated(mut self) -> Self {
        self.repeated = true;
        self
    }

    /// Whether any access writes.
    pub fn writes(&self) -> bool {
        self.accesses.iter().any(|a| a.2.writes())
    }
}

/// The pieces of one transaction type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnProfile {
    /// The transaction type's name ([`Program::kind`]).
    pub kind: &'static str,
    /// Whether the type only reads (ROCOCO runs it with its 2-round read-only protocol, §4.1,
    /// and the checker leaves it out of the SC-graph).
    pub read_only: bool,
    /// The pieces; [`PieceRef::piece`] indexes this list.
    pub pieces: Vec<PieceProfile>,
}

/// A workload whose transactions come in pieces: the profiles of its transaction types and the
/// layout of the tables they name.
pub trait PieceProfiles {
    /// One profile per transaction type; [`Pieced::profile`] indexes this list.
    fn profiles(&self) -> Vec<TxnProfile>;

    /// Every table the profiles name: its conflict unit and column groups.
    fn table_layouts(&self) -> Vec<TableLayout>;

    /// Whether this configuration of the workload can run as pieces (a server or cluster calls
    /// it at start-up); the error names the parameter and what is accepted. Piece instances are
    /// `u16`s, for one. The default accepts every configuration.
    fn check_pieced(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// One piece instance of a transaction, with the key that routes it to its server (through the
/// partitioner: the server owning `route_key` of `route_table` runs it).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PieceRef {
    /// Index of the piece in its [`TxnProfile::pieces`].
    pub piece: u16,
    /// Which instance of a repeated piece (`0` for the others).
    pub instance: u16,
    /// The routing table.
    pub route_table: TableId,
    /// The routing key.
    pub route_key: u64,
}

impl PieceRef {
    /// A piece instance routed by `(route_table, route_key)`.
    pub const fn new(piece: u16, instance: u16, route_table: TableId, route_key: u64) -> Self {
        Self {
            piece,
            instance,
            route_table,
            route_key,
        }
    }
}

/// A transaction program that also comes as pieces (module docs).
pub trait Pieced: Program {
    /// The index of this transaction's type in the workload's
    /// [`profiles`](PieceProfiles::profiles).
    fn profile(&self) -> usize;

    /// The piece instances known from the inputs, in an order that respects `inputs_from` (an
    /// instance comes after every instance of the pieces it takes inputs from).
    fn plan(&self, out: &mut Vec<PieceRef>);

    /// Instances known only once `done` has run, given all outputs so far (`outputs`): appended
    /// to `out`. TPC-C's StockLevel learns its stock reads from the order lines it read. The
    /// default adds none.
    fn plan_after(&self, _done: PieceRef, _outputs: &PieceValues, _out: &mut Vec<PieceRef>) {}

    /// The conflict keys of instance `p` and how it accesses each, computed from the program's
    /// inputs and `inputs` (the outputs of the pieces `p` takes inputs from); appended to `out`.
    fn conflict_keys(
        &self,
        p: PieceRef,
        inputs: &PieceValues,
        out: &mut Vec<(ConflictKey, Access)>,
    );

    /// Runs instance `p` against its server's `tx`, reading `inputs` and appending its outputs
    /// to `out`.
    fn run_piece<T: TxOps + ?Sized>(
        &self,
        p: PieceRef,
        inputs: &PieceValues,
        tx: &mut T,
        out: &mut PieceValues,
    ) -> TxResult<()>;
}

/// Checks that `plan` fits `profile`: piece indices exist, a piece that is not repeated appears
/// at most once, instances of one piece are distinct, and every instance comes after every
/// planned instance of the pieces it takes inputs from. The error names the piece.
pub fn check_plan(profile: &TxnProfile, plan: &[PieceRef]) -> Result<(), Error> {
    for (i, p) in plan.iter().enumerate() {
        let Some(piece) = profile.pieces.get(usize::from(p.piece)) else {
            return Err(Error::invalid(
                "piece",
                p.piece,
                format!(
                    "{}: a piece index in 0..{}",
                    profile.kind,
                    profile.pieces.len()
                ),
            ));
        };
        let earlier = &plan[..i];
        if earlier
            .iter()
            .any(|q| q.piece == p.piece && (q.instance == p.instance || !piece.repeated))
        {
            return Err(Error::Invariant(format!(
                "{}: piece {} instance {} is planned twice{}",
                profile.kind,
                piece.name,
                p.instance,
                if piece.repeated {
                    ""
                } else {
                    " (it is not repeated)"
                }
            )));
        }
        let later = &plan[i + 1..];
        if let Some(q) = later
            .iter()
            .find(|q| piece.inputs_from.contains(&usize::from(q.piece)))
        {
            return Err(Error::Invariant(format!(
                "{}: piece {} is planned before an instance of {}, whose output it takes",
                profile.kind,
                piece.name,
                profile.pieces[usize::from(q.piece)].name
            )));
        }
    }
    Ok(())
}

/// The history table id of `(table, group)` (module docs): `table << 4 | group`. Tables must be
/// below 4096 and groups at most [`ColumnGroup::MAX`]; otherwise an error names the value.
pub fn history_table(table: TableId, group: ColumnGroup) -> Result<TableId, Error> {
    if table.0 >= 1 << 12 {
        return Err(Error::invalid(
            "table",
            table.0,
            "below 4096 for a column-group history table",
        ));
    }
    if group.0 > ColumnGroup::MAX {
        return Err(Error::invalid(
            "column group",
            group.0,
            format!("in 0..={}", ColumnGroup::MAX),
        ));
    }
    Ok(TableId(table.0 << 4 | u16::from(group.0)))
}

#[cfg(test)]
mod tests;
