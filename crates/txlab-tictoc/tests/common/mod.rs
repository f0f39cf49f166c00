//! The TicToc family in the kit: its hooks (`txlab_testkit::family`), which build every kit
//! protocol of a TicToc engine, and plain TicToc's Hermitage outcomes, which the NWR variants'
//! follow.

#![allow(dead_code, reason = "each test binary uses a part")]

use txlab_testkit::{Expect, Hermitage};
use txlab_tictoc::{Mutation, TicToc};

// TicToc serializes in commit-timestamp order, which may invert real time (a transaction that
// finished earlier can be ordered later); its histories are serializable, not strictly.
txlab_testkit::family_hooks!(
    TicTocHooks: TicToc,
    names = ["tictoc", "tictoc-nwr", "tictoc-nwr-single"],
    strict = false,
    expect = tictoc,
    nwr_mutation = Mutation::Nwr,
);

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
