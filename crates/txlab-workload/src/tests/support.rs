//! Helpers shared by the workload tests.

use crate::{Generator, Workload};
use txlab_check::serial::SerialEngine;
use txlab_core::{Access, AccessSet, Engine, Program, TableId, Transaction, TxResult, Worker};

/// A loaded serial engine for `workload`.
pub fn loaded<W: Workload>(workload: &W) -> SerialEngine {
    let engine = SerialEngine::new(workload.schema());
    workload.load(&engine).expect("load");
    engine
}

/// The declared accesses of `program`, merged per key the same way the serial engine merges
/// what it saw, and sorted.
pub fn declared<P: Program>(program: &P) -> Vec<(TableId, u64, Access)> {
    let mut set = AccessSet::default();
    program.declare(&mut set);
    let mut v = set.accesses;
    v.sort();
    v
}

/// Runs `program` in one transaction of `engine`, commits it if it succeeded, and returns its
/// result with the accesses the engine saw (sorted by table and key).
pub fn run_once<P: Program<Output = ()>>(
    engine: &SerialEngine,
    program: &P,
) -> (TxResult<()>, Vec<(TableId, u64, Access)>) {
    let mut worker = engine.worker().expect("worker");
    let result = {
        let mut tx = worker.begin();
        match program.run(&mut tx) {
            Ok(()) => tx.commit().map(|_| ()),
            Err(e) => {
                tx.abort();
                Err(e)
            }
        }
    };
    (result, worker.accesses())
}

/// The first `count` programs of `(seed, thread)`, as produced by `f` from each.
pub fn collect<W: Workload, T>(
    workload: &W,
    seed: u64,
    thread: usize,
    count: usize,
    mut f: impl FnMut(&W::Program) -> T,
) -> Vec<T> {
    let mut generator = workload.generator(thread, seed);
    (0..count).map(|_| f(generator.next())).collect()
}
