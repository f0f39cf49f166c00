//! TicToc's commit path under shuttle (see `txlab_testkit::shuttle_check`).
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-tictoc --test shuttle --target-dir target/shuttle
//! ```
#![cfg(txlab_shuttle)]

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_testkit::{Protocol, shuttle_check};
use txlab_tictoc::{TicToc, TicTocConfig};

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
