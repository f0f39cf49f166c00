//! How a workload's tables look to the pieces model: each table's conflict unit ([`KeyUnit`])
//! and column groups ([`GroupLayout`]: names and the byte spans of the row they cover).
//!
//! Invariant ([`TableLayout::validate`]): a table has no groups (everything is group `0`, the
//! whole row) or groups numbered `1..=15`, distinct, whose spans are disjoint and together cover
//! the whole value. So every byte of a row belongs to exactly one group, which is how
//! [`CheckedOps`](super::CheckedOps) tells which groups a write changed.

use super::ColumnGroup;
use crate::error::Error;
use crate::table::TableId;

/// The conflict unit of a table's keys: the key itself, or a coarse unit containing every key a
/// range access of the table can cover (TPC-C: the district, the high bits of an order key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyUnit {
    /// Each key is its own unit.
    Row,
    /// The unit is `key >> n`.
    Shift(u8),
    /// The unit is `key / n` (`n >= 1`).
    Div(u64),
}

impl KeyUnit {
    /// The unit of `key`.
    pub fn of(self, key: u64) -> u64 {
        match self {
            KeyUnit::Row => key,
            KeyUnit::Shift(n) => key.checked_shr(u32::from(n)).unwrap_or(0),
            KeyUnit::Div(n) => key / n.max(1),
        }
    }
}

/// One column group of a table: its number, a name for reports and the byte spans
/// (`start..end`) of the row it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupLayout {
    /// The group, `1..=15`.
    pub group: ColumnGroup,
    /// A short name (`next_o_id`, `static`, ...).
    pub name: &'static str,
    /// Byte spans `start..end` of the row.
    pub spans: Vec<(usize, usize)>,
}

/// A table as the pieces model sees it (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLayout {
    /// The table.
    pub table: TableId,
    /// Its name, for reports.
    pub name: &'static str,
    /// Its conflict unit.
    pub unit: KeyUnit,
    /// Its column groups (empty: the whole row is group `0`).
    pub groups: Vec<GroupLayout>,
}

impl TableLayout {
    /// A table of one group (the whole row), each key its own unit.
    pub fn whole(table: TableId, name: &'static str) -> Self {
        Self {
            table,
            name,
            unit: KeyUnit::Row,
            groups: Vec::new(),
        }
    }

    /// Sets the conflict unit.
    pub fn unit(mut self, unit: KeyUnit) -> Self {
        self.unit = unit;
        self
    }

    /// Adds a column group covering `spans`.
    pub fn group(mut self, group: u8, name: &'static str, spans: &[(usize, usize)]) -> Self {
        self.groups.push(GroupLayout {
            group: ColumnGroup(group),
            name,
            spans: spans.to_vec(),
        });
        self
    }

    /// The groups an access to the whole row touches: `[0]`, or every listed group.
    pub fn all_groups(&self) -> impl Iterator<Item = ColumnGroup> + '_ {
        let whole = self.groups.is_empty().then_some(ColumnGroup::ROW);
        whole.into_iter().chain(self.groups.iter().map(|g| g.group))
    }

    /// Whether `group` is a group of this table.
    pub fn has_group(&self, group: ColumnGroup) -> bool {
        self.all_groups().any(|g| g == group)
    }

    /// The group the row's byte at `offset` belongs to (`None`: no group covers it).
    pub fn group_of_byte(&self, offset: usize) -> Option<ColumnGroup> {
        if self.groups.is_empty() {
            return Some(ColumnGroup::ROW);
        }
        self.groups
            .iter()
            .find(|g| g.spans.iter().any(|&(s, e)| (s..e).contains(&offset)))
            .map(|g| g.group)
    }

    /// A group's name: `row` for group `0`, `?` for a group the table does not have.
    pub fn group_name(&self, group: ColumnGroup) -> &'static str {
        if group == ColumnGroup::ROW && self.groups.is_empty() {
            return "row";
        }
        self.groups
            .iter()
            .find(|g| g.group == group)
            .map_or("?", |g| g.name)
    }

    /// Checks the invariant of the module docs against the table's `value_size`; the error
    /// names the table and the group.
    pub fn validate(&self, value_size: usize) -> Result<(), Error> {
        let mut owner = vec![None::<u8>; value_size];
        for (i, g) in self.groups.iter().enumerate() {
            if g.group.0 == 0 || g.group.0 > ColumnGroup::MAX {
                return Err(Error::invalid(
                    "column group",
                    g.group.0,
                    format!(
                        "table {}: groups are numbered 1..={} (0 is the whole row)",
                        self.name,
                        ColumnGroup::MAX
                    ),
                ));
            }
            if self.groups[..i].iter().any(|h| h.group == g.group) {
                return Err(Error::invalid(
                    "column group",
                    g.group.0,
                    format!("table {}: each group is declared once", self.name),
                ));
            }
            for &(s, e) in &g.spans {
                if s >= e || e > value_size {
                    return Err(Error::invalid(
                        "column group span",
                        format!("{s}..{e}"),
                        format!(
                            "table {} group {}: a non-empty span within the {value_size}-byte row",
                            self.name, g.name
                        ),
                    ));
                }
                for slot in &mut owner[s..e] {
                    if let Some(other) = slot.replace(g.group.0) {
                        return Err(Error::Invariant(format!(
                            "table {}: byte spans of groups {other} and {} overlap",
                            self.name, g.group.0
                        )));
                    }
                }
            }
        }
        if !self.groups.is_empty()
            && let Some(gap) = owner.iter().position(Option::is_none)
        {
            return Err(Error::Invariant(format!(
                "table {}: byte {gap} of the {value_size}-byte row is in no column group",
                self.name
            )));
        }
        Ok(())
    }
}
