//! TicToc's commit protocol (X. Yu, A. Pavlo, D. Sanchez, S. Devadas, "TicToc: Time Traveling
//! Optimistic Concurrency Control", SIGMOD 2016, §3, Algorithms 2 and 3).
//!
//! ```text
//! (NWR HOOK: TicToc+NWR may take over here, see below; compiled out for NoNwr)
//! Step 1  sort the write set by record address; lock every record (CAS on the lock bit,
//!         spinning: the global order rules out deadlock); remember each replaced word. A record
//!         found RETIRED (unlinked, `crate::retire`): unlock what we hold, abort (RecordRetired).
//! Step 1b for every record this transaction writes first (locked word absent, history tag 0:
//!         never written): commit above its key's retire floor (`crate::retire`); and for every
//!         phantom stripe holding one, once per stripe: announce the first write (SeqCst
//!         fetch_add of the stripe's version, `crate::stripe_clock`).
//!         fence(SeqCst); epoch = global epoch                       (recorded in CommitInfo)
//! Step 2  commit_ts = max( max over the write set of rts + 1   (of the locked word),
//!                          max over the read set  of wts       (as read),
//!                          max over announced stripes of scan_rts + 1,
//!                          the retire floors met (fresh records read or written first,
//!                          scanned stripes; `crate::retire`) )
//! Step 3  for every read with rts (as read) < commit_ts:
//!           loop { cur = word;
//!                  abort if wts(cur) != wts read                 (the version was replaced);
//!                  done  if rts(cur) >= commit_ts                (someone already extended it);
//!                  if locked: done if we hold the lock (we overwrite it at commit_ts),
//!                             abort otherwise (cannot extend under another writer's lock);
//!                  CAS cur -> cur with rts = commit_ts (delta form, shifting wts on overflow);
//!                  done on success, retry the loop on failure }
//!         for every scanned phantom stripe: raise its scan_rts to commit_ts, then abort if
//!         its version changed since the scan read it (a first write was announced).
//! Step 4  (Algorithm 3) fence(Release); for each write: store the value, then publish
//!         wts = rts = commit_ts (| ABSENT for deletes) with a Release store, which unlocks;
//!         queue each delete on a hash or ordered table for unlinking (`crate::retire`).
//! ```
//!
//! **Why this is serializable** (the paper's correctness argument, restated for this code): every
//! committed transaction `T` gets a logical time `commit_ts(T)`. Each version `v` of a record is
//! valid over `[wts(v), rts(v)]` and the next version's `wts` exceeds `rts(v)` (Step 2 picks
//! `commit_ts > rts` of every locked record, and `rts` cannot grow under a lock because Step 3
//! only extends unlocked words). Step 3 makes `rts(v) >= commit_ts(T)` for every version `T`
//! read, or aborts `T`; so every version `T` read is the one valid at `commit_ts(T)`, and every
//! version `T` wrote is valid from `commit_ts(T)`. Ordering transactions by `commit_ts` (ties
//! broken by physical commit order) therefore gives a serial order that reads the same versions.
//! Scans add predicate reads: a record the traversal visited is in the read set like any read;
//! for records it did not visit, each scanned stripe is itself a timestamped object (the set of
//! its records ever written, `crate::stripe_clock`): the scanner extends the stripe's `scan_rts`
//! to its `commit_ts` and checks the stripe's version, and the first write of a record in the
//! stripe commits above `scan_rts`. So a scanner that commits without having visited a record is
//! ordered before every version of it but the initial never-written one, where its key is indeed
//! absent (the proof, with its store-load argument, is in `crate::stripe_clock`).
//! That serial order is *not* real-time order: a transaction may commit at a logical time before
//! one that finished earlier, so TicToc is serializable but not strictly serializable (see
//! `tests/semantics.rs` for a schedule showing it, and `docs/protocols/tictoc.md`).
//!
//! **Orderings.** Locking is an `Acquire` CAS; the `SeqCst` fence after locking orders the
//! validation loads of Step 3 after every lock of Step 1 against other committers doing the same
//! (two transactions that each read what the other locks cannot both miss the other's lock: the
//! store-load pattern needs the fence). An `rts` extension is a CAS on the same word a later writer
//! locks, so the writer's lock CAS sees the extension by coherence and its `commit_ts` exceeds it.
//! The `Release` fence before the value stores and the `Release` publish pair with readers'
//! `Acquire` load/fence (the seqlock argument in `txlab_core::value`). Stripe clocks use only
//! `SeqCst` accesses: a first writer's announce (Step 1b) precedes its `scan_rts` load (Step 2),
//! a scanner's `scan_rts` raise precedes its version load (Step 3), so in the single total order
//! either the first writer sees the raise or the scanner sees the announce. An announce or a
//! raise is never undone on abort: a stale announce only aborts scanners, a stale raise only
//! pushes first writers up.
//!
//! **Group commit.** TicToc's timestamps carry no epoch; the epoch read right after locking is the
//! transaction's epoch in [`CommitInfo`]. A transaction that read another's write loaded the
//! epoch after that write was published, and the writer loaded its epoch before publishing, so
//! readers never get an earlier epoch than the writers they depend on (the global epoch only
//! grows); acknowledging at epoch stability therefore never acknowledges a dependent before its
//! dependency.
//!
//! ## TicToc+NWR (`TicToc<Rec, Nwr>`, the NWR paper §6.1.1)
//!
//! ```text
//! Phase 0  (only with Nwr and AckMode::EpochStable, for transactions that write)
//!          filters with plain loads and the epoch e0 seen now (txlab_nwr::rule::
//!          omission_shape_ok, omission_reads_ok: no scan, writes blind, reads of versions
//!          installed before e0); most writers of YCSB-B stop here, before the fence
//!          fence(SeqCst); e = global epoch (>= e0)
//!          mark every read of a version installed before e (history tag < base(e)) in its
//!          record's read-epoch word (txlab_nwr::read_mark; check (4), outside the object)
//!          if txlab_nwr::try_omit accepts (all writes blind, no scans, every read of a pre-e
//!          version that is still current, unlocked, and whose rts this check extends to at
//!          least floor(e); every written record's current version installed in e; no pre-e
//!          read of it merged in e): commit in epoch e, nothing locked or installed; done.
//!          otherwise fall through (the baseline alone decides; NWR never aborts)
//! Step 1   as above
//! Step 2   commit_ts = max(TicToc's commit_ts, floor(e)); abort (retryable,
//!          epoch_timestamps_exhausted) if commit_ts >= base(e + 1)
//!          mark every pre-e read (every commit, read-only ones too)
//!          except: a read-only transaction whose reads are all pre-e (by history tag) and whose
//!          TicToc commit_ts is below floor(e) keeps that commit_ts and merges nothing
//!          (txlab_nwr::is_pre_epoch_reader: it is serialized before every omitter of e)
//! Step 3-4 as above; a read whose wts moved by a delta-overflow shift is recognised by its
//!          history tag (shifted_version), so an extension into the epoch is no false abort;
//!          installing the first version of a never-written record first marks its read-epoch
//!          word (a scan may have read the key's absence without a read entry)
//! ```
//!
//! `base(e) = e << 24`, `floor(e) = base(e) | 2^23` (`crate::word`). The serial order: every
//! baseline commit at its `commit_ts`, which for a transaction of epoch `e` lies in
//! `[floor(e), base(e + 1))`; every omitting transaction of epoch `e` at the start of epoch `e`
//! (just below `floor(e)`, after everything of earlier epochs), omitters among themselves in the
//! order of their history stamps. Its reads are valid there (the version was current and its
//! `rts` now reaches `floor(e)`, so no version below the floor can be installed after it), and each
//! omitted write sits after the item's last pre-`e` version and before its first `e` version.
//!
//! **The old-version hazard** (TicToc may commit a read of an overwritten version): a transaction
//! `R` of epoch `e` (so `commit_ts(R) >= floor(e)`) that read `x0`, the last pre-`e` version of a
//! record an omitter `O` of `e` wrote, would sit after `O` yet have missed `O`'s write. It cannot
//! commit: `x0` must be valid at `commit_ts(R)`, so either `R` wrote `x` itself (then `R`
//! installed the pivot, after marking its read of `x0`), or some transaction `T` extended `x0`'s
//! `rts` to `>= floor(e)`. A `T` of epoch `>= e` does that only after marking `x0`'s read in `x`'s
//! read-epoch word (`txlab_nwr::read_mark`; Phase 0 marks before its extensions, Step 2 before
//! Step 3). The pivot is installed after that extension (its writer's lock CAS follows it on the
//! word, and its timestamp exceeds it), and `O` loaded the pivot before its read-modify-write of
//! the mark word, so the mark happens-before `O`'s check: `O` reads a mark `>= e` and declines.
//! (If `T` skipped its `fetch_max` because its load already saw a mark `>= e`, that mark precedes
//! `O`'s check in the word's modification order by read-write coherence, and the word only
//! grows.) A `T` that extends without marking is an unmarked pre-epoch reader of an epoch above
//! `e`; any writer that locks `x` after its extension then reads an epoch above `e` too, so its
//! version is no pivot of `e`. No reader is ever aborted because of NWR; `R`, if it read `x0`
//! before the extension, fails TicToc's own validation (its version was replaced).
//! Until the eleventh session the mark was a `PRE_EPOCH` slot in the pivot object's mRS, set by
//! CAS; the argument was the same with the object's CAS order in place of the mark word's.
//! `docs/protocols/tictoc.md` ("NWR") has the full argument and a worked example.
//!
//! ## TicToc+NWR with single-write omitters (`TicToc<Rec, NwrSingleWrite>`, `tictoc-nwr-single`)
//!
//! ```text
//! Phase 0  (a non-empty write set; txlab_nwr::rule::single_write_shape_ok: no scan, exactly one
//!          write, blind)
//!          fence(SeqCst); e = global epoch
//!          if every read's tag is older than e and txlab_nwr::try_omit_single accepts (the
//!          written record's word and tag, read consistently, are of epoch e: timestamp p in
//!          [floor(e), base(e + 1)), and the tag has no TAG_PIVOT_READ; then every read still
//!          current and unlocked, its rts extended by CAS to at least p): commit in e, nothing
//!          installed, nothing merged.
//! Step 1-2 as TicToc+NWR (the floor, the pre-epoch reader exemption); nothing is merged
//! Step 3   as above; a read of a record we locked flags that write entry as read
//! Step 4   as above; each installed tag carries TAG_PIVOT_READ (crate::record) if the replaced
//!          version is of epoch e and carries it (sticky), or, for the epoch's first version, if
//!          we read the record, insert or delete it, or replace an absent version (a scan may
//!          have missed the key: the scan-miss rule)
//! ```
//!
//! Serial order: baseline commits at `commit_ts`; an omitter of `y` just before `y`'s first
//! version of `e` (timestamp `p1 <= p`), i.e. at `p1 - 1/2`, omitters of one `y` among themselves
//! by stamp; its write recorded at `base(e) | stamp` (between `y`'s last pre-`e` version and its
//! first `e` version, as in TicToc+NWR). Why that position holds:
//! - every transaction that read `y`'s last pre-`e` version `y0` other than the writer of `y`'s
//!   first `e` version sits below `p1`: its `commit_ts <= rts(y0) < p1` (that writer locked `y`
//!   after the last extension). That writer's own read is the mark. So readers leave no marks,
//!   and the old-version hazard of TicToc+NWR (a reader of `y0` serialized after an omitter that
//!   sits at the epoch's start) cannot arise: the omitter sits above every such reader.
//! - the omitter's reads are of versions older than `e` (below `p1`), and their `rts` now reach
//!   `p >= p1`, so whoever overwrites one commits above `p`, after the omitter; an omitter of an
//!   item it read sits before that item's first `e` version, above `p` too. Extending to the
//!   floor only is not enough (the mutant `NwrValidateReadsBeforePivot`): `Y` reads `y0` (whose
//!   `rts` another reader pushed to `floor(e) + 5`) and overwrites `z` at `floor(e) + 1` after the
//!   omitter read `z`, which closes `O -rw(z)-> Y -rw(y)-> O`.
//!
//! `docs/protocols/tictoc.md`, "Single-write omitters", has the whole argument.

use crate::nwr_hook::WriteOmission;
use crate::record::{TAG_PIVOT_READ, TicTocRecord};
use crate::txn::TicTocTxn;
use crate::word::{
    EPOCH_TS_SHIFT, MAX_WTS, epoch_base, epoch_floor, installed, is_absent, is_locked, rts,
    with_rts, wts,
};
use crate::worker_state::{ReadEntry, WorkerState, WriteKind};
use crossbeam_epoch::Guard;
use std::cell::Cell;
use std::marker::PhantomData;
use txlab_core::history::{
    Outcome, Recorder, TxnRecord, WriteEvent, WriteKind as HWriteKind, txn_id,
};
use txlab_core::sync::{AtomicU32, Ordering, fence};
use txlab_core::{AckMode, CommitInfo, Conflict, ConflictCause, Error, TxError, TxResult};
use txlab_nwr::pivot::{PRE_EPOCH, PivotCell, VersionNumber, epoch_version_number};
use txlab_nwr::{NwrBaseline, NwrMutation, SinglePivot};
use txlab_storage::Companions;

/// The retryable abort of a commit whose timestamp would spill into the next epoch's range
/// (TicToc+NWR only; `crate::word`).
pub const EPOCH_TIMESTAMPS_EXHAUSTED: ConflictCause = ConflictCause::TimestampsExhausted;

/// Which checks a test-only mutation disables (all `false`, and folded away, without the
/// `mutation` feature).
struct Skips {
    lock: bool,
    reads: bool,
    extension: bool,
    stripes: bool,
    stripe_ts: bool,
    nwr: Option<NwrMutation>,
}

impl Skips {
    #[inline(always)]
    fn of(_config: &crate::config::TicTocConfig) -> Self {
        #[cfg(feature = "mutation")]
        {
            use crate::config::Mutation;
            let m = _config.mutation;
            Skips {
                lock: m == Some(Mutation::SkipWriteLock),
                reads: m == Some(Mutation::SkipReadValidation),
                extension: m == Some(Mutation::SkipRtsExtension),
                stripes: m == Some(Mutation::SkipPhantomValidation),
                stripe_ts: m == Some(Mutation::SkipStripeTimestamps),
                nwr: match m {
                    Some(Mutation::NwrSkipEpochCheck) => Some(NwrMutation::SkipEpochCheck),
                    Some(Mutation::NwrSkipMergedReadCheck) => {
                        Some(NwrMutation::SkipMergedReadCheck)
                    }
                    Some(Mutation::NwrValidateReadsBeforePivot) => {
                        Some(NwrMutation::ValidateReadsBeforePivot)
                    }
                    _ => None,
                },
            }
        }
        #[cfg(not(feature = "mutation"))]
        Skips {
            lock: false,
            reads: false,
            extension: false,
            stripes: false,
            stripe_ts: false,
            nwr: None,
        }
    }
}

#[inline]
fn rec<'a>(p: *const TicTocRecord) -> &'a TicTocRecord {
    // SAFETY: write-set and read-set pointers were obtained under the transaction's guard, which
    // is pinned for the whole commit (see `worker_state`).
    unsafe { &*p }
}

/// Step 3 for one read whose `rts` (as read) is below `commit_ts`: returns whether the version read
/// is (now) valid at `commit_ts`. `own` says whether the record is in the write set (locked by us).
/// `tag` is the read version's history tag in TicToc+NWR (`None` in plain TicToc): it recognises
/// the version after a delta-overflow shift moved its `wts` ([`shifted_version`]).
#[inline]
fn validate_read(
    r: &ReadEntry,
    tag: Option<u64>,
    commit_ts: u64,
    own: bool,
    skip_extension: bool,
) -> bool {
    let record = rec(r.rec);
    let mut cur = record.word.load(Ordering::Acquire);
    loop {
        if wts(cur) != wts(r.word) {
            match shifted_version(record, cur, tag, own) {
                Some(same) => cur = same,
                None => return false,
            }
        }
        if rts(cur) >= commit_ts {
            return true;
        }
        if is_locked(cur) {
            return own;
        }
        if skip_extension {
            return true;
        }
        match record.word.compare_exchange_weak(
            cur,
            with_rts(cur, commit_ts),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return true,
            Err(now) => cur = now,
        }
    }
}

/// TicToc+NWR: `cur`'s `wts` differs from the one read; if the record still holds the version
/// whose history tag is `tag` (its `wts` moved by a delta-overflow shift, which every rts
/// extension into a new epoch's range causes, `crate::word`), returns a word of that version
/// read consistently with the tag. Tags are unique per version of a record, so an equal tag is
/// the same version. `None` if the version was replaced (or is locked by another transaction),
/// and always in plain TicToc (`tag == None`), where a changed `wts` means a new version or a
/// shift and both abort, as in the paper.
#[inline]
fn shifted_version(record: &TicTocRecord, cur: u64, tag: Option<u64>, own: bool) -> Option<u64> {
    let t = tag?;
    if is_locked(cur) {
        // Only the lock holder changes the tag; when that is us, the tag is stable.
        let now = record.tag.load(Ordering::Relaxed) & !TAG_PIVOT_READ;
        return (own && now == t).then_some(cur);
    }
    let (word, now) = record.stable_tag()?;
    (now == t).then_some(word)
}

/// Runs the commit protocol on `tx` (see the module docs).
pub(crate) fn commit<Rec: Recorder, Omit: WriteOmission>(
    tx: &mut TicTocTxn<'_, '_, Rec, Omit>,
) -> TxResult<CommitInfo> {
    let engine = tx.w.engine;
    let skip = Skips::of(&engine.config);

    let nwr_on = Omit::ENABLED && engine.config.ack == AckMode::EpochStable;

    // ===== NWR HOOK ===== (TicToc+NWR only; compiled out for `NoNwr`)
    // With the read and write sets complete and nothing locked: mark our pre-epoch reads
    // (`txlab_nwr::read_mark`), then try to commit with every write omitted, serialized at the
    // start of the epoch (module docs). If the rule declines, the baseline below runs unchanged
    // ("no false aborts", NWR paper §4.1).
    if nwr_on && Omit::SINGLE_WRITE_OMITTERS {
        // Single-write omitters (`tictoc-nwr-single`): no merge anywhere; the omitter sits just
        // before the item's first version of the epoch and extends its reads to the current
        // version's timestamp (`NwrView::overwriters_valid`; module docs).
        let shape_ok = !tx.w.state.writes.is_empty()
            && txlab_nwr::rule::single_write_shape_ok(
                &NwrView::<Omit>::new(&tx.w.state, &engine.pivots, &tx.guard, 0, skip.nwr),
                &mut tx.w.nwr,
            );
        if shape_ok {
            fence(Ordering::SeqCst);
            let epoch = tx.w.epoch.global();
            if epoch_floor(epoch) <= MAX_WTS {
                let view =
                    NwrView::<Omit>::new(&tx.w.state, &engine.pivots, &tx.guard, epoch, skip.nwr);
                if txlab_nwr::rule::omission_reads_ok(&view, epoch as u32, &mut tx.w.nwr)
                    && txlab_nwr::try_omit_single(&view, epoch as u32, &mut tx.w.nwr).is_ok()
                {
                    return Ok(finish_omitted(tx, epoch));
                }
            }
        }
    } else if nwr_on && !tx.w.state.writes.is_empty() {
        // The rule's cheap filters first, with the epoch as it is now: most writers fail one
        // and skip the fence and the merge. The epoch never moves back, so reads older than
        // `seen` are older than the epoch fixed after the fence; a filter fooled by a stale
        // epoch only skips an omission. Shape and reads only: unlike Silo, TicToc gained nothing
        // measurable from also checking the written records here (`omission_writes_ok`;
        // `nwr_fail_epoch` is 1.5 % of YCSB-B's commits), and that earlier check left only 3 %
        // of the shuttle test's schedules omitting a write instead of 14 %.
        let seen = tx.w.epoch.global();
        let filters_pass = {
            // Epoch 0 in the view, as in the single-write branch: its epoch only matters to
            // `overwriters_valid`, which no filter calls.
            let view = NwrView::<Omit>::new(&tx.w.state, &engine.pivots, &tx.guard, 0, skip.nwr);
            txlab_nwr::rule::omission_shape_ok(&view, &mut tx.w.nwr)
                && txlab_nwr::rule::omission_reads_ok(&view, seen as u32, &mut tx.w.nwr)
        };
        if filters_pass {
            fence(Ordering::SeqCst);
            let epoch = tx.w.epoch.global();
            if epoch_floor(epoch) <= MAX_WTS {
                let view =
                    NwrView::<Omit>::new(&tx.w.state, &engine.pivots, &tx.guard, epoch, skip.nwr);
                txlab_nwr::merge_reads(&view, epoch as u32, &mut tx.w.nwr);
                if txlab_nwr::try_omit(&view, epoch as u32, &mut tx.w.nwr).is_ok() {
                    return Ok(finish_omitted(tx, epoch));
                }
            }
        }
    }

    let st = &mut tx.w.state;

    // Step 1: lock the write set in address order. A record unlinked from its index since we
    // located it (`crate::retire`) stays locked for good: unlock what we hold and abort; the
    // retry finds the key's fresh record.
    st.writes.sort_unstable_by_key(|w| w.rec as usize);
    let mut retired: Option<usize> = None;
    for (i, w) in st.writes.iter_mut().enumerate() {
        let r = rec(w.rec);
        if skip.lock {
            w.locked_word = r.word.load(Ordering::Acquire) & !crate::word::LOCK;
            continue;
        }
        let mut backoff = txlab_core::sync::SpinWait::new();
        let locked = loop {
            if let Some(word) = r.try_lock() {
                break Some(word);
            }
            if r.is_retired() {
                break None;
            }
            backoff.snooze();
        };
        match locked {
            Some(word) => w.locked_word = word,
            None => {
                retired = Some(i);
                break;
            }
        }
    }
    if let Some(i) = retired {
        for w in &st.writes[..i] {
            rec(w.rec).unlock(w.locked_word);
        }
        let w = &st.writes[i];
        let c = Conflict::at(ConflictCause::RecordRetired, w.table, w.key);
        st.failed = Some(c.cause);
        tx.finish_abort(Outcome::Aborted(c.cause));
        return Err(c.into());
    }
    // Step 1b: announce every first write (the first version of a never-written record: locked
    // word absent, history tag 0, which only the lock holder changes) on its phantom stripe, once
    // per stripe, before Step 2 reads the stripe's scan_rts (`crate::stripe_clock`). Our own scans
    // of the stripe move along with our own announce.
    // A first write also commits above its key's retire floor (`crate::retire`: the key's
    // record may be a fresh one linked after a tombstone was unlinked), loaded after locking.
    st.first_writes.clear();
    for w in st.writes.iter() {
        if is_absent(w.locked_word) && rec(w.rec).tag.load(Ordering::Relaxed) == 0 {
            let floor = engine.retire_floor(w.table, w.key);
            if floor > 0 {
                st.ts_floor = st.ts_floor.max(floor + 1);
            }
            if let Some((stripes, _)) = engine.stripes(w.table) {
                st.first_writes.push((w.table, stripes.stripe_of(w.key)));
            }
        }
    }
    st.first_writes.sort_unstable();
    st.first_writes.dedup();
    for i in 0..st.first_writes.len() {
        let (table, stripe) = st.first_writes[i];
        if let Some((_, clocks)) = engine.stripes(table) {
            let before = clocks.announce_first_write(stripe);
            st.own_announce(table, stripe, before);
        }
    }
    fence(Ordering::SeqCst);
    let epoch = tx.w.epoch.global();

    // Step 2: the commit timestamp (TicToc+NWR: at least the epoch's floor, `crate::word`); a
    // first writer commits above the scan_rts of every stripe it announced on.
    let mut commit_ts = 0u64;
    for w in st.writes.iter() {
        commit_ts = commit_ts.max(rts(w.locked_word) + 1);
    }
    if !skip.stripe_ts {
        for &(table, stripe) in st.first_writes.iter() {
            if let Some((_, clocks)) = engine.stripes(table) {
                commit_ts = commit_ts.max(clocks.scan_rts(stripe) + 1);
            }
        }
    }
    for r in st.reads.iter() {
        commit_ts = commit_ts.max(wts(r.word));
    }
    // Retire floors of fresh records read or written first and of scanned stripes.
    commit_ts = commit_ts.max(st.ts_floor);
    // TicToc+NWR: a read-only transaction that read only versions installed before this epoch
    // (by history tag) keeps plain TicToc's commit timestamp if it lies below the epoch's floor,
    // and needs no read marks (`is_pre_epoch_reader`). Below `base(e)` it sits at its timestamp;
    // in `[base(e), floor(e))` (a read whose wts a delta shift moved there) every overwriter of
    // what it read has a timestamp above `base(e)`, hence belongs to epoch >= e, so it sits just
    // below `base(e)`, after all earlier epochs. Either way it precedes every omitter of the
    // epoch, and it never extends an `rts` to `floor(e)` without a mark (merge-before-extend).
    // Every other commit is lifted to the epoch's floor.
    let unmarked = nwr_on
        && st.writes.is_empty()
        && commit_ts < epoch_floor(epoch)
        && txlab_nwr::is_pre_epoch_reader(
            &NwrView::<Omit>::new(st, &engine.pivots, &tx.guard, epoch, None),
            epoch as u32,
        );
    if Omit::ENABLED && !unmarked {
        commit_ts = commit_ts.max(epoch_floor(epoch));
    }

    // Step 3: validate the read set (extending rts) and the phantom stripes.
    let mut failure: Option<Conflict> = None;
    let wts_overflow = commit_ts > MAX_WTS;
    if wts_overflow {
        // Not a conflict: reported below as an internal error once the locks are released.
        failure = Some(Conflict::new(ConflictCause::TimestampsExhausted));
    } else if Omit::ENABLED && commit_ts >= epoch_base(epoch + 1) {
        failure = Some(Conflict::new(EPOCH_TIMESTAMPS_EXHAUSTED));
    }
    if unmarked || (nwr_on && Omit::SINGLE_WRITE_OMITTERS && st.writes.is_empty()) {
        // Single-write omitters: no reader marks anything (`nwr_unmarked_readers` counts every
        // read-only commit, as in `silo-nwr-single`).
        tx.w.nwr.unmarked_readers += 1;
    } else if nwr_on && !Omit::SINGLE_WRITE_OMITTERS && failure.is_none() {
        // Algorithm 3 (1) for baseline commits, read-only ones included: every read of a
        // pre-epoch version is marked (`txlab_nwr::read_mark`) *before* Step 3 may extend its rts
        // to `commit_ts >= floor(epoch)` (the invariant that keeps old-version reads safe).
        let view = NwrView::<Omit>::new(st, &engine.pivots, &tx.guard, epoch, None);
        txlab_nwr::merge_reads(&view, epoch as u32, &mut tx.w.nwr);
    }
    if failure.is_none() && !skip.reads {
        for (i, r) in st.reads.iter().enumerate() {
            if rts(r.word) >= commit_ts {
                // Never a read of a record we write: commit_ts exceeds the locked word's rts,
                // which is at least the rts of any version of it we read.
                continue;
            }
            let own = if st.writes.is_empty() {
                None
            } else {
                st.write_index(r.rec)
            };
            if Omit::SINGLE_WRITE_OMITTERS
                && let Some(w) = own
            {
                // The pivot writer's own read (`tictoc-nwr-single`'s one mark, Step 4).
                st.writes[w].read = true;
            }
            let own = own.is_some();
            let tag = Omit::ENABLED.then(|| st.read_tags[i]);
            if !validate_read(r, tag, commit_ts, own, skip.extension) {
                failure = Some(Conflict::at(ConflictCause::ReadValidation, r.table, r.key));
                break;
            }
        }
    }
    if failure.is_none() && !skip.stripes {
        // Each scanned stripe must be valid at commit_ts: raise its scan_rts to
        // commit_ts, then check no first write was announced since the scan read it.
        for n in st.stripes.iter() {
            if engine
                .stripes(n.table)
                .is_some_and(|(_, clocks)| !clocks.validate_scan(n.stripe, n.version, commit_ts))
            {
                failure = Some(Conflict {
                    cause: ConflictCause::PhantomValidation,
                    table: Some(n.table),
                    key: None,
                });
                break;
            }
        }
    }
    if let Some(c) = failure {
        if !skip.lock {
            for w in st.writes.iter() {
                rec(w.rec).unlock(w.locked_word);
            }
        }
        if wts_overflow {
            tx.finish_abort(Outcome::UserAborted);
            return Err(TxError::Error(Error::Internal(format!(
                "tictoc: commit timestamp {commit_ts} exceeds the {MAX_WTS} the 47-bit wts field \
                 holds"
            ))));
        }
        st.failed = Some(c.cause);
        tx.finish_abort(Outcome::Aborted(c.cause));
        return Err(c.into());
    }

    // Step 4: install the write set at commit_ts (Algorithm 3).
    let read_only = st.writes.is_empty();
    if !read_only {
        fence(Ordering::Release);
        for w in st.writes.iter() {
            let r = rec(w.rec);
            let delete = w.kind == WriteKind::Delete;
            let value = (!delete).then(|| &st.wbuf[w.off as usize..(w.off + w.len) as usize]);
            let mut tag = commit_ts;
            if nwr_on && Omit::SINGLE_WRITE_OMITTERS {
                // `tictoc-nwr-single`'s mark (`TAG_PIVOT_READ`): sticky within the epoch; the
                // epoch's first version is marked if we read the record (a read-modify-write,
                // insert, delete, point read or scan hit) or replace an absent version (a scan
                // may have missed the key without a read entry). The old tag is stable: only the
                // lock holder changes it.
                let old = r.tag.load(Ordering::Relaxed);
                let marked = if old & !TAG_PIVOT_READ >= epoch_base(epoch) {
                    old & TAG_PIVOT_READ != 0
                } else {
                    w.read || w.kind != WriteKind::Put || is_absent(w.locked_word)
                };
                if marked {
                    tag |= TAG_PIVOT_READ;
                }
            } else if nwr_on && is_absent(w.locked_word) && r.tag.load(Ordering::Relaxed) == 0 {
                // The first version of a key that had no record: a scan may have read "absent"
                // from the key's absence in the index, without a read entry to merge. Merge that
                // possible read for it before publishing, so no omitter of this epoch orders a
                // write between the absent version and ours (docs: "Predicate reads").
                txlab_nwr::read_mark::mark(r.value.sidecar(), epoch as u32);
            }
            r.install(value, tag, installed(commit_ts, delete));
            if delete
                && engine
                    .tables
                    .get(w.table)
                    .is_ok_and(|i| i.unlinks_deleted_records())
            {
                tx.w.retire.push(crate::retire::RetireEntry {
                    table: w.table,
                    key: w.key,
                    tag: commit_ts,
                    epoch,
                });
            }
            if Rec::ENABLED {
                st.h_writes.push(WriteEvent {
                    table: w.table,
                    key: w.key,
                    version: commit_ts,
                    order: commit_ts,
                    kind: if delete {
                        HWriteKind::Delete
                    } else {
                        HWriteKind::Put
                    },
                    visible: true,
                });
            }
        }
    }

    if nwr_on && !read_only {
        tx.w.nwr.commits_baseline += 1;
    }

    if Rec::ENABLED {
        let record = TxnRecord {
            id: txn_id(st.id, st.seq),
            reads: std::mem::take(&mut st.h_reads),
            writes: std::mem::take(&mut st.h_writes),
            scans: std::mem::take(&mut st.h_scans),
            outcome: Outcome::Committed,
            begin_ns: tx.begin_ns,
            end_ns: engine.recorder.now_ns(),
        };
        engine.recorder.record(record);
    }
    tx.done = true;
    tx.w.state.clear();
    tx.w.epoch.exit();
    Ok(CommitInfo {
        epoch,
        acknowledged: engine.config.ack == AckMode::AtCommit,
        read_only,
    })
}

/// Ends a transaction committed with the NWR version order: nothing is locked or installed; the
/// history records its writes as invisible versions just before each key's epoch-`epoch` versions
/// (`version = order = epoch << 24 | stamp`, in the range `crate::word` reserves below
/// `floor(epoch)`; one stamp per transaction orders omitted writes among themselves).
fn finish_omitted<Rec: Recorder, Omit: WriteOmission>(
    tx: &mut TicTocTxn<'_, '_, Rec, Omit>,
    epoch: u64,
) -> CommitInfo {
    let engine = tx.w.engine;
    let st = &mut tx.w.state;
    if Rec::ENABLED {
        let reserved = 1u64 << (EPOCH_TS_SHIFT - 1);
        let stamp = engine.omit_stamp.fetch_add(1, Ordering::Relaxed) % (reserved - 1) + 1;
        let order = epoch_base(epoch) | stamp;
        for w in st.writes.iter() {
            st.h_writes.push(WriteEvent {
                table: w.table,
                key: w.key,
                version: order,
                order,
                kind: HWriteKind::Put,
                visible: false,
            });
        }
        let record = TxnRecord {
            id: txn_id(st.id, st.seq),
            reads: std::mem::take(&mut st.h_reads),
            writes: std::mem::take(&mut st.h_writes),
            scans: std::mem::take(&mut st.h_scans),
            outcome: Outcome::Committed,
            begin_ns: tx.begin_ns,
            end_ns: engine.recorder.now_ns(),
        };
        engine.recorder.record(record);
    }
    tx.done = true;
    tx.w.state.clear();
    tx.w.epoch.exit();
    CommitInfo {
        epoch,
        acknowledged: false,
        read_only: false,
    }
}

/// TicToc's hooks for the rule (`txlab_nwr::NwrBaseline`) over a committing transaction's sets,
/// for a transaction of `epoch`.
struct NwrView<'a, Omit: WriteOmission> {
    st: &'a WorkerState,
    /// The engine's pivot objects (`TicToc::pivots`), looked up under `guard`.
    pivots: &'a Companions<PivotCell>,
    /// The committing transaction's guard, pinned for the whole commit.
    guard: &'a Guard,
    epoch: u64,
    mutation: Option<NwrMutation>,
    /// `tictoc-nwr-single`: the timestamp of the written record's current version, seen by
    /// `single_write_pivot` (0 until then); `overwriters_valid` extends every read to it.
    pivot_ts: Cell<u64>,
    _omission: PhantomData<Omit>,
}

impl<'a, Omit: WriteOmission> NwrView<'a, Omit> {
    fn new(
        st: &'a WorkerState,
        pivots: &'a Companions<PivotCell>,
        guard: &'a Guard,
        epoch: u64,
        mutation: Option<NwrMutation>,
    ) -> Self {
        Self {
            st,
            pivots,
            guard,
            epoch,
            mutation,
            pivot_ts: Cell::new(0),
            _omission: PhantomData,
        }
    }
}

impl<Omit: WriteOmission> NwrBaseline for NwrView<'_, Omit> {
    fn read_count(&self) -> usize {
        self.st.reads.len()
    }

    fn read_item(&self, i: usize) -> (u16, u64) {
        let r = &self.st.reads[i];
        (r.table.0, r.key)
    }

    fn read_pivot(&self, i: usize) -> &PivotCell {
        let r = &self.st.reads[i];
        self.pivots.cell_of_found_key(r.table, r.key, self.guard)
    }

    #[inline]
    fn read_mark(&self, i: usize) -> Option<&AtomicU32> {
        Some(rec(self.st.reads[i].rec).value.sidecar())
    }

    /// From the version's history tag (its install timestamp), not the word's `wts`, which a
    /// delta-overflow shift may have moved into this epoch's range (`crate::word`). Versions of
    /// this epoch are numbered by their distance above `floor(epoch)` (monotone in the version
    /// order, saturating; the conservative rule only compares them with `PRE_EPOCH`).
    fn read_version(&self, i: usize, epoch: u32) -> VersionNumber {
        let tag = self.st.read_tags[i];
        let epoch = epoch as u64;
        if tag < epoch_base(epoch) {
            PRE_EPOCH
        } else {
            epoch_version_number(tag.saturating_sub(epoch_floor(epoch)) + 1)
        }
    }

    #[inline(always)]
    fn read_is_pre_epoch(&self, i: usize, epoch: u32) -> bool {
        self.st.read_tags[i] < epoch_base(epoch as u64)
    }

    fn write_count(&self) -> usize {
        self.st.writes.len()
    }

    fn write_item(&self, i: usize) -> (u16, u64) {
        let w = &self.st.writes[i];
        (w.table.0, w.key)
    }

    /// `TxOps::write` of a key the transaction neither read nor inserted nor deleted (an update is
    /// a read plus a write, so its record is in the read set).
    fn write_is_blind(&self, i: usize) -> bool {
        let w = &self.st.writes[i];
        w.kind == WriteKind::Put && !self.st.reads.iter().any(|r| r.rec == w.rec)
    }

    fn write_pivot(&self, i: usize) -> &PivotCell {
        let w = &self.st.writes[i];
        self.pivots.cell_of_found_key(w.table, w.key, self.guard)
    }

    #[inline]
    fn write_mark(&self, i: usize) -> Option<&AtomicU32> {
        Some(rec(self.st.writes[i].rec).value.sidecar())
    }

    /// The current version's history tag is of `epoch` (read consistently with the word; a locked
    /// or changing record counts as "no", which only sends the transaction to the baseline).
    fn has_epoch_version(&self, i: usize, epoch: u32) -> bool {
        let epoch = epoch as u64;
        rec(self.st.writes[i].rec)
            .stable_tag()
            .is_some_and(|(_, tag)| tag >= epoch_floor(epoch) && tag < epoch_base(epoch + 1))
    }

    /// `tictoc-nwr-single`: the written record's current version, read consistently with its
    /// tag, is of `epoch` (its timestamp in `[floor(epoch), base(epoch + 1))`; a locked or changing
    /// record counts as "no"), and the tag's [`TAG_PIVOT_READ`] says whether the writer of the
    /// record's first version of `epoch` read the record. Remembers the version's timestamp for
    /// [`Self::overwriters_valid`].
    fn single_write_pivot(&self, i: usize, epoch: u32) -> SinglePivot {
        let epoch = epoch as u64;
        let Some((_, tag)) = rec(self.st.writes[i].rec).stable_marked_tag() else {
            return SinglePivot::Missing;
        };
        let ts = tag & !TAG_PIVOT_READ;
        if ts < epoch_floor(epoch) || ts >= epoch_base(epoch + 1) {
            return SinglePivot::Missing;
        }
        self.pivot_ts.set(ts);
        if tag & TAG_PIVOT_READ != 0 {
            SinglePivot::ReadByItsWriter
        } else {
            SinglePivot::Unread
        }
    }

    /// Any range scan, on any table (a per-transaction flag, so recorded and unrecorded runs
    /// apply the same rule).
    fn has_scans(&self) -> bool {
        self.st.scanned
    }

    /// Silo's overwriter check (each read's version is still the current one and unlocked) plus
    /// TicToc's validity at the omitter's serialization point, the start of the epoch: each read's
    /// `rts` is extended to at least `floor(epoch)` (a CAS, retried while the version stays current),
    /// so no version with a timestamp below the floor can be installed after it any more. The
    /// caller (`merge_reads`, run first) has already marked these reads (`txlab_nwr::read_mark`).
    ///
    /// `tictoc-nwr-single` extends to the written record's current timestamp instead (at least
    /// the floor), seen just before by `single_write_pivot`: the omitter sits just before the
    /// record's first version of the epoch, and whoever overwrites what it read must come after
    /// that version too (module docs; the test-only mutant that validates before observing the
    /// pivot extends to the floor only).
    fn overwriters_valid(&self) -> bool {
        let floor = epoch_floor(self.epoch).max(self.pivot_ts.get());
        self.st
            .reads
            .iter()
            .zip(&self.st.read_tags)
            .all(|(r, &tag)| {
                let record = rec(r.rec);
                let mut cur = record.word.load(Ordering::Acquire);
                loop {
                    if wts(cur) != wts(r.word) {
                        match shifted_version(record, cur, Some(tag), false) {
                            Some(same) => cur = same,
                            None => return false,
                        }
                    }
                    if is_locked(cur) {
                        return false;
                    }
                    if rts(cur) >= floor {
                        return true;
                    }
                    match record.word.compare_exchange_weak(
                        cur,
                        with_rts(cur, floor),
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => return true,
                        Err(now) => cur = now,
                    }
                }
            })
    }

    fn mutation(&self) -> Option<NwrMutation> {
        self.mutation
    }
}
