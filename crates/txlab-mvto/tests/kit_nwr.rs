//! MVTO+NWR in the correctness kit: Hermitage schedules, random schedules (2,000 proptest cases
//! unless `TXLAB_PROPTEST_CASES` says otherwise), threaded stress, and the NWR mutants the kit
//! must catch.
//!
//! Engines run with manual epochs and `AckMode::EpochStable` (NWR is only attempted under
//! epoch-based group commit). Histories are held to serializability: the kit's real-time edges
//! use the instant `commit` returned, not the acknowledgement, and MVTO's timestamp order (like
//! an omitted write's place at the start of its epoch) need not follow commit-return order.
//! Strictness with acknowledgement times is checked in `tests/nwr.rs`
//! (`strict_serializable_with_group_commit_acknowledgements`).

use std::sync::Arc;
use std::time::Duration;
use txlab_check::MemoryRecorder;
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::{AckMode, Error, Schema};
use txlab_mvto::{Mutation, MvtoConfig, MvtoConfigExt, MvtoNwr};
use txlab_mvto::{Mvto, Nwr};
use txlab_nwr::NwrMutation;
use txlab_testkit::{Expect, Hermitage, Protocol};

fn config() -> MvtoConfig {
    MvtoConfig::manual().with_ack(AckMode::EpochStable)
}

struct MvtoNwrKit;

impl Protocol for MvtoNwrKit {
    type Engine = MvtoNwr<MemoryRecorder>;
    const NAME: &'static str = "mvto-nwr";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Mvto::builder()
            .nwr(Nwr)
            .config(config())
            .recorder(recorder)
            .build(schema)
    }

    /// As plain MVTO (`tests/kit.rs`: transactions begin in index order, so T0 has the smallest
    /// timestamp, and MVTO aborts the older writer whose write would land under a younger read),
    /// except where NWR omits that writer instead:
    ///
    /// - OTV: T0 installs x=11, y=19 (the epoch's first versions); T2 (youngest) reads x=11; T1's
    ///   blind writes x=12, y=18 are then *omitted* (both items have a committed version of the
    ///   epoch, nobody read their pre-epoch versions), placed at the start of the epoch, before
    ///   T0. Plain MVTO aborts T1 (`WriteTooLate` under T2's read); MVTO+NWR aborts nobody, and
    ///   T2 still reads y=19.
    /// - Every other schedule: the aborted transaction is a read-modify-write, an insert, or the
    ///   first blind write of a key in the epoch (never omitted), exactly as in plain MVTO.
    fn expect(test: Hermitage) -> Expect {
        match test {
            Hermitage::G0 | Hermitage::G1a | Hermitage::Otv => Expect::NoConflicts,
            Hermitage::G1b
            | Hermitage::G1c
            | Hermitage::PmpWrite
            | Hermitage::P4
            | Hermitage::G2Item => Expect::Aborts(&[0]),
            Hermitage::Pmp => Expect::Aborts(&[0]),
            Hermitage::GSingle => Expect::NoConflicts,
            Hermitage::G2 => Expect::Aborts(&[0, 1]),
            _ => Expect::Serializable,
        }
    }
}

txlab_testkit::protocol_kit!(MvtoNwrKit);

/// The scan-miss rule, the same schedule for every NWR engine (`txlab_testkit::nwr`).
#[test]
fn nwr_scan_miss_blocks_omission() {
    txlab_testkit::nwr::scan_miss_blocks_omission::<MvtoNwrKit>();
}

/// MVTO+NWR with a background epoch every millisecond, so stress runs cross many epoch
/// boundaries (pivot objects reset, first blind writes of an epoch installed again, readers of
/// pre-epoch versions checked against omissions of their epoch).
struct MvtoNwrTimed;

impl Protocol for MvtoNwrTimed {
    type Engine = MvtoNwr<MemoryRecorder>;
    const NAME: &'static str = "mvto-nwr-1ms-epochs";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = config().with_epoch(EpochConfig::every(Duration::from_millis(1))?);
        Mvto::builder()
            .nwr(Nwr)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

// YCSB, read-mostly YCSB-B and hot blind writes with epochs advancing underneath
// (`txlab_testkit::nwr_epoch_stress`).
txlab_testkit::nwr_epoch_stress!(MvtoNwrTimed);

macro_rules! mutant {
    ($name:ident, $test:ident, $mutation:expr) => {
        struct $name;
        impl Protocol for $name {
            type Engine = MvtoNwr<MemoryRecorder>;
            const NAME: &'static str = stringify!($name);
            const STRICT: bool = false;
            fn build(
                schema: &Schema,
                recorder: Arc<MemoryRecorder>,
            ) -> Result<Self::Engine, Error> {
                Mvto::builder()
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
mutant!(
    NwrSkipOldReaderCheck,
    kit_catches_skipped_old_reader_check,
    Mutation::NwrSkipOldReaderCheck
);

/// Omissions on dense, hash and ordered tables, each landing in its own key's pivot object
/// (`txlab_testkit::nwr::omits_on_every_index_kind`).
#[test]
fn nwr_omits_on_every_index_kind() {
    txlab_testkit::nwr::omits_on_every_index_kind::<MvtoNwrKit>(|db, t, k| db.pivot_word(t, k));
}

/// Which pre-epoch reads leave a mark in mRS, the same schedules for every NWR engine
/// (`txlab_testkit::nwr`).
#[test]
fn nwr_pre_epoch_readers_and_marks() {
    txlab_testkit::nwr::pre_epoch_readers_and_marks::<MvtoNwrKit>();
}

/// Omission across a key's delete, retirement and reinsert, on keyed tables, whose pivot objects
/// go with their records (`txlab_testkit::nwr::omits_after_retire_and_reinsert`).
#[test]
fn nwr_omits_after_retire_and_reinsert() {
    /// The kit's engine with the GC horizon recomputed at every writing commit, so that the
    /// deleted key's tombstone falls below it within the test's two epochs.
    struct MvtoNwrRetireKit;
    impl Protocol for MvtoNwrRetireKit {
        type Engine = MvtoNwr<MemoryRecorder>;
        const NAME: &'static str = "mvto-nwr";
        const STRICT: bool = false;
        fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
            Mvto::builder()
                .nwr(Nwr)
                .config(config().with_horizon_interval(1))
                .recorder(recorder)
                .build(schema)
        }
    }
    txlab_testkit::nwr::omits_after_retire_and_reinsert::<MvtoNwrRetireKit>(
        &txlab_testkit::nwr::NwrRetireProbe {
            advance: &|db| db.epochs().advance(),
            is_mapped: &|db, t, k| db.is_mapped(t, k).expect("known table"),
            pivot_word: &|db, t, k| db.pivot_word(t, k),
        },
    );
}
