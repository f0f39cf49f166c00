//! What a buffered write does, and the one rule that says whether it is *blind*.
//!
//! A write is blind when its value does not depend on what the database held: `TxOps::write` of
//! a key the transaction did not read. Only blind writes may be omitted by the non-visible write
//! rule (`txlab_nwr`), so every engine asks this one question the same way
//! ([`crate::Sets::is_blind`]): the write entry's kind is [`WriteKind::BlindPut`] **and** the read
//! set holds no read of the same record. The second half matters because a transaction may read
//! a key and then write it with `TxOps::write` (a read-modify-write spelled as two calls), and
//! because inserts and deletes read the record they change (their observation of presence is
//! validated at commit like any read).
//!
//! How later operations on the same key change the kind (one write entry per key):
//!
//! | entry | `write` | `update` | `insert` | `delete` |
//! |---|---|---|---|---|
//! | `BlindPut` | value replaced | value changed in place (still blind: it derives from a blind value) | refused (present) | becomes `Delete` |
//! | `Put` | value replaced | value changed in place | refused (present) | becomes `Delete` |
//! | `Insert` | value replaced | value changed in place | refused (present) | becomes `Delete` |
//! | `Delete` | becomes `Put` (the delete read the record) | refused (absent) | becomes `Put` | refused (absent) |

use txlab_core::protocol::history::WriteKind as HistoryKind;

/// What a write entry installs at commit (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// A value that does not depend on the database (`TxOps::write`): the only kind NWR may omit.
    BlindPut,
    /// A value derived from what the transaction read (`TxOps::update`, or a write or insert of a
    /// key the same transaction deleted).
    Put,
    /// An insert of a key observed absent.
    Insert,
    /// A delete of a key observed present.
    Delete,
}

impl WriteKind {
    /// Whether the entry installs an absent version.
    #[inline]
    pub fn is_delete(self) -> bool {
        self == WriteKind::Delete
    }

    /// Whether the entry's transaction observed the record's presence through this very
    /// operation (an insert found it absent, a delete found it present): the write is not blind,
    /// and its record is in the read set.
    #[inline]
    pub fn observed_presence(self) -> bool {
        matches!(self, WriteKind::Insert | WriteKind::Delete)
    }

    /// The kind a history records.
    #[inline]
    pub fn history(self) -> HistoryKind {
        if self.is_delete() {
            HistoryKind::Delete
        } else {
            HistoryKind::Put
        }
    }
}
