//! Every run of the pipeline ends: the extreme corners of batch size, concurrency and table size
//! in every mode, with a drain bound short enough that transactions are abandoned where they
//! would otherwise restart without end, and the recorded history still serializable.

use std::sync::Arc;
use std::sync::mpsc::channel;
use std::time::Duration;
use txlab_batch::pipeline::config::{MAX_BATCH_SIZE, MAX_CONCURRENCY};
use txlab_batch::pipeline::{Mode, Pipeline, PipelineConfig, RunLimit, RunStats};
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_workload::{Workload, Ycsb, YcsbConfig, YcsbPreset};

/// How long a corner may take before the test calls it a hang (far beyond its 50 ms run and
/// 100 ms drain: a hang, not a slow machine).
const HANG: Duration = Duration::from_secs(300);

fn ycsb(records: u64) -> Ycsb {
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.records = records;
    cfg.ops_per_txn = 4.min(records as usize);
    cfg.payload_bytes = 8;
    cfg.theta = 0.99;
    Ycsb::new(cfg).unwrap()
}

/// Runs one corner on its own thread for 50 ms (drain bound 100 ms); fails if it has not ended
/// after [`HANG`]. Checks the history and the workload after the run.
fn corner(mode: Mode, records: u64, batch: usize, concurrency: usize) -> RunStats {
    let label = format!(
        "{} records={records} batch={batch} concurrency={concurrency}",
        mode.name()
    );
    let (done, ended) = channel();
    let l = label.clone();
    std::thread::spawn(move || {
        let w = ycsb(records);
        let rec = Arc::new(MemoryRecorder::new());
        let cfg = PipelineConfig::default()
            .with_mode(mode)
            .with_batch_size(batch)
            .with_concurrency(concurrency)
            .with_threads(2, 2, 2, 1)
            .with_drain(Duration::from_millis(100));
        let db = Pipeline::builder()
            .config(cfg)
            .recorder(rec.clone())
            .build(&w.schema())
            .unwrap();
        w.load(&db).unwrap();
        let stats = db
            .run(&w, RunLimit::Duration(Duration::from_millis(50)), 5)
            .unwrap();
        w.check(&db).unwrap_or_else(|e| panic!("{l}: {e}"));
        drop(db);
        let report = check(&rec.take(), CheckOptions::serializable());
        assert!(report.is_serializable(), "{l}: {report}");
        let _ = done.send(stats);
    });
    let stats = ended
        .recv_timeout(HANG)
        .unwrap_or_else(|e| panic!("{label}: did not end within {HANG:?} ({e})"));
    assert!(
        stats.committed + stats.user_aborts + stats.abandoned > 0,
        "{label}: transactions ran and finished"
    );
    stats
}

#[test]
fn runs_at_the_extreme_corners_end_and_stay_serializable() {
    for mode in Mode::ALL {
        for records in [1, 100_000] {
            for batch in [1, MAX_BATCH_SIZE] {
                corner(mode, records, batch, 2);
            }
        }
    }
}

#[test]
fn the_largest_concurrency_on_a_tiny_table_abandons_instead_of_restarting_forever() {
    // 2^20 live transactions on 10 keys: all but a handful abort in every round, so the drain
    // can only end by abandoning them. One mode without and one with validator batching.
    for mode in [Mode::Base, Mode::Batch] {
        let stats = corner(mode, 10, MAX_BATCH_SIZE, MAX_CONCURRENCY);
        assert!(
            stats.abandoned > 0,
            "{}: {} committed, {} abandoned",
            mode.name(),
            stats.committed,
            stats.abandoned
        );
    }
}
