//! History recording, switched at compile time.
//!
//! Engines are generic over a [`Recorder`]. With [`NoRecorder`] (`ENABLED = false`) every
//! `if R::ENABLED { .. }` block is removed by the compiler, so a benchmark build pays nothing.
//! With a real recorder, each finished transaction (committed or aborted) is handed over as a
//! [`TxnRecord`]; `txlab-check` collects and checks them.
//!
//! Version identity: every write installs a version identified per key by a `version` tag,
//! unique among that key's versions; `0` is the initial version (loaded, or absent if never
//! loaded). A read records the tag of the version it observed. The position of a version in the
//! key's version order is `order` (ascending); protocols whose version order is the order of their
//! tags use `order == version`. Protocols that place versions out of tag order (NWR's omitted
//! writes sit just before the pivot version) give each write an explicit `order`. A key's
//! versions are ordered by [`WriteEvent::position`]: an omitted (invisible) write may share the
//! `order` of the visible version it is placed just before (MVTO+NWR with single-write omitters
//! has no free order value below its pivot), and omitted writes of one `order` are ordered by tag.

use crate::error::{ConflictCause, TxError, TxResult};
use crate::table::TableId;

#[path = "memory_recorder.rs"]
mod memory_recorder;
#[path = "history_records.rs"]
mod records;

pub use memory_recorder::MemoryRecorder;
pub use records::{History, Key, TxnBuilder, display_txn};

/// The seal of [`Recorder`]: private, so only this module's recorders implement it.
mod sealed {
    pub trait Sealed {}
}

/// A transaction's id in a history: `(worker id << 40) | per-worker sequence number`.
pub type TxnId = u64;

/// Builds a [`TxnId`].
pub fn txn_id(worker: u32, seq: u64) -> TxnId {
    ((worker as u64) << 40) | (seq & ((1 << 40) - 1))
}

/// One read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ReadEvent {
    /// The table.
    pub table: TableId,
    /// The key.
    pub key: u64,
    /// The tag of the version observed (0: the initial version).
    pub version: u64,
    /// Whether the key was present in that version.
    pub present: bool,
}

/// A range scan (a predicate read): the transaction claims every key of `table` in `lo..=hi`
/// that it did not return was absent. `hi` is where the scan really stopped (the last key visited
/// when the visitor ended it early). The keys it returned are recorded as ordinary reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ScanEvent {
    /// The table.
    pub table: TableId,
    /// First key of the range.
    pub lo: u64,
    /// Last key the scan covered.
    pub hi: u64,
}

/// The bookkeeping every engine's range scan shares: how far the scan really went (the visitor
/// may stop it early) and the first read that failed, which ends it. Engines call
/// [`step`](Self::step) for every key their index visits and [`finish`](Self::finish) after it.
#[derive(Debug)]
pub struct ScanCoverage {
    event: ScanEvent,
    failure: Option<TxError>,
}

impl ScanCoverage {
    /// A scan of `lo..=hi` of `table` that has visited nothing yet.
    #[inline]
    pub fn new(table: TableId, lo: u64, hi: u64) -> Self {
        Self {
            event: ScanEvent { table, lo, hi },
            failure: None,
        }
    }

    /// Records what visiting `key` gave: `Ok(true)` goes on, `Ok(false)` means the visitor
    /// stopped the scan at `key`, `Err` a failed read, which stops it too. Returns whether the
    /// scan goes on (what the index's callback returns).
    #[inline]
    pub fn step(&mut self, key: u64, outcome: TxResult<bool>) -> bool {
        match outcome {
            Ok(true) => true,
            Ok(false) => {
                self.event.hi = key;
                false
            }
            Err(e) => {
                self.event.hi = key;
                self.failure = Some(e);
                false
            }
        }
    }

    /// Ends the scan: the failed read's error if there was one; otherwise `Ok`, and, when `R`
    /// records, the predicate read (every key of `lo..=` the last one covered that the scan did
    /// not return was absent) is pushed to `scans`.
    #[inline]
    pub fn finish<R: Recorder>(self, scans: &mut Vec<ScanEvent>) -> TxResult<()> {
        match self.failure {
            Some(e) => Err(e),
            None => {
                if R::ENABLED {
                    scans.push(self.event);
                }
                Ok(())
            }
        }
    }
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WriteKind {
    /// Set a value (blind write, update, or insert).
    Put,
    /// Made the key absent.
    Delete,
}

/// One installed (or, for protocols like NWR, logically ordered but omitted) version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WriteEvent {
    /// The table.
    pub table: TableId,
    /// The key.
    pub key: u64,
    /// The new version's tag (unique per key).
    pub version: u64,
    /// The version's position in the key's version order.
    pub order: u64,
    /// Put or delete.
    pub kind: WriteKind,
    /// Whether readers could ever observe this version (false for NWR's omitted writes).
    pub visible: bool,
}

impl WriteEvent {
    /// The version's position in its key's version order: `(order, visible, version)`. An
    /// invisible (omitted) write sorts just before a visible version of the same `order`, and
    /// invisible writes of one `order` by their tags; two *visible* versions of a key must not
    /// share an `order` (the checker reports it).
    #[inline]
    pub fn position(&self) -> (u64, bool, u64) {
        (self.order, self.visible, self.version)
    }
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Outcome {
    /// Committed.
    Committed,
    /// Aborted by concurrency control.
    Aborted(ConflictCause),
    /// Rolled back by the program (or by a real error).
    UserAborted,
}

/// Everything recorded about one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TxnRecord {
    /// The transaction's id.
    pub id: TxnId,
    /// Reads in program order (including reads of keys the transaction later wrote).
    pub reads: Vec<ReadEvent>,
    /// Writes installed at commit (empty for an aborted transaction unless it wrote dirty data).
    pub writes: Vec<WriteEvent>,
    /// Range scans, as predicate reads.
    pub scans: Vec<ScanEvent>,
    /// How it ended.
    pub outcome: Outcome,
    /// Nanoseconds since the recorder started, when the transaction began.
    pub begin_ns: u64,
    /// Nanoseconds since the recorder started, when it finished committing (or aborted).
    pub end_ns: u64,
}

/// Receives finished transactions. `ENABLED = false` compiles recording out.
///
/// Sealed: the implementations are [`NoRecorder`] and [`MemoryRecorder`], whose [`History`] the
/// checker (`txlab-check`, which re-exports both) knows how to read. What an engine reports, and
/// when, is defined by the engines and the checker together (version tags, orders, omitted
/// writes: module docs), so a recorder from outside could not rely on it; to look at a history,
/// record with [`MemoryRecorder`] and read its [`History`]. Both implementations live in this
/// crate and the seal is a private trait, so no other crate, txlab's own included, can implement
/// `Recorder`.
///
/// ```compile_fail,E0277
/// use txlab_core::protocol::history::{Recorder, TxnRecord};
///
/// struct Mine;
/// impl Recorder for Mine {
///     const ENABLED: bool = true;
///     fn now_ns(&self) -> u64 {
///         0
///     }
///     fn record(&self, _txn: TxnRecord) {}
/// }
/// ```
pub trait Recorder: Send + Sync + sealed::Sealed {
    /// Whether engines should record at all.
    const ENABLED: bool;

    /// Nanoseconds since the recorder was created (a monotonic clock shared by all workers).
    fn now_ns(&self) -> u64;

    /// Takes one finished transaction.
    fn record(&self, txn: TxnRecord);
}

/// The recorder that records nothing (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRecorder;

impl sealed::Sealed for NoRecorder {}

impl Recorder for NoRecorder {
    const ENABLED: bool = false;

    #[inline(always)]
    fn now_ns(&self) -> u64 {
        0
    }

    #[inline(always)]
    fn record(&self, _txn: TxnRecord) {}
}

/// The version tag of each key's last *retired* tombstone, for engines that unlink deleted
/// records from their index (Silo's and TicToc's `retire` modules) while recording histories.
///
/// A record linked for a key after its previous record was unlinked starts in the never-written
/// absent state, whose tag is 0, which the checker would read as the key's *initial* version. Its
/// absent state *is* the state after the retired delete, so a read of an absent, tag-0 version of
/// a key in this map reports the mapped tag instead ([`Self::fresh_version`]). The retirer
/// updates the map before it unlinks, so any record found after the unlink reads the new entry.
/// The reader looks the map up right after its read, inside its transaction, and cannot find a
/// *later* retirement of the key there: that would need the fresh record to be deleted after the
/// read (in an epoch at least the reader's) and two epoch advances before the lookup, and the
/// reader's active epoch holds the global epoch back to at most one above its own (both engines
/// wait two epochs before unlinking).
#[derive(Debug, Default)]
pub struct RetiredTags {
    map: crate::protocol::sync::Mutex<std::collections::HashMap<(u16, u64), u64>>,
}

impl RetiredTags {
    /// Remembers that `(table, key)`'s tombstone with tag `tag` was retired.
    pub fn remember(&self, table: TableId, key: u64, tag: u64) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.insert((table.0, key), tag);
    }

    /// The version a read of an absent, tag-0 record of `(table, key)` reports: the tag of the
    /// key's last retired tombstone, or 0 (the initial version) if none was retired.
    pub fn fresh_version(&self, table: TableId, key: u64) -> u64 {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&(table.0, key)).copied().unwrap_or(0)
    }
}

#[cfg(all(test, feature = "serde", not(any(txlab_loom, txlab_shuttle))))]
mod serde_tests {
    use super::*;
    use crate::error::ConflictCause;
    use proptest::prelude::*;

    fn outcome() -> impl Strategy<Value = Outcome> {
        prop_oneof![
            Just(Outcome::Committed),
            Just(Outcome::UserAborted),
            Just(Outcome::Aborted(ConflictCause::ReadValidation)),
            Just(Outcome::Aborted(ConflictCause::TimestampsExhausted)),
        ]
    }

    fn record() -> impl Strategy<Value = TxnRecord> {
        let read = (any::<u16>(), any::<u64>(), any::<u64>(), any::<bool>()).prop_map(
            |(t, key, version, present)| ReadEvent {
                table: TableId(t),
                key,
                version,
                present,
            },
        );
        let write = (
            any::<u16>(),
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            any::<bool>(),
        )
            .prop_map(|(t, key, version, order, put)| WriteEvent {
                table: TableId(t),
                key,
                version,
                order,
                kind: if put {
                    WriteKind::Put
                } else {
                    WriteKind::Delete
                },
                visible: put || version % 2 == 0,
            });
        let scan = (any::<u16>(), any::<u64>(), any::<u64>()).prop_map(|(t, lo, hi)| ScanEvent {
            table: TableId(t),
            lo,
            hi,
        });
        (
            any::<u64>(),
            prop::collection::vec(read, 0..4),
            prop::collection::vec(write, 0..4),
            prop::collection::vec(scan, 0..2),
            outcome(),
            any::<u64>(),
            any::<u64>(),
        )
            .prop_map(
                |(id, reads, writes, scans, outcome, begin_ns, end_ns)| TxnRecord {
                    id,
                    reads,
                    writes,
                    scans,
                    outcome,
                    begin_ns,
                    end_ns,
                },
            )
    }

    proptest! {
        #[test]
        fn records_survive_a_serde_round_trip(r in record()) {
            let text = serde_json::to_string(&r).unwrap();
            prop_assert_eq!(serde_json::from_str::<TxnRecord>(&text).unwrap(), r);
        }
    }
}
