//! The Silo family in the kit: its hooks (`txlab_testkit::family`), which build every kit
//! protocol of a Silo engine, and plain Silo's Hermitage outcomes, which the NWR variants'
//! follow.

#![allow(dead_code, reason = "each test binary uses a part")]

use txlab_silo::{Mutation, Silo};
use txlab_testkit::{Expect, Hermitage};

// Silo's serialization point (after locking, at the epoch read) lies between begin and the return
// of commit, so its histories are strictly serializable.
txlab_testkit::family_hooks!(
    SiloHooks: Silo,
    names = ["silo", "silo-nwr", "silo-nwr-single"],
    strict = true,
    expect = silo,
    nwr_mutation = Mutation::Nwr,
);

/// What Silo does on `test` (`txlab_testkit::Protocol::expect`).
pub fn silo(test: Hermitage) -> Expect {
    match test {
        // Blind writes never conflict; an aborted writer's value is never visible.
        Hermitage::G0 | Hermitage::G1a => Expect::NoConflicts,
        // The reader saw a value that changed before it committed.
        Hermitage::G1b
        | Hermitage::G1c
        | Hermitage::PmpWrite
        | Hermitage::P4
        | Hermitage::G2Item => Expect::Aborts(&[1]),
        // T3 read x from T1, then y from T2: its read of x is stale at commit.
        Hermitage::Otv => Expect::Aborts(&[2]),
        // T1's scan stripes changed (PMP) / its read of x changed (G-single).
        Hermitage::Pmp | Hermitage::GSingle => Expect::Aborts(&[0]),
        // Both inserts land in the stripe both scans covered; each insert publishes its absent
        // record during execution, so each scanner sees a bump that is not its own. Silo's
        // B-tree has the same effect (both keys in one leaf): a false abort, never a wrong
        // commit.
        Hermitage::G2 => Expect::Aborts(&[0, 1]),
        _ => Expect::Serializable,
    }
}
