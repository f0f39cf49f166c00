//! The MVTO family in the kit: its hooks (`txlab_testkit::family`), which build every kit
//! protocol of an MVTO engine, and plain MVTO's Hermitage outcomes, which the NWR variants'
//! follow.

#![allow(dead_code, reason = "each test binary uses a part")]

use txlab_mvto::{Mutation, Mvto, MvtoConfig, MvtoConfigExt};
use txlab_testkit::{Expect, Hermitage};

// MVTO's timestamp order need not follow commit-return order: serializable, not strictly.
txlab_testkit::family_hooks!(
    MvtoHooks: Mvto,
    names = ["mvto", "mvto-nwr", "mvto-nwr-single"],
    strict = false,
    expect = mvto,
    nwr_mutation = Mutation::Nwr,
    {
        /// MVTO gives a reader in the writer's epoch the version below its timestamp.
        const EPOCH_SCHEDULE_ADVANCES: bool = true;

        /// MVTO retires a tombstone only below its GC horizon: recomputed at every writing
        /// commit, so that the deleted key's tombstone falls below it within the test's two
        /// epochs.
        fn retiring(config: MvtoConfig) -> MvtoConfig {
            config.with_horizon_interval(1)
        }
    },
);

/// Transactions begin in index order, so T0 has the smallest timestamp. Where Silo aborts the
/// later reader, MVTO aborts the *older* writer whose write would land under a younger read
/// (`WriteTooLate`); a reader with an old timestamp simply reads the old version.
pub fn mvto(test: Hermitage) -> Expect {
    match test {
        Hermitage::G0 | Hermitage::G1a => Expect::NoConflicts,
        // T0's write of x would slip under T1's younger read of x.
        Hermitage::G1b
        | Hermitage::G1c
        | Hermitage::PmpWrite
        | Hermitage::P4
        | Hermitage::G2Item => Expect::Aborts(&[0]),
        // T2 (youngest) read x, seeing T0's version, before T1 (Hermitage's T2) committed:
        // T1's write of x lands under T2's younger read.
        Hermitage::Otv => Expect::Aborts(&[1]),
        // T0's second scan sees T1's insert at a younger timestamp: phantom stripes changed.
        Hermitage::Pmp => Expect::Aborts(&[0]),
        // T0 reads y at its (older) timestamp: the version before T1's write. Both commit,
        // serialized T0 before T1.
        Hermitage::GSingle => Expect::NoConflicts,
        // T0's insert lands under T1's younger scan; T1's scan stripes changed.
        Hermitage::G2 => Expect::Aborts(&[0, 1]),
        _ => Expect::Serializable,
    }
}
