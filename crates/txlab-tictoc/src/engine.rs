//! The TicToc engine: the toolkit's shell, TicToc's stripe clocks and retire floors, TicToc+NWR's
//! parts, and TicToc's hooks into the toolkit (the seqlock read of word and tag, the stripe
//! timestamps of scans, retirement).

use crate::config::{Mutation, TicTocConfig};
use crate::record::{StableRead, TicTocRecord};
use crate::retire::TableRetire;
use crate::stripe_clock::StripeClocks;
use crate::word::is_absent;
use std::marker::PhantomData;
use txlab_core::protocol::history::{NoRecorder, Recorder, RetiredTags};
use txlab_core::protocol::retire_floor::RetireFloors;
use txlab_core::protocol::retire_queue::Retire;
use txlab_core::protocol::storage::{Guard, Index, PhantomStripes};
use txlab_core::protocol::sync::Arc;
use txlab_core::{CommitInfo, ConflictCause, Error, Schema, TableId, TxResult};
use txlab_nwr::{NoNwr, Nwr, NwrParts, NwrSingleWrite, NwrStats, WriteOmission};
use txlab_occ::{NoSettings, Observation, Protocol, RetireEntry, Shell, StripeEntry, refused};
use txlab_storage::{AnyIndex, Tables};

/// TicToc extended with the non-visible write rule (`txlab_nwr`; engine name `tictoc-nwr`; see
/// `crate::nwr` and `docs/protocols/tictoc.md`, section "NWR").
pub type TicTocNwr<Rec = NoRecorder> = TicToc<Rec, Nwr>;

/// TicToc+NWR with single-write omitters and no read marks (`txlab_nwr::NwrSingleWrite`;
/// engine name `tictoc-nwr-single`; `crate::nwr` and `docs/protocols/tictoc.md`, "Single-write
/// omitters").
pub type TicTocNwrSingle<Rec = NoRecorder> = TicToc<Rec, NwrSingleWrite>;

/// A TicToc worker: the toolkit's worker (`txlab_occ::Worker`) of a TicToc engine.
pub type TicTocWorker<'e, Rec = NoRecorder, Omit = NoNwr> =
    txlab_occ::Worker<'e, TicToc<Rec, Omit>>;

/// An open TicToc transaction (`txlab_occ::Txn`). Dropping it aborts it.
pub type TicTocTxn<'w, 'e, Rec = NoRecorder, Omit = NoNwr> =
    txlab_occ::Txn<'w, 'e, TicToc<Rec, Omit>>;

/// Largest number of workers one engine hands out (history ids keep 24 bits of worker number).
pub const MAX_WORKERS: u32 = 1 << 23;

/// A TicToc database: tables of [`TicTocRecord`]s in the toolkit's shell (epochs for group commit,
/// configuration, recorder), the stripe clocks and retire floors, and TicToc+NWR's parts.
///
/// `Rec` is the history recorder; the default [`NoRecorder`] compiles recording out. `Omit` is the
/// write-omission policy; the default [`NoNwr`] is plain TicToc, with the record layout and
/// commit path unchanged; [`Nwr`] is TicToc+NWR ([`TicTocNwr`]).
#[derive(Debug)]
pub struct TicToc<Rec: Recorder = NoRecorder, Omit: WriteOmission = NoNwr> {
    pub(crate) shell: Shell<Self>,
    /// TicToc+NWR's pivot objects and the stamps ordering omitted writes in histories.
    pub(crate) nwr: NwrParts,
    /// Per table: TicToc's timestamps of its phantom stripes (`None` for tables without scans;
    /// `crate::stripe_clock`).
    stripe_clocks: Box<[Option<StripeClocks>]>,
    /// Per table: the retire floors (`None` for tables whose records are never unlinked;
    /// `crate::retire`).
    retire_floors: Box<[Option<RetireFloors>]>,
    _omission: PhantomData<Omit>,
}

/// What a TicToc worker keeps besides the toolkit's sets; the per-transaction parts are cleared
/// at every begin.
#[derive(Debug, Default)]
pub struct TicTocState {
    /// TicToc+NWR only: the history tag (install timestamp) of each read's version, parallel to
    /// the read set. It tells the epoch the version was installed in, which the word's `wts` may
    /// not after a delta-overflow shift (`crate::word`).
    pub(crate) read_tags: Vec<u64>,
    /// Commit scratch: the `(table, stripe)`s holding records this transaction writes first
    /// (`crate::stripe_clock`).
    pub(crate) first_writes: Vec<(TableId, u32)>,
    /// The largest retire floor (`crate::retire`) of a never-written absent record read or a
    /// stripe scanned: the commit timestamp is at least this.
    pub(crate) ts_floor: u64,
    /// TicToc+NWR's counters (untouched in plain TicToc).
    pub(crate) nwr: NwrStats,
}

txlab_nwr::family!(
    TicToc,
    TicTocBuilder,
    "tictoc",
    TicTocRecord,
    Mutation,
    NoSettings
);

impl<Rec: Recorder, Omit: WriteOmission> TicToc<Rec, Omit> {
    /// A database over tables built by the caller (e.g. with a custom index for some tables via
    /// [`Tables::with_custom`]) and with write-omission policy `Omit`. With [`Nwr`] it fails
    /// unless 128-bit compare-and-swap is lock-free on this target ([`NwrSingleWrite`] uses no
    /// 128-bit atomics: its mark is a bit of the history tag).
    fn with_tables_and_omission(
        schema: &Schema,
        tables: Tables<TicTocRecord>,
        config: TicTocConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        let stripe_clocks = tables
            .iter()
            .map(|(_, index)| index.phantom_stripes().map(StripeClocks::new))
            .collect();
        let retire_floors = tables
            .iter()
            .map(|(_, index)| {
                index
                    .unlinks_deleted_records()
                    .then(|| RetireFloors::new(index.phantom_stripes()))
            })
            .collect();
        Ok(Self {
            nwr: NwrParts::new::<Omit, _>(&tables)?,
            shell: Shell::new(schema, tables, config, recorder)?,
            stripe_clocks,
            retire_floors,
            _omission: PhantomData,
        })
    }

    /// A table's phantom stripes (which stripe a key or range is on) and TicToc's clocks for them;
    /// `None` for tables without range scans.
    #[inline]
    pub(crate) fn stripes(&self, table: TableId) -> Option<(&PhantomStripes, &StripeClocks)> {
        let clocks = self.stripe_clocks.get(table.0 as usize)?.as_ref()?;
        let stripes = self.shell.tables.get(table).ok()?.phantom_stripes()?;
        Some((stripes, clocks))
    }

    /// The retire floor of `(table, key)` (`crate::retire`): a transaction that reads a
    /// never-written absent record of the key commits at or above it, one that writes it first
    /// commits above it. 0 for tables whose records are never unlinked.
    #[inline]
    pub(crate) fn retire_floor(&self, table: TableId, key: u64) -> u64 {
        match self.retire_floors.get(table.0 as usize) {
            Some(Some(floors)) => {
                floors.of_key(key, self.stripes(table).map(|(stripes, _)| stripes))
            }
            _ => 0,
        }
    }

    /// The retire floor of phantom stripe `stripe` of an ordered table (`crate::retire`): a scan
    /// of the stripe commits at or above it.
    #[inline]
    pub(crate) fn stripe_retire_floor(&self, table: TableId, stripe: u32) -> u64 {
        match self.retire_floors.get(table.0 as usize) {
            Some(Some(floors)) => floors.of_stripe(stripe),
            _ => 0,
        }
    }

    /// What `crate::retire::retire_one` needs of `table` (`None` if its records are never
    /// unlinked).
    fn table_retire(&self, table: TableId) -> Option<TableRetire<'_>> {
        let floors = self.retire_floors.get(table.0 as usize)?.as_ref()?;
        Some(TableRetire {
            index: self.shell.tables.get(table).ok()?,
            pivots: &self.nwr.pivots,
            floors,
            stripes: self.stripes(table),
        })
    }
}

impl<Rec: Recorder, Omit: WriteOmission> Protocol for TicToc<Rec, Omit> {
    type Record = TicTocRecord;
    type Recorder = Rec;
    /// The timestamp word read (unlocked): `wts` and `rts`.
    type Seen = u64;
    /// The word the write's lock replaced.
    type Scratch = u64;
    type WorkerState = TicTocState;
    type Mutation = Mutation;
    type Settings = NoSettings;

    const MAX_WORKERS: u32 = MAX_WORKERS;

    #[inline]
    fn shell(&self) -> &Shell<Self> {
        &self.shell
    }

    fn name(&self) -> &'static str {
        Omit::engine_name("tictoc", "tictoc-nwr", "tictoc-nwr-single")
    }

    fn worker_state(&self, _id: u32) -> TicTocState {
        TicTocState::default()
    }

    fn load_record(rec: &TicTocRecord, value: &[u8], _guard: &Guard) -> Result<(), Error> {
        rec.load_initial(value);
        Ok(())
    }

    #[inline]
    fn begin(w: &mut TicTocWorker<'_, Rec, Omit>) {
        let st = &mut w.state;
        st.read_tags.clear();
        st.first_writes.clear();
        st.ts_floor = 0;
        w.epoch.enter();
    }

    /// Algorithm 1's read: the value, the word and (with a recorder, in TicToc+NWR, or for an
    /// absent version) the history tag, read consistently. A read of a never-written absent
    /// record (tag 0) raises the commit's floor to the key's retire floor (`crate::retire`); a
    /// retired record refuses the read.
    #[inline]
    fn observe(
        w: &mut TicTocWorker<'_, Rec, Omit>,
        _guard: &Guard,
        rec: &TicTocRecord,
        (table, key): (TableId, u64),
        vs: usize,
    ) -> TxResult<Observation<u64>> {
        let engine = w.engine;
        let waits = engine.shell.config.read_wait_rounds;
        let with_tag = Rec::ENABLED || Omit::ENABLED;
        match rec.read_stable(&mut w.sets.rbuf[..vs], waits, with_tag) {
            StableRead::Ok { word, tag } => {
                if is_absent(word) && tag == 0 {
                    let st = &mut w.state;
                    st.ts_floor = st.ts_floor.max(engine.retire_floor(table, key));
                }
                if Omit::ENABLED {
                    w.state.read_tags.push(tag);
                }
                Ok(Observation {
                    seen: word,
                    present: !is_absent(word),
                    tag,
                })
            }
            StableRead::Busy => Err(refused(ConflictCause::ReadBusy, table, key)),
            StableRead::Retired => Err(refused(ConflictCause::RecordRetired, table, key)),
        }
    }

    #[inline]
    fn value<'a>(rbuf: &'a [u8], _seen: &u64, vs: usize) -> &'a [u8] {
        &rbuf[..vs]
    }

    /// Linking an absent record is not a write: phantom protection counts first writes at commit
    /// (`crate::stripe_clock`), so the index's stripe bump is not used.
    #[inline]
    fn linked(
        _w: &mut TicTocWorker<'_, Rec, Omit>,
        _table: TableId,
        _bump: txlab_core::protocol::storage::StripeBump,
    ) -> bool {
        false
    }

    /// The stripes' clock versions, read before the traversal (`crate::stripe_clock`: a first
    /// write announced before this load is visible to the traversal; one announced after it fails
    /// the scan's validation or commits above it), each followed by its retire floor
    /// (`crate::retire`: a scan that misses a record unlinked after this load fails validation;
    /// one that loaded the announce sees the floor).
    fn protect_scan(
        w: &mut TicTocWorker<'_, Rec, Omit>,
        _index: &AnyIndex<TicTocRecord>,
        table: TableId,
        lo: u64,
        hi: u64,
    ) {
        let engine = w.engine;
        let Some((stripes, clocks)) = engine.stripes(table) else {
            return;
        };
        let (set, ts_floor) = (&mut w.sets.stripes, &mut w.state.ts_floor);
        stripes.for_range(lo, hi, |s| {
            set.push(StripeEntry {
                table,
                stripe: s,
                version: clocks.version(s),
            });
            *ts_floor = (*ts_floor).max(engine.stripe_retire_floor(table, s));
        });
    }

    fn commit(tx: &mut TicTocTxn<'_, '_, Rec, Omit>) -> TxResult<CommitInfo> {
        crate::commit::commit(tx)
    }

    fn drain_counters(
        w: &mut TicTocWorker<'_, Rec, Omit>,
        sink: &mut dyn FnMut(&'static str, u64),
    ) {
        if Omit::ENABLED {
            w.state.nwr.drain(sink);
        }
    }

    fn retire(&self, e: RetireEntry, guard: &Guard, history: Option<&RetiredTags>) -> Retire {
        #[cfg(feature = "mutation")]
        let raise_floor = !self.shell.config.mutated(Mutation::RetireWithoutFloor);
        #[cfg(not(feature = "mutation"))]
        let raise_floor = true;
        match self.table_retire(e.table) {
            Some(t) => crate::retire::retire_one(&t, e, guard, history, raise_floor),
            None => Retire::Revived,
        }
    }
}

txlab_occ::impl_engine!([Rec: Recorder, Omit: WriteOmission] TicToc<Rec, Omit>);
