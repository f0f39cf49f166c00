//! The order as DOCC's workers see it: batches of jobs, claimed one at a time in sequence order.
//!
//! - A [`Batch`] is one sequencer's batch of one epoch: its jobs, each job's position (`Seq`
//!   for versions, a dense `rank` for the waiting phase) and its dependency (`need`, see
//!   `crate::wait`), computed when the batch is pushed: with snapshots a job depends on the last
//!   read-write job before it (`Program::read_only`), otherwise on the job just before it.
//! - **Claiming** (one atomic cursor per batch): a worker takes the next job of its current
//!   batch with a compare-and-swap on the batch's cursor; past the end it moves to the next batch
//!   by number. Claims are therefore in order: when job `N` is claimed, every earlier job has been
//!   claimed, and since a worker holds one job at a time until it completes, the oldest unfinished
//!   job is always being worked on, so every wait ends.
//! - **Running bounds**: before the compare-and-swap that claims job `i`, the worker publishes
//!   `i`'s `Seq` (`crate::wait::Waiters::set_running`); a failed swap republishes the job the
//!   cursor moved to. While it waits for a batch to arrive it publishes [`IDLE`]. Between jobs
//!   the slot still holds the finished job's `Seq`, which only makes garbage collection keep more.
//!   The committer of job `S` reads every slot after its own claim of `S` (all `SeqCst`), so it
//!   sees the bound of every job below `S` that is claimed and not finished: such a job `J` was
//!   published before its claim, and its claim precedes the claim of `S` (the same cursor, or an
//!   earlier batch's cursor that `S`'s worker saw exhausted). A job it does not see comes after
//!   `S` and needs no version older than `S`'s (`crate::commit`).
//! - Fully finished batches are dropped from the front.

use crate::seq::Seq;
use crate::wait::{IDLE, Waiters};
use std::collections::VecDeque;
use txlab_core::Program;
use txlab_core::protocol::sync::{
    Arc, AtomicBool, AtomicUsize, Condvar, IgnorePoison, Mutex, MutexGuard, Ordering,
};

/// A job: something that holds a program (a borrowed log entry, or a driver's submission).
pub(crate) trait Job: Send + Sync {
    /// The program.
    type P: Program;
    /// The program to run.
    fn program(&self) -> &Self::P;
}

impl<P: Program + Sync> Job for &P {
    type P = P;
    #[inline]
    fn program(&self) -> &P {
        self
    }
}

/// A log entry run by position: the program and its index in the caller's list (results are
/// returned in that order).
pub(crate) struct Entry<'p, P> {
    pub program: &'p P,
    pub index: usize,
}

impl<P: Program + Sync> Job for Entry<'_, P> {
    type P = P;
    #[inline]
    fn program(&self) -> &P {
        self.program
    }
}

/// A program at an explicit position: its `Seq` (the version it installs) and its rank (its
/// place in the order: dense in one engine's own runs, with gaps in a partition of a cluster,
/// which runs only its share of the global order).
#[derive(Debug)]
pub struct Positioned<'p, P> {
    /// The position in the global order.
    pub seq: Seq,
    /// The rank (strictly increasing with `seq`).
    pub rank: u64,
    /// The program.
    pub program: &'p P,
}

/// The positions of `log` run as one engine's own log: epochs from `first_epoch`, one per
/// `2^24` programs, as sequencer 0; ranks from `base` (`Deterministic::execute_log`).
pub(crate) fn log_positions<P>(
    log: &[P],
    first_epoch: u32,
    base: u64,
) -> Result<Vec<Positioned<'_, P>>, txlab_core::Error> {
    let chunk = Seq::MAX_BATCH as usize;
    log.iter()
        .enumerate()
        .map(|(i, program)| {
            Ok(Positioned {
                seq: Seq::new(first_epoch + (i / chunk) as u32, 0, (i % chunk) as u32)?,
                rank: base + i as u64,
                program,
            })
        })
        .collect()
}

/// Results gathered from workers as `(index, result)`, in index order; `n` expected.
pub(crate) fn in_order<T>(
    parts: impl IntoIterator<Item = (usize, T)>,
    n: usize,
) -> Result<Vec<T>, txlab_core::Error> {
    let mut results: Vec<Option<T>> = (0..n).map(|_| None).collect();
    for (i, r) in parts {
        results[i] = Some(r);
    }
    results
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            r.ok_or_else(|| txlab_core::Error::Internal(format!("log entry {i} never ran")))
        })
        .collect()
}

impl<P> Clone for Positioned<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for Positioned<'_, P> {}

/// A job's dependency (`crate::wait`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dep {
    /// Wait until the chain reached this (0: no dependency).
    pub need: u64,
    /// Whether later jobs wait for this one (it publishes the chain when it completes).
    pub chain: bool,
    /// Whether the program claims `read_only`.
    pub read_only: bool,
}

/// One sequencer's batch of one epoch (module docs).
#[derive(Debug)]
pub(crate) struct Batch<J> {
    pub number: u64,
    /// `Seq` of job 0 (job `i` is `seq_base + i`).
    pub seq_base: u64,
    /// Rank of job 0.
    pub base_rank: u64,
    pub jobs: Vec<J>,
    pub deps: Vec<Dep>,
    cursor: AtomicUsize,
    done: Box<[AtomicBool]>,
    left: AtomicUsize,
}

impl<J> Batch<J> {
    /// The raw `Seq` of job `i`.
    #[inline]
    pub fn seq(&self, i: usize) -> u64 {
        self.seq_base + i as u64
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.jobs.len()
    }
}

#[derive(Debug)]
struct Inner<J> {
    batches: VecDeque<Arc<Batch<J>>>,
    closed: bool,
    next_number: u64,
    /// Rank of the last chain job pushed (its dependants wait for `rank + 1`).
    last_chain: Option<u64>,
}

/// The batches of one run (module docs).
#[derive(Debug)]
pub(crate) struct Schedule<J> {
    inner: Mutex<Inner<J>>,
    arrived: Condvar,
    snapshot: bool,
}

/// A claimed job: its batch and index.
pub(crate) type Claim<J> = (Arc<Batch<J>>, usize);

impl<J: Job> Schedule<J> {
    /// An empty schedule; `snapshot` selects the dependency rule (module docs).
    pub fn new(snapshot: bool) -> Self {
        Self {
            inner: Mutex::new(Inner {
                batches: VecDeque::new(),
                closed: false,
                next_number: 0,
                last_chain: None,
            }),
            arrived: Condvar::new(),
            snapshot,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<J>> {
        self.inner.lock().ignore_poison()
    }

    /// Appends a batch of `jobs` whose job 0 is `seq0` and has rank `base_rank`.
    pub fn push(&self, seq0: Seq, base_rank: u64, jobs: Vec<J>) {
        let mut inner = self.lock();
        let mut deps = Vec::with_capacity(jobs.len());
        for (i, job) in jobs.iter().enumerate() {
            let read_only = job.program().read_only();
            let chain = !(self.snapshot && read_only);
            deps.push(Dep {
                need: inner.last_chain.map_or(0, |r| r + 1),
                chain,
                read_only,
            });
            if chain {
                inner.last_chain = Some(base_rank + i as u64);
            }
        }
        let n = jobs.len();
        let batch = Arc::new(Batch {
            number: inner.next_number,
            seq_base: seq0.raw(),
            base_rank,
            jobs,
            deps,
            cursor: AtomicUsize::new(0),
            done: (0..n).map(|_| AtomicBool::new(false)).collect(),
            left: AtomicUsize::new(n),
        });
        inner.next_number += 1;
        if n > 0 {
            inner.batches.push_back(batch);
        }
        drop(inner);
        self.arrived.notify_all();
    }

    /// No more batches will come: workers finish once the last is claimed.
    pub fn close(&self) {
        self.lock().closed = true;
        self.arrived.notify_all();
    }

    /// Claims the next job in order for worker `me` (module docs), publishing what it holds in
    /// `slots`; `None` once the schedule is closed and everything is claimed. Blocks while the
    /// next batch has not arrived.
    pub fn claim(
        &self,
        current: &mut Option<Arc<Batch<J>>>,
        slots: &Waiters,
        me: usize,
    ) -> Option<Claim<J>> {
        loop {
            if let Some(b) = current
                && let Some(i) = Self::claim_in(b, slots, me)
            {
                return Some((Arc::clone(b), i));
            }
            let want = current.as_ref().map_or(0, |b| b.number + 1);
            let mut inner = self.lock();
            loop {
                if let Some(b) = inner.batches.iter().find(|b| b.number >= want) {
                    *current = Some(Arc::clone(b));
                    break;
                }
                slots.set_running(me, IDLE);
                if inner.closed {
                    return None;
                }
                inner = self.arrived.wait(inner).ignore_poison();
            }
        }
    }

    /// Claims the next job of `batch` for worker `me`, publishing its `Seq` before the swap that
    /// takes it (module docs: "Running bounds"); `None` once the batch is exhausted.
    fn claim_in(batch: &Batch<J>, slots: &Waiters, me: usize) -> Option<usize> {
        let mut i = batch.cursor.load(Ordering::SeqCst);
        while i < batch.len() {
            slots.set_running(me, batch.seq(i));
            match batch
                .cursor
                .compare_exchange_weak(i, i + 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return Some(i),
                Err(now) => i = now,
            }
        }
        None
    }

    /// Marks job `i` of `batch` finished (after its commit and chain publish).
    pub fn complete(&self, batch: &Batch<J>, i: usize) {
        batch.done[i].store(true, Ordering::Release);
        if batch.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let mut inner = self.lock();
            Self::drop_finished(&mut inner);
        }
    }

    fn drop_finished(inner: &mut Inner<J>) {
        while let Some(front) = inner.batches.front() {
            if front.left.load(Ordering::Acquire) != 0 {
                break;
            }
            inner.batches.pop_front();
        }
    }
}
