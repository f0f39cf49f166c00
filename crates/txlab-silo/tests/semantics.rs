//! Silo's transaction semantics, driven step by step from one thread with several workers: the
//! kit's shared schedules (`txlab_testkit::semantics`), every history checked for strict
//! serializability, and the schedules whose outcome is Silo's own.

mod common;

use common::SiloHooks;
use txlab_core::{AckMode, ConflictCause, Engine, RetryPolicy, Transaction, TxOps, Worker, run};
use txlab_silo::{Silo, SiloConfig};
use txlab_testkit::family::Kit;
use txlab_testkit::semantics::{self, T, cause, num, v};

type SiloSemantics = Kit<SiloHooks>;

txlab_testkit::semantics_kit!(SiloSemantics);

/// Silo-specific: an overwrite of what an attempt read always fails its validation (Silo cannot
/// reorder the reader before the writer, as TicToc can), so every retry conflicts.
#[test]
fn run_gives_up_after_max_attempts_with_the_last_conflict() {
    semantics::run::<SiloSemantics>(|db| {
        let mut w = db.worker().unwrap();
        let mut other = db.worker().unwrap();
        let mut calls = 0u32;
        // Every attempt's read is overwritten before it commits: each one conflicts.
        let r = run(&mut w, RetryPolicy::attempts(3).unwrap(), |tx| {
            calls += 1;
            let x = num(tx.read(T, 12)?.unwrap());
            let mut t = other.begin();
            t.write(T, 12, &v(x + 1))?;
            t.commit()?;
            tx.write(T, 13, &v(x))?;
            Ok(())
        });
        assert_eq!(cause(r.unwrap_err()), ConflictCause::ReadValidation);
        assert_eq!(calls, 3, "three attempts, then the conflict is returned");
    });
    let e = RetryPolicy::attempts(0).unwrap_err();
    assert!(e.to_string().contains("max_attempts = 0"), "{e}");
}

#[test]
fn group_commit_acknowledges_only_once_the_epoch_is_stable() {
    let cfg = SiloConfig::manual().with_ack(AckMode::EpochStable);
    let db = Silo::builder()
        .config(cfg)
        .build(&semantics::schema())
        .unwrap();
    semantics::group_commit_acknowledges_only_once_the_epoch_is_stable(&db, |db| {
        db.epochs().advance();
    });
}
