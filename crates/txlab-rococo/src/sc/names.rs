//! Names for reports: `table.group` labels and SC-graph vertex labels.

use txlab_core::TableId;
use txlab_core::pieces::{ColumnGroup, TableLayout};

/// Looks up table and group names in the layout.
#[derive(Debug)]
pub(crate) struct Names<'a> {
    tables: &'a [TableLayout],
}

impl<'a> Names<'a> {
    pub(crate) fn new(tables: &'a [TableLayout]) -> Self {
        Self { tables }
    }

    /// `district.next_o_id`, or just `new_order` for a table without groups.
    pub(crate) fn group(&self, table: TableId, group: ColumnGroup) -> String {
        match self.tables.iter().find(|l| l.table == table) {
            Some(l) if l.groups.is_empty() && group == ColumnGroup::ROW => l.name.to_string(),
            Some(l) => format!("{}.{}", l.name, l.group_name(group)),
            None => format!("t{}.g{}", table.0, group.0),
        }
    }
}
