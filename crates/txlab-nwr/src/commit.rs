//! The rule's glue to an engine built on the OCC toolkit (`txlab_occ`), written once: the
//! engine-side state ([`NwrParts`]), the view of a committing transaction's sets the rule reads
//! ([`View`], with per-protocol [`Hooks`] only where the protocols differ), the commit-time
//! omission attempt ([`try_omit_all`] for [`crate::Nwr`], [`try_omit_one`] for
//! [`crate::NwrSingleWrite`]) and the end of an omitting commit ([`finish_omitted`]).
//!
//! An engine calls one of the two attempts first thing in its commit (its *Phase 0*) when
//! `W::ENABLED` and group commit is on; if the attempt declines, the engine's own commit runs
//! unchanged (the rule never aborts a transaction). What differs between protocols is where a
//! transaction's epoch is fixed ([`Hooks::serialize`]: after a `SeqCst` fence for Silo and
//! TicToc, by the timestamp for MVTO), what a read remembers of its version, and how a written
//! item's pivot is found; the order of the steps is the rule's:
//!
//! ```text
//! try_omit_all   shape and read filters with plain loads and the epoch seen now (writes too, when
//!                the protocol asks); fix the epoch; mark the reads (Algorithm 3 (1)); try_omit
//! try_omit_one   single-write shape filter; fix the epoch; try_omit_single
//! ```
//!
//! The filters use the epoch as it is before it is fixed: the global epoch never moves back, so
//! a read older than that epoch is older than the fixed one too, and a filter fooled by a stale
//! epoch only declines an omission, which is always allowed.

use crate::WriteOmission;
use crate::pivot::{PivotCell, PivotWord, VersionNumber};
use crate::rule::{self, NwrBaseline, NwrMutation, SinglePivot};
use crate::stats::NwrStats;
use crossbeam_epoch::Guard;
use std::cell::Cell;
use txlab_core::protocol::history::{Recorder, WriteEvent, WriteKind};
use txlab_core::protocol::storage::Record;
use txlab_core::protocol::sync::{AtomicU32, AtomicU64, Ordering};
use txlab_core::{CommitInfo, Error, TableId};
use txlab_occ::{Protocol, Sets, Txn};
use txlab_storage::{Companions, Tables};

/// What an NWR engine keeps besides its protocol: the pivot objects (one per key, beside the
/// records, cold: only a would-be omitter reads one) and the stamps that order omitted writes in
/// recorded histories.
#[derive(Debug)]
pub struct NwrParts {
    /// The pivot objects (`Nwr` only; empty for the other policies, which keep none).
    pub pivots: Companions<PivotCell>,
    stamps: AtomicU64,
}

impl NwrParts {
    /// The parts of an engine over `tables` with policy `W`: pivot objects beside every table for
    /// [`crate::Nwr`] (which needs a lock-free 128-bit compare-and-swap), none otherwise.
    pub fn new<W: WriteOmission, R: Record>(tables: &Tables<R>) -> Result<Self, Error> {
        let pivots = if W::MODE.needs_lock_free_pivot() {
            crate::require_lock_free_pivot()?;
            Companions::beside(tables)?
        } else {
            Companions::none()
        };
        Ok(Self {
            pivots,
            stamps: AtomicU64::new(0),
        })
    }

    /// The pivot object of `(table, key)` as it stands (`Nwr` only; `None` for the other
    /// policies, which keep none). Publishes an empty object for a keyed table's key that has none
    /// yet. Tests use it to see which key's object an omission updated.
    pub fn pivot_word(&self, table: TableId, key: u64) -> Option<PivotWord> {
        let guard = crossbeam_epoch::pin();
        self.pivots.cell(table, key, &guard).map(|c| c.load())
    }

    /// The next stamp in `1..=room`, one per omitting transaction: a single total order of
    /// omitted writes on every key (only drawn when recording).
    #[inline]
    pub fn stamp(&self, room: u64) -> u64 {
        self.stamps.fetch_add(1, Ordering::Relaxed) % room + 1
    }
}

/// What the rule needs of one protocol, where protocols differ (the rest of [`NwrBaseline`] is
/// [`View`]'s, over the toolkit's sets). Implemented by a small per-commit value of the protocol
/// (its epoch or timestamp, and whatever else its checks read).
pub trait Hooks<P: Protocol>: Sized {
    /// Fixes the committing transaction's epoch, the point it is serialized at if its writes are
    /// omitted; `None` if it cannot be omitted in that epoch (TicToc: no timestamps left).
    fn serialize(&self) -> Option<u32>;
    /// Whether the epoch-`e` filters also check the written items ([`rule::omission_writes_ok`]).
    const FILTER_WRITES: bool = false;
    /// [`NwrBaseline::read_version`].
    fn read_version(&self, v: &View<'_, P, Self>, i: usize, epoch: u32) -> VersionNumber;
    /// [`NwrBaseline::read_is_pre_epoch`].
    fn read_is_pre_epoch(&self, v: &View<'_, P, Self>, i: usize, epoch: u32) -> bool;
    /// [`NwrBaseline::read_mark`] (also used for writes: the mark word of a record).
    fn mark<'a>(&self, _rec: &'a P::Record) -> Option<&'a AtomicU32> {
        None
    }
    /// [`NwrBaseline::has_read_omit`].
    const READ_OMIT: bool = false;
    /// [`NwrBaseline::write_read_marked`].
    fn write_read_marked(&self, _v: &View<'_, P, Self>, _i: usize, _epoch: u32) -> bool {
        false
    }
    /// [`NwrBaseline::claim_write`].
    fn claim_write(&self, _v: &View<'_, P, Self>, _i: usize, _epoch: u32, _ignore: bool) -> bool {
        true
    }
    /// [`NwrBaseline::has_epoch_version`].
    fn has_epoch_version(&self, v: &View<'_, P, Self>, i: usize, epoch: u32) -> bool;
    /// [`NwrBaseline::single_write_pivot`].
    fn single_write_pivot(&self, _v: &View<'_, P, Self>, _i: usize, _epoch: u32) -> SinglePivot {
        SinglePivot::Missing
    }
    /// [`NwrBaseline::single_write_reads_ok`]: `None` keeps the rule's default.
    fn single_write_reads_ok(&self, _v: &View<'_, P, Self>, _epoch: u32) -> Option<bool> {
        None
    }
    /// [`NwrBaseline::overwriters_valid`].
    fn overwriters_valid(&self, v: &View<'_, P, Self>) -> bool;
}

/// A committing transaction's sets as the rule sees them ([`NwrBaseline`]).
#[derive(Debug)]
pub struct View<'a, P: Protocol, H> {
    /// The transaction's sets.
    pub sets: &'a Sets<P>,
    /// The engine's pivot objects, looked up under `guard`.
    pub pivots: &'a Companions<PivotCell>,
    /// The transaction's guard, pinned for the whole commit.
    pub guard: &'a Guard,
    /// A test-only mutation of the rule (`None` in real engines).
    pub mutation: Option<NwrMutation>,
    /// The protocol's hooks.
    pub hooks: H,
    /// Where a single-write omitter is placed, as its protocol's hooks found it (TicToc: the
    /// pivot's timestamp, MVTO: the pivot's write timestamp); 0 until then.
    pub placed_at: Cell<u64>,
}

impl<'a, P: Protocol, H: Hooks<P>> View<'a, P, H> {
    /// A view of a committing transaction's `sets`, whose pointers were obtained under `guard`.
    #[inline]
    pub fn new(
        sets: &'a Sets<P>,
        guard: &'a Guard,
        parts: &'a NwrParts,
        mutation: Option<NwrMutation>,
        hooks: H,
    ) -> Self {
        Self {
            sets,
            pivots: &parts.pivots,
            guard,
            mutation,
            hooks,
            placed_at: Cell::new(0),
        }
    }

    /// The record of read `i`.
    #[inline]
    pub fn read_rec(&self, i: usize) -> &'a P::Record {
        // SAFETY: read-set pointers were obtained under `guard`, pinned for the whole commit
        // (`txlab_occ::sets`).
        unsafe { &*self.sets.reads[i].rec }
    }

    /// The record of write `i`.
    #[inline]
    pub fn write_rec(&self, i: usize) -> &'a P::Record {
        // SAFETY: as for `read_rec`.
        unsafe { &*self.sets.writes[i].rec }
    }
}

impl<P: Protocol, H: Hooks<P>> NwrBaseline for View<'_, P, H> {
    #[inline]
    fn read_count(&self) -> usize {
        self.sets.reads.len()
    }

    fn read_item(&self, i: usize) -> (u16, u64) {
        let r = &self.sets.reads[i];
        (r.table.0, r.key)
    }

    fn read_pivot(&self, i: usize) -> &PivotCell {
        let r = &self.sets.reads[i];
        self.pivots.cell_of_found_key(r.table, r.key, self.guard)
    }

    fn read_version(&self, i: usize, epoch: u32) -> VersionNumber {
        self.hooks.read_version(self, i, epoch)
    }

    #[inline(always)]
    fn read_is_pre_epoch(&self, i: usize, epoch: u32) -> bool {
        self.hooks.read_is_pre_epoch(self, i, epoch)
    }

    #[inline]
    fn read_mark(&self, i: usize) -> Option<&AtomicU32> {
        self.hooks.mark(self.read_rec(i))
    }

    fn write_count(&self) -> usize {
        self.sets.writes.len()
    }

    fn write_item(&self, i: usize) -> (u16, u64) {
        let w = &self.sets.writes[i];
        (w.table.0, w.key)
    }

    /// The toolkit's one rule (`txlab_occ::write_kind`).
    fn write_is_blind(&self, i: usize) -> bool {
        self.sets.is_blind(i)
    }

    fn write_pivot(&self, i: usize) -> &PivotCell {
        let w = &self.sets.writes[i];
        self.pivots.cell_of_found_key(w.table, w.key, self.guard)
    }

    #[inline]
    fn write_mark(&self, i: usize) -> Option<&AtomicU32> {
        self.hooks.mark(self.write_rec(i))
    }

    #[inline(always)]
    fn has_read_omit(&self) -> bool {
        H::READ_OMIT
    }

    fn write_read_marked(&self, i: usize, epoch: u32) -> bool {
        self.hooks.write_read_marked(self, i, epoch)
    }

    fn claim_write(&self, i: usize, epoch: u32, ignore_reads: bool) -> bool {
        self.hooks.claim_write(self, i, epoch, ignore_reads)
    }

    fn has_epoch_version(&self, i: usize, epoch: u32) -> bool {
        self.hooks.has_epoch_version(self, i, epoch)
    }

    fn single_write_pivot(&self, i: usize, epoch: u32) -> SinglePivot {
        self.hooks.single_write_pivot(self, i, epoch)
    }

    fn single_write_reads_ok(&self, epoch: u32) -> bool {
        self.hooks
            .single_write_reads_ok(self, epoch)
            .unwrap_or_else(|| (0..self.read_count()).all(|i| self.read_is_pre_epoch(i, epoch)))
    }

    /// Any range scan, on any table (a per-transaction flag, so recorded and unrecorded runs
    /// apply the same rule).
    fn has_scans(&self) -> bool {
        self.sets.scanned
    }

    fn overwriters_valid(&self) -> bool {
        self.hooks.overwriters_valid(self)
    }

    fn mutation(&self) -> Option<NwrMutation> {
        self.mutation
    }
}

/// [`crate::Nwr`]'s Phase 0 (module docs): the filters with the epoch `seen` before it is fixed,
/// then [`Hooks::serialize`], [`rule::merge_reads`] unless `marked` (the protocol marked its reads
/// already, MVTO), and [`rule::try_omit`]. Returns the epoch the transaction commits in with
/// every write omitted, or `None` to hand it to the baseline.
pub fn try_omit_all<P: Protocol, H: Hooks<P>>(
    view: &View<'_, P, H>,
    seen: u32,
    marked: bool,
    stats: &mut NwrStats,
) -> Option<u32> {
    let filters = rule::omission_shape_ok(view, stats)
        && rule::omission_reads_ok(view, seen, stats)
        && (!H::FILTER_WRITES || rule::omission_writes_ok(view, seen, stats));
    if !filters {
        return None;
    }
    let epoch = view.hooks.serialize()?;
    if !marked {
        rule::merge_reads(view, epoch, stats);
    }
    rule::try_omit(view, epoch, stats).ok().map(|()| epoch)
}

/// [`crate::NwrSingleWrite`]'s Phase 0 (module docs): the single-write shape filter, then
/// [`Hooks::serialize`] and [`rule::try_omit_single`]. Returns the epoch the transaction commits
/// in with its write omitted, or `None` to hand it to the baseline.
pub fn try_omit_one<P: Protocol, H: Hooks<P>>(
    view: &View<'_, P, H>,
    stats: &mut NwrStats,
) -> Option<u32> {
    if !rule::single_write_shape_ok(view, stats) {
        return None;
    }
    let epoch = view.hooks.serialize()?;
    rule::try_omit_single(view, epoch, stats)
        .ok()
        .map(|()| epoch)
}

/// Ends a transaction committed in `epoch` with every write omitted: nothing was locked or
/// installed; when recording, its writes enter the history as invisible versions, at the
/// `(version, order)` that `place` gives for the transaction's stamp (in `1..=room`,
/// [`NwrParts::stamp`]). Not acknowledged before its epoch is stable.
pub fn finish_omitted<P: Protocol>(
    tx: &mut Txn<'_, '_, P>,
    parts: &NwrParts,
    epoch: u64,
    room: u64,
    place: impl FnOnce(u64) -> (u64, u64),
) -> CommitInfo {
    if <P::Recorder as Recorder>::ENABLED {
        let (version, order) = place(parts.stamp(room));
        let st = &mut tx.w.sets;
        for w in st.writes.iter() {
            st.h_writes.push(WriteEvent {
                table: w.table,
                key: w.key,
                version,
                order,
                kind: WriteKind::Put,
                visible: false,
            });
        }
    }
    tx.finish(txlab_core::protocol::history::Outcome::Committed);
    CommitInfo {
        epoch,
        acknowledged: false,
        read_only: false,
    }
}

/// The switches of an engine's commit path: a struct `Checks` with one `bool` per check (true:
/// the check runs) and `nwr: Option<NwrMutation>` (the rule's mutation, if any), built by
/// `Checks::of(&config)` from the engine's `crate::config::Mutation`. Without the calling crate's
/// `mutation` feature every check is a constant `true` and `nwr` a constant `None`, so the
/// branches fold away and the baseline's path carries none of them. `crate::config::Mutation` and
/// the `mutation` feature are the calling crate's.
///
/// ```ignore
/// txlab_nwr::mutation_checks!(crate::SiloConfig {
///     lock_writes: SkipWriteLock,
///     validate_reads: SkipReadValidation,
/// });
/// ```
#[macro_export]
#[allow(clippy::crate_in_macro_def)] // `crate::config::Mutation` is the calling engine's.
macro_rules! mutation_checks {
    ($config:ty { $($check:ident: $skip:ident),* $(,)? }) => {
        /// Which checks run: all of them, and the NWR rule as shipped, except under a test-only
        /// mutation (`txlab_nwr::mutation_checks!`).
        struct Checks {
            $($check: bool,)*
            nwr: Option<$crate::NwrMutation>,
        }

        impl Checks {
            #[inline(always)]
            fn of(_config: &$config) -> Self {
                #[cfg(feature = "mutation")]
                {
                    use crate::config::Mutation;
                    let m = _config.mutation;
                    Checks {
                        $($check: m != Some(Mutation::$skip),)*
                        nwr: match m {
                            Some(Mutation::Nwr(n)) => Some(n),
                            _ => None,
                        },
                    }
                }
                #[cfg(not(feature = "mutation"))]
                Checks {
                    $($check: true,)*
                    nwr: None,
                }
            }
        }
    };
}
