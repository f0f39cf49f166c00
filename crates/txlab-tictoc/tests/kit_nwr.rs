//! TicToc+NWR in the correctness kit: Hermitage schedules, random schedules (2,000 proptest
//! cases by default, `TXLAB_PROPTEST_CASES`), threaded stress, and the NWR mutants the kit must
//! catch.
//!
//! Engines run with manual epochs and `AckMode::EpochStable` (NWR is only attempted under
//! epoch-based group commit, whose acknowledgements make every transaction of an epoch
//! concurrent). Histories are checked for serializability: the kit's real-time edges use the
//! instant `commit` returned, not the acknowledgement, and an omitted write is legitimately
//! ordered before a same-epoch commit that returned earlier. Strictness with acknowledgement
//! times is checked in `tests/nwr.rs` (`strict_serializable_with_group_commit_acknowledgements`).

use std::sync::Arc;
use std::time::Duration;
use txlab_check::MemoryRecorder;
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::{AckMode, Error, Schema};
use txlab_nwr::NwrMutation;
use txlab_testkit::{Expect, Hermitage, Protocol};
use txlab_tictoc::{Mutation, TicTocConfig, TicTocNwr};
use txlab_tictoc::{Nwr, TicToc};

fn config() -> TicTocConfig {
    TicTocConfig::manual().with_ack(AckMode::EpochStable)
}

struct TicTocNwrKit;

impl Protocol for TicTocNwrKit {
    type Engine = TicTocNwr<MemoryRecorder>;
    const NAME: &'static str = "tictoc-nwr";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        TicToc::builder()
            .nwr(Nwr)
            .config(config())
            .recorder(recorder)
            .build(schema)
    }

    fn expect(test: Hermitage) -> Expect {
        expect(test)
    }
}

/// TicToc+NWR never aborts by itself (a declined omission hands over to TicToc), so it aborts
/// what TicToc aborts, except where an omission keeps a later reader's snapshot intact:
///
/// - G0: T0 installs its blind writes of x and y (the epoch's first versions); T1's blind writes
///   of both are omitted (ordered before T0's). No aborts, as in TicToc.
/// - OTV: T0 installs x=11, y=19; T1's blind writes x=12, y=18 are *omitted*, so T2, which read
///   x=11 before T1 committed, still reads y=19 and commits. TicToc aborts T2; TicToc+NWR aborts
///   nobody.
/// - G2: scans are never omitted; T0 commits with its own insert, T1 aborts because T0's first
///   write of a new key in T1's scanned stripe was announced, exactly as in TicToc
///   (`txlab_tictoc::stripe_clock`).
/// - Every other schedule: the aborted transaction read a version a *visible* commit replaced
///   before it could extend the read's rts (read-modify-writes, or the first blind write of a key
///   in the epoch, which is never omitted), exactly as in TicToc.
fn expect(test: Hermitage) -> Expect {
    match test {
        Hermitage::G0 | Hermitage::G1a | Hermitage::Otv => Expect::NoConflicts,
        Hermitage::G1b
        | Hermitage::G1c
        | Hermitage::PmpWrite
        | Hermitage::P4
        | Hermitage::G2Item
        | Hermitage::G2 => Expect::Aborts(&[1]),
        Hermitage::Pmp | Hermitage::GSingle => Expect::Aborts(&[0]),
        _ => Expect::Serializable,
    }
}

txlab_testkit::protocol_kit!(TicTocNwrKit);

/// The scan-miss rule, the same schedule for every NWR engine (`txlab_testkit::nwr`).
#[test]
fn nwr_scan_miss_blocks_omission() {
    txlab_testkit::nwr::scan_miss_blocks_omission::<TicTocNwrKit>();
}

/// TicToc+NWR with a background epoch every millisecond, so stress runs cross many epoch
/// boundaries (pivot objects reset, first blind writes of an epoch installed again, rts
/// extensions into a new epoch's range shifting wts).
struct TicTocNwrTimed;

impl Protocol for TicTocNwrTimed {
    type Engine = TicTocNwr<MemoryRecorder>;
    const NAME: &'static str = "tictoc-nwr-1ms-epochs";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = config().with_epoch(EpochConfig::every(Duration::from_millis(1))?);
        TicToc::builder()
            .nwr(Nwr)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

// YCSB, read-mostly YCSB-B and hot blind writes with epochs advancing underneath
// (`txlab_testkit::nwr_epoch_stress`).
txlab_testkit::nwr_epoch_stress!(TicTocNwrTimed);

macro_rules! mutant {
    ($name:ident, $test:ident, $mutation:expr) => {
        struct $name;
        impl Protocol for $name {
            type Engine = TicTocNwr<MemoryRecorder>;
            const NAME: &'static str = stringify!($name);
            const STRICT: bool = false;
            fn build(
                schema: &Schema,
                recorder: Arc<MemoryRecorder>,
            ) -> Result<Self::Engine, Error> {
                TicToc::builder()
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
    txlab_testkit::nwr::omits_on_every_index_kind::<TicTocNwrKit>(|db, t, k| db.pivot_word(t, k));
}

/// Which pre-epoch reads leave a mark in mRS, the same schedules for every NWR engine
/// (`txlab_testkit::nwr`).
#[test]
fn nwr_pre_epoch_readers_and_marks() {
    txlab_testkit::nwr::pre_epoch_readers_and_marks::<TicTocNwrKit>();
}

/// Check (4)'s read marks are written once per record and epoch, and again in the next epoch
/// (`txlab_testkit::nwr::read_marks_are_written_once_per_record_and_epoch`).
#[test]
fn nwr_read_marks_are_written_once_per_record_and_epoch() {
    txlab_testkit::nwr::read_marks_are_written_once_per_record_and_epoch::<TicTocNwrKit>(|db| {
        db.epochs().advance()
    });
}

/// Omission across a key's delete, retirement and reinsert, on keyed tables, whose pivot objects
/// go with their records (`txlab_testkit::nwr::omits_after_retire_and_reinsert`).
#[test]
fn nwr_omits_after_retire_and_reinsert() {
    txlab_testkit::nwr::omits_after_retire_and_reinsert::<TicTocNwrKit>(
        &txlab_testkit::nwr::NwrRetireProbe {
            advance: &|db| db.epochs().advance(),
            is_mapped: &|db, t, k| db.is_mapped(t, k).expect("known table"),
            pivot_word: &|db, t, k| db.pivot_word(t, k),
        },
    );
}
