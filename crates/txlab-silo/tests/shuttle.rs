//! Silo's commit path under shuttle (see `txlab_testkit::shuttle_check`), and the
//! skipped-write-lock mutant, which only a precise interleaving of two commits exposes.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-silo --test shuttle --target-dir target/shuttle
//! ```
//! (`RUSTFLAGS` replaces `.cargo/config.toml`'s flags, hence the repeated target CPU.)
#![cfg(txlab_shuttle)]

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_silo::{Mutation, Silo, SiloConfig};
use txlab_testkit::{Protocol, shuttle_check};

struct SiloShuttle;

impl Protocol for SiloShuttle {
    type Engine = Silo<MemoryRecorder>;
    const NAME: &'static str = "silo";
    const STRICT: bool = true;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Silo::with_recorder(schema, SiloConfig::manual(), recorder)
    }
}

struct SiloSkipWriteLock;

impl Protocol for SiloSkipWriteLock {
    type Engine = Silo<MemoryRecorder>;
    const NAME: &'static str = "silo-skip-write-lock";
    const STRICT: bool = true;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Silo::with_recorder(
            schema,
            SiloConfig::manual().with_mutation(Mutation::SkipWriteLock),
            recorder,
        )
    }
}

#[test]
fn silo_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run::<SiloShuttle>(2_000);
}

#[test]
fn shuttle_finds_the_race_when_write_locks_are_skipped() {
    assert!(shuttle_check::finds_violation::<SiloSkipWriteLock>(20, 500));
}
