//! Silo's and Silo+NWR's commit paths under shuttle (see `txlab_testkit::shuttle_check`), and the
//! skipped-write-lock mutant, which only a precise interleaving of two commits exposes.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-silo --test shuttle --target-dir target/shuttle
//! ```
//! (`RUSTFLAGS` replaces `.cargo/config.toml`'s flags, hence the repeated target CPU.)
//!
//! Under shuttle the pivot object's 128-bit atomic is `portable_atomic`'s (not instrumented), so
//! shuttle interleaves Silo+NWR's TID-word, lock and epoch accesses, not its pivot-object CASes.
#![cfg(txlab_shuttle)]

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{AckMode, Error, Schema};
use txlab_nwr::NwrMutation;
use txlab_silo::{Mutation, Nwr, NwrSingleWrite, Silo, SiloConfig, SiloNwr, SiloNwrSingle};
use txlab_testkit::{Protocol, shuttle_check};

struct SiloShuttle;

impl Protocol for SiloShuttle {
    type Engine = Silo<MemoryRecorder>;
    const NAME: &'static str = "silo";
    const STRICT: bool = true;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Silo::builder()
            .config(SiloConfig::manual())
            .recorder(recorder)
            .build(schema)
    }
}

struct SiloSkipWriteLock;

impl Protocol for SiloSkipWriteLock {
    type Engine = Silo<MemoryRecorder>;
    const NAME: &'static str = "silo-skip-write-lock";
    const STRICT: bool = true;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Silo::builder()
            .config(SiloConfig::manual().with_mutation(Mutation::SkipWriteLock))
            .recorder(recorder)
            .build(schema)
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

struct SiloNwrShuttle;

impl Protocol for SiloNwrShuttle {
    type Engine = SiloNwr<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = SiloConfig::manual().with_ack(AckMode::EpochStable);
        Silo::builder()
            .nwr(Nwr)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

/// The generic scenario, then same-epoch blind writes: asserts some schedules omit writes.
#[test]
fn silo_nwr_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr::<SiloNwrShuttle>(2_000);
}

/// The NWR floor can fail: plain Silo never omits a write.
#[test]
#[should_panic(expected = "barely exercised")]
fn run_nwr_fails_on_a_protocol_that_never_omits() {
    shuttle_check::run_nwr::<SiloShuttle>(50);
}

/// Silo+NWR with single-write omitters (`silo-nwr-single`), optionally with a mutation.
fn silo_nwr_single(
    schema: &Schema,
    recorder: Arc<MemoryRecorder>,
    mutation: Option<Mutation>,
) -> Result<SiloNwrSingle<MemoryRecorder>, Error> {
    let mut cfg = SiloConfig::manual().with_ack(AckMode::EpochStable);
    if let Some(m) = mutation {
        cfg = cfg.with_mutation(m);
    }
    Silo::builder()
        .nwr(NwrSingleWrite)
        .config(cfg)
        .recorder(recorder)
        .build(schema)
}

struct SiloNwrSingleShuttle;

impl Protocol for SiloNwrSingleShuttle {
    type Engine = SiloNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-single";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        silo_nwr_single(schema, recorder, None)
    }
}

struct SiloNwrSingleReadsBeforePivot;

impl Protocol for SiloNwrSingleReadsBeforePivot {
    type Engine = SiloNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-single-reads-before-pivot";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        silo_nwr_single(
            schema,
            recorder,
            Some(Mutation::Nwr(NwrMutation::ValidateReadsBeforePivot)),
        )
    }
}

/// The generic scenario, then the single-write scenario (an omitter whose read is overwritten by
/// a reader of the item it writes): serializable, and some schedules omit.
#[test]
fn silo_nwr_single_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr_single_write::<SiloNwrSingleShuttle>(2_000);
}

/// The check order matters: validating the omitter's reads before observing the pivot lets the
/// single-write scenario close `O -rw(z)-> Y -rw(y)-> O`, and shuttle finds it.
#[test]
fn shuttle_finds_the_cycle_when_reads_are_validated_before_the_pivot_is_seen() {
    assert!(shuttle_check::finds_nwr_single_write_violation::<
        SiloNwrSingleReadsBeforePivot,
    >(20, 500));
}
