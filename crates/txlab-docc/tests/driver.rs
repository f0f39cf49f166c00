//! Driven runs (the sequencer and epoch batches on real threads): the recorded input log
//! replays to the same state at any worker count, the serial execution of the log reaches it
//! too, and TPC-C's consistency conditions hold afterwards.

use std::time::Duration;
use txlab_check::digest::StateDigest;
use txlab_check::serial::SerialEngine;
use txlab_core::deterministic::Deterministic;
use txlab_core::{Engine, RunLimit};
use txlab_docc::{BatchConfig, Chain, Docc, DoccConfig, DriverConfig, InPlace, Layout, StandAlone};
use txlab_testkit::deterministic::{tpcc_small, ycsb_hot, ycsb_read_mostly_hot};
use txlab_workload::Workload;

fn config(workers: usize, prefetch: bool) -> DoccConfig {
    DoccConfig {
        workers,
        prefetch,
        batch: BatchConfig {
            epoch: Duration::from_micros(500),
            ..BatchConfig::default()
        },
        ..DoccConfig::default()
    }
}

fn driver() -> DriverConfig {
    DriverConfig {
        concurrency: 64,
        clients: 8,
        seed: 7,
        keep_log: true,
    }
}

/// Runs `workload` on `L` with 2 workers, replays the log on a fresh engine at 1 and 3 workers,
/// and executes its serial order on `SerialEngine`: all four states must be equal.
fn replays_to_the_same_state<L: Layout, W: Workload>(workload: &W, prefetch: bool)
where
    W::Program: Clone + Send + Sync,
{
    let schema = workload.schema();
    let engine = Docc::<L>::builder()
        .config(config(2, prefetch))
        .build(&schema)
        .unwrap();
    workload.load(&engine).unwrap();
    let (stats, log) = engine
        .run_logged(workload, RunLimit::Transactions(1_500), driver())
        .unwrap();
    let log = log.expect("kept");
    assert_eq!(stats.committed + stats.user_aborts, 1_500, "{stats:?}");
    assert_eq!(stats.errors, 0, "{:?}", stats.first_error);
    assert_eq!(log.len(), 1_500);
    assert!(stats.batches >= 2, "several epochs: {}", stats.batches);
    workload.check(&engine).unwrap();
    let digest = StateDigest::of(&engine).unwrap();
    for workers in [1, 3] {
        let again = Docc::<L>::builder()
            .config(config(workers, prefetch))
            .build(&schema)
            .unwrap();
        workload.load(&again).unwrap();
        again.replay(&log, workers).unwrap();
        assert_eq!(
            StateDigest::of(&again).unwrap(),
            digest,
            "replay at {workers} workers"
        );
    }
    let serial = SerialEngine::new(schema.clone());
    workload.load(&serial).unwrap();
    let order: Vec<W::Program> = log.serial_order().into_iter().cloned().collect();
    serial.execute_log(&order, 1).unwrap();
    assert_eq!(
        StateDigest::of_serial(&serial),
        digest,
        "serial execution of the log"
    );
}

#[test]
fn ycsb_runs_replay_to_the_same_state() {
    replays_to_the_same_state::<InPlace, _>(&ycsb_hot(), false);
    replays_to_the_same_state::<Chain, _>(&ycsb_hot(), false);
    replays_to_the_same_state::<Chain, _>(&ycsb_read_mostly_hot(), true);
}

#[test]
fn tpcc_runs_replay_to_the_same_state_and_stay_consistent() {
    replays_to_the_same_state::<InPlace, _>(&tpcc_small(), false);
    replays_to_the_same_state::<Chain, _>(&tpcc_small(), false);
    replays_to_the_same_state::<Chain, _>(&tpcc_small(), true);
}

#[test]
fn a_timed_run_ends_and_counts_every_kind() {
    let w = tpcc_small();
    let engine = Docc::<Chain>::builder()
        .config(config(2, true))
        .build(&w.schema())
        .unwrap();
    w.load(&engine).unwrap();
    let stats = engine
        .run(&w, RunLimit::Duration(Duration::from_millis(200)), driver())
        .unwrap();
    assert!(stats.committed > 0);
    assert!(
        stats.elapsed < Duration::from_secs(5),
        "bounded drain: {:?}",
        stats.elapsed
    );
    for kind in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        assert!(
            stats.by_kind.get(kind).is_some_and(|k| k.committed > 0),
            "{kind}: {stats:?}"
        );
    }
    assert!(stats.latency_percentile_us(50.0) >= 1);
    w.check(&engine).unwrap();
}

#[test]
fn bad_driver_input_is_refused_with_the_value_named() {
    let w = ycsb_hot();
    let engine = Docc::<InPlace>::builder()
        .config(config(1, false))
        .build(&w.schema())
        .unwrap();
    w.load(&engine).unwrap();
    let run = |d: DriverConfig, l: RunLimit| engine.run(&w, l, d).unwrap_err().to_string();
    let ok = RunLimit::Transactions(10);
    let e = run(
        DriverConfig {
            concurrency: 0,
            ..driver()
        },
        ok,
    );
    assert!(e.contains("concurrency = 0"), "{e}");
    let e = run(
        DriverConfig {
            concurrency: 4,
            clients: 5,
            ..driver()
        },
        ok,
    );
    assert!(e.contains("clients = 5"), "{e}");
    let e = run(driver(), RunLimit::Transactions(0));
    assert!(e.contains("transactions = 0"), "{e}");
    let worker = engine.worker().unwrap();
    let e = run(driver(), ok);
    assert!(e.contains("interactive workers"), "{e}");
    drop(worker);
    engine.run(&w, ok, driver()).unwrap();
}

mod calvin {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use txlab_core::{AccessSet, Program, Schema, TableId, TableSpec, TxOps, TxResult};
    use txlab_docc::calvin::{Calvin, CalvinConfig};

    fn calvin_config(workers: usize, lock_managers: usize) -> CalvinConfig {
        CalvinConfig {
            workers,
            lock_managers,
            batch: BatchConfig {
                epoch: Duration::from_micros(500),
                ..BatchConfig::default()
            },
            ..CalvinConfig::default()
        }
    }

    /// A driven Calvin run with reconnaissance restarts: the log (programs with predictions,
    /// restarts marked) replays to the same state, and the serial execution of its serial order
    /// reaches it too.
    fn replays_to_the_same_state<W: Workload>(workload: &W, lock_managers: usize) -> u64
    where
        W::Program: Clone + Send + Sync,
    {
        let schema = workload.schema();
        let engine = Calvin::builder()
            .config(calvin_config(2, lock_managers))
            .build(&schema)
            .unwrap();
        workload.load(&engine).unwrap();
        let (stats, log) = engine
            .run_logged(workload, RunLimit::Transactions(1_500), driver())
            .unwrap();
        let log = log.expect("kept");
        assert_eq!(stats.errors, 0, "{:?}", stats.first_error);
        assert_eq!(stats.committed + stats.user_aborts, 1_500, "{stats:?}");
        assert_eq!(log.len() as u64, 1_500 + stats.ollp_restarts);
        assert!(stats.lock_manager_utilization() > 0.0);
        workload.check(&engine).unwrap();
        let digest = StateDigest::of(&engine).unwrap();
        for workers in [1, 3] {
            let again = Calvin::builder()
                .config(calvin_config(workers, 1))
                .build(&schema)
                .unwrap();
            workload.load(&again).unwrap();
            let results = again.replay(&log, workers).unwrap();
            assert_eq!(
                StateDigest::of(&again).unwrap(),
                digest,
                "replay at {workers} workers"
            );
            // Exactly the entries that restarted in the run restart in the replay.
            let restarted = results
                .iter()
                .filter(|r| matches!(r, Err(txlab_core::TxError::Conflict(_))))
                .count() as u64;
            assert_eq!(restarted, stats.ollp_restarts);
        }
        let serial = SerialEngine::new(schema.clone());
        workload.load(&serial).unwrap();
        let order: Vec<_> = log.serial_order().into_iter().cloned().collect();
        serial.execute_log(&order, 1).unwrap();
        assert_eq!(
            StateDigest::of_serial(&serial),
            digest,
            "serial execution of the log"
        );
        stats.ollp_restarts
    }

    #[test]
    fn calvin_runs_replay_to_the_same_state() {
        replays_to_the_same_state(&ycsb_hot(), 1);
        let restarts = replays_to_the_same_state(&tpcc_small(), 1)
            + replays_to_the_same_state(&tpcc_small(), 2);
        // Reconnaissance on TPC-C is made before the batch runs: some predictions go stale.
        eprintln!("TPC-C reconnaissance restarts: {restarts}");
    }

    /// Reads a key that changes every time it runs (a nondeterministic program): no
    /// prediction is ever right.
    #[derive(Debug, Clone)]
    struct Wandering(Arc<AtomicU64>);

    impl Program for Wandering {
        type Output = ();
        fn run<X: TxOps + ?Sized>(&self, tx: &mut X) -> TxResult<()> {
            let k = self.0.fetch_add(1, Ordering::Relaxed) % 64;
            tx.read(TableId(0), k)?;
            Ok(())
        }
        fn declare(&self, out: &mut AccessSet) {
            out.dependent = true;
        }
        fn kind(&self) -> &'static str {
            "wandering"
        }
    }

    struct OneWandering(Arc<AtomicU64>, Schema);

    impl Workload for OneWandering {
        type Program = Wandering;
        type Generator = WanderingGen;
        fn name(&self) -> String {
            "wandering".into()
        }
        fn schema(&self) -> Schema {
            self.1.clone()
        }
        fn load<E: Engine>(&self, _engine: &E) -> Result<(), txlab_core::Error> {
            Ok(())
        }
        fn generator(&self, _thread: usize, _seed: u64) -> WanderingGen {
            WanderingGen(Wandering(Arc::clone(&self.0)))
        }
        fn parameters(&self) -> Vec<(&'static str, String)> {
            Vec::new()
        }
    }

    struct WanderingGen(Wandering);

    impl txlab_workload::Generator for WanderingGen {
        type Program = Wandering;
        fn next(&mut self) -> &Wandering {
            &self.0
        }
    }

    use std::sync::Arc;

    #[test]
    fn a_prediction_that_never_holds_ends_in_an_invariant_error_after_16_restarts() {
        let mut schema = Schema::new();
        schema.add(TableSpec::dense("kv", 8, 64)).unwrap();
        let w = OneWandering(Arc::new(AtomicU64::new(0)), schema.clone());
        let engine = Calvin::builder()
            .config(calvin_config(1, 1))
            .build(&schema)
            .unwrap();
        let d = DriverConfig {
            concurrency: 1,
            clients: 1,
            ..driver()
        };
        let stats = engine.run(&w, RunLimit::Transactions(1), d).unwrap();
        assert_eq!((stats.committed, stats.errors), (0, 1));
        assert_eq!(stats.ollp_restarts, 15);
        let e = stats.first_error.unwrap().to_string();
        assert!(e.contains("'wandering'") && e.contains("after 16"), "{e}");
    }
}
