//! The version index: every version of every key, looked up by tag, and each key's version order.
//!
//! Built by sorting rather than hashing (two sorts of all writes, `O(W log W)` for `W` writes), so
//! a read is resolved by binary search and a key's version order is a contiguous run.
//!
//! Invariants of a built index:
//!
//! - `by_tag` holds every write of every transaction (committed or not, final or not), sorted by
//!   `(key, version)`;
//! - `chains` holds the *installed* versions: the final write of each key by each committed
//!   transaction, sorted by `(key, order, visible, version)` (`WriteEvent::position`: an omitted
//!   write may share the order of the visible version it precedes). Per Adya, only committed final versions are in the
//!   version order; the initial version (tag 0) precedes each key's run implicitly;
//! - for an installed version, `TagEntry::chain` is its index in `chains`.

use crate::Key;
use txlab_core::protocol::history::TxnRecord;

/// Marks a write that is not in a version order.
const NOT_INSTALLED: u32 = u32::MAX;

/// One write, found by `(key, version)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TagEntry {
    pub key: Key,
    pub version: u64,
    /// The version's position in the key's version order (meaningful when installed).
    pub order: u64,
    /// Index of the writing record in the history.
    pub record: u32,
    /// Index in `chains`, or `NOT_INSTALLED`.
    pub chain: u32,
    /// Whether it is the writer's last write of the key.
    pub is_final: bool,
    /// Whether readers could observe it.
    pub visible: bool,
    /// Whether the writer committed.
    pub committed: bool,
    /// Whether the version is a delete (the key is absent in it).
    pub delete: bool,
}

/// One installed version in its key's version order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChainEntry {
    pub key: Key,
    pub record: u32,
    /// Whether the version is a delete (the key is absent in it).
    pub delete: bool,
}

/// A read to resolve.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadQuery {
    pub key: Key,
    pub version: u64,
    /// Index of the reading record in the history.
    pub record: u32,
}

/// What a read observed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Resolved<'a> {
    /// The initial version; the first installed version of the key follows it, if any.
    Initial(Option<&'a ChainEntry>),
    /// A version some transaction wrote.
    Write(&'a TagEntry),
    /// A tag no transaction wrote.
    Missing,
}

/// Every version of every key (see the module docs).
#[derive(Debug)]
pub(crate) struct VersionIndex {
    by_tag: Vec<TagEntry>,
    chains: Vec<ChainEntry>,
}

impl VersionIndex {
    /// Indexes the writes of `records`; `committed[i]` says whether record `i` committed.
    /// Inconsistencies (a tag written twice, two visible versions of a key with one order, tag 0
    /// written) go to `invalid`.
    pub fn build(
        records: &[TxnRecord],
        committed: &[bool],
        invalid: &mut dyn FnMut(String),
    ) -> Self {
        let total: usize = records.iter().map(|r| r.writes.len()).sum();
        let mut by_tag = Vec::with_capacity(total);
        // Finality: the last write of a key within one record. Writes per record are few, so a
        // per-record sort of (key, position) is cheap; the scratch vector is reused.
        let mut scratch: Vec<(Key, usize)> = Vec::new();
        let mut is_final: Vec<bool> = Vec::new();
        for (ri, r) in records.iter().enumerate() {
            scratch.clear();
            scratch.extend(
                r.writes
                    .iter()
                    .enumerate()
                    .map(|(p, w)| (Key::new(w.table, w.key), p)),
            );
            scratch.sort_unstable();
            is_final.clear();
            is_final.resize(r.writes.len(), false);
            for (i, &(key, pos)) in scratch.iter().enumerate() {
                if scratch.get(i + 1).is_none_or(|&(next, _)| next != key) {
                    is_final[pos] = true;
                }
            }
            for (p, w) in r.writes.iter().enumerate() {
                if w.version == 0 {
                    invalid(format!(
                        "{} writes version tag 0 of {}, the tag reserved for the initial version",
                        crate::display_txn(r.id),
                        Key::new(w.table, w.key)
                    ));
                }
                by_tag.push(TagEntry {
                    key: Key::new(w.table, w.key),
                    version: w.version,
                    order: w.order,
                    record: ri as u32,
                    chain: NOT_INSTALLED,
                    is_final: is_final[p],
                    visible: w.visible,
                    committed: committed[ri],
                    delete: w.kind == txlab_core::protocol::history::WriteKind::Delete,
                });
            }
        }
        by_tag.sort_unstable_by_key(|e| (e.key, e.version));
        for pair in by_tag.windows(2) {
            if (pair[0].key, pair[0].version) == (pair[1].key, pair[1].version) {
                invalid(format!(
                    "version {} of {} is written twice (by {} and {})",
                    pair[0].version,
                    pair[0].key,
                    crate::display_txn(records[pair[0].record as usize].id),
                    crate::display_txn(records[pair[1].record as usize].id),
                ));
            }
        }

        // The version orders: installed versions sorted by (key, order, visible, version), the
        // position of `WriteEvent::position`; remember where each tag entry went.
        let mut installed: Vec<(Key, (u64, bool, u64), u32)> = by_tag
            .iter()
            .enumerate()
            .filter(|(_, e)| e.committed && e.is_final)
            .map(|(i, e)| (e.key, (e.order, e.visible, e.version), i as u32))
            .collect();
        installed.sort_unstable();
        for pair in installed.windows(2) {
            let ((key, (order, visible, _), a), (next, (next_order, next_visible, _), b)) =
                (pair[0], pair[1]);
            if key == next && order == next_order && visible && next_visible {
                invalid(format!(
                    "two versions of {} have order {} (written by {} and {})",
                    key,
                    order,
                    crate::display_txn(records[by_tag[a as usize].record as usize].id),
                    crate::display_txn(records[by_tag[b as usize].record as usize].id),
                ));
            }
        }
        let mut chains = Vec::with_capacity(installed.len());
        for (ci, &(key, _, tag_index)) in installed.iter().enumerate() {
            let entry = &mut by_tag[tag_index as usize];
            entry.chain = ci as u32;
            chains.push(ChainEntry {
                key,
                record: entry.record,
                delete: entry.delete,
            });
        }
        Self { by_tag, chains }
    }

    /// Resolves every read in `reads` (sorted here by `(key, version)`), calling `f` with each.
    ///
    /// A merge join against the sorted versions rather than a binary search per read: at a
    /// million transactions the binary searches' cache misses cost seconds, the sort a fraction.
    pub fn resolve_all(
        &self,
        mut reads: Vec<ReadQuery>,
        mut f: impl FnMut(ReadQuery, Resolved<'_>),
    ) {
        reads.sort_unstable_by_key(|q| (q.key, q.version));
        let (mut t, mut c) = (0, 0);
        for q in reads {
            if q.version == 0 {
                while self.chains.get(c).is_some_and(|e| e.key < q.key) {
                    c += 1;
                }
                f(
                    q,
                    Resolved::Initial(self.chains.get(c).filter(|e| e.key == q.key)),
                );
                continue;
            }
            while self
                .by_tag
                .get(t)
                .is_some_and(|e| (e.key, e.version) < (q.key, q.version))
            {
                t += 1;
            }
            match self
                .by_tag
                .get(t)
                .filter(|e| e.key == q.key && e.version == q.version)
            {
                Some(write) => f(q, Resolved::Write(write)),
                None => f(q, Resolved::Missing),
            }
        }
    }

    /// The installed version following the installed version `entry` in its key's order.
    pub fn next_installed(&self, entry: &TagEntry) -> Option<&ChainEntry> {
        if entry.chain == NOT_INSTALLED {
            return None;
        }
        self.chains
            .get(entry.chain as usize + 1)
            .filter(|c| c.key == entry.key)
    }

    /// The installed versions of every key in `lo..=hi`, each key's run in version order.
    pub fn chains_in(&self, lo: Key, hi: Key) -> &[ChainEntry] {
        let start = self.chains.partition_point(|c| c.key < lo);
        let end = self.chains.partition_point(|c| c.key <= hi);
        &self.chains[start..end.max(start)]
    }

    /// Consecutive installed versions of the same key: the `ww` pairs.
    pub fn successive_installs(&self) -> impl Iterator<Item = (&ChainEntry, &ChainEntry)> {
        self.chains
            .windows(2)
            .filter(|w| w[0].key == w[1].key)
            .map(|w| (&w[0], &w[1]))
    }
}
