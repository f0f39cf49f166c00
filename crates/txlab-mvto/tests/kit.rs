//! MVTO in the shared correctness kit: Hermitage schedules, random schedules, threaded stress,
//! and a mutant the kit must catch.
//!
//! Histories are held to serializability (`STRICT = false`): the kit builds engines with
//! `AckMode::AtCommit`, under which MVTO's timestamp order need not follow real time (a younger
//! worker's clock may lag); strict serializability needs `AckMode::EpochStable` (see
//! `docs/protocols/mvto.md`).

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_mvto::{Mutation, Mvto, MvtoConfig};
use txlab_testkit::{Expect, Hermitage, Protocol};

struct MvtoKit;

impl Protocol for MvtoKit {
    type Engine = Mvto<MemoryRecorder>;
    const NAME: &'static str = "mvto";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Mvto::with_recorder(schema, MvtoConfig::manual(), recorder)
    }

    /// Transactions begin in index order, so T0 has the smallest timestamp. Where Silo aborts the
    /// later reader, MVTO aborts the *older* writer whose write would land under a younger read
    /// (`WriteTooLate`); a reader with an old timestamp simply reads the old version.
    fn expect(test: Hermitage) -> Expect {
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
}

txlab_testkit::protocol_kit!(MvtoKit);

struct MvtoSkipWriteTooLate;

impl Protocol for MvtoSkipWriteTooLate {
    type Engine = Mvto<MemoryRecorder>;
    const NAME: &'static str = "mvto-skip-write-too-late";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = MvtoConfig::manual().with_mutation(Mutation::SkipWriteTooLate);
        Mvto::with_recorder(schema, cfg, recorder)
    }
}

#[test]
fn kit_catches_a_skipped_write_too_late_check() {
    txlab_testkit::mutation::assert_caught::<MvtoSkipWriteTooLate>();
}
