//! A small multi-version store model that executes transaction plans under a given interleaving
//! and records the history, for the oracle-agreement tests.
//!
//! Each version gets a fresh tag when it is written; its place in the version order (`order`) is
//! assigned at commit, so tags and orders disagree whenever writers commit out of write order.
//! Read modes produce the usual weak-isolation behaviours:
//!
//! - `Latest`: the newest committed version at the time of the read (read committed);
//! - `Snapshot`: the newest version committed before the transaction began;
//! - `Dirty`: the newest version written, committed or not (read uncommitted); dirty transactions
//!   also publish their writes immediately, so others can read them before they commit or abort.
//!
//! A transaction always reads its own latest write of a key. Serial execution (one transaction
//! at a time, to completion) makes every mode read the latest committed version, so serial
//! histories are serializable by construction.

use txlab_check::History;
use txlab_core::ConflictCause;
use txlab_core::TableId;
use txlab_core::protocol::history::{Outcome, ReadEvent, TxnRecord, WriteEvent, WriteKind};

/// One operation of a plan.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    Read(u64),
    Write(u64),
}

/// How a plan's reads choose a version.
#[derive(Debug, Clone, Copy)]
pub enum ReadMode {
    Latest,
    Snapshot,
    Dirty,
}

/// What a transaction does.
#[derive(Debug, Clone)]
pub struct Plan {
    pub ops: Vec<Op>,
    pub mode: ReadMode,
    pub abort: bool,
}

#[derive(Debug, Clone, Copy)]
struct Version {
    key: u64,
    tag: u64,
    writer: usize,
    /// Commit sequence number (None while uncommitted).
    committed_at: Option<u64>,
    /// Whether the version is the writer's latest write of the key.
    latest_of_writer: bool,
}

struct Running {
    next_op: usize,
    snapshot: u64,
    begin: u64,
    reads: Vec<ReadEvent>,
    /// (key, tag) in write order.
    writes: Vec<(u64, u64)>,
}

/// Executes `plans` one step at a time; `choose(step, live)` picks which of the `live` unfinished
/// transactions advances (an index into the live list). A step is one operation, or the final
/// commit/abort.
pub fn execute(plans: &[Plan], mut choose: impl FnMut(usize, usize) -> usize) -> History {
    let mut versions: Vec<Version> = Vec::new();
    let mut next_tag = 1u64;
    let mut commits = 0u64;
    let mut order = 0u64;
    let mut state: Vec<Option<Running>> = (0..plans.len()).map(|_| None).collect();
    let mut done = vec![false; plans.len()];
    let mut history = History::new();
    let mut step = 0usize;
    loop {
        let live: Vec<usize> = (0..plans.len()).filter(|&i| !done[i]).collect();
        if live.is_empty() {
            return history;
        }
        let t = live[choose(step, live.len()) % live.len()];
        step += 1;
        let plan = &plans[t];
        let run = state[t].get_or_insert_with(|| Running {
            next_op: 0,
            snapshot: commits,
            begin: step as u64,
            reads: Vec::new(),
            writes: Vec::new(),
        });
        if let Some(&op) = plan.ops.get(run.next_op) {
            run.next_op += 1;
            match op {
                Op::Read(key) => {
                    let own = run.writes.iter().rev().find(|w| w.0 == key).map(|w| w.1);
                    let tag = own.unwrap_or_else(|| {
                        let visible = |v: &&Version| {
                            v.key == key
                                && match plan.mode {
                                    ReadMode::Latest => v.committed_at.is_some(),
                                    ReadMode::Snapshot => {
                                        v.committed_at.is_some_and(|c| c <= run.snapshot)
                                    }
                                    ReadMode::Dirty => true,
                                }
                        };
                        // Newest committed first (by commit number); uncommitted versions count
                        // as newer than every committed one, newest written last.
                        versions
                            .iter()
                            .filter(visible)
                            .max_by_key(|v| (v.committed_at.unwrap_or(u64::MAX), v.tag))
                            .map_or(0, |v| v.tag)
                    });
                    run.reads.push(ReadEvent {
                        table: TableId(0),
                        key,
                        version: tag,
                        present: true,
                    });
                }
                Op::Write(key) => {
                    let tag = next_tag;
                    next_tag += 1;
                    run.writes.push((key, tag));
                    if matches!(plan.mode, ReadMode::Dirty) {
                        for v in versions
                            .iter_mut()
                            .filter(|v| v.writer == t && v.key == key)
                        {
                            v.latest_of_writer = false;
                        }
                        versions.push(Version {
                            key,
                            tag,
                            writer: t,
                            committed_at: None,
                            latest_of_writer: true,
                        });
                    }
                }
            }
            continue;
        }
        // Finish.
        let run = state[t].take().expect("running");
        done[t] = true;
        let dirty = matches!(plan.mode, ReadMode::Dirty);
        let (outcome, writes) = if plan.abort {
            versions.retain(|v| v.writer != t);
            // Only dirty writers exposed their writes; others never installed anything.
            let writes = if dirty {
                record_writes(&run.writes, &mut order)
            } else {
                Vec::new()
            };
            (Outcome::Aborted(ConflictCause::ReadValidation), writes)
        } else {
            commits += 1;
            if dirty {
                // Intermediate versions disappear; the final ones become committed.
                versions.retain(|v| v.writer != t || v.latest_of_writer);
                for v in versions.iter_mut().filter(|v| v.writer == t) {
                    v.committed_at = Some(commits);
                }
            } else {
                for (i, &(key, tag)) in run.writes.iter().enumerate() {
                    if !run.writes[i + 1..].iter().any(|w| w.0 == key) {
                        versions.push(Version {
                            key,
                            tag,
                            writer: t,
                            committed_at: Some(commits),
                            latest_of_writer: true,
                        });
                    }
                }
            }
            (Outcome::Committed, record_writes(&run.writes, &mut order))
        };
        history.push(TxnRecord {
            id: t as u64 + 1,
            reads: run.reads,
            writes,
            scans: Vec::new(),
            outcome,
            begin_ns: run.begin,
            end_ns: step as u64,
        });
    }
}

/// Write events in write order, each with the next position in the (global, hence per-key
/// consistent) version order.
fn record_writes(writes: &[(u64, u64)], order: &mut u64) -> Vec<WriteEvent> {
    writes
        .iter()
        .map(|&(key, version)| {
            *order += 1;
            WriteEvent {
                table: TableId(0),
                key,
                version,
                order: *order,
                kind: WriteKind::Put,
                visible: true,
            }
        })
        .collect()
}
