//! # txlab-testkit
//!
//! The correctness kit every txlab protocol runs, written once and instantiated per protocol:
//!
//! ```ignore
//! struct SiloKit;
//! impl txlab_testkit::Protocol for SiloKit { /* build an engine with a recorder; expectations */ }
//! txlab_testkit::protocol_kit!(SiloKit);
//! ```
//!
//! The macro expands to one `#[test]` per check:
//!
//! - [`hermitage`]: the anomaly schedules of Kleppmann's Hermitage suite (G0, G1a, G1b, G1c, OTV,
//!   PMP, PMP-write, P4, G-single, G2-item, G2), replayed deterministically from one thread. Each
//!   protocol states per schedule which transactions it aborts ([`Expect`]); the kit asserts
//!   that, that no read returned a value it must not see, and that the recorded history passes
//!   the checker.
//! - [`schedule`]: proptest-generated interleavings of 2–8 transactions over 1–6 keys (reads,
//!   blind writes, read-modify-writes, inserts, deletes, scans), replayed from one thread, every
//!   history checked; failures shrink to a minimal schedule. 2,000 cases by default,
//!   `TXLAB_PROPTEST_CASES=N` for more.
//! - [`phantom`]: a blind write of a key the same transaction's scan found missing, raced by
//!   another writer of that key (a schedule the random ones reach too rarely); a phantom inside a
//!   partitioned table's scanned partition, which must be stopped, and inserts and deletes in
//!   other partitions, which must not abort the scan.
//! - [`stress`]: real threads (2 and 4) on contended YCSB (theta 0.99 over 10 and 1,000 keys) and
//!   SmallBank (balance conservation), histories checked. Bounded by transaction count.
//! - [`mutation`]: the same checks, run against a deliberately broken build of the protocol, must
//!   find a violation (a suite that cannot fail proves nothing).
//! - [`retire`]: threaded churn of deletes and re-inserts for engines that unlink tombstones, with
//!   the history checked and the retirements counted.
//! - [`semantics`]: one-thread schedules of the transaction interface (read-your-writes, aborts,
//!   stale reads, lost updates, write skew, inserts and deletes, scans, phantoms, bad input,
//!   retries), instantiated per engine by [`semantics_kit!`], every history checked.
//! - [`family`]: an engine family of the OCC toolkit (Silo, TicToc, MVTO) as the kit's
//!   protocols, in every write-omission mode and configuration, from the family's [`family::Hooks`].
//! - [`nwr_kit`](mod@nwr_kit): the NWR engines' kit and step-by-step semantics, one body per test for every
//!   family ([`nwr_kit!`](macro@nwr_kit), [`nwr_single_kit!`], [`nwr_semantics!`]).
//! - [`builder`]: an engine family's builder builds each of its named variants and refuses bad
//!   input with a clear error.
//! - [`no_alloc`]: a warmed-up worker commits without allocating (a counting allocator).
//! - [`tid_rule`]: the versions a transaction writes follow every version it read (the commit
//!   timestamp rule serializability alone does not see).
//! - `distributed` (only with the `distributed` feature): the kit of the distributed protocols of
//!   `txlab-rococo`, and random transaction profiles that run on their servers.
//! - `shuttle_check` (only with `--cfg txlab_shuttle`): the real threaded commit path under
//!   shuttle's randomized scheduler, which can preempt between any two atomic operations.
//!
//! Histories are checked for strict serializability when [`Protocol::STRICT`] is set, for
//! serializability otherwise.

#![warn(missing_docs)]

pub mod builder;
pub mod deterministic;
#[cfg(feature = "distributed")]
pub mod distributed;
#[cfg(not(txlab_loom))]
pub mod family;
pub mod hermitage;
pub mod mutation;
pub mod no_alloc;
pub mod nwr;
#[cfg(not(txlab_loom))]
pub mod nwr_kit;
pub mod phantom;
pub mod replay;
pub mod retire;
pub mod schedule;
pub mod semantics;
#[cfg(txlab_shuttle)]
pub mod shuttle_check;
pub mod stress;
pub mod tid_rule;

pub use hermitage::{Expect, Hermitage};
pub use replay::{Op, Replay, Schedule, Step, TxnState};

use std::sync::Arc;
use txlab_check::{CheckOptions, MemoryRecorder};
use txlab_core::{Engine, Error, Schema};

/// A protocol under test: how to build it with a recorder, and what it is expected to do.
pub trait Protocol {
    /// The engine type, recording into a [`MemoryRecorder`].
    type Engine: Engine;

    /// The protocol's name (for messages).
    const NAME: &'static str;

    /// Whether histories must be strictly serializable (real-time order respected), not only
    /// serializable.
    const STRICT: bool;

    /// Builds an engine over `schema` recording into `recorder`. Use manual epochs (no background
    /// thread) so replays are deterministic.
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error>;

    /// What the protocol does on a Hermitage schedule. Default: anything serializable.
    fn expect(_test: Hermitage) -> Expect {
        Expect::Serializable
    }
}

/// The checker options a protocol's histories are held to.
pub fn check_options<P: Protocol>() -> CheckOptions {
    if P::STRICT {
        CheckOptions::strict()
    } else {
        CheckOptions::serializable()
    }
}

/// Instantiates the whole kit for a [`Protocol`] as `#[test]` functions in a module `kit`.
#[macro_export]
macro_rules! protocol_kit {
    ($proto:ty) => {
        mod kit {
            use super::*;
            use $crate::hermitage::Hermitage;

            #[test]
            fn hermitage_g0() {
                $crate::hermitage::run::<$proto>(Hermitage::G0);
            }
            #[test]
            fn hermitage_g1a() {
                $crate::hermitage::run::<$proto>(Hermitage::G1a);
            }
            #[test]
            fn hermitage_g1b() {
                $crate::hermitage::run::<$proto>(Hermitage::G1b);
            }
            #[test]
            fn hermitage_g1c() {
                $crate::hermitage::run::<$proto>(Hermitage::G1c);
            }
            #[test]
            fn hermitage_otv() {
                $crate::hermitage::run::<$proto>(Hermitage::Otv);
            }
            #[test]
            fn hermitage_pmp() {
                $crate::hermitage::run::<$proto>(Hermitage::Pmp);
            }
            #[test]
            fn hermitage_pmp_write() {
                $crate::hermitage::run::<$proto>(Hermitage::PmpWrite);
            }
            #[test]
            fn hermitage_p4() {
                $crate::hermitage::run::<$proto>(Hermitage::P4);
            }
            #[test]
            fn hermitage_g_single() {
                $crate::hermitage::run::<$proto>(Hermitage::GSingle);
            }
            #[test]
            fn hermitage_g2_item() {
                $crate::hermitage::run::<$proto>(Hermitage::G2Item);
            }
            #[test]
            fn hermitage_g2() {
                $crate::hermitage::run::<$proto>(Hermitage::G2);
            }

            #[test]
            fn random_schedules_are_serializable() {
                $crate::schedule::run::<$proto>();
            }
            #[test]
            fn stress_ycsb_hot_10_keys() {
                $crate::stress::ycsb::<$proto>(&[2, 4], 10, 0.99, 1_500);
            }
            #[test]
            fn stress_ycsb_1000_keys() {
                $crate::stress::ycsb::<$proto>(&[2, 4], 1_000, 0.99, 1_500);
            }
            #[test]
            fn stress_smallbank_conserves_money() {
                $crate::stress::smallbank::<$proto>(&[2, 4], 1_500);
            }
            #[test]
            fn phantom_blind_write_after_scan_miss() {
                $crate::phantom::blind_write_after_scan_miss::<$proto>();
            }
            #[test]
            fn phantom_write_before_the_creators_bump() {
                $crate::phantom::write_before_the_creators_bump::<$proto>();
            }
            #[test]
            fn phantom_insert_into_scanned_partition() {
                $crate::phantom::insert_into_scanned_partition::<$proto>();
            }
            #[test]
            fn no_phantom_from_other_partitions() {
                $crate::phantom::inserts_into_other_partitions::<$proto>();
            }
        }
    };
}

/// The epoch-crossing stress tests every NWR engine runs, for a protocol `P` whose engine advances
/// its epoch in the background (e.g. every millisecond), so the runs cross many epoch boundaries:
///
/// - `stress_ycsb_a_across_epochs`: YCSB (half reads, half writes, half of those
///   read-modify-writes), theta 0.99 over 10 and 1,000 keys, 2 and 4 threads;
/// - `stress_read_mostly_across_epochs`: read-mostly YCSB-B (95 % reads, blind writes), same
///   sizes: read-only transactions race omitted blind writes;
/// - `threaded_blind_write_stress_omits_and_stays_serializable`: blind writes on hot keys, reads
///   of keys nobody writes ([`nwr::threaded_blind_write_stress`]): writes must be omitted.
///
/// Every history is checked.
#[macro_export]
macro_rules! nwr_epoch_stress {
    ($proto:ty) => {
        #[test]
        fn stress_ycsb_a_across_epochs() {
            $crate::stress::ycsb::<$proto>(&[2, 4], 10, 0.99, 1_500);
            $crate::stress::ycsb::<$proto>(&[2, 4], 1_000, 0.99, 1_500);
        }

        #[test]
        fn stress_read_mostly_across_epochs() {
            $crate::stress::ycsb_read_mostly::<$proto>(&[2, 4], 10, 0.99, 1_500);
            $crate::stress::ycsb_read_mostly::<$proto>(&[2, 4], 1_000, 0.99, 1_500);
        }

        #[test]
        fn threaded_blind_write_stress_omits_and_stays_serializable() {
            $crate::nwr::threaded_blind_write_stress::<$proto>();
        }
    };
}
