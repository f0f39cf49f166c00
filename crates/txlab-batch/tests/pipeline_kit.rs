//! The pipeline's interactive interface in the shared correctness kit: the Hermitage schedules
//! without range scans, and the kit's threaded YCSB and SmallBank stress (histories checked,
//! SmallBank's conservation invariant checked). The kit's random schedules and the PMP, PMP-write and G2
//! schedules use range scans, which the pipeline does not support (its validator cache is per
//! key, so phantoms could not be detected; see `pipeline::execution`), so they are not run.

use std::sync::Arc;
use txlab_batch::pipeline::{Mode, Pipeline, PipelineConfig};
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_testkit::{Expect, Hermitage, Protocol};

macro_rules! pipeline_protocol {
    ($name:ident, $mode:expr, $reorder_workers:expr) => {
        struct $name;
        impl Protocol for $name {
            type Engine = Pipeline<MemoryRecorder>;
            const NAME: &'static str = stringify!($name);
            // The commit timestamp is assigned between begin and the return of commit, and
            // the writes are installed before commit returns: strictly serializable.
            const STRICT: bool = true;
            fn build(
                schema: &Schema,
                recorder: Arc<MemoryRecorder>,
            ) -> Result<Self::Engine, Error> {
                let cfg = PipelineConfig::default().with_mode($mode).with_threads(
                    1,
                    1,
                    2,
                    $reorder_workers,
                );
                Pipeline::builder()
                    .config(cfg)
                    .recorder(recorder)
                    .build(schema)
            }
            fn expect(test: Hermitage) -> Expect {
                expect(test)
            }
        }
    };
}

/// Backward validation aborts exactly the transactions whose reads a committed writer
/// overwrote before they committed (the same as Silo on these schedules).
fn expect(test: Hermitage) -> Expect {
    match test {
        Hermitage::G0 | Hermitage::G1a => Expect::NoConflicts,
        Hermitage::G1b
        | Hermitage::G1c
        | Hermitage::PmpWrite
        | Hermitage::P4
        | Hermitage::G2Item => Expect::Aborts(&[1]),
        Hermitage::Otv => Expect::Aborts(&[2]),
        Hermitage::GSingle => Expect::Aborts(&[0]),
        _ => Expect::Serializable,
    }
}

pipeline_protocol!(PipelineBase, Mode::Base, 2);
pipeline_protocol!(PipelineSrvc, Mode::Srvc, 2);
// The single-thread layout: no reordering workers (`PipelineConfig::reorder_workers`).
pipeline_protocol!(PipelineSrvcSingleThread, Mode::Srvc, 0);

macro_rules! hermitage {
    ($($test:ident: $h:ident),* $(,)?) => {$(
        #[test]
        fn $test() {
            txlab_testkit::hermitage::run::<PipelineBase>(Hermitage::$h);
            txlab_testkit::hermitage::run::<PipelineSrvc>(Hermitage::$h);
            txlab_testkit::hermitage::run::<PipelineSrvcSingleThread>(Hermitage::$h);
        }
    )*};
}

hermitage!(
    hermitage_g0: G0,
    hermitage_g1a: G1a,
    hermitage_g1b: G1b,
    hermitage_g1c: G1c,
    hermitage_otv: Otv,
    hermitage_p4: P4,
    hermitage_g_single: GSingle,
    hermitage_g2_item: G2Item,
);

#[test]
fn kit_stress_ycsb_hot_10_keys() {
    txlab_testkit::stress::ycsb::<PipelineSrvc>(&[2, 4], 10, 0.99, 500);
    txlab_testkit::stress::ycsb::<PipelineSrvcSingleThread>(&[2, 4], 10, 0.99, 500);
}

#[test]
fn kit_stress_ycsb_1000_keys() {
    txlab_testkit::stress::ycsb::<PipelineBase>(&[2, 4], 1_000, 0.99, 500);
}

#[test]
fn kit_stress_smallbank_conserves_money() {
    txlab_testkit::stress::smallbank::<PipelineSrvc>(&[2, 4], 500);
    txlab_testkit::stress::smallbank::<PipelineSrvcSingleThread>(&[2, 4], 500);
}
