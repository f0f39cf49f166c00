//! The NWR paper's Algorithms 2 and 3 **as printed**: a test-only mutant
//! ([`NwrMutation::PrintedAlgorithm`](crate::NwrMutation::PrintedAlgorithm)), never used by a real
//! engine (their `NwrBaseline::mutation()` is the constant `None`, which folds the dispatch in
//! [`crate::rule`] away).
//!
//! It exists to measure what the paper's bookkeeping buys over txlab's sound rule and what it
//! breaks: `docs/protocols/nwr.md` ("Where this is more conservative than the paper" and "The
//! printed algorithm, measured") shows the counterexample `t_pv -> t_a -> t_j` through another key
//! that these checks pass and the history checker rejects.
//!
//! Source: S. Nakazono, H. Uchiyama, Y. Fujiwara, H. Kawashima, "NWR: Rethinking Thomas Write
//! Rule for Omittable Write Operations", §5.1 (pivot object layout), §5.2, Algorithm 2 (validation
//! of successors) and Algorithm 3 (control flow).
//!
//! # What is implemented, step by step
//!
//! For a committing `t_j` of epoch `e`:
//!
//! - **Algorithm 3 (1)**, on every commit ([`merge_reads`]): for every read `x_i`, if `x`'s pivot
//!   object *already belongs to epoch `e`*, merge `x_i`'s per-epoch version number into mRS
//!   (lowest wins, 0 = empty). An object of an older epoch is left alone: the read is forgotten.
//! - **Algorithm 3 (2)** ([`validate`]): the overwriters check is the baseline's (Silo's read
//!   validation without locks, `NwrBaseline::overwriters_valid`); the successors check is
//!   Algorithm 2, per written item `x` with object `s`:
//!   - (2) `s.epoch != e` fails (ST-Rule);
//!   - (3) for every read `z_n` of `t_j` whose slot holds `y_m` in `s.mWS`: fail if
//!     `y_m <= z_n` or `z_n` is saturated (15);
//!   - (4) for every write `z_j` of `t_j` whose slot holds `y_g` in `s.mRS`: fail if
//!     `y_g < z_j` (or `z_j` saturated, which an omitted write never is).
//! - **Algorithm 3 (4)**, on success: merge `t_j`'s read numbers into `s.mRS` and its (omitted)
//!   write numbers into `s.mWS` of every item it writes; epoch and PV are left unchanged. One CAS
//!   per object; a failed CAS restarts the validation from the first written item.
//! - **Algorithm 3 (3)**, on a *baseline* commit ([`install_pivot`], called by the engine after it
//!   installed the write): if the write is blind and is the epoch's first version of the item, the
//!   object becomes `(epoch e, PV = 1, mRS = rs_j, mWS = ws_j)`.
//!
//! # Readings chosen where the paper is ambiguous (the most permissive consistent with the text)
//!
//! - **Version numbers.** The paper numbers versions per epoch (the pivot is 1, an omitted write is
//!   "PV decremented") but never says what number a version of an earlier epoch gets, which
//!   check (4) needs. We compare in the true version order, with txlab's 4-bit encoding
//!   ([`crate::pivot::VersionNumber`]): a pre-epoch version is [`PRE_EPOCH`] (1), the epoch's
//!   `n`-th visible version `n + 1` (2 = the first, saturating at 15), and an omitted write sits
//!   strictly between the two. mWS therefore stores an omitted write as [`OMITTED`] (= 1, never
//!   ambiguous there, since mWS holds only writes and writes are never pre-epoch), and the
//!   comparisons of (3) and (4) treat it as "1.5". This is exact: it neither adds failures the
//!   order does not imply nor drops the ones it does.
//! - **Saturation in (3)** is tested only against a non-empty slot of mWS (the loop of the
//!   pseudo-code runs over the entries of mWS).
//! - **(1) merges into an empty slot** (§5.1: "if the version number is less than the current value,
//!   or the current value is zero"), and only into an object of the current epoch (as printed).
//! - **(3) "the first blind-write in s.epoch"**: the baseline commit that installs the epoch's first
//!   version of the item with a blind write. The pseudo-code's "init s.mRS with rs_j, init s.mWS
//!   with ws_j" is followed literally (the pivot writer's own footprint; §5.2's "we reset ... mRS and
//!   mWS" is read as discarding the previous epoch's contents). Without `t_pv`'s write set in mWS,
//!   a transaction that read another item `t_pv` wrote would pass (3), and §6.1.2's statement that
//!   read-modify-writes "always fail to validate SR-Rule" would be false. If the epoch's first
//!   version of an item is a read-modify-write, the object is not reset by a later blind write:
//!   omitted writes are recorded just before the epoch's first visible version, so the pivot must
//!   be that version for the recorded version order to be the one the algorithm validated. (This is
//!   the only place we are stricter than the text; YCSB's transactions never read and write the
//!   same key.)
//! - **Only blind writes are omitted** and scans are left to the baseline, as in the shipped rule:
//!   the paper omits only blind writes (§4.1, Proposition 3; §6.1.2 says TPC-C's read-modify-writes
//!   are never omitted), so this is not where the two rules differ.
//! - **PV** is set to 1 by (3) and never decremented (Algorithm 3 (4): "unnecessary to update both
//!   the epoch and the pivot version fields"); omitted writes share the number "PV - 1".
//!
//! - **Marks of the sound rule are not consulted.** Silo and TicToc keep the sound rule's read
//!   marks in a read-epoch word ([`crate::read_mark`]), not in mRS. Under this mutant the reads
//!   are merged here (into mRS, as printed), but the marks the engines set outside this module
//!   (the scan-miss mark, and TicToc's Step 2 merge, which runs without the mutation) go to that
//!   word, which this module never reads. The mutant is only meant to be caught, and losing
//!   those marks makes it accept more, never less.
//!
//! Invariants (of this module, not of soundness, which it lacks): every object update is one CAS
//! from the loaded word; nothing here aborts (failures return an [`NwrFailure`] and the baseline
//! commits or aborts).

use crate::pivot::{PRE_EPOCH, PivotCell, PivotWord, SATURATED, VersionNumber, slot_of};
use crate::rule::{MAX_CAS_RETRIES, NwrBaseline};
use crate::stats::{NwrFailure, NwrStats};

/// How an omitted write is stored in mWS: between [`PRE_EPOCH`] and the epoch's first visible
/// version (module docs).
pub const OMITTED: VersionNumber = 1;

/// The PV field after Algorithm 3 (3): the epoch's first pivot version.
pub const FIRST_PIVOT: u32 = 1;

/// Whether a write numbered `written` in mWS precedes or equals a read version `read` in the
/// version order (Algorithm 2 (3): `y_m <= z_n`).
#[inline]
fn write_at_or_before_read(written: VersionNumber, read: VersionNumber) -> bool {
    if written == OMITTED {
        // An omitted write lies between the pre-epoch versions and the epoch's first version.
        read > PRE_EPOCH
    } else {
        written <= read
    }
}

/// Whether a read numbered `read` in mRS precedes an omitted write (Algorithm 2 (4): `y_g < z_j`
/// with `z_j` omitted, just before the pivot).
#[inline]
fn read_before_omitted(read: VersionNumber) -> bool {
    read != 0 && read <= PRE_EPOCH
}

/// Algorithm 3 (1) as printed: merges every read's version number into its item's mRS if the
/// item's object already belongs to `epoch`. Returns nothing; counts CAS retries in `stats`.
pub fn merge_reads<B: NwrBaseline + ?Sized>(t: &B, epoch: u32, stats: &mut NwrStats) {
    for i in 0..t.read_count() {
        let v = t.read_version(i, epoch);
        let (table, key) = t.read_item(i);
        let slot = slot_of(table, key);
        let cell = t.read_pivot(i);
        let mut cur = cell.load();
        loop {
            if cur.epoch != epoch {
                break;
            }
            let next = PivotWord {
                mrs: PivotWord::merge(cur.mrs, slot, v),
                ..cur
            };
            if next == cur {
                break;
            }
            match cell.compare_exchange(cur, next) {
                Ok(()) => break,
                Err(now) => {
                    stats.cas_retries += 1;
                    cur = now;
                }
            }
        }
    }
}

/// `t`'s read footprint merged into `mrs`.
fn merged_reads<B: NwrBaseline + ?Sized>(t: &B, epoch: u32, mut mrs: u32) -> u32 {
    for i in 0..t.read_count() {
        let (table, key) = t.read_item(i);
        mrs = PivotWord::merge(mrs, slot_of(table, key), t.read_version(i, epoch));
    }
    mrs
}

/// `t`'s write footprint, every write numbered `v`, merged into `mws`.
fn merged_writes<B: NwrBaseline + ?Sized>(t: &B, v: VersionNumber, mut mws: u32) -> u32 {
    for i in 0..t.write_count() {
        let (table, key) = t.write_item(i);
        mws = PivotWord::merge(mws, slot_of(table, key), v);
    }
    mws
}

/// Algorithm 2 (2)–(4) against one loaded object.
fn check_object<B: NwrBaseline + ?Sized>(
    t: &B,
    epoch: u32,
    s: PivotWord,
) -> Result<(), NwrFailure> {
    if s.epoch != epoch {
        return Err(NwrFailure::Epoch);
    }
    for i in 0..t.read_count() {
        let (table, key) = t.read_item(i);
        let written = PivotWord::slot(s.mws, slot_of(table, key));
        if written == 0 {
            continue;
        }
        let read = t.read_version(i, epoch);
        if read >= SATURATED {
            return Err(NwrFailure::Saturated);
        }
        if write_at_or_before_read(written, read) {
            return Err(NwrFailure::MergedWriteSet);
        }
    }
    for i in 0..t.write_count() {
        let (table, key) = t.write_item(i);
        if read_before_omitted(PivotWord::slot(s.mrs, slot_of(table, key))) {
            return Err(NwrFailure::MergedReadSet);
        }
    }
    Ok(())
}

/// Algorithm 3 (2) and (4) as printed (see the module docs): on `Ok` every write of `t` is omitted
/// and its footprint is merged into the objects of the items it writes.
pub fn validate<B: NwrBaseline + ?Sized>(
    t: &B,
    epoch: u32,
    stats: &mut NwrStats,
) -> Result<(), NwrFailure> {
    if t.has_scans() {
        return Err(NwrFailure::Scan);
    }
    if !(0..t.write_count()).all(|i| t.write_is_blind(i)) {
        return Err(NwrFailure::NotBlind);
    }
    if !t.overwriters_valid() {
        return Err(NwrFailure::Overwriters);
    }
    'attempt: for _ in 0..MAX_CAS_RETRIES {
        for i in 0..t.write_count() {
            let cell = t.write_pivot(i);
            let s = cell.load();
            check_object(t, epoch, s)?;
            let next = PivotWord {
                mrs: merged_reads(t, epoch, s.mrs),
                mws: merged_writes(t, OMITTED, s.mws),
                ..s
            };
            if next != s && cell.compare_exchange(s, next).is_err() {
                // "When CAS has failed, we retry the commit protocol from the beginning": the
                // merges already done are idempotent (lowest wins).
                stats.cas_retries += 1;
                continue 'attempt;
            }
        }
        return Ok(());
    }
    Err(NwrFailure::CasRetry)
}

/// Algorithm 3 (3) as printed: the baseline committed `t`, whose write `i` is blind and installed
/// the item's first version of `epoch`, numbered `installed` (every write of `t` carries that
/// number: one commit, one version number). The item's object becomes
/// `(epoch, PV = 1, mRS = rs_t, mWS = ws_t)`, unless it already belongs to `epoch` or later.
/// Returns the CAS retries it took.
pub fn install_pivot<B: NwrBaseline + ?Sized>(
    t: &B,
    i: usize,
    epoch: u32,
    installed: VersionNumber,
) -> u64 {
    let fresh = PivotWord {
        epoch,
        pivot: FIRST_PIVOT,
        mrs: merged_reads(t, epoch, 0),
        mws: merged_writes(t, installed, 0),
    };
    reset(t.write_pivot(i), fresh)
}

fn reset(cell: &PivotCell, fresh: PivotWord) -> u64 {
    let mut cur = cell.load();
    let mut retries = 0;
    while cur.epoch < fresh.epoch {
        match cell.compare_exchange(cur, fresh) {
            Ok(()) => break,
            Err(now) => {
                retries += 1;
                cur = now;
            }
        }
    }
    retries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::NwrMutation;

    /// A transaction as plain data: reads `(key, version number)`, blind writes of keys, each item
    /// with its own pivot object.
    struct Txn<'a> {
        reads: Vec<(u64, VersionNumber)>,
        writes: Vec<u64>,
        cells: &'a [PivotCell],
        overwriters_valid: bool,
    }

    impl NwrBaseline for Txn<'_> {
        fn read_count(&self) -> usize {
            self.reads.len()
        }
        fn read_item(&self, i: usize) -> (u16, u64) {
            (0, self.reads[i].0)
        }
        fn read_pivot(&self, i: usize) -> &PivotCell {
            &self.cells[self.reads[i].0 as usize]
        }
        fn read_version(&self, i: usize, _epoch: u32) -> VersionNumber {
            self.reads[i].1
        }
        fn write_count(&self) -> usize {
            self.writes.len()
        }
        fn write_item(&self, i: usize) -> (u16, u64) {
            (0, self.writes[i])
        }
        fn write_is_blind(&self, i: usize) -> bool {
            !self.reads.iter().any(|r| r.0 == self.writes[i])
        }
        fn write_pivot(&self, i: usize) -> &PivotCell {
            &self.cells[self.writes[i] as usize]
        }
        fn has_epoch_version(&self, _i: usize, _epoch: u32) -> bool {
            unreachable!("the printed algorithm checks the object's epoch instead")
        }
        fn has_scans(&self) -> bool {
            false
        }
        fn overwriters_valid(&self) -> bool {
            self.overwriters_valid
        }
        fn mutation(&self) -> Option<NwrMutation> {
            Some(NwrMutation::PrintedAlgorithm)
        }
    }

    /// Two keys with different slots (so no false positives from hash collisions).
    fn keys() -> (u64, u64) {
        let x = 0;
        let y = (1..64).find(|&k| slot_of(0, k) != slot_of(0, x)).unwrap();
        (x, y)
    }

    fn cells(n: usize) -> Vec<PivotCell> {
        (0..n).map(|_| PivotCell::new()).collect()
    }

    fn txn<'a>(cells: &'a [PivotCell], reads: &[(u64, VersionNumber)], writes: &[u64]) -> Txn<'a> {
        Txn {
            reads: reads.to_vec(),
            writes: writes.to_vec(),
            cells,
            overwriters_valid: true,
        }
    }

    #[test]
    fn the_epoch_check_needs_a_pivot_installed_in_this_epoch() {
        let (x, _) = keys();
        let c = cells(64);
        let mut st = NwrStats::default();
        let tj = txn(&c, &[], &[x]);
        assert_eq!(validate(&tj, 5, &mut st), Err(NwrFailure::Epoch));
        // A read merge does not move an old object into the epoch (Algorithm 3 (1) as printed).
        merge_reads(&txn(&c, &[(x, PRE_EPOCH)], &[]), 5, &mut st);
        assert_eq!(c[x as usize].load(), PivotWord::fresh(0));
        let tpv = txn(&c, &[], &[x]);
        install_pivot(&tpv, 0, 5, 2);
        let s = c[x as usize].load();
        assert_eq!((s.epoch, s.pivot), (5, FIRST_PIVOT));
        assert_eq!(PivotWord::slot(s.mws, slot_of(0, x)), 2, "t_pv's write set");
        assert_eq!(validate(&tj, 5, &mut st), Ok(()));
        let s = c[x as usize].load();
        assert_eq!(s.pivot, FIRST_PIVOT, "PV is never decremented");
        assert_eq!(PivotWord::slot(s.mws, slot_of(0, x)), OMITTED);
        assert_eq!(validate(&tj, 6, &mut st), Err(NwrFailure::Epoch));
    }

    #[test]
    fn check_3_rejects_reads_at_or_after_a_merged_write_and_saturated_reads() {
        let (x, y) = keys();
        let c = cells(64);
        let mut st = NwrStats::default();
        // t_pv blind-writes x and y: both numbered 2 in x's mWS.
        install_pivot(&txn(&c, &[], &[x, y]), 0, 1, 2);
        for (read, expect) in [
            (PRE_EPOCH, Ok(())),
            (2, Err(NwrFailure::MergedWriteSet)),
            (3, Err(NwrFailure::MergedWriteSet)),
            (SATURATED, Err(NwrFailure::Saturated)),
        ] {
            let tj = txn(&c, &[(y, read)], &[x]);
            assert_eq!(
                validate(&tj, 1, &mut st),
                expect,
                "read of y numbered {read}"
            );
        }
        // An omitted write in mWS precedes every version of the epoch, not the pre-epoch ones.
        assert!(write_at_or_before_read(OMITTED, 2));
        assert!(!write_at_or_before_read(OMITTED, PRE_EPOCH));
        assert!(!write_at_or_before_read(3, 2));
    }

    #[test]
    fn check_4_rejects_a_pre_epoch_read_merged_after_the_pivot_only() {
        let (x, _) = keys();
        let c = cells(64);
        let mut st = NwrStats::default();
        // A pre-epoch read merged *before* the pivot exists is lost (as printed) ...
        merge_reads(&txn(&c, &[(x, PRE_EPOCH)], &[]), 1, &mut st);
        install_pivot(&txn(&c, &[], &[x]), 0, 1, 2);
        assert_eq!(validate(&txn(&c, &[], &[x]), 1, &mut st), Ok(()));
        // ... one merged after it blocks (y_g < z_j), a read of the pivot does not.
        merge_reads(&txn(&c, &[(x, 2)], &[]), 1, &mut st);
        assert_eq!(validate(&txn(&c, &[], &[x]), 1, &mut st), Ok(()));
        merge_reads(&txn(&c, &[(x, PRE_EPOCH)], &[]), 1, &mut st);
        assert_eq!(
            validate(&txn(&c, &[], &[x]), 1, &mut st),
            Err(NwrFailure::MergedReadSet)
        );
    }

    #[test]
    fn the_cross_key_counterexample_passes_the_printed_checks() {
        // t_pv installs x (epoch 1's first version, numbered 2); t_a reads x_pv and blind-writes y
        // (installed, y's first version of the epoch, numbered 3); t_j reads y_a and blind-writes
        // x. Nothing of t_a reaches x's object, so Algorithm 2 accepts t_j (the cycle
        // t_j -> t_pv -> t_a -> t_j is in docs/protocols/nwr.md).
        let (x, y) = keys();
        let c = cells(64);
        let mut st = NwrStats::default();
        install_pivot(&txn(&c, &[], &[x]), 0, 1, 2);
        let ta = txn(&c, &[(x, 2)], &[y]);
        merge_reads(&ta, 1, &mut st);
        install_pivot(&ta, 0, 1, 3);
        let tj = txn(&c, &[(y, 3)], &[x]);
        merge_reads(&tj, 1, &mut st);
        assert_eq!(validate(&tj, 1, &mut st), Ok(()));
    }

    #[test]
    fn failed_overwriters_and_non_blind_writes_hand_over_to_the_baseline() {
        let (x, _) = keys();
        let c = cells(64);
        let mut st = NwrStats::default();
        install_pivot(&txn(&c, &[], &[x]), 0, 1, 2);
        let mut tj = txn(&c, &[], &[x]);
        tj.overwriters_valid = false;
        assert_eq!(validate(&tj, 1, &mut st), Err(NwrFailure::Overwriters));
        let rmw = txn(&c, &[(x, 2)], &[x]);
        assert_eq!(validate(&rmw, 1, &mut st), Err(NwrFailure::NotBlind));
    }

    #[test]
    fn install_pivot_leaves_a_current_or_newer_object_alone() {
        let (x, _) = keys();
        let c = cells(64);
        install_pivot(&txn(&c, &[], &[x]), 0, 3, 2);
        let s = c[x as usize].load();
        install_pivot(&txn(&c, &[(x, PRE_EPOCH)], &[x]), 0, 3, 4);
        install_pivot(&txn(&c, &[], &[x]), 0, 2, 2);
        assert_eq!(c[x as usize].load(), s);
    }
}
