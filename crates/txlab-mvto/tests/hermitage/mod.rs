//! Plain MVTO's Hermitage outcomes, shared by `kit.rs` (MVTO) and `kit_nwr_single.rs`
//! (`mvto-nwr-single`, whose rule changes none of them: every transaction these schedules abort
//! is a read-modify-write, writes two items, scans, or is a blind write with no committed version
//! above it to sit under).

use txlab_testkit::{Expect, Hermitage};

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
