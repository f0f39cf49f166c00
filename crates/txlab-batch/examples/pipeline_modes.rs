//! Measures the pipeline modes against skew on the micro benchmark (Ding, Kot, Gehrke, VLDB 2018,
//! §5.3: 100K keys, 5 reads and 5 writes per transaction, one key shared, concurrency 300, batch
//! 40), and thread-aware batching over Silo on contended YCSB (§5.6). Prints markdown tables.
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo run --release -p txlab-batch --example pipeline_modes -- [seconds per point] [threads]
//! ```

use std::time::Duration;
use txlab_batch::pipeline::{Mode, Pipeline, PipelineConfig, RunLimit};
use txlab_batch::thread_aware::{Assignment, ThreadAware, ThreadAwareConfig};
use txlab_core::Error;
use txlab_silo::{Silo, SiloConfig};
use txlab_workload::{Micro, MicroConfig, Workload, Ycsb, YcsbConfig, YcsbPreset};

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let threads: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2);
    let duration = Duration::from_secs_f64(seconds);

    println!(
        "| theta | mode | commits/s | aborts/commit | avg latency µs | p95 latency µs | reorder txns/s (1 worker busy) | commit rate/s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for theta in [0.5, 0.7, 0.8, 0.9, 0.99] {
        let micro = Micro::new(MicroConfig {
            theta,
            ..MicroConfig::default()
        })?;
        for mode in Mode::ALL {
            let cfg = PipelineConfig::default().with_mode(mode);
            let db = Pipeline::new(&micro.schema(), cfg)?;
            micro.load(&db)?;
            let s = db.run(&micro, RunLimit::Duration(duration), 42)?;
            let reorder = s
                .reorder_rate()
                .map_or("-".to_string(), |r| format!("{r:.0}"));
            println!(
                "| {theta} | {} | {:.0} | {:.3} | {:.0} | {} | {reorder} | {:.0} |",
                s.mode,
                s.throughput(),
                s.abort_rate(),
                s.mean_latency_us(),
                s.latency_percentile_us(95.0),
                s.throughput(),
            );
        }
    }

    println!();
    println!(
        "| YCSB theta | assignment | threads | commits/s | conflicts/commit | p95 latency µs |"
    );
    println!("|---|---|---|---|---|---|");
    for theta in [0.8, 0.99] {
        let mut cfg = YcsbConfig::preset(YcsbPreset::A);
        cfg.records = 100_000;
        cfg.ops_per_txn = 16;
        cfg.read_ratio = 0.5;
        cfg.rmw_ratio = 1.0;
        cfg.payload_bytes = 100;
        cfg.theta = theta;
        let ycsb = Ycsb::new(cfg)?;
        for assignment in [Assignment::RoundRobin, Assignment::ThreadAware] {
            let silo = Silo::new(&ycsb.schema(), SiloConfig::default())?;
            ycsb.load(&silo)?;
            let ta = ThreadAware::new(
                silo,
                ThreadAwareConfig::new(threads).with_assignment(assignment),
            )?;
            let s = ta.run(&ycsb, RunLimit::Duration(duration), 42)?;
            println!(
                "| {theta} | {assignment:?} | {threads} | {:.0} | {:.3} | {} |",
                s.throughput(),
                s.conflicts as f64 / s.committed.max(1) as f64,
                s.latency_us.value_at_percentile(95.0),
            );
        }
    }
    Ok(())
}
