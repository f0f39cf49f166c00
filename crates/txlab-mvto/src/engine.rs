//! The MVTO engine: the toolkit's shell, the clocks, the stripe scan timestamps and retire
//! floors, MVTO+NWR's parts, and MVTO's hooks into the toolkit (taking the timestamp at begin,
//! reading the visible version and raising its read timestamp, the scan timestamps of scans,
//! retirement).

use crate::config::{Mutation, MvtoConfig, MvtoSettings};
use crate::pool::VersionPool;
use crate::record::{MvtoRecord, Visible};
use crate::retire::{AbsentFloor, TableRetire};
use crate::timestamp::{Clocks, LocalClock, MAX_WORKERS};
use crate::version::Version;
use crossbeam_utils::CachePadded;
use std::marker::PhantomData;
use txlab_core::protocol::history::{NoRecorder, Recorder, RetiredTags};
use txlab_core::protocol::retire_floor::RetireFloors;
use txlab_core::protocol::retire_queue::Retire;
use txlab_core::protocol::storage::{Guard, Index};
use txlab_core::protocol::sync::{Arc, AtomicU64, Ordering};
use txlab_core::{CommitInfo, ConflictCause, Error, Schema, TableId, TxResult};
use txlab_nwr::{NoNwr, Nwr, NwrParts, NwrSingleWrite, NwrStats, WriteOmission};
use txlab_occ::{Observation, Protocol, RetireEntry, Shell, StripeEntry, refused};
use txlab_storage::{AnyIndex, Tables};

/// The error for a version whose address does not fit a record's head word (`crate::head`).
pub(crate) const UNADDRESSABLE: &str =
    "mvto: a version was allocated above the 48-bit address space the record head word can hold";

pub(crate) fn unaddressable() -> Error {
    Error::Internal(UNADDRESSABLE.to_string())
}

/// Per-stripe read timestamps of one ordered table: the largest timestamp that scanned a range
/// covering the stripe. An insert into a key whose previous committed state is absent must not
/// slip under a scan by a later transaction (see `crate::commit`).
pub(crate) type StripeTimestamps = Box<[CachePadded<AtomicU64>]>;

/// MVTO extended with the non-visible write rule (`txlab_nwr`, `crate::nwr`; engine name
/// `mvto-nwr`).
pub type MvtoNwr<Rec = NoRecorder> = Mvto<Rec, Nwr>;

/// MVTO with the non-visible write rule for *single-write omitters* (`txlab_nwr::NwrSingleWrite`,
/// engine name `mvto-nwr-single`): a transaction whose one write is blind is placed, by
/// timestamp, just below a committed version of the item from its epoch whose writer did not
/// read the item, and validates its reads there (`crate::nwr`, "Single-write omitters"). No
/// reader marks anything and records keep plain MVTO's layout.
pub type MvtoNwrSingle<Rec = NoRecorder> = Mvto<Rec, NwrSingleWrite>;

/// An MVTO worker: the toolkit's worker (`txlab_occ::Worker`) of an MVTO engine.
pub type MvtoWorker<'e, Rec = NoRecorder, W = NoNwr> = txlab_occ::Worker<'e, Mvto<Rec, W>>;

/// An open MVTO transaction (`txlab_occ::Txn`). Dropping it aborts it.
pub type MvtoTxn<'w, 'e, Rec = NoRecorder, W = NoNwr> = txlab_occ::Txn<'w, 'e, Mvto<Rec, W>>;

/// An MVTO transaction's timestamp (its position in the serial order).
pub trait Timestamped {
    /// The timestamp fixed at begin.
    fn timestamp(&self) -> u64;
}

impl<Rec: Recorder, W: WriteOmission> Timestamped for MvtoTxn<'_, '_, Rec, W> {
    fn timestamp(&self) -> u64 {
        self.w.state.ts
    }
}

/// An MVTO database: tables of [`MvtoRecord`]s in the toolkit's shell, the clocks, the stripe
/// scan timestamps and retire floors, and MVTO+NWR's parts.
///
/// `Rec` is the history recorder (the default [`NoRecorder`] compiles recording out); `W` is the
/// write-omission switch: [`NoNwr`] (the default) is plain MVTO, with the record layout and commit
/// path unchanged; [`Nwr`] is MVTO+NWR ([`MvtoNwr`], see `crate::nwr`); [`NwrSingleWrite`] is
/// MVTO+NWR with single-write omitters ([`MvtoNwrSingle`]).
#[derive(Debug)]
pub struct Mvto<Rec: Recorder = NoRecorder, W: WriteOmission = NoNwr> {
    pub(crate) shell: Shell<Self>,
    /// MVTO+NWR's pivot objects, one per key beside the records; only omitters touch them
    /// (`crate::nwr`). Empty for every other variant.
    pub(crate) nwr: NwrParts,
    pub(crate) stripe_rts: Box<[Option<StripeTimestamps>]>,
    /// Per hash table: the retire floors, its absent floor (`crate::retire`; ordered tables use
    /// `stripe_rts`, dense and custom tables never unlink).
    retire_floors: Box<[Option<RetireFloors>]>,
    pub(crate) clocks: Clocks,
    _omission: PhantomData<W>,
}

/// What an MVTO worker keeps besides the toolkit's sets.
#[derive(Debug)]
pub struct MvtoState {
    /// The worker's clock.
    pub(crate) clock: LocalClock,
    /// The open transaction's timestamp.
    pub(crate) ts: u64,
    /// Writing transactions committed since the horizon was last recomputed.
    pub(crate) since_horizon: u32,
    /// NWR counters (stay zero without NWR).
    pub(crate) nwr: NwrStats,
    /// Commits aborted by MVTO+NWR's old-version-reader check (`crate::nwr`).
    pub(crate) old_reader_aborts: u64,
    /// Versions to reuse (`crate::pool`).
    pub(crate) pool: VersionPool,
}

txlab_nwr::family!(
    Mvto,
    MvtoBuilder,
    "mvto",
    MvtoRecord,
    Mutation,
    MvtoSettings
);

impl<Rec: Recorder, W: WriteOmission> Mvto<Rec, W> {
    /// A database over tables built by the caller (e.g. with a custom index for some tables via
    /// [`Tables::with_custom`]), with or without NWR. With [`Nwr`], fails if 128-bit
    /// compare-and-swap is not lock-free on this target (single-write omitters use none).
    fn with_tables_and_omission(
        schema: &Schema,
        tables: Tables<MvtoRecord>,
        config: MvtoConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let stripe_rts = tables
            .iter()
            .map(|(_, index)| {
                index.phantom_stripes().map(|stripes| {
                    (0..stripes.len())
                        .map(|_| CachePadded::new(AtomicU64::new(0)))
                        .collect()
                })
            })
            .collect();
        let retire_floors = tables
            .iter()
            .map(|(_, index)| {
                (index.unlinks_deleted_records() && index.phantom_stripes().is_none())
                    .then(|| RetireFloors::new(None))
            })
            .collect();
        Ok(Self {
            nwr: NwrParts::new::<W, _>(&tables)?,
            shell: Shell::new(schema, tables, config, recorder)?,
            stripe_rts,
            retire_floors,
            clocks: Clocks::new(),
            _omission: PhantomData,
        })
    }

    /// The garbage-collection horizon: no active or future transaction has a smaller timestamp.
    pub fn gc_horizon(&self) -> u64 {
        self.clocks.horizon()
    }

    /// How many versions `key` of `table` currently holds, and how many of those are aborted
    /// (diagnostics and memory tests; 0 for a key without a record).
    pub fn version_count(&self, table: TableId, key: u64) -> Result<(usize, usize), Error> {
        self.walking(|guard| {
            Ok(self
                .shell
                .tables
                .get(table)?
                .get(key, guard)?
                .map_or((0, 0), |r| r.count(guard)))
        })
    }

    /// Runs `walk` with an active clock slot and under a pinned guard, as a transaction would:
    /// version lists may only be walked so (`crate::pool`).
    fn walking<T>(&self, walk: impl FnOnce(&Guard) -> T) -> T {
        let _held = self.clocks.hold();
        let guard = crossbeam_epoch::pin();
        walk(&guard)
    }

    /// The absent floor of `(table, key)`: the largest timestamp at which a transaction saw the
    /// key absent without a version to raise, because it scanned past a key with no record
    /// (ordered tables: the stripe scan timestamp) or read a tombstone since retired
    /// (`crate::retire`). A write whose version has nothing but absent versions below it must
    /// have a larger timestamp (`crate::commit`, Phase 1). A `SeqCst` load; 0 for tables that
    /// neither scan nor unlink.
    #[inline]
    pub(crate) fn absent_floor(&self, table: TableId, key: u64) -> u64 {
        let t = table.0 as usize;
        if let Some(rts) = self.stripe_rts.get(t).and_then(|r| r.as_deref()) {
            let Some(stripes) = self
                .shell
                .tables
                .get(table)
                .ok()
                .and_then(|i| i.phantom_stripes())
            else {
                return 0;
            };
            return rts[stripes.stripe_of(key) as usize].load(Ordering::SeqCst);
        }
        match self.retire_floors.get(t) {
            Some(Some(f)) => f.of_key(key, None),
            _ => 0,
        }
    }

    /// What `crate::retire::retire_one` needs of `table` (`None` if its records are never
    /// unlinked).
    fn table_retire(&self, table: TableId) -> Option<TableRetire<'_>> {
        let index = self.shell.tables.get(table).ok()?;
        if !index.unlinks_deleted_records() {
            return None;
        }
        let t = table.0 as usize;
        let floor = match (self.stripe_rts.get(t), self.retire_floors.get(t)) {
            (Some(Some(rts)), _) => AbsentFloor::Stripes(rts),
            (_, Some(Some(f))) => AbsentFloor::Hash(f),
            _ => return None,
        };
        Some(TableRetire {
            index,
            floor,
            pivots: &self.nwr.pivots,
        })
    }

    /// `(table, key)`'s read-and-omit marks as `(read epoch, omit epoch)`, 0 for no mark and
    /// `u32::MAX` for a saturated one (MVTO+NWR only; `None` for the other variants and for an
    /// unmapped key). Tests use it to see marks and claims.
    #[doc(hidden)]
    pub fn read_omit_epochs(&self, table: TableId, key: u64) -> Option<(u32, u32)> {
        if !crate::nwr::marks_in_head::<W>() {
            return None;
        }
        let (read, omit) = self.walking(|guard| {
            let record = self.shell.tables.get(table).ok()?.get(key, guard).ok()??;
            Some(record.head.load(Ordering::Acquire).marks(guard))
        })?;
        let plain = |m: crate::head::Mark| match m {
            crate::head::Mark::None => 0,
            crate::head::Mark::At(e) => e as u32,
            crate::head::Mark::Saturated => u32::MAX,
        };
        Some((plain(read), plain(omit)))
    }
}

/// MVTO+NWR only, when the worker's clock used up `epoch`'s counter range: a timestamp of a later
/// epoch than the global one would break the marks' encoding (`crate::head`), so the worker
/// leaves the epoch, waits until the global epoch moves on (advancing it if nobody else does) and
/// begins in the epoch it enters then, whose range has room.
#[cold]
#[inline(never)]
fn begin_in_a_later_epoch<Rec: Recorder, W: WriteOmission>(
    w: &mut MvtoWorker<'_, Rec, W>,
    mut epoch: u64,
    reserved: u64,
) -> u64 {
    let engine = w.engine;
    loop {
        w.epoch.exit();
        engine.shell.epochs.wait_past(epoch);
        epoch = w.epoch.enter();
        let sync = engine.shell.config.protocol.clock_sync_interval;
        if let Some(ts) = w.state.clock.begin(&engine.clocks, epoch, sync, reserved) {
            return ts;
        }
    }
}

impl<Rec: Recorder, W: WriteOmission> Protocol for Mvto<Rec, W> {
    type Record = MvtoRecord;
    type Recorder = Rec;
    /// The version read (whose `rts` was raised to the transaction's timestamp).
    type Seen = *const Version;
    /// The pending version the write linked at commit (null before, or if omitted).
    type Scratch = Installed;
    type WorkerState = MvtoState;
    type Mutation = Mutation;
    type Settings = MvtoSettings;

    /// Worker ids fill the low bits of a timestamp (`crate::timestamp`).
    const MAX_WORKERS: u32 = MAX_WORKERS as u32;

    #[inline]
    fn shell(&self) -> &Shell<Self> {
        &self.shell
    }

    fn name(&self) -> &'static str {
        W::engine_name("mvto", "mvto-nwr", "mvto-nwr-single")
    }

    fn worker_state(&self, id: u32) -> MvtoState {
        MvtoState {
            clock: self.clocks.register(id),
            ts: 0,
            since_horizon: 0,
            nwr: NwrStats::default(),
            old_reader_aborts: 0,
            pool: VersionPool::default(),
        }
    }

    fn load_record(rec: &MvtoRecord, value: &[u8], guard: &Guard) -> Result<(), Error> {
        rec.load_initial(value, guard).map_err(|_| unaddressable())
    }

    /// Enters the epoch and fixes the transaction's timestamp in it (MVTO+NWR keeps the start of
    /// each epoch's timestamp range for omitted writes).
    #[inline]
    fn begin(w: &mut MvtoWorker<'_, Rec, W>) {
        let epoch = w.epoch.enter();
        let reserved = if W::ENABLED {
            crate::timestamp::NWR_RESERVED
        } else {
            0
        };
        let engine = w.engine;
        let sync = engine.shell.config.protocol.clock_sync_interval;
        w.state.ts = match w.state.clock.begin(&engine.clocks, epoch, sync, reserved) {
            Some(ts) => ts,
            None => begin_in_a_later_epoch(w, epoch, reserved),
        };
    }

    /// The newest committed version older than the timestamp (waiting, bounded, on a pending
    /// one), whose read timestamp is raised to the transaction's; a key with no version below the
    /// timestamp first gets its initial absent version (`MvtoRecord::materialize_initial`).
    #[inline]
    fn observe(
        w: &mut MvtoWorker<'_, Rec, W>,
        guard: &Guard,
        rec: &MvtoRecord,
        (table, key): (TableId, u64),
        _vs: usize,
    ) -> TxResult<Observation<*const Version>> {
        let (ts, max_waits) = (w.state.ts, w.engine.shell.config.read_wait_rounds);
        let mut backoff = txlab_core::protocol::sync::SpinWait::new();
        let mut waits = 0u32;
        loop {
            match rec.visible(ts, Ordering::SeqCst, guard) {
                Visible::Committed(v) => {
                    v.raise_rts(ts);
                    w.state.clock.observe(v.wts);
                    return Ok(Observation {
                        seen: v,
                        present: !v.tombstone,
                        tag: v.wts,
                    });
                }
                Visible::Pending(v) => {
                    w.state.clock.observe(v.wts);
                    waits += 1;
                    if waits > max_waits {
                        return Err(refused(ConflictCause::ReadBusy, table, key));
                    }
                    backoff.snooze();
                }
                Visible::Nothing => {
                    if rec.materialize_initial(ts, guard).is_err() {
                        return Err(unaddressable().into());
                    }
                }
                Visible::Retired => return Err(refused(ConflictCause::RecordRetired, table, key)),
            }
        }
    }

    /// The version's own value: versions are immutable once linked (`crate::version`).
    #[inline]
    fn value<'a>(_rbuf: &'a [u8], seen: &*const Version, _vs: usize) -> &'a [u8] {
        // SAFETY: read-set versions were obtained under the transaction's guard, which stays
        // pinned until the transaction ends; the returned borrow cannot outlive the borrow of
        // the transaction it is reached through (`crate::gc`: versions are freed only after
        // every guard that could reach them is dropped).
        unsafe { (**seen).value.as_slice() }
    }

    /// Brings the record's head word toward the cache ahead of the commit, whose Phase 1 loads it
    /// (`crate::commit`): a prefetch hint, no access to memory.
    #[inline]
    fn buffered_blind_write(rec: *const MvtoRecord) {
        crate::pool::prefetch(rec);
    }

    /// Phantom protection, before the traversal: raise the stripes' scan timestamps (so an older
    /// insert into the range aborts), then record their versions (so a newer record appearing in
    /// the range aborts us), as in `crate::commit`.
    fn protect_scan(
        w: &mut MvtoWorker<'_, Rec, W>,
        index: &AnyIndex<MvtoRecord>,
        table: TableId,
        lo: u64,
        hi: u64,
    ) {
        let Some(stripes) = index.phantom_stripes() else {
            return;
        };
        let ts = w.state.ts;
        let scan_rts = w.engine.stripe_rts[table.0 as usize].as_deref();
        let set = &mut w.sets.stripes;
        stripes.for_range(lo, hi, |s| {
            if let Some(rts) = scan_rts {
                rts[s as usize].fetch_max(ts, Ordering::SeqCst);
            }
            set.push(StripeEntry {
                table,
                stripe: s,
                version: stripes.version(s),
            });
        });
    }

    fn commit(tx: &mut MvtoTxn<'_, '_, Rec, W>) -> TxResult<CommitInfo> {
        crate::commit::commit(tx)
    }

    /// Publishes the floor of the worker's next transaction.
    #[inline]
    fn end(w: &mut MvtoWorker<'_, Rec, W>) {
        w.state.clock.end();
    }

    /// MVTO+NWR reports the `txlab_nwr::NwrStats` counters and `nwr_old_reader_aborts` (commits
    /// aborted because they read a version an omitted write of their epoch is ordered after;
    /// always 0 with single-write omitters, which have no such check).
    fn drain_counters(w: &mut MvtoWorker<'_, Rec, W>, sink: &mut dyn FnMut(&'static str, u64)) {
        if W::ENABLED {
            w.state.nwr.drain(sink);
            sink("nwr_old_reader_aborts", w.state.old_reader_aborts);
            w.state.old_reader_aborts = 0;
        }
    }

    fn drop_worker(w: &mut MvtoWorker<'_, Rec, W>) {
        w.state.clock.deregister(&w.engine.clocks);
    }

    /// An entry whose tombstone is not yet below the horizon waits (`crate::retire`, 1.).
    fn retire(&self, e: RetireEntry, guard: &Guard, history: Option<&RetiredTags>) -> Retire {
        #[cfg(feature = "mutation")]
        let raise_floor = !self.shell.config.mutated(Mutation::RetireWithoutFloor);
        #[cfg(not(feature = "mutation"))]
        let raise_floor = true;
        match self.table_retire(e.table) {
            Some(t) if e.version < self.clocks.horizon() => {
                crate::retire::retire_one(&t, e, guard, history, raise_floor)
            }
            Some(_) => Retire::Busy,
            None => Retire::Revived,
        }
    }
}

txlab_occ::impl_engine!([Rec: Recorder, W: WriteOmission] Mvto<Rec, W>);

/// The version a write linked at commit (null before, or if it was omitted).
#[derive(Debug, Clone, Copy)]
pub struct Installed(pub(crate) *const Version);

impl Default for Installed {
    fn default() -> Self {
        Installed(std::ptr::null())
    }
}

#[cfg(test)]
mod tests {
    use super::Timestamped;
    use crate::timestamp::epoch_of;
    use crate::{Mvto, MvtoConfig, Nwr};
    use txlab_core::{AckMode, Engine, Schema, TableSpec, Worker};

    /// An MVTO+NWR worker whose clock used up the current epoch's counter range leaves the
    /// epoch, moves the (manual) global epoch on and begins in the next one, never with a
    /// timestamp of an epoch the global epoch has not reached (`crate::head`).
    #[test]
    fn an_nwr_worker_whose_clock_ran_out_begins_in_the_next_epoch() {
        let mut s = Schema::new();
        s.add(TableSpec::dense("t", 8, 4)).unwrap();
        let db = Mvto::builder()
            .nwr(Nwr)
            .config(MvtoConfig::manual().with_ack(AckMode::EpochStable))
            .build(&s)
            .unwrap();
        let mut w = db.worker().unwrap();
        let e = db.epochs().global();
        w.state.clock.exhaust(e);
        let tx = w.begin();
        assert_eq!(epoch_of(tx.timestamp()), e + 1);
        assert_eq!(
            db.epochs().global(),
            e + 1,
            "the epoch moved on, not the clock alone"
        );
        drop(tx);
        let tx = w.begin();
        assert_eq!(
            epoch_of(tx.timestamp()),
            e + 1,
            "room left in the new epoch"
        );
    }
}
