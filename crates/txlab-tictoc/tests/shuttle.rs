//! TicToc's and TicToc+NWR's commit paths under shuttle (see `txlab_testkit::shuttle_check`), and
//! the skipped-write-lock mutant, which only a precise interleaving of two commits exposes.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-tictoc --test shuttle --target-dir target/shuttle
//! ```
//!
//! Under shuttle the pivot object's 128-bit atomic is `portable_atomic`'s (not instrumented), so
//! shuttle interleaves TicToc+NWR's timestamp-word and epoch accesses, not its pivot-object CASes.
#![cfg(txlab_shuttle)]

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{AckMode, Error, Schema};
use txlab_testkit::{Protocol, shuttle_check};
use txlab_tictoc::{Mutation, TicToc, TicTocConfig, TicTocNwr, TicTocNwrSingle};

struct Shuttle;

impl Protocol for Shuttle {
    type Engine = TicToc<MemoryRecorder>;
    const NAME: &'static str = "tictoc";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        TicToc::with_recorder(schema, TicTocConfig::manual(), recorder)
    }
}

#[test]
fn tictoc_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run::<Shuttle>(2_000);
}

struct SkipWriteLock;

impl Protocol for SkipWriteLock {
    type Engine = TicToc<MemoryRecorder>;
    const NAME: &'static str = "tictoc-skip-write-lock";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = TicTocConfig::manual().with_mutation(Mutation::SkipWriteLock);
        TicToc::with_recorder(schema, cfg, recorder)
    }
}

#[test]
fn shuttle_finds_the_race_when_write_locks_are_skipped() {
    assert!(shuttle_check::finds_violation::<SkipWriteLock>(20, 500));
}

struct ShuttleNwr;

impl Protocol for ShuttleNwr {
    type Engine = TicTocNwr<MemoryRecorder>;
    const NAME: &'static str = "tictoc-nwr";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = TicTocConfig::manual().with_ack(AckMode::EpochStable);
        TicTocNwr::nwr_with_recorder(schema, cfg, recorder)
    }
}

/// The generic scenario, then same-epoch blind writes: asserts some schedules omit writes.
#[test]
fn tictoc_nwr_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr::<ShuttleNwr>(2_000);
}

struct ShuttleNwrSingle;

impl Protocol for ShuttleNwrSingle {
    type Engine = TicTocNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "tictoc-nwr-single";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = TicTocConfig::manual().with_ack(AckMode::EpochStable);
        TicTocNwrSingle::nwr_single_with_recorder(schema, cfg, recorder)
    }
}

/// The generic scenario, then the single-write scenario (an omitter whose read is overwritten by
/// a reader of the item it writes): serializable, and some schedules omit.
#[test]
fn tictoc_nwr_single_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr_single_write::<ShuttleNwrSingle>(2_000);
}
