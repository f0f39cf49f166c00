//! Mvto's commit path under shuttle (see `txlab_testkit::shuttle_check`), plain, with NWR, and with
//! single-write omitters.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-mvto --test shuttle --target-dir target/shuttle
//! ```
//!
//! Under shuttle the pivot object's 128-bit atomic is `portable_atomic`'s (not instrumented), so
//! shuttle interleaves MVTO+NWR's version-list and status accesses, not its pivot-object CASes.
#![cfg(txlab_shuttle)]

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{AckMode, Error, Schema};
use txlab_mvto::{Mvto, MvtoConfig, MvtoNwr, MvtoNwrSingle, Nwr, NwrSingleWrite};
use txlab_testkit::{Protocol, shuttle_check};

struct Shuttle;

impl Protocol for Shuttle {
    type Engine = Mvto<MemoryRecorder>;
    const NAME: &'static str = "mvto";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Mvto::builder()
            .config(MvtoConfig::manual())
            .recorder(recorder)
            .build(schema)
    }
}

#[test]
fn mvto_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run::<Shuttle>(2_000);
}

struct ShuttleNwr;

impl Protocol for ShuttleNwr {
    type Engine = MvtoNwr<MemoryRecorder>;
    const NAME: &'static str = "mvto-nwr";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = MvtoConfig::manual().with_ack(AckMode::EpochStable);
        Mvto::builder()
            .nwr(Nwr)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

/// The generic scenario, then same-epoch blind writes: asserts some schedules omit writes.
#[test]
fn mvto_nwr_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr::<ShuttleNwr>(2_000);
}

struct ShuttleNwrSingle;

impl Protocol for ShuttleNwrSingle {
    type Engine = MvtoNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "mvto-nwr-single";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = MvtoConfig::manual().with_ack(AckMode::EpochStable);
        Mvto::builder()
            .nwr(NwrSingleWrite)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

/// The generic scenario, then the single-write scenario (an omitter whose read is overwritten by
/// a transaction that read the omitted item): asserts some schedules omit writes.
#[test]
fn mvto_nwr_single_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr_single_write::<ShuttleNwrSingle>(2_000);
}
