//! The three DOCC modes in the correctness kit through the interactive entry point ("sequence
//! at commit": backward validation under the committer lock): Hermitage schedules with their
//! expected aborts, random schedules, threaded stress. Histories are checked for strict
//! serializability.

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_docc::{Chain, Docc, DoccConfig, InPlace};
use txlab_testkit::{Expect, Hermitage, Protocol};

/// Backward validation at commit aborts exactly what Silo aborts on these schedules (the batch
/// pipeline's column in docs/correctness.md).
fn expect(test: Hermitage) -> Expect {
    match test {
        Hermitage::G0 | Hermitage::G1a => Expect::NoConflicts,
        Hermitage::G1b
        | Hermitage::G1c
        | Hermitage::PmpWrite
        | Hermitage::P4
        | Hermitage::G2Item => Expect::Aborts(&[1]),
        Hermitage::Otv => Expect::Aborts(&[2]),
        Hermitage::Pmp | Hermitage::GSingle => Expect::Aborts(&[0]),
        // Both inserts publish their absent records during execution, in the stripe both scans
        // covered: each scanner sees a bump that is not its own.
        Hermitage::G2 => Expect::Aborts(&[0, 1]),
        _ => Expect::Serializable,
    }
}

macro_rules! kit {
    ($module:ident, $layout:ty, $prefetch:expr, $name:expr) => {
        mod $module {
            use super::*;

            pub struct Kit;

            impl Protocol for Kit {
                type Engine = Docc<$layout, MemoryRecorder>;
                const NAME: &'static str = $name;
                // Serialized while holding the committer lock, inside begin..commit.
                const STRICT: bool = true;

                fn build(
                    schema: &Schema,
                    recorder: Arc<MemoryRecorder>,
                ) -> Result<Self::Engine, Error> {
                    let config = DoccConfig {
                        prefetch: $prefetch,
                        ..DoccConfig::default()
                    };
                    Docc::builder()
                        .config(config)
                        .recorder(recorder)
                        .build(schema)
                }

                fn expect(test: Hermitage) -> Expect {
                    expect(test)
                }
            }

            txlab_testkit::protocol_kit!(Kit);
        }
    };
}

kit!(basic, InPlace, false, "docc-basic");
kit!(snapshot, Chain, false, "docc-snapshot");
kit!(full, Chain, true, "docc");
