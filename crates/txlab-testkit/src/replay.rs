//! Deterministic replay of a schedule: one thread, one worker per transaction, steps in order.

use crate::{Protocol, check_options};
use std::sync::Arc;
use txlab_check::{MemoryRecorder, Report, check};
use txlab_core::{
    ConflictCause, Engine, Error, Schema, TableId, TableSpec, Transaction, TxError, TxOps, Worker,
};

/// The one table schedules run on: ordered (so scans, inserts and deletes all apply), 8-byte
/// little-endian `u64` values.
pub const TABLE: TableId = TableId(0);

/// One operation of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Read a key.
    Read(u64),
    /// Blind write.
    Write(u64, u64),
    /// Read-modify-write: add to the value (no-op on an absent key).
    Update(u64, u64),
    /// Insert a key with a value.
    Insert(u64, u64),
    /// Delete a key.
    Delete(u64),
    /// Scan `lo..=hi`.
    Scan(u64, u64),
    /// Scan `lo..=hi` and add the value to every key seen (a predicate update).
    ScanUpdate(u64, u64, u64),
    /// Commit.
    Commit,
    /// Roll back.
    Abort,
}

/// One step: transaction `txn` performs `op`; a read returning `forbid` is a violation
/// (e.g. a dirty or intermediate value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The transaction (0-based).
    pub txn: usize,
    /// What it does.
    pub op: Op,
    /// A value no read of this step may return.
    pub forbid: Option<u64>,
}

impl Step {
    /// A step without a forbidden value.
    pub fn new(txn: usize, op: Op) -> Self {
        Self {
            txn,
            op,
            forbid: None,
        }
    }
}

/// A schedule: the initial rows and the interleaved steps. Transactions begin at their first
/// step unless `begin_all_first` is set (then all begin before any step, Hermitage's habit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Number of transactions.
    pub txns: usize,
    /// Rows present before the schedule: `(key, value)`.
    pub initial: Vec<(u64, u64)>,
    /// The steps.
    pub steps: Vec<Step>,
    /// Begin every transaction before the first step.
    pub begin_all_first: bool,
}

/// How a transaction of a replay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    /// Never began (no step).
    NotStarted,
    /// Still open when the schedule ended (then dropped, i.e. aborted).
    Open,
    /// Committed.
    Committed,
    /// Aborted by the protocol.
    Conflict(ConflictCause),
    /// Rolled back by the schedule.
    RolledBack,
}

/// What a replay produced.
#[derive(Debug)]
pub struct Replay {
    /// How each transaction ended.
    pub states: Vec<TxnState>,
    /// Every read: `(txn, key, value seen)`; scans contribute one entry per key seen.
    pub reads: Vec<(usize, u64, Option<u64>)>,
    /// Forbidden values that were read, as messages.
    pub violations: Vec<String>,
    /// The checker's report on the recorded history.
    pub report: Report,
}

impl Replay {
    /// The transactions that the protocol aborted.
    pub fn conflicted(&self) -> Vec<usize> {
        (0..self.states.len())
            .filter(|&i| matches!(self.states[i], TxnState::Conflict(_)))
            .collect()
    }

    /// Whether every check passed: no forbidden read and a clean history.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty() && self.report.is_serializable()
    }
}

fn val(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8-byte values"))
}

/// The schema schedules run on.
pub fn schema() -> Schema {
    let mut s = Schema::new();
    s.add(TableSpec::ordered("kv", 8)).expect("valid table");
    s
}

/// Replays `schedule` on a fresh engine of protocol `P` and checks the history.
pub fn replay<P: Protocol>(schedule: &Schedule) -> Result<Replay, Error> {
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = P::build(&schema(), Arc::clone(&recorder))?;
    for &(k, v) in &schedule.initial {
        engine.load(TABLE, k, &v.to_le_bytes())?;
    }
    let n = schedule.txns;
    let mut states = vec![TxnState::NotStarted; n];
    let mut reads = Vec::new();
    let mut violations = Vec::new();
    {
        let mut workers = (0..n)
            .map(|_| engine.worker())
            .collect::<Result<Vec<_>, _>>()?;
        let mut idle: Vec<Option<&mut _>> = workers.iter_mut().map(Some).collect();
        let mut open: Vec<Option<_>> = (0..n).map(|_| None).collect();
        macro_rules! begin {
            ($t:expr) => {
                if let Some(w) = idle[$t].take() {
                    open[$t] = Some(Worker::begin(w));
                    states[$t] = TxnState::Open;
                }
            };
        }
        if schedule.begin_all_first {
            for t in 0..n {
                begin!(t);
            }
        }
        for step in &schedule.steps {
            let t = step.txn;
            if t >= n {
                return Err(Error::invalid("step txn", t, format!("below {n}")));
            }
            begin!(t);
            if states[t] != TxnState::Open {
                continue;
            }
            let tx = open[t].as_mut().expect("open transaction");
            let mut seen: Vec<(u64, Option<u64>)> = Vec::new();
            let result: Result<(), TxError> = match step.op {
                Op::Read(k) => tx.read(TABLE, k).map(|v| seen.push((k, v.map(val)))),
                Op::Write(k, v) => tx.write(TABLE, k, &v.to_le_bytes()),
                Op::Update(k, d) => tx
                    .update(TABLE, k, &mut |b| {
                        b.copy_from_slice(&(val(b).wrapping_add(d)).to_le_bytes())
                    })
                    .map(drop),
                Op::Insert(k, v) => tx.insert(TABLE, k, &v.to_le_bytes()).map(drop),
                Op::Delete(k) => tx.delete(TABLE, k).map(drop),
                Op::Scan(lo, hi) => tx.scan(TABLE, lo, hi, &mut |k, v| {
                    seen.push((k, Some(val(v))));
                    true
                }),
                Op::ScanUpdate(lo, hi, d) => {
                    let mut keys = Vec::new();
                    tx.scan(TABLE, lo, hi, &mut |k, v| {
                        seen.push((k, Some(val(v))));
                        keys.push(k);
                        true
                    })
                    .and_then(|()| {
                        keys.iter().try_for_each(|&k| {
                            tx.update(TABLE, k, &mut |b| {
                                b.copy_from_slice(&(val(b).wrapping_add(d)).to_le_bytes())
                            })
                            .map(drop)
                        })
                    })
                }
                Op::Commit => {
                    let tx = open[t].take().expect("open transaction");
                    match tx.commit() {
                        Ok(_) => {
                            states[t] = TxnState::Committed;
                            Ok(())
                        }
                        Err(e) => Err(e),
                    }
                }
                Op::Abort => {
                    open[t].take().expect("open transaction").abort();
                    states[t] = TxnState::RolledBack;
                    Ok(())
                }
            };
            for (k, v) in seen {
                if v.is_some() && v == step.forbid {
                    violations.push(format!("T{t} read forbidden value {v:?} of key {k}"));
                }
                reads.push((t, k, v));
            }
            match result {
                Ok(()) => {}
                Err(TxError::Conflict(c)) => {
                    states[t] = TxnState::Conflict(c.cause);
                    open[t] = None; // dropping an open transaction aborts it
                }
                Err(other) => return Err(Error::Internal(format!("T{t} {:?}: {other}", step.op))),
            }
        }
        drop(open);
    }
    let report = check(&recorder.take(), check_options::<P>());
    Ok(Replay {
        states,
        reads,
        violations,
        report,
    })
}
