//! The non-visible write rule at commit time: Algorithm 3 of the NWR paper, over a protocol's
//! hooks ([`NwrBaseline`]).
//!
//! Each committing transaction `t_j` of epoch `e`:
//!
//! 1. [`merge_reads`] (Algorithm 3 (1)), for **every** commit, NWR or baseline, before the
//!    baseline validates its read set: each read of a version older than epoch `e` marks the
//!    read item as read in `e`. Silo and TicToc keep that mark in a 32-bit read-epoch word per
//!    record ([`crate::read_mark`], [`NwrBaseline::read_mark`]). MVTO keeps it in the read half
//!    of its record's read-and-omit marks ([`crate::read_omit`], [`NwrBaseline::has_read_omit`])
//!    and marks with its own loop (`txlab_mvto::nwr`), which also learns of earlier omissions.
//!    Without either, the mark goes into the pivot object's mRS as [`PRE_EPOCH`], whose older
//!    epoch is reset to `e` first (unlike the paper, which merges only when the object already
//!    belongs to epoch `e`), so a read made before the item's first blind write of the epoch is
//!    not forgotten.
//! 2. [`try_omit`] (Algorithm 2 and 3 (2)–(4)): every write must be blind; every read must be of a
//!    version older than `e` (check (3) in its conservative form: any version of this epoch may
//!    have been written by a successor of the pivot) and still current (the baseline's overwriter
//!    validation); every written item must already have a visible version of epoch `e` (the pivot,
//!    check (2)); no transaction of epoch `e` may have read an older version of it (its read
//!    mark, check (4); with a read-and-omit word, the omitter's claim on it).
//!    These checks first run over every written item with plain loads; then one CAS per written
//!    item decrements its pivot counter and merges the write into mWS; a failed CAS reloads the
//!    object and validates it again. A CAS that succeeded is never undone when a later item
//!    fails, so a race between the two passes can leave an "omitted" mWS mark on an item whose
//!    write then commits through the baseline (harmless: no engine reads mWS), and, for MVTO, a
//!    claim on its read-and-omit word (a possible false abort of an old-version reader, never a
//!    wrong commit).
//!
//! **Why this is safe** (the serial order it implies): put every omitting transaction of epoch
//! `e` at the *start* of epoch `e`, after all transactions of earlier epochs and before every
//! transaction of `e` that installed versions (ordering the omitters among themselves by any
//! total order, e.g. their recording stamps). Each omitter read the last versions before `e`
//! (checks on reads), so it reads exactly what that position gives. Each of its writes is ordered
//! after the item's last version before `e` and before the item's first version of `e` (which
//! exists), so nobody positioned later can read it; and nobody of epoch `e` read the older version
//! (read marks), so no later transaction misses it. Omitters never read an item another omitter
//! of the same epoch writes (the writer needs an epoch-`e` version, the reader needs there to be none
//! when it validates), so their only mutual edges are write-write ones, which follow the chosen
//! total order. Strictness: with epoch-based group commit every transaction of epoch `e` is
//! acknowledged after epoch `e` ends, so moving `t_j` before them respects real time (ST-Rule).
//!
//! The race between a reader's mark (step 1, then its validation load) and an omitter's check
//! (the item's version word load, then its read of the mark) is closed by read-modify-writes on
//! one location: if the omitter's comes first in that location's modification order, the
//! reader's mark synchronizes with it and its validation sees the new version (and fails);
//! otherwise the omitter sees the mark. With a read-epoch word the omitter's RMW is
//! [`crate::read_mark::read_in`] (module docs there); with a read-and-omit word it is
//! [`crate::read_omit::ReadOmitWord::claim`], which also tells later readers of the omission;
//! with mRS it is the object's CAS itself.
//!
//! No false aborts: every failure only returns an [`NwrFailure`]; the caller hands control back
//! to the baseline protocol, which alone may abort.

use crate::pivot::{PRE_EPOCH, PivotCell, PivotWord, VersionNumber, slot_of};
use crate::stats::{NwrFailure, NwrStats};
use txlab_core::protocol::sync::{AtomicU32, Ordering, fence};

/// CAS attempts per written item before giving up (`NwrFailure::CasRetry`).
pub const MAX_CAS_RETRIES: u32 = 16;

/// The hooks a baseline protocol provides to the rule for one committing transaction.
pub trait NwrBaseline {
    /// Number of reads in the read set.
    fn read_count(&self) -> usize;
    /// The item `(table, key)` of read `i`.
    fn read_item(&self, i: usize) -> (u16, u64);
    /// The pivot object of read `i`'s item.
    fn read_pivot(&self, i: usize) -> &PivotCell;
    /// The per-epoch version number of the version read `i` observed, for a transaction of
    /// `epoch` ([`PRE_EPOCH`] if it was written before `epoch`).
    fn read_version(&self, i: usize, epoch: u32) -> VersionNumber;
    /// Whether read `i` observed a version written before `epoch`: `read_version(i, epoch) ==`
    /// [`PRE_EPOCH`], which is what the default computes. The sound rule asks only this (the
    /// per-epoch number matters to the printed-algorithm mutant alone), on every read of every
    /// commit of an NWR engine, so engines override it with the one comparison of epochs their
    /// read sets allow, inlined, instead of deriving the version number.
    #[inline(always)]
    fn read_is_pre_epoch(&self, i: usize, epoch: u32) -> bool {
        self.read_version(i, epoch) == PRE_EPOCH
    }
    /// The read-epoch mark word of read `i`'s item ([`crate::read_mark`]), if the engine keeps
    /// the rule's mark there; `None` (the default) keeps it in the pivot object's mRS.
    /// [`NwrBaseline::write_mark`] must agree with it for every record.
    #[inline(always)]
    fn read_mark(&self, _i: usize) -> Option<&AtomicU32> {
        None
    }
    /// Number of writes.
    fn write_count(&self) -> usize;
    /// The item of write `i`.
    fn write_item(&self, i: usize) -> (u16, u64);
    /// Whether write `i` is blind (not an insert, delete or read-modify-write, and the transaction
    /// did not read the item).
    fn write_is_blind(&self, i: usize) -> bool;
    /// The pivot object of write `i`'s item.
    fn write_pivot(&self, i: usize) -> &PivotCell;
    /// The read-epoch mark word of write `i`'s item (see [`NwrBaseline::read_mark`]).
    #[inline(always)]
    fn write_mark(&self, _i: usize) -> Option<&AtomicU32> {
        None
    }
    /// Whether the engine keeps check (4)'s marks, and omitters' claims, in per-record
    /// read-and-omit marks (MVTO: in the record's head word, following the protocol of
    /// [`crate::read_omit`]); `false` (the default) otherwise. Such an engine never returns a
    /// [`NwrBaseline::write_mark`], and marks its reads itself (and must act on what the mark
    /// tells it), never with [`merge_reads`] (which would put the marks into mRS, where this
    /// rule does not look for them then).
    #[inline(always)]
    fn has_read_omit(&self) -> bool {
        false
    }
    /// With read-and-omit marks: whether write `i`'s item's read mark holds `epoch` or later
    /// (loads only; an early exit before any claim or CAS).
    #[inline(always)]
    fn write_read_marked(&self, _i: usize, _epoch: u32) -> bool {
        false
    }
    /// With read-and-omit marks: claims write `i`'s item for an omission in `epoch`, after its
    /// pivot was observed ([`crate::read_omit::ReadOmitWord::claim`]); `false` if a reader of
    /// `epoch` or later marked it first. `ignore_reads` is the test-only mutant of check (4).
    #[inline(always)]
    fn claim_write(&self, _i: usize, _epoch: u32, _ignore_reads: bool) -> bool {
        true
    }
    /// Whether write `i`'s item already has a visible version written in `epoch` (the pivot).
    /// Must load the item's version word (`Acquire`) before the caller's check of the read mark
    /// and its CAS on the pivot object.
    fn has_epoch_version(&self, i: usize, epoch: u32) -> bool;
    /// Single-write rule only ([`try_omit_single`]): one `Acquire` load of write `i`'s item's
    /// version word, telling whether the item has a visible version of `epoch` (the pivot) and,
    /// if so, whether the pivot's writer read the item's older version ([`SinglePivot`]). The
    /// engine keeps that mark with the version itself: the pivot's writer sets it in the word it
    /// publishes when it read the item (a read-modify-write, insert, delete or scan hit) or
    /// replaced an absent word of an earlier epoch (a possible scan miss), and every later writer
    /// of the same epoch copies it forward. The default says "no pivot", so an engine that does
    /// not implement it never omits under the single-write rule.
    fn single_write_pivot(&self, _i: usize, _epoch: u32) -> SinglePivot {
        SinglePivot::Missing
    }
    /// Single-write rule only ([`try_omit_single`], step 1): whether the reads allow an omission
    /// at all. The default requires every read to be of a version older than `epoch` (Silo,
    /// TicToc: the omitter sits below the item's first version of the epoch, and a read of the
    /// epoch may follow that). MVTO waives it: its omitter validates every read at its own
    /// position, the pivot's timestamp ([`NwrBaseline::overwriters_valid`]).
    fn single_write_reads_ok(&self, epoch: u32) -> bool {
        (0..self.read_count()).all(|i| self.read_is_pre_epoch(i, epoch))
    }
    /// Whether the transaction did range scans (left to the baseline).
    fn has_scans(&self) -> bool;
    /// The baseline's validation of overwriters, without taking locks: `true` if every read is
    /// still current (and not locked by another writer).
    fn overwriters_valid(&self) -> bool;
    /// A deliberately broken check (tests of the correctness kit only; `None` in real engines,
    /// where the constant folds the branches away).
    #[inline(always)]
    fn mutation(&self) -> Option<NwrMutation> {
        None
    }
}

/// A check of the rule a test disables to prove the checker catches it (never in real runs).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NwrMutation {
    /// Omit even when the item has no version of the current epoch (the write may be the latest).
    SkipEpochCheck,
    /// Omit even when a transaction of this epoch read the version the write is ordered after.
    SkipMergedReadCheck,
    /// Replace the rule by the paper's Algorithms 2 and 3 as printed ([`crate::printed`]), which
    /// merges a transaction's footprint only into the objects of the items it touches and so misses
    /// cycles through other items (`docs/protocols/nwr.md`).
    PrintedAlgorithm,
    /// Single-write rule ([`try_omit_single`]): validate the reads *before* observing the pivot
    /// (the order of [`try_omit`]), which lets a read be overwritten, by a transaction that read
    /// the omitted item's older version, between the two checks.
    ValidateReadsBeforePivot,
}

/// What an omitter of the single-write rule sees on its written item
/// ([`NwrBaseline::single_write_pivot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinglePivot {
    /// The item has no visible version of the epoch: the write may be the item's latest, so it
    /// cannot be omitted (check (2)).
    Missing,
    /// The pivot exists and its writer read the item's older version: an omitted write, ordered
    /// after that version and before the pivot, would be a lost update (check (4), the mRS
    /// check, reduced to the one reader that needs it).
    ReadByItsWriter,
    /// The pivot exists and nobody serialized after it read the older version.
    Unread,
}

/// Algorithm 3 (1): marks `t`'s reads of versions older than `epoch` on their items (the
/// read-epoch word of [`NwrBaseline::read_mark`], else the pivot object's mRS).
/// Call before the baseline validates the read set, on every commit of an NWR engine.
pub fn merge_reads<B: NwrBaseline + ?Sized>(t: &B, epoch: u32, stats: &mut NwrStats) {
    if t.mutation() == Some(NwrMutation::PrintedAlgorithm) {
        return crate::printed::merge_reads(t, epoch, stats);
    }
    for i in 0..t.read_count() {
        if !t.read_is_pre_epoch(i, epoch) {
            continue;
        }
        if let Some(word) = t.read_mark(i) {
            stats.read_marks_written += u64::from(crate::read_mark::mark(word, epoch));
            continue;
        }
        let (table, key) = t.read_item(i);
        let slot = slot_of(table, key);
        let cell = t.read_pivot(i);
        stats.cas_retries += cell.merge_read(epoch, slot, PRE_EPOCH);
    }
}

/// The single-write rule ([`crate::NwrSingleWrite`]): tries to commit `t`, which must write
/// exactly one item, blind, with that write ordered just before the item's pivot (its first
/// visible version of `epoch`). On `Ok` the write is omitted; on `Err` the caller runs the
/// baseline commit. Nothing is merged beforehand, and nothing is written: under this policy an
/// omitter leaves no mark and needs no compare-and-swap.
///
/// The checks, in this order (`docs/protocols/nwr.md`, "A rule with fewer read marks"):
/// 1. no scan, one write, blind, every read of a version older than `epoch`;
/// 2. the written item has a visible version of `epoch` ([`NwrBaseline::single_write_pivot`],
///    an `Acquire` load): the pivot, whose writer's serialization point precedes this load;
/// 3. the pivot's writer did not read the item's older version (the mark that load returned;
///    the pivot's writer published it with the pivot, so no reader's mark can race with this
///    check: every other reader of the older version is serialized before the pivot);
/// 4. `fence(SeqCst)`, then every read still current and unlocked
///    ([`NwrBaseline::overwriters_valid`]). The fence orders this validation after the pivot's
///    serialization point, so whoever overwrites a read item (or installs the pivot an omitter of
///    it needs) is serialized after the pivot, hence after this transaction. Validating first
///    (the order of [`try_omit`]) breaks this: `Y` reads `y`, overwrites `z`, after our check of
///    `z` but before `y`'s pivot, and we close `O -rw(z)-> Y -rw(y)-> O`.
///
/// For TicToc (`tictoc-nwr-single`) the same order matters through timestamps, not the fence:
/// [`NwrBaseline::overwriters_valid`] extends each read's `rts` to the timestamp of the pivot seen
/// in step 2, so whoever overwrites a read commits above it (`docs/protocols/tictoc.md`,
/// "Single-write omitters").
///
/// MVTO (`mvto-nwr-single`) places the omitter by timestamp just below *its* pivot, any committed
/// version of the item of `epoch` above the omitter's timestamp whose writer did not read the item
/// ([`NwrBaseline::single_write_pivot`]), and validates its reads at that timestamp
/// ([`NwrBaseline::overwriters_valid`]), so it waives the pre-epoch condition of step 1
/// ([`NwrBaseline::single_write_reads_ok`]; `docs/protocols/mvto.md`, "Single-write omitters").
pub fn try_omit_single<B: NwrBaseline + ?Sized>(
    t: &B,
    epoch: u32,
    stats: &mut NwrStats,
) -> Result<(), NwrFailure> {
    let r = validate_single(t, epoch);
    match r {
        Ok(()) => {
            stats.commits_omitted += 1;
            stats.omitted_writes += 1;
        }
        Err(why) => stats.fail(why),
    }
    r
}

fn validate_single<B: NwrBaseline + ?Sized>(t: &B, epoch: u32) -> Result<(), NwrFailure> {
    if t.has_scans() {
        return Err(NwrFailure::Scan);
    }
    if t.write_count() != 1 {
        return Err(NwrFailure::MultiWrite);
    }
    if !t.write_is_blind(0) {
        return Err(NwrFailure::NotBlind);
    }
    if !t.single_write_reads_ok(epoch) {
        return Err(NwrFailure::MergedWriteSet);
    }
    let m = t.mutation();
    if m == Some(NwrMutation::ValidateReadsBeforePivot) && !t.overwriters_valid() {
        return Err(NwrFailure::Overwriters);
    }
    match t.single_write_pivot(0, epoch) {
        SinglePivot::Missing if m != Some(NwrMutation::SkipEpochCheck) => {
            return Err(NwrFailure::Epoch);
        }
        SinglePivot::ReadByItsWriter if m != Some(NwrMutation::SkipMergedReadCheck) => {
            return Err(NwrFailure::MergedReadSet);
        }
        _ => {}
    }
    if m != Some(NwrMutation::ValidateReadsBeforePivot) {
        fence(Ordering::SeqCst);
        if !t.overwriters_valid() {
            return Err(NwrFailure::Overwriters);
        }
    }
    Ok(())
}

/// The checks of [`try_omit`] that need no atomic operation: no range scan and every write
/// blind. Engines call it before their NWR phase and skip that phase (its fence and its merge;
/// the baseline's own merge still runs) when it fails, counting the failure as [`try_omit`]
/// would. Under a test mutation it always passes, so the mutant's own checks decide.
pub fn omission_shape_ok<B: NwrBaseline + ?Sized>(t: &B, stats: &mut NwrStats) -> bool {
    if t.mutation().is_some() {
        return true;
    }
    let why = if t.has_scans() {
        NwrFailure::Scan
    } else if !(0..t.write_count()).all(|i| t.write_is_blind(i)) {
        NwrFailure::NotBlind
    } else {
        return true;
    };
    stats.fail(why);
    false
}

/// [`omission_shape_ok`] for the single-write rule ([`try_omit_single`]): no range scan, exactly
/// one write, and it is blind. Counts the failure as [`try_omit_single`] would.
pub fn single_write_shape_ok<B: NwrBaseline + ?Sized>(t: &B, stats: &mut NwrStats) -> bool {
    if t.mutation().is_some() {
        return true;
    }
    let why = if t.has_scans() {
        NwrFailure::Scan
    } else if t.write_count() != 1 {
        NwrFailure::MultiWrite
    } else if !t.write_is_blind(0) {
        NwrFailure::NotBlind
    } else {
        return true;
    };
    stats.fail(why);
    false
}

/// The second cheap check of [`try_omit`], once the epoch is known: every read is of a version
/// older than `epoch`. When it fails, the NWR phase can skip [`merge_reads`] (the baseline merges
/// before its own validation) and the failure is counted as [`try_omit`] would count it.
pub fn omission_reads_ok<B: NwrBaseline + ?Sized>(t: &B, epoch: u32, stats: &mut NwrStats) -> bool {
    if t.mutation().is_some() || (0..t.read_count()).all(|i| t.read_is_pre_epoch(i, epoch)) {
        return true;
    }
    stats.fail(NwrFailure::MergedWriteSet);
    false
}

/// The third cheap check of [`try_omit`]: every written item already has a version of `epoch`,
/// carries no read mark of `epoch` and has a pivot object that can take the write (the plain
/// loads of its per-item pass, none of the ordered read-modify-writes). It is a filter, nothing
/// more: [`try_omit`] checks all of it again, in order. Engines may call it, with
/// [`omission_reads_ok`], *before* the fence that fixes their epoch, with the epoch they saw
/// there: the global epoch never moves back, so a pre-epoch read stays one, and a filter that
/// rejects on a stale epoch only skips an omission (the baseline then commits), which is always
/// allowed. Most writers of a skewed workload fail here or in [`omission_reads_ok`] (YCSB-B:
/// `docs/results/nwr.md`), and so skip the fence and the merge of the NWR phase. Counts the
/// failure as [`try_omit`] would. Always passes under a test mutation.
pub fn omission_writes_ok<B: NwrBaseline + ?Sized>(
    t: &B,
    epoch: u32,
    stats: &mut NwrStats,
) -> bool {
    match precheck_writes(t, epoch) {
        Ok(()) => true,
        Err(why) => {
            stats.fail(why);
            false
        }
    }
}

/// Whether `t` wrote nothing and read only versions older than `epoch`: a *pre-epoch reader*.
///
/// Such a transaction may skip [`merge_reads`] (engines count it in
/// [`NwrStats::unmarked_readers`]) **provided the baseline can serialize it at the start of
/// `epoch`, before the epoch's omitters**. Why that position is sound: its reads are exactly the
/// last versions before `epoch` (each was still current when the baseline validated it, and no
/// version older than the epoch can be installed after that: Silo's and TicToc's validation,
/// MVTO's read timestamps); its only incoming edges are write-read edges from earlier epochs; its
/// outgoing edges are anti-dependencies to transactions that overwrote what it read, all of them
/// epoch-`epoch` installers or omitters (positioned after it) or later. So it needs no mark: an
/// omitted write of an item it read is ordered after the version it read, and so after it. With
/// epoch-based group commit every transaction of the epoch is acknowledged when the epoch ends,
/// so the position respects real time. Where each engine puts it:
///
/// - Silo: the constructed order of the module docs (no timestamp to change);
/// - TicToc: plain TicToc's `commit_ts` (the engine skips its epoch floor) if it lies below the
///   epoch's floor; it then sits before every omitter's position (`txlab_tictoc::commit`);
/// - MVTO: the start of the epoch (its reads are the newest versions below the epoch start).
///
/// How often it applies depends on skew and epoch length: on YCSB-B at theta 0.9 with 40 ms
/// epochs, 9-13 % of commits (most read-only transactions read a hot record already rewritten in
/// the epoch; `docs/results/nwr.md#table-2-writes-omitted`).
pub fn is_pre_epoch_reader<B: NwrBaseline + ?Sized>(t: &B, epoch: u32) -> bool {
    t.write_count() == 0 && (0..t.read_count()).all(|i| t.read_is_pre_epoch(i, epoch))
}

/// Tries to commit `t` with the NWR version order (see the module docs). On `Ok`, every write is
/// omitted; the caller finishes the commit without installing anything. On `Err`, the caller runs
/// the baseline commit. `merge_reads` must have run first.
pub fn try_omit<B: NwrBaseline + ?Sized>(
    t: &B,
    epoch: u32,
    stats: &mut NwrStats,
) -> Result<(), NwrFailure> {
    let r = validate(t, epoch, stats);
    match r {
        Ok(()) => {
            stats.commits_omitted += 1;
            stats.omitted_writes += t.write_count() as u64;
        }
        Err(why) => stats.fail(why),
    }
    r
}

fn validate<B: NwrBaseline + ?Sized>(
    t: &B,
    epoch: u32,
    stats: &mut NwrStats,
) -> Result<(), NwrFailure> {
    if t.mutation() == Some(NwrMutation::PrintedAlgorithm) {
        return crate::printed::validate(t, epoch, stats);
    }
    if t.has_scans() {
        return Err(NwrFailure::Scan);
    }
    if !(0..t.write_count()).all(|i| t.write_is_blind(i)) {
        return Err(NwrFailure::NotBlind);
    }
    if !(0..t.read_count()).all(|i| t.read_is_pre_epoch(i, epoch)) {
        return Err(NwrFailure::MergedWriteSet);
    }
    if !t.overwriters_valid() {
        return Err(NwrFailure::Overwriters);
    }
    precheck_writes(t, epoch)?;
    for i in 0..t.write_count() {
        join_pivot(t, i, epoch, stats)?;
    }
    Ok(())
}

/// The checks of [`join_pivot`] for every written item, with plain loads and no CAS, so that the
/// common failures (a later item has no version of `epoch` yet, or a pre-epoch read of it is
/// marked) are found before any item's mWS is marked or any MVTO record claimed. A CAS or claim
/// that succeeded for an earlier item is never undone; a leftover mWS mark costs nothing, a
/// leftover claim only precision (MVTO's reader-side check may then abort an old-version reader
/// needlessly); this narrows that to races between this pass and the CASes. Skipped under a
/// mutation, whose checks `join_pivot` alone decides.
fn precheck_writes<B: NwrBaseline + ?Sized>(t: &B, epoch: u32) -> Result<(), NwrFailure> {
    if t.mutation().is_some() {
        return Ok(());
    }
    for i in 0..t.write_count() {
        if !t.has_epoch_version(i, epoch) {
            return Err(NwrFailure::Epoch);
        }
        let (table, key) = t.write_item(i);
        // A plain load suffices for this early exit; `join_pivot` makes the ordered check.
        if let Some(word) = t.write_mark(i)
            && word.load(Ordering::Acquire) >= epoch
        {
            return Err(NwrFailure::MergedReadSet);
        }
        let read_omit = t.has_read_omit();
        if read_omit && t.write_read_marked(i, epoch) {
            return Err(NwrFailure::MergedReadSet);
        }
        let cur = t.write_pivot(i).load();
        if cur.epoch > epoch {
            return Err(NwrFailure::Epoch);
        }
        let base = cur.in_epoch(epoch);
        let read = PivotWord::slot(base.mrs, slot_of(table, key));
        let marks_in_object = t.write_mark(i).is_none() && !read_omit;
        if marks_in_object && read != 0 && read <= PRE_EPOCH {
            return Err(NwrFailure::MergedReadSet);
        }
        if base.pivot == 0 {
            return Err(NwrFailure::Saturated);
        }
    }
    Ok(())
}

/// Validates write `i` against its item's pivot object and orders it just before the pivot, with
/// one CAS (retried from a fresh load on failure).
fn join_pivot<B: NwrBaseline + ?Sized>(
    t: &B,
    i: usize,
    epoch: u32,
    stats: &mut NwrStats,
) -> Result<(), NwrFailure> {
    let m = t.mutation();
    if !t.has_epoch_version(i, epoch) && m != Some(NwrMutation::SkipEpochCheck) {
        return Err(NwrFailure::Epoch);
    }
    let (table, key) = t.write_item(i);
    let slot = slot_of(table, key);
    let mark = t.write_mark(i);
    // With a read-epoch mark word, check (4) is one read-modify-write of it, after the pivot was
    // observed above (`crate::read_mark`: a reader marking later is ordered after that
    // observation and fails its validation). The word only grows, so once is enough.
    if let Some(word) = mark
        && crate::read_mark::read_in(word, epoch)
        && m != Some(NwrMutation::SkipMergedReadCheck)
    {
        return Err(NwrFailure::MergedReadSet);
    }
    let read_omit = t.has_read_omit();
    let marks_in_object = mark.is_none() && !read_omit;
    let cell = t.write_pivot(i);
    let mut cur = cell.load();
    for _ in 0..MAX_CAS_RETRIES {
        if cur.epoch > epoch {
            // The item's object already belongs to a later epoch: our footprint there is unknown.
            return Err(NwrFailure::Epoch);
        }
        let base = cur.in_epoch(epoch);
        let read = PivotWord::slot(base.mrs, slot);
        if marks_in_object
            && read != 0
            && read <= PRE_EPOCH
            && m != Some(NwrMutation::SkipMergedReadCheck)
        {
            return Err(NwrFailure::MergedReadSet);
        }
        if base.pivot == 0 {
            return Err(NwrFailure::Saturated);
        }
        let next = PivotWord {
            pivot: base.pivot - 1,
            mws: PivotWord::merge(base.mws, slot, PRE_EPOCH),
            ..base
        };
        match cell.compare_exchange(cur, next) {
            Ok(()) => return claim(t, i, read_omit, epoch, m),
            Err(now) => {
                stats.cas_retries += 1;
                cur = now;
            }
        }
    }
    Err(NwrFailure::CasRetry)
}

/// With a read-and-omit word, check (4) is the claim, made after the pivot was observed
/// (`crate::read_omit`: a reader marking later learns of the claim, and of that pivot) and
/// after the CAS on the object, so that an object-side failure (a later epoch's object, a
/// saturated counter, too many CAS retries) leaves no claim behind: a leftover claim can make an
/// old-version reader abort needlessly, a leftover mWS mark costs nothing.
#[inline]
fn claim<B: NwrBaseline + ?Sized>(
    t: &B,
    i: usize,
    read_omit: bool,
    epoch: u32,
    m: Option<NwrMutation>,
) -> Result<(), NwrFailure> {
    if read_omit && !t.claim_write(i, epoch, m == Some(NwrMutation::SkipMergedReadCheck)) {
        Err(NwrFailure::MergedReadSet)
    } else {
        Ok(())
    }
}
