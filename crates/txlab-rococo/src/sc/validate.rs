//! Checks of the profiles themselves, before any graph is built: every problem found is
//! reported (not only the first), each naming the transaction type, the piece and the rule.
//!
//! Rules: at least one transaction type; type names and piece names (per type) unique; every
//! type has pieces; `inputs_from` names existing, earlier, immediate pieces and has no cycle (a
//! cycle is reported once with its pieces); every access names a table of the layout and one of
//! its groups (`0` for a table without groups, `1..=15` for one with groups); a read-only type
//! writes nothing; table layouts are listed once each.

use super::names::Names;
use serde::Serialize;
use std::fmt;
use txlab_core::pieces::{PieceKind, TableLayout, TxnProfile};

/// One problem with the profiles.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum ProfileError {
    /// No transaction type at all.
    NoProfiles,
    /// Two transaction types share a name.
    DuplicateType {
        /// The name.
        txn: String,
    },
    /// A transaction type without pieces.
    NoPieces {
        /// The type.
        txn: String,
    },
    /// Two pieces of one type share a name.
    DuplicatePiece {
        /// The type.
        txn: String,
        /// The name.
        piece: String,
    },
    /// `inputs_from` names a piece index the type does not have.
    InputFromUnknown {
        /// The type.
        txn: String,
        /// The piece.
        piece: String,
        /// The index named.
        index: usize,
        /// How many pieces the type has.
        pieces: usize,
    },
    /// `inputs_from` names a later piece (it cannot have run yet).
    InputFromLater {
        /// The type.
        txn: String,
        /// The piece.
        piece: String,
        /// The later piece named.
        from: String,
    },
    /// `inputs_from` names a deferrable piece (whose output only goes to the client).
    InputFromDeferrable {
        /// The type.
        txn: String,
        /// The piece.
        piece: String,
        /// The deferrable piece named.
        from: String,
    },
    /// `inputs_from` forms a cycle.
    InputCycle {
        /// The type.
        txn: String,
        /// The pieces on the cycle, in order.
        cycle: Vec<String>,
    },
    /// An access names a table the layout does not list.
    UnknownTable {
        /// The type.
        txn: String,
        /// The piece.
        piece: String,
        /// The table id.
        table: u16,
    },
    /// An access names a group the table does not have.
    UnknownGroup {
        /// The type.
        txn: String,
        /// The piece.
        piece: String,
        /// The table's name.
        table: String,
        /// The group.
        group: u8,
        /// The groups the table has.
        groups: Vec<u8>,
    },
    /// A read-only type writes.
    ReadOnlyWrites {
        /// The type.
        txn: String,
        /// The piece.
        piece: String,
        /// The table and group written.
        group: String,
    },
    /// A table is laid out twice.
    DuplicateLayout {
        /// The table's name.
        table: String,
    },
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ProfileError::*;
        match self {
            NoProfiles => write!(f, "the workload has no transaction profiles"),
            DuplicateType { txn } => write!(f, "transaction type {txn} is profiled twice"),
            NoPieces { txn } => write!(f, "{txn} has no pieces"),
            DuplicatePiece { txn, piece } => write!(f, "{txn} has two pieces named {piece}"),
            InputFromUnknown {
                txn,
                piece,
                index,
                pieces,
            } => write!(
                f,
                "{txn}.{piece}: inputs_from names piece {index}, but {txn} has pieces 0..{pieces}"
            ),
            InputFromLater { txn, piece, from } => write!(
                f,
                "{txn}.{piece}: inputs_from names {from}, a later piece (inputs come from earlier \
                 pieces)"
            ),
            InputFromDeferrable { txn, piece, from } => write!(
                f,
                "{txn}.{piece}: inputs_from names {from}, a deferrable piece (a piece whose output \
                 is another's input must be immediate)"
            ),
            InputCycle { txn, cycle } => {
                write!(
                    f,
                    "{txn}: inputs_from forms a cycle: {}",
                    cycle.join(" -> ")
                )
            }
            UnknownTable { txn, piece, table } => write!(
                f,
                "{txn}.{piece}: table id {table} is not a table of the workload's layout"
            ),
            UnknownGroup {
                txn,
                piece,
                table,
                group,
                groups,
            } => write!(
                f,
                "{txn}.{piece}: table {table} has no column group {group} (its groups: {groups:?})"
            ),
            ReadOnlyWrites { txn, piece, group } => write!(
                f,
                "{txn}.{piece}: writes {group}, but {txn} is profiled as read-only"
            ),
            DuplicateLayout { table } => write!(f, "table {table} is laid out twice"),
        }
    }
}

/// Every problem found in a set of profiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileErrors(pub Vec<ProfileError>);

impl fmt::Display for ProfileErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid piece profiles ({} problems):", self.0.len())?;
        for e in &self.0 {
            write!(f, "\n  - {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ProfileErrors {}

impl From<ProfileErrors> for txlab_core::Error {
    fn from(e: ProfileErrors) -> Self {
        txlab_core::Error::invalid(
            "piece profiles",
            format!("{} problems", e.0.len()),
            e.to_string(),
        )
    }
}

/// All problems with `profiles` and `tables` (empty: valid).
pub(crate) fn validate(profiles: &[TxnProfile], tables: &[TableLayout]) -> Vec<ProfileError> {
    let mut errors = Vec::new();
    if profiles.is_empty() {
        errors.push(ProfileError::NoProfiles);
    }
    for (i, t) in tables.iter().enumerate() {
        if tables[..i].iter().any(|u| u.table == t.table) {
            errors.push(ProfileError::DuplicateLayout {
                table: t.name.to_string(),
            });
        }
    }
    let names = Names::new(tables);
    for (i, p) in profiles.iter().enumerate() {
        if profiles[..i].iter().any(|q| q.kind == p.kind) {
            errors.push(ProfileError::DuplicateType {
                txn: p.kind.to_string(),
            });
        }
        if p.pieces.is_empty() {
            errors.push(ProfileError::NoPieces {
                txn: p.kind.to_string(),
            });
        }
        check_pieces(p, tables, &names, &mut errors);
        check_inputs(p, &mut errors);
    }
    errors
}

fn check_pieces(
    p: &TxnProfile,
    tables: &[TableLayout],
    names: &Names<'_>,
    errors: &mut Vec<ProfileError>,
) {
    let txn = || p.kind.to_string();
    for (i, piece) in p.pieces.iter().enumerate() {
        if p.pieces[..i].iter().any(|q| q.name == piece.name) {
            errors.push(ProfileError::DuplicatePiece {
                txn: txn(),
                piece: piece.name.to_string(),
            });
        }
        for &(table, group, access) in &piece.accesses {
            let Some(layout) = tables.iter().find(|l| l.table == table) else {
                errors.push(ProfileError::UnknownTable {
                    txn: txn(),
                    piece: piece.name.to_string(),
                    table: table.0,
                });
                continue;
            };
            if !layout.has_group(group) {
                errors.push(ProfileError::UnknownGroup {
                    txn: txn(),
                    piece: piece.name.to_string(),
                    table: layout.name.to_string(),
                    group: group.0,
                    groups: layout.all_groups().map(|g| g.0).collect(),
                });
            } else if p.read_only && access.writes() {
                errors.push(ProfileError::ReadOnlyWrites {
                    txn: txn(),
                    piece: piece.name.to_string(),
                    group: names.group(table, group),
                });
            }
        }
    }
}

fn check_inputs(p: &TxnProfile, errors: &mut Vec<ProfileError>) {
    let n = p.pieces.len();
    let txn = || p.kind.to_string();
    for (i, piece) in p.pieces.iter().enumerate() {
        for &from in &piece.inputs_from {
            let Some(source) = p.pieces.get(from) else {
                errors.push(ProfileError::InputFromUnknown {
                    txn: txn(),
                    piece: piece.name.to_string(),
                    index: from,
                    pieces: n,
                });
                continue;
            };
            if from > i {
                errors.push(ProfileError::InputFromLater {
                    txn: txn(),
                    piece: piece.name.to_string(),
                    from: source.name.to_string(),
                });
            }
            if source.kind == PieceKind::Deferrable {
                errors.push(ProfileError::InputFromDeferrable {
                    txn: txn(),
                    piece: piece.name.to_string(),
                    from: source.name.to_string(),
                });
            }
        }
    }
    if let Some(cycle) = input_cycle(p) {
        errors.push(ProfileError::InputCycle {
            txn: txn(),
            cycle: cycle
                .into_iter()
                .map(|i| p.pieces[i].name.to_string())
                .collect(),
        });
    }
}

/// A cycle of `inputs_from` (piece indices, each taking inputs from the next), if any: an
/// iterative depth-first search with three colours.
fn input_cycle(p: &TxnProfile) -> Option<Vec<usize>> {
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let n = p.pieces.len();
    let succ = |i: usize| -> Vec<usize> {
        p.pieces[i]
            .inputs_from
            .iter()
            .copied()
            .filter(|&j| j < n)
            .collect()
    };
    let mut colour = vec![WHITE; n];
    for root in 0..n {
        if colour[root] != WHITE {
            continue;
        }
        let mut path: Vec<(usize, Vec<usize>)> = vec![(root, succ(root))];
        colour[root] = GREY;
        while let Some((v, next)) = path.last_mut() {
            let v = *v;
            match next.pop() {
                Some(w) if colour[w] == GREY => {
                    let start = path.iter().position(|(u, _)| *u == w).unwrap_or(0);
                    return Some(path[start..].iter().map(|(u, _)| *u).collect());
                }
                Some(w) if colour[w] == WHITE => {
                    colour[w] = GREY;
                    path.push((w, succ(w)));
                }
                Some(_) => {}
                None => {
                    colour[v] = BLACK;
                    path.pop();
                }
            }
        }
    }
    None
}
