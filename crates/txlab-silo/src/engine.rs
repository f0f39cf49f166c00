//! The Silo engine: the toolkit's shell, Silo+NWR's parts, and Silo's hooks into the toolkit
//! (its record's seqlock read, the scan-miss read, retirement).

use crate::config::{Mutation, SiloConfig};
use crate::record::{SiloRecord, StableRead};
use crate::tid::{is_absent, is_retired, tag};
use std::marker::PhantomData;
use txlab_core::protocol::history::{NoRecorder, Recorder, RetiredTags};
use txlab_core::protocol::retire_queue::Retire;
use txlab_core::protocol::storage::Guard;
use txlab_core::protocol::sync::Arc;
use txlab_core::{CommitInfo, ConflictCause, Error, Schema, TableId, TxResult};
use txlab_nwr::{NoNwr, Nwr, NwrParts, NwrSingleWrite, NwrStats, WriteOmission};
use txlab_occ::{NoSettings, Observation, Protocol, RetireEntry, Shell, refused};
use txlab_storage::Tables;

/// Silo extended with the non-visible write rule (`txlab_nwr`; engine name `silo-nwr`).
pub type SiloNwr<Rec = NoRecorder> = Silo<Rec, Nwr>;

/// Silo+NWR with single-write omitters and fewer read marks (`txlab_nwr::NwrSingleWrite`; engine
/// name `silo-nwr-single`; `docs/protocols/nwr.md`, "A rule with fewer read marks").
pub type SiloNwrSingle<Rec = NoRecorder> = Silo<Rec, NwrSingleWrite>;

/// A Silo worker: the toolkit's worker (`txlab_occ::Worker`) of a Silo engine.
pub type SiloWorker<'e, Rec = NoRecorder, W = NoNwr> = txlab_occ::Worker<'e, Silo<Rec, W>>;

/// An open Silo transaction (`txlab_occ::Txn`). Dropping it aborts it.
pub type SiloTxn<'w, 'e, Rec = NoRecorder, W = NoNwr> = txlab_occ::Txn<'w, 'e, Silo<Rec, W>>;

/// A Silo database: tables of [`SiloRecord`]s in the toolkit's shell (epochs, configuration,
/// recorder), and Silo+NWR's pivot objects.
///
/// `Rec` is the history recorder; the default [`NoRecorder`] compiles recording out. `W` is the
/// write-omission switch: [`NoNwr`] (the default) is plain Silo, with the record layout and
/// commit path unchanged; [`Nwr`] is Silo+NWR ([`SiloNwr`], see `crate::commit`);
/// [`NwrSingleWrite`] is Silo+NWR with single-write omitters ([`SiloNwrSingle`]).
#[derive(Debug)]
pub struct Silo<Rec: Recorder = NoRecorder, W: WriteOmission = NoNwr> {
    pub(crate) shell: Shell<Self>,
    /// Silo+NWR's pivot objects (cold: only a would-be omitter reads one, `crate::nwr`) and the
    /// stamps ordering omitted writes in histories.
    pub(crate) nwr: NwrParts,
    _omission: PhantomData<W>,
}

/// What a Silo worker keeps across transactions besides the toolkit's sets.
#[derive(Debug, Default)]
pub struct SiloState {
    /// The TID this worker committed last (Silo's TID rule (b), `crate::commit`).
    pub(crate) last_tid: u64,
    /// NWR counters (stay zero without NWR).
    pub(crate) nwr: NwrStats,
}

txlab_nwr::family!(Silo, SiloBuilder, "silo", SiloRecord, Mutation, NoSettings);

impl<Rec: Recorder, W: WriteOmission> Silo<Rec, W> {
    /// A database over tables built by the caller (e.g. with a custom index for some tables via
    /// [`Tables::with_custom`]), with write-omission policy `W` ([`NoNwr`], [`Nwr`],
    /// [`NwrSingleWrite`]). With [`Nwr`] it fails unless 128-bit compare-and-swap is lock-free
    /// on this target.
    fn with_tables_and_omission(
        schema: &Schema,
        tables: Tables<SiloRecord>,
        config: SiloConfig,
        recorder: Arc<Rec>,
    ) -> Result<Self, Error> {
        Ok(Self {
            nwr: NwrParts::new::<W, _>(&tables)?,
            shell: Shell::new(schema, tables, config, recorder)?,
            _omission: PhantomData,
        })
    }
}

impl<Rec: Recorder, W: WriteOmission> Protocol for Silo<Rec, W> {
    type Record = SiloRecord;
    type Recorder = Rec;
    /// The TID word read (unlocked).
    type Seen = u64;
    /// The TID word the write's lock replaced.
    type Scratch = u64;
    type WorkerState = SiloState;
    type Mutation = Mutation;
    type Settings = NoSettings;

    #[inline]
    fn shell(&self) -> &Shell<Self> {
        &self.shell
    }

    fn name(&self) -> &'static str {
        W::engine_name("silo", "silo-nwr", "silo-nwr-single")
    }

    fn worker_state(&self, _id: u32) -> SiloState {
        SiloState::default()
    }

    fn load_record(rec: &SiloRecord, value: &[u8], _guard: &Guard) -> Result<(), Error> {
        rec.load_initial(value);
        Ok(())
    }

    /// The seqlock read of `crate::record` into `rbuf`; a record retired since it was located
    /// refuses the read (a retry finds the key's fresh incarnation, `crate::retire`).
    #[inline]
    fn observe(
        w: &mut SiloWorker<'_, Rec, W>,
        _guard: &Guard,
        rec: &SiloRecord,
        (table, key): (TableId, u64),
        vs: usize,
    ) -> TxResult<Observation<u64>> {
        let waits = w.engine.shell.config.read_wait_rounds;
        match rec.read_stable(&mut w.sets.rbuf[..vs], waits) {
            StableRead::Ok(word) if is_retired(word) => {
                Err(refused(ConflictCause::RecordRetired, table, key))
            }
            StableRead::Ok(word) => Ok(Observation {
                seen: word,
                present: !is_absent(word),
                tag: tag(word),
            }),
            StableRead::Busy => Err(refused(ConflictCause::ReadBusy, table, key)),
        }
    }

    #[inline]
    fn value<'a>(rbuf: &'a [u8], _seen: &u64, vs: usize) -> &'a [u8] {
        &rbuf[..vs]
    }

    /// A scan of ours that saw a key missing does not protect a blind write of the record we
    /// link for it: another writer of that record bumps no stripe (`docs/protocols/silo.md`).
    const READ_AFTER_SCAN_MISS: bool = true;

    fn commit(tx: &mut SiloTxn<'_, '_, Rec, W>) -> TxResult<CommitInfo> {
        crate::commit::commit(tx)
    }

    fn drain_counters(w: &mut SiloWorker<'_, Rec, W>, sink: &mut dyn FnMut(&'static str, u64)) {
        if W::ENABLED {
            w.state.nwr.drain(sink);
        }
    }

    fn retire_grace(&self) -> u64 {
        #[cfg(feature = "mutation")]
        if self.shell.config.mutated(Mutation::RetireWithoutGrace) {
            return 0;
        }
        txlab_core::protocol::retire_queue::GRACE_EPOCHS
    }

    fn retire(&self, e: RetireEntry, guard: &Guard, history: Option<&RetiredTags>) -> Retire {
        crate::retire::retire_one(&self.shell.tables, &self.nwr.pivots, e, guard, history)
    }
}

txlab_occ::impl_engine!([Rec: Recorder, W: WriteOmission] Silo<Rec, W>);
