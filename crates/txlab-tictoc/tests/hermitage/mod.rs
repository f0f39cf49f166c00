//! Plain TicToc's outcomes on the Hermitage schedules, shared by the kits whose engines abort
//! what TicToc aborts there (`kit.rs`, and `kit_nwr_single.rs`: the single-write rule never
//! omits the two-item writers of G0 and OTV, the schedules where `tictoc-nwr` differs).

use txlab_testkit::{Expect, Hermitage};

/// What TicToc does on `test` (`txlab_testkit::Protocol::expect`).
pub fn tictoc(test: Hermitage) -> Expect {
    // Same outcomes as Silo on these schedules except G2: in each, the transaction that aborts
    // read a version that was overwritten before it could extend the read's rts past a writer, or
    // scanned a range in which another transaction announced the first write of a new key at
    // commit (`txlab_tictoc::stripe_clock`). In G2 (T0 scan, T1 scan, T0 insert, T1 insert, T0
    // commit, T1 commit) only T0's own first write touched its stripe when it commits, so T0
    // commits and T1, whose scan T0's announce invalidated, aborts; Silo's physical stripe check
    // aborts both, because linking each insert's absent record already counts as a change.
    match test {
        Hermitage::G0 | Hermitage::G1a => Expect::NoConflicts,
        Hermitage::G1b
        | Hermitage::G1c
        | Hermitage::PmpWrite
        | Hermitage::P4
        | Hermitage::G2Item
        | Hermitage::G2 => Expect::Aborts(&[1]),
        Hermitage::Otv => Expect::Aborts(&[2]),
        Hermitage::Pmp | Hermitage::GSingle => Expect::Aborts(&[0]),
        _ => Expect::Serializable,
    }
}
