//! Mvto's commit path under shuttle (see `txlab_testkit::shuttle_check`).
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-mvto --test shuttle --target-dir target/shuttle
//! ```
#![cfg(txlab_shuttle)]

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_mvto::{Mvto, MvtoConfig};
use txlab_testkit::{Protocol, shuttle_check};

struct Shuttle;

impl Protocol for Shuttle {
    type Engine = Mvto<MemoryRecorder>;
    const NAME: &'static str = "mvto";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Mvto::with_recorder(schema, MvtoConfig::manual(), recorder)
    }
}

#[test]
fn mvto_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run::<Shuttle>(2_000);
}
