//! Replays every committed seed of every target's corpus (`fuzz/corpus/<target>/`) through the
//! target body: the regression test CI runs on the stable toolchain.

use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_file() {
            body(&std::fs::read(&path).unwrap());
            n += 1;
        }
    }
    assert!(n > 0, "no seeds in {}", dir.display());
}

#[test]
fn checker_corpus() {
    replay("checker", txlab_fuzz::checker);
}

#[test]
fn workload_config_corpus() {
    replay("workload_config", txlab_fuzz::workload_config);
}

#[test]
fn silo_schedule_corpus() {
    replay(
        "silo_schedule",
        txlab_fuzz::schedule::<txlab_fuzz::SiloTarget>,
    );
}

#[test]
fn tictoc_schedule_corpus() {
    replay(
        "tictoc_schedule",
        txlab_fuzz::schedule::<txlab_fuzz::TicTocTarget>,
    );
}

#[test]
fn cli_args_corpus() {
    replay("cli_args", txlab_fuzz::cli_args);
}

#[test]
fn mvto_schedule_corpus() {
    replay(
        "mvto_schedule",
        txlab_fuzz::schedule::<txlab_fuzz::MvtoTarget>,
    );
}

#[test]
fn silo_nwr_schedule_corpus() {
    replay(
        "silo_nwr_schedule",
        txlab_fuzz::schedule::<txlab_fuzz::SiloNwrTarget>,
    );
}

/// The single-write rule has no corpus of its own: it replays Silo+NWR's schedules.
#[test]
fn silo_nwr_single_schedule_corpus() {
    replay(
        "silo_nwr_schedule",
        txlab_fuzz::schedule::<txlab_fuzz::SiloNwrSingleTarget>,
    );
}

#[test]
fn tictoc_nwr_schedule_corpus() {
    replay(
        "tictoc_nwr_schedule",
        txlab_fuzz::schedule::<txlab_fuzz::TicTocNwrTarget>,
    );
}

/// The single-write rule has no corpus of its own: it replays TicToc+NWR's schedules.
#[test]
fn tictoc_nwr_single_schedule_corpus() {
    replay(
        "tictoc_nwr_schedule",
        txlab_fuzz::schedule::<txlab_fuzz::TicTocNwrSingleTarget>,
    );
}

#[test]
fn mvto_nwr_schedule_corpus() {
    replay(
        "mvto_nwr_schedule",
        txlab_fuzz::schedule::<txlab_fuzz::MvtoNwrTarget>,
    );
}

/// The single-write rule has no corpus of its own: it replays MVTO+NWR's schedules.
#[test]
fn mvto_nwr_single_schedule_corpus() {
    replay(
        "mvto_nwr_schedule",
        txlab_fuzz::schedule::<txlab_fuzz::MvtoNwrSingleTarget>,
    );
}

#[test]
fn net_frame_corpus() {
    replay("net_frame", txlab_fuzz::net_frame);
}
