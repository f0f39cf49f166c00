//! The commit path under shuttle's randomized scheduler (build with `--cfg txlab_shuttle`).
//!
//! With that cfg every atomic, lock and spin-wait of the workspace comes from shuttle (through
//! `txlab_core::protocol::sync`), so the scheduler may preempt a thread between any two atomic operations:
//! inside a seqlock read, between locking and validating, between validating and installing.
//! Each iteration runs conflicting transactions on three shuttle threads against a fresh engine
//! with manual epochs and checks the recorded history.
//!
//! [`run_nwr`] adds a scenario for the non-visible write rule: blind writes of the same keys in
//! one epoch (manual epochs never advance), so every blind write after the epoch's first of a key
//! is a candidate for omission; it asserts that omissions really happened (the history's invisible
//! writes, cross-checked with the engine's `nwr_omitted_writes` counter).
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" \
//!   cargo test -p txlab-silo -p txlab-tictoc -p txlab-mvto --test shuttle --target-dir target/shuttle
//! ```

use crate::{Protocol, check_options};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use txlab_check::{MemoryRecorder, check};
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxOps, TxResult, Worker};

const T: TableId = TableId(0);

fn num(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8-byte values"))
}

/// An engine of `P` over one dense table of keys 0, 1 and 2, each loaded with 10, and its
/// recorder.
fn loaded_engine<P: Protocol>() -> (Arc<P::Engine>, Arc<MemoryRecorder>) {
    let mut schema = Schema::new();
    schema
        .add(TableSpec::dense("kv", 8, 3))
        .expect("valid table");
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = Arc::new(P::build(&schema, Arc::clone(&recorder)).expect("engine"));
    for k in 0..3 {
        engine.load(T, k, &10u64.to_le_bytes()).expect("load");
    }
    (engine, recorder)
}

/// Two write-skew transactions (read x and y, write one of them) and a read-modify-write of z
/// from x, twice each, on three threads. Returns whether the history passed the checker.
pub fn scenario<P: Protocol>() -> bool
where
    P::Engine: 'static,
{
    let (engine, recorder) = loaded_engine::<P>();
    let handles: Vec<_> = (0..3u64)
        .map(|t| {
            let engine = Arc::clone(&engine);
            shuttle::thread::spawn(move || {
                let mut w = engine.worker().expect("worker");
                for _ in 0..2 {
                    let mut tx = w.begin();
                    // A conflict aborts the attempt (the transaction is dropped); only the
                    // history is judged, so no error may panic here.
                    let body = (|| {
                        let x = tx.read(T, 0)?.map(num).unwrap_or(0);
                        let y = tx.read(T, 1)?.map(num).unwrap_or(0);
                        match t {
                            0 => tx.write(T, 0, &(x + 1).to_le_bytes()),
                            1 => tx.write(T, 1, &(y + 1).to_le_bytes()),
                            _ => tx
                                .update(T, 2, &mut |v| {
                                    v.copy_from_slice(&(num(v) + x).to_le_bytes())
                                })
                                .map(drop),
                        }
                    })();
                    if body.is_ok() {
                        let _ = tx.commit();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
    drop(engine);
    check(&recorder.take(), check_options::<P>()).is_serializable()
}

/// Runs [`scenario`] on `iterations` random schedules; panics on a violation.
pub fn run<P: Protocol>(iterations: usize)
where
    P::Engine: 'static,
{
    shuttle::check_random(
        || assert!(scenario::<P>(), "{}: history not serializable", P::NAME),
        iterations,
    );
}

/// Whether some random schedule (seeds `0..seeds`, `iterations` each) breaks `P`: the mutation
/// proof for checks that only a precise interleaving exposes.
pub fn finds_violation<P: Protocol>(seeds: u64, iterations: usize) -> bool
where
    P::Engine: 'static,
{
    (0..seeds).any(|seed| {
        std::panic::catch_unwind(|| {
            shuttle::check_random_with_seed(|| assert!(scenario::<P>()), seed, iterations)
        })
        .is_err()
    })
}

/// What one run of [`nwr_scenario`] produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NwrRun {
    /// Whether the history passed the checker.
    pub serializable: bool,
    /// Committed writes recorded as invisible (omitted) in the history.
    pub omitted_in_history: u64,
    /// The workers' `nwr_omitted_writes` counters, summed.
    pub omitted_by_counter: u64,
}

/// One transaction body of an NWR scenario: thread `t`'s `i`-th transaction, run on `tx`.
type NwrBody = fn(t: u64, i: u64, tx: &mut dyn TxOps) -> TxResult<()>;

/// Runs `body` twice on each of three shuttle threads against a freshly loaded engine (keys 0, 1
/// and 2, one epoch throughout), committing each transaction whose body succeeded; returns the
/// checker's verdict and the omitted writes by history and by counter.
fn nwr_threads<P: Protocol>(body: NwrBody) -> NwrRun
where
    P::Engine: 'static,
{
    let (engine, recorder) = loaded_engine::<P>();
    let handles: Vec<_> = (0..3u64)
        .map(|t| {
            let engine = Arc::clone(&engine);
            shuttle::thread::spawn(move || {
                let mut w = engine.worker().expect("worker");
                for i in 0..2u64 {
                    let mut tx = w.begin();
                    if body(t, i, &mut tx).is_ok() {
                        let _ = tx.commit();
                    }
                }
                let mut omitted = 0;
                w.drain_counters(&mut |name, n| {
                    if name == "nwr_omitted_writes" {
                        omitted += n;
                    }
                });
                omitted
            })
        })
        .collect();
    let omitted_by_counter = handles.into_iter().map(|h| h.join().expect("thread")).sum();
    drop(engine);
    let history = recorder.take();
    let omitted_in_history = crate::nwr::omitted_writes(&history) as u64;
    NwrRun {
        serializable: check(&history, check_options::<P>()).is_serializable(),
        omitted_in_history,
        omitted_by_counter,
    }
}

/// The NWR scenario: threads 0 and 1 each blind-write x and y twice (the omission candidates);
/// thread 2 twice reads y and read-modify-writes x (never omitted; its reads feed the merged read
/// set that an omission must respect). One epoch throughout: engines of `P` must use manual epochs
/// (and epoch-based acknowledgement, the only mode in which NWR is attempted).
pub fn nwr_scenario<P: Protocol>() -> NwrRun
where
    P::Engine: 'static,
{
    nwr_threads::<P>(|t, i, tx| {
        if t < 2 {
            let v = 100 * (t + 1) + i;
            tx.write(T, 0, &v.to_le_bytes())?;
            tx.write(T, 1, &v.to_le_bytes())
        } else {
            let y = tx.read(T, 1)?.map(num).unwrap_or(0);
            tx.update(T, 0, &mut |v| {
                v.copy_from_slice(&(num(v) + y).to_le_bytes())
            })
            .map(drop)
        }
    })
}

/// Runs `scenario` on `iterations` random schedules. Panics on a violation, if the history and
/// the counters disagree on the omitted writes, or if fewer than a tenth of the schedules omitted
/// a write (the NWR path was not exercised).
fn assert_scenario_omits<P: Protocol>(iterations: usize, scenario: fn() -> NwrRun, what: &str)
where
    P::Engine: 'static,
{
    let omitted = Arc::new(AtomicU64::new(0));
    let schedules_with_omission = Arc::new(AtomicU64::new(0));
    let (o, s) = (Arc::clone(&omitted), Arc::clone(&schedules_with_omission));
    shuttle::check_random(
        move || {
            let r = scenario();
            assert!(r.serializable, "{}: history not serializable", P::NAME);
            assert_eq!(
                r.omitted_in_history,
                r.omitted_by_counter,
                "{}: omitted writes in the history vs. the nwr_omitted_writes counter",
                P::NAME
            );
            o.fetch_add(r.omitted_in_history, Ordering::Relaxed);
            s.fetch_add(u64::from(r.omitted_in_history > 0), Ordering::Relaxed);
        },
        iterations,
    );
    let omitted = omitted.load(Ordering::Relaxed);
    let with = schedules_with_omission.load(Ordering::Relaxed);
    println!(
        "{}: {with} of {iterations} {what} schedules omitted writes ({omitted} omitted writes)",
        P::NAME
    );
    // A tenth is the floor; the printed line above gives each protocol's share (which depends a
    // lot on where its commit path checks the pivot).
    assert!(
        with * 10 >= iterations as u64,
        "{}: only {with} of {iterations} schedules omitted a write; the NWR path was barely exercised",
        P::NAME
    );
}

/// For an NWR protocol: [`run`]'s scenario, then [`nwr_scenario`] on `iterations` random
/// schedules. Panics on a violation, if the history and the counters disagree on the omitted
/// writes, or if fewer than a tenth of the schedules omitted a write (the NWR path was not
/// exercised).
pub fn run_nwr<P: Protocol>(iterations: usize)
where
    P::Engine: 'static,
{
    run::<P>(iterations);
    assert_scenario_omits::<P>(iterations, nwr_scenario::<P>, "NWR");
}

/// The single-write NWR scenario (`txlab_nwr::NwrSingleWrite`), one epoch throughout, keys x = 0,
/// y = 1, z = 2 loaded before it; each thread runs its transaction twice:
///
/// - thread 0 (`O`): reads z, blind-writes y: omitted when y already has a version of the epoch;
/// - thread 1 (`Y`): reads y, blind-writes z: overwrites what `O` read, after reading what `O`
///   writes;
/// - thread 2 (`W`): blind-writes y: the epoch's pivot of y, or an omitter itself.
///
/// The rule must observe y's pivot *before* it validates `O`'s read of z: if `O` validates z,
/// then `Y` reads y and installs z, then `W` installs y's pivot, and `O` only then sees the pivot
/// and omits, the history has `O -rw(z)-> Y -rw(y)-> O`. Only a preemption inside `O`'s commit
/// exposes this, which is what shuttle provides.
pub fn nwr_single_write_scenario<P: Protocol>() -> NwrRun
where
    P::Engine: 'static,
{
    nwr_threads::<P>(|t, i, tx| {
        let v = 100 * (t + 1) + i;
        match t {
            0 => {
                tx.read(T, 2)?;
                tx.write(T, 1, &v.to_le_bytes())
            }
            1 => {
                tx.read(T, 1)?;
                tx.write(T, 2, &v.to_le_bytes())
            }
            _ => tx.write(T, 1, &v.to_le_bytes()),
        }
    })
}

/// For a single-write NWR protocol: [`run`]'s scenario, then [`nwr_single_write_scenario`] on
/// `iterations` random schedules, with [`run_nwr`]'s assertions.
pub fn run_nwr_single_write<P: Protocol>(iterations: usize)
where
    P::Engine: 'static,
{
    run::<P>(iterations);
    assert_scenario_omits::<P>(iterations, nwr_single_write_scenario::<P>, "single-write");
}

/// Whether some random schedule of [`nwr_single_write_scenario`] (seeds `0..seeds`,
/// `iterations` each) produces a history that is not serializable: the mutation proof for the
/// single-write rule's check order. Only a checker verdict counts; any panic propagates.
pub fn finds_nwr_single_write_violation<P: Protocol>(seeds: u64, iterations: usize) -> bool
where
    P::Engine: 'static,
{
    let violated = Arc::new(AtomicU64::new(0));
    for seed in 0..seeds {
        let v = Arc::clone(&violated);
        shuttle::check_random_with_seed(
            move || {
                if !nwr_single_write_scenario::<P>().serializable {
                    v.fetch_add(1, Ordering::Relaxed);
                }
            },
            seed,
            iterations,
        );
        if violated.load(Ordering::Relaxed) > 0 {
            return true;
        }
    }
    false
}
