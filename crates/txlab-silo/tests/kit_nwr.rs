//! Silo+NWR in the correctness kit: Hermitage schedules, random schedules, threaded stress, and
//! the NWR mutants the kit must catch.
//!
//! Engines run with manual epochs and `AckMode::EpochStable` (NWR is only attempted under
//! epoch-based group commit, whose acknowledgements make every transaction of an epoch
//! concurrent). Histories are checked for serializability here: the kit's real-time edges use the
//! instant `commit` returned, not the acknowledgement, and an omitted write is legitimately ordered
//! before a same-epoch commit that returned earlier. Strictness with acknowledgement times is
//! checked in `tests/nwr.rs` (`strict_serializable_with_group_commit_acknowledgements`).

use std::sync::Arc;
use std::time::Duration;
use txlab_check::MemoryRecorder;
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::{AckMode, Error, Schema};
use txlab_nwr::NwrMutation;
use txlab_silo::{Mutation, SiloConfig, SiloNwr};
use txlab_silo::{Nwr, Silo};
use txlab_testkit::{Expect, Hermitage, Protocol};

fn config() -> SiloConfig {
    SiloConfig::manual().with_ack(AckMode::EpochStable)
}

struct SiloNwrKit;

impl Protocol for SiloNwrKit {
    type Engine = SiloNwr<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Silo::builder()
            .nwr(Nwr)
            .config(config())
            .recorder(recorder)
            .build(schema)
    }

    /// NWR only omits a transaction whose reads would also pass Silo's read validation and never
    /// aborts by itself, so it aborts what Silo aborts, except where an omission leaves a later
    /// reader's snapshot intact:
    ///
    /// - G0: T0 commits its blind writes of x and y (the epoch's first versions); T1's blind writes
    ///   of both are then omitted (ordered before T0's). No aborts, as in Silo.
    /// - OTV: T0 installs x=11, y=19; T1's blind writes x=12, y=18 are *omitted* (ordered before
    ///   T0's), so T2, which read x=11 before T1 committed, still reads y=19 and commits: Silo
    ///   aborts T2 (its x changed), Silo+NWR aborts nobody.
    /// - Every other schedule: the aborted transaction read a version that a *visible* commit then
    ///   replaced (read-modify-writes, or the first blind write of a key in the epoch, which is
    ///   never omitted), exactly as in Silo.
    fn expect(test: Hermitage) -> Expect {
        match test {
            Hermitage::G0 | Hermitage::G1a | Hermitage::Otv => Expect::NoConflicts,
            Hermitage::G1b
            | Hermitage::G1c
            | Hermitage::PmpWrite
            | Hermitage::P4
            | Hermitage::G2Item => Expect::Aborts(&[1]),
            Hermitage::Pmp | Hermitage::GSingle => Expect::Aborts(&[0]),
            Hermitage::G2 => Expect::Aborts(&[0, 1]),
            _ => Expect::Serializable,
        }
    }
}

txlab_testkit::protocol_kit!(SiloNwrKit);

/// The scan-miss rule, the same schedule for every NWR engine (`txlab_testkit::nwr`).
#[test]
fn nwr_scan_miss_blocks_omission() {
    txlab_testkit::nwr::scan_miss_blocks_omission::<SiloNwrKit>();
}

/// Silo+NWR with a background epoch every millisecond, so stress runs cross many epoch
/// boundaries (pivot objects reset, first blind writes of an epoch installed again).
struct SiloNwrTimed;

impl Protocol for SiloNwrTimed {
    type Engine = SiloNwr<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-1ms-epochs";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = config().with_epoch(EpochConfig::every(Duration::from_millis(1))?);
        Silo::builder()
            .nwr(Nwr)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

// YCSB, read-mostly YCSB-B and hot blind writes with epochs advancing underneath
// (`txlab_testkit::nwr_epoch_stress`).
txlab_testkit::nwr_epoch_stress!(SiloNwrTimed);

macro_rules! mutant {
    ($name:ident, $test:ident, $mutation:expr) => {
        struct $name;
        impl Protocol for $name {
            type Engine = SiloNwr<MemoryRecorder>;
            const NAME: &'static str = stringify!($name);
            const STRICT: bool = false;
            fn build(
                schema: &Schema,
                recorder: Arc<MemoryRecorder>,
            ) -> Result<Self::Engine, Error> {
                Silo::builder()
                    .nwr(Nwr)
                    .config(config().with_mutation($mutation))
                    .recorder(recorder)
                    .build(schema)
            }
        }
        #[test]
        fn $test() {
            txlab_testkit::mutation::assert_caught::<$name>();
        }
    };
}

mutant!(
    NwrSkipEpochCheck,
    kit_catches_skipped_epoch_check,
    Mutation::Nwr(NwrMutation::SkipEpochCheck)
);
mutant!(
    NwrSkipMergedReadCheck,
    kit_catches_skipped_mrs_check,
    Mutation::Nwr(NwrMutation::SkipMergedReadCheck)
);

/// Omissions on dense, hash and ordered tables, each landing in its own key's pivot object
/// (`txlab_testkit::nwr::omits_on_every_index_kind`).
#[test]
fn nwr_omits_on_every_index_kind() {
    txlab_testkit::nwr::omits_on_every_index_kind::<SiloNwrKit>(|db, t, k| db.pivot_word(t, k));
}

/// Which pre-epoch reads leave a mark in mRS, the same schedules for every NWR engine
/// (`txlab_testkit::nwr`).
#[test]
fn nwr_pre_epoch_readers_and_marks() {
    txlab_testkit::nwr::pre_epoch_readers_and_marks::<SiloNwrKit>();
}

/// Check (4)'s read marks are written once per record and epoch, and again in the next epoch
/// (`txlab_testkit::nwr::read_marks_are_written_once_per_record_and_epoch`).
#[test]
fn nwr_read_marks_are_written_once_per_record_and_epoch() {
    txlab_testkit::nwr::read_marks_are_written_once_per_record_and_epoch::<SiloNwrKit>(|db| {
        db.epochs().advance()
    });
}

/// Omission across a key's delete, retirement and reinsert, on keyed tables, whose pivot objects
/// go with their records (`txlab_testkit::nwr::omits_after_retire_and_reinsert`).
#[test]
fn nwr_omits_after_retire_and_reinsert() {
    txlab_testkit::nwr::omits_after_retire_and_reinsert::<SiloNwrKit>(
        &txlab_testkit::nwr::NwrRetireProbe {
            advance: &|db| db.epochs().advance(),
            is_mapped: &|db, t, k| db.is_mapped(t, k).expect("known table"),
            pivot_word: &|db, t, k| db.pivot_word(t, k),
        },
    );
}
