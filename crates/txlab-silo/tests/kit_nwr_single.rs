//! Silo+NWR with single-write omitters (`SiloNwrSingle`, engine `silo-nwr-single`) in the
//! correctness kit: Hermitage schedules, random schedules (reads, blind writes,
//! read-modify-writes, inserts, deletes and scans), threaded stress across epochs, the NWR
//! mutants, and the schedules that show which reads this rule marks.
//!
//! As in `kit_nwr.rs`: manual epochs and `AckMode::EpochStable`; histories checked for
//! serializability (strictness with acknowledgement times is `tests/nwr.rs`'s subject). The
//! check-order mutant needs a preemption inside a commit and is caught in `tests/shuttle.rs`.

use std::sync::Arc;
use std::time::Duration;
use txlab_check::MemoryRecorder;
use txlab_core::epoch::EpochConfig;
use txlab_core::{AckMode, Error, Schema};
use txlab_silo::{Mutation, SiloConfig, SiloNwrSingle};
use txlab_testkit::{Expect, Hermitage, Protocol};

fn config() -> SiloConfig {
    SiloConfig::manual().with_ack(AckMode::EpochStable)
}

struct SiloNwrSingleKit;

impl Protocol for SiloNwrSingleKit {
    type Engine = SiloNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-single";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        SiloNwrSingle::nwr_single_with_recorder(schema, config(), recorder)
    }

    /// Plain Silo's outcomes (`kit.rs`): the Hermitage schedules that NWR changes for
    /// `silo-nwr` (G0, OTV) omit transactions that write two items, which this rule never does.
    fn expect(test: Hermitage) -> Expect {
        match test {
            Hermitage::G0 | Hermitage::G1a => Expect::NoConflicts,
            Hermitage::G1b
            | Hermitage::G1c
            | Hermitage::PmpWrite
            | Hermitage::P4
            | Hermitage::G2Item => Expect::Aborts(&[1]),
            Hermitage::Otv => Expect::Aborts(&[2]),
            Hermitage::Pmp | Hermitage::GSingle => Expect::Aborts(&[0]),
            Hermitage::G2 => Expect::Aborts(&[0, 1]),
            _ => Expect::Serializable,
        }
    }
}

txlab_testkit::protocol_kit!(SiloNwrSingleKit);

/// Which reads leave a mark under this rule, and the scan-miss mark (`txlab_testkit::nwr`).
#[test]
fn nwr_single_write_marks() {
    txlab_testkit::nwr::single_write_marks::<SiloNwrSingleKit>();
}

/// A background epoch every millisecond, so stress runs cross many epoch boundaries.
struct SiloNwrSingleTimed;

impl Protocol for SiloNwrSingleTimed {
    type Engine = SiloNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-single-1ms-epochs";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = config().with_epoch(EpochConfig::every(Duration::from_millis(1))?);
        SiloNwrSingle::nwr_single_with_recorder(schema, cfg, recorder)
    }
}

/// YCSB (half reads, half writes of which half read-modify-writes), theta 0.99 over 10 and
/// 1,000 keys, 2 and 4 threads, epochs advancing underneath; every history checked.
#[test]
fn stress_ycsb_a_across_epochs() {
    txlab_testkit::stress::ycsb::<SiloNwrSingleTimed>(&[2, 4], 10, 0.99, 1_500);
    txlab_testkit::stress::ycsb::<SiloNwrSingleTimed>(&[2, 4], 1_000, 0.99, 1_500);
}

/// Read-mostly YCSB-B (95 % reads, blind writes): read-only transactions that mark nothing race
/// single blind writes that the rule omits; every history checked.
#[test]
fn stress_read_mostly_across_epochs() {
    txlab_testkit::stress::ycsb_read_mostly::<SiloNwrSingleTimed>(&[2, 4], 10, 0.99, 1_500);
    txlab_testkit::stress::ycsb_read_mostly::<SiloNwrSingleTimed>(&[2, 4], 1_000, 0.99, 1_500);
}

/// SmallBank (read-modify-writes of balances, audit ledger), epochs advancing underneath: the
/// invariants and the history checked.
#[test]
fn stress_smallbank_across_epochs() {
    txlab_testkit::stress::smallbank::<SiloNwrSingleTimed>(&[2, 4], 1_500);
}

macro_rules! mutant {
    ($name:ident, $test:ident, $mutation:expr) => {
        struct $name;
        impl Protocol for $name {
            type Engine = SiloNwrSingle<MemoryRecorder>;
            const NAME: &'static str = stringify!($name);
            const STRICT: bool = false;
            fn build(
                schema: &Schema,
                recorder: Arc<MemoryRecorder>,
            ) -> Result<Self::Engine, Error> {
                SiloNwrSingle::nwr_single_with_recorder(
                    schema,
                    config().with_mutation($mutation),
                    recorder,
                )
            }
        }
        #[test]
        fn $test() {
            txlab_testkit::mutation::assert_caught::<$name>();
        }
    };
}

mutant!(
    NwrSingleSkipEpochCheck,
    kit_catches_skipped_epoch_check,
    Mutation::NwrSkipEpochCheck
);
// Under this rule the mRS slot only holds the pivot writer's own read of the item (and scan
// misses), so the random schedules must find the lost update through a read-modify-write pivot.
mutant!(
    NwrSingleSkipMergedReadCheck,
    kit_catches_skipped_mrs_check,
    Mutation::NwrSkipMergedReadCheck
);

/// The engine reports its own name, and counts read-only commits as unmarked readers.
#[test]
fn engine_name_and_unmarked_read_only_commits() {
    use txlab_core::{Engine, TableId, TableSpec, Transaction, TxOps, Worker};
    let mut schema = Schema::new();
    schema.add(TableSpec::dense("t", 8, 4)).unwrap();
    let db = SiloNwrSingle::new_nwr_single(&schema, config()).unwrap();
    assert_eq!(db.name(), "silo-nwr-single");
    db.load(TableId(0), 1, &7u64.to_le_bytes()).unwrap();
    let mut w = db.worker().unwrap();
    for _ in 0..3 {
        let mut t = w.begin();
        assert!(t.read(TableId(0), 1).unwrap().is_some());
        t.commit().unwrap();
    }
    let mut unmarked = 0;
    w.drain_counters(&mut |name, n| {
        if name == "nwr_unmarked_readers" {
            unmarked += n;
        }
    });
    assert_eq!(unmarked, 3);
}
