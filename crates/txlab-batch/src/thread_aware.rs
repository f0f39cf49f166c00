//! Thread-aware batching for decentralized engines (Ding, Kot, Gehrke, VLDB 2018, §4.2 "Reduce
//! inter-thread conflicts", §5.6).
//!
//! In a decentralized engine (Silo, TicToc, Cicada) every transaction runs synchronously on one
//! thread from begin to commit, so it can only conflict with transactions of *other* threads.
//! Thread-aware batching collects `per_thread × threads` transactions (the paper: 4 per thread),
//! declares their accesses ([`Program::declare`]) and assigns the same number to every thread,
//! putting conflicting transactions on the same thread, where they run one after the other.
//!
//! # The assignment ([`ThreadAssigner`])
//!
//! Two transactions *conflict* when one writes a key the other reads or writes. Threads are filled
//! one after the other. For the thread being filled, with `T` the transactions already given to
//! it, every unassigned transaction `x` has the three-level weight, compared lexicographically:
//!
//! 1. the number of transactions of `T` that `x` conflicts with;
//! 2. the number of `x`'s keys that some transaction of `T` also accesses (shared accesses, which
//!    also helps caching);
//! 3. the number of unassigned transactions `x` conflicts with.
//!
//! The highest weight is picked (ties: earliest in the batch), the weights are updated
//! incrementally, and so on until the thread has its share; then the next thread starts with an
//! empty `T` (so its first pick is the transaction with the most conflicts among the remaining
//! ones, as in the paper). Shares differ by at most one when the batch does not divide evenly.
//! Building the conflict matrix costs `O(n² + a)` for a batch of `n` transactions with `a`
//! accesses (keys are numbered through a reused open-addressing table); each pick is
//! `O(n)` plus the keys it adds.
//!
//! A transaction is never moved across batch boundaries: a thread runs its share of batch `b`
//! before its share of batch `b + 1`, though threads do not wait for each other between batches.
//!
//! # The wrapper ([`ThreadAware`])
//!
//! [`ThreadAware::run`] drives a workload on any [`Engine`] with `threads` worker threads and no
//! other thread: a worker whose queue is empty takes the shared batch former (a mutex), generates
//! and declares the next batch, assigns it and queues every thread's share, then goes back to
//! running its own shares with [`txlab_core::run`] (retrying conflicts). So batch formation costs
//! worker time, as a preprocessing step would, instead of a third thread competing for the CPUs;
//! workers do not form a batch while some thread still has two shares waiting (a slow thread
//! bounds how far the others run ahead). Shares are queued in batch order under the former's
//! lock, so every thread runs its shares in batch order. [`Assignment::RoundRobin`] keeps the
//! arrival order instead (the baseline the paper compares against), through the same code.
//! Correctness is the wrapped engine's: the wrapper only decides which thread runs which
//! transaction.

use crate::meter::LimitMeter;
use crate::pipeline::RunLimit;
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use txlab_core::meter::{Meter, Probe, Ticket};
use txlab_core::sync::{Condvar, IgnorePoison, Mutex};
use txlab_core::{AccessSet, Engine, Error, Program, RetryPolicy, TxError, run};
use txlab_workload::{Generator, Workload};

/// Largest accepted number of threads.
pub const MAX_THREADS: usize = 1024;
/// Largest accepted number of transactions per thread and batch.
pub const MAX_PER_THREAD: usize = 1024;

/// How a batch is split among threads.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Assignment {
    /// The paper's thread-aware policy (module docs).
    ThreadAware,
    /// Transaction `i` of the batch to thread `i mod threads` (no reordering; the baseline).
    RoundRobin,
}

/// No member (end of a key's member list).
const NONE: u32 = u32::MAX;

/// Computes thread assignments, reusing its buffers across batches: after the first batches of
/// a run it allocates nothing. Keys are numbered through an open-addressing table whose slots
/// carry the number of the batch that filled them, so starting a batch clears nothing.
#[derive(Debug, Default, Clone)]
pub struct ThreadAssigner {
    /// `conflict[i * n + j]`.
    conflict: Vec<bool>,
    /// `(batch stamp, key, key id)`; a slot whose stamp is not the current one is empty.
    slots: Vec<(u32, (u16, u64), u32)>,
    stamp: u32,
    /// Per key id: the last member accessing it (`NONE` if none).
    heads: Vec<u32>,
    /// `(transaction, writes, previous member of the same key)`: one per (key, transaction).
    members: Vec<(u32, bool, u32)>,
    /// Scratch: one key's members.
    run: Vec<(u32, bool)>,
    /// The key ids of every transaction.
    keys: Vec<Vec<u32>>,
    /// Per key id: whether a transaction already given to the thread being filled accesses it.
    in_thread: Vec<bool>,
    assigned: Vec<bool>,
    with_thread: Vec<u32>,
    shared: Vec<u32>,
    with_rest: Vec<u32>,
    result: Vec<Vec<usize>>,
}

impl ThreadAssigner {
    /// An assigner with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Splits the batch whose declared accesses are `sets` among `threads` threads (module
    /// docs). Returns, per thread, indices into `sets` in the order the thread should run them.
    pub fn assign(
        &mut self,
        sets: &[AccessSet],
        threads: usize,
        policy: Assignment,
    ) -> Result<&[Vec<usize>], Error> {
        if threads == 0 || threads > MAX_THREADS {
            return Err(Error::invalid(
                "threads",
                threads,
                format!("1..={MAX_THREADS}"),
            ));
        }
        let n = sets.len();
        self.result.iter_mut().for_each(Vec::clear);
        self.result.resize_with(threads, Vec::new);
        self.result.truncate(threads);
        let quota = |t: usize| n / threads + usize::from(t < n % threads);
        // With one thread there is no other thread to conflict with: keep the arrival order.
        if policy == Assignment::RoundRobin || threads == 1 {
            for i in 0..n {
                self.result[i % threads].push(i);
            }
            return Ok(&self.result);
        }
        self.build_conflicts(sets);
        self.assigned.clear();
        self.assigned.resize(n, false);
        self.with_rest.clear();
        self.with_rest.extend((0..n).map(|i| {
            self.conflict[i * n..(i + 1) * n]
                .iter()
                .filter(|&&c| c)
                .count() as u32
        }));
        for t in 0..threads {
            self.with_thread.clear();
            self.with_thread.resize(n, 0);
            self.shared.clear();
            self.shared.resize(n, 0);
            self.in_thread.clear();
            self.in_thread.resize(self.heads.len(), false);
            for _ in 0..quota(t) {
                let pick = (0..n)
                    .filter(|&x| !self.assigned[x])
                    .max_by_key(|&x| {
                        (
                            self.with_thread[x],
                            self.shared[x],
                            self.with_rest[x],
                            std::cmp::Reverse(x),
                        )
                    })
                    .ok_or_else(|| {
                        Error::Internal("thread assignment ran out of transactions".into())
                    })?;
                self.assigned[pick] = true;
                self.result[t].push(pick);
                for y in 0..n {
                    if self.conflict[pick * n + y] {
                        self.with_rest[y] -= 1;
                        self.with_thread[y] += 1;
                    }
                }
                for &key in &self.keys[pick] {
                    if !std::mem::replace(&mut self.in_thread[key as usize], true) {
                        let mut m = self.heads[key as usize];
                        while m != NONE {
                            let (y, _, previous) = self.members[m as usize];
                            self.shared[y as usize] += 1;
                            m = previous;
                        }
                    }
                }
            }
        }
        Ok(&self.result)
    }

    fn build_conflicts(&mut self, sets: &[AccessSet]) {
        let n = sets.len();
        self.conflict.clear();
        self.conflict.resize(n * n, false);
        self.keys.iter_mut().for_each(Vec::clear);
        self.keys.resize_with(n, Vec::new);
        let total: usize = sets.iter().map(|s| s.accesses.len()).sum();
        let capacity = (total * 2).next_power_of_two().max(16);
        if self.slots.len() < capacity {
            self.slots = vec![(0, (0, 0), 0); capacity];
            self.stamp = 0;
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Wrapped around: old stamps could look current.
            self.slots.iter_mut().for_each(|slot| slot.0 = 0);
            self.stamp = 1;
        }
        let mask = self.slots.len() - 1;
        self.heads.clear();
        self.members.clear();
        for (i, set) in sets.iter().enumerate() {
            let i = i as u32;
            for &(table, key, access) in &set.accesses {
                let k = (table.0, key);
                let hash = (key ^ (u64::from(table.0) << 48)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let mut h = (hash >> 32) as usize & mask;
                let id = loop {
                    let slot = &mut self.slots[h];
                    if slot.0 != self.stamp {
                        *slot = (self.stamp, k, self.heads.len() as u32);
                        self.heads.push(NONE);
                        break slot.2;
                    }
                    if slot.1 == k {
                        break slot.2;
                    }
                    h = (h + 1) & mask;
                };
                let head = self.heads[id as usize];
                // A transaction's accesses are added together, so a repeat of the same key by
                // the same transaction finds it at the head: merge (writes if any does).
                if head != NONE && self.members[head as usize].0 == i {
                    self.members[head as usize].1 |= access.writes();
                } else {
                    self.members.push((i, access.writes(), head));
                    self.heads[id as usize] = (self.members.len() - 1) as u32;
                    self.keys[i as usize].push(id);
                }
            }
        }
        for id in 0..self.heads.len() {
            self.run.clear();
            let mut m = self.heads[id];
            while m != NONE {
                let (txn, writes, previous) = self.members[m as usize];
                self.run.push((txn, writes));
                m = previous;
            }
            for (a, &(i, wi)) in self.run.iter().enumerate() {
                for &(j, wj) in &self.run[a + 1..] {
                    if wi || wj {
                        self.conflict[i as usize * n + j as usize] = true;
                        self.conflict[j as usize * n + i as usize] = true;
                    }
                }
            }
        }
    }
}

/// How [`ThreadAware`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadAwareConfig {
    /// Worker threads, `1..=1024`.
    pub threads: usize,
    /// Transactions per thread and batch, `1..=1024` (default 4, the paper's).
    pub per_thread: usize,
    /// The assignment policy (default [`Assignment::ThreadAware`]).
    pub assignment: Assignment,
    /// How workers retry conflicts.
    pub retry: RetryPolicy,
}

impl ThreadAwareConfig {
    /// `threads` threads with the paper's defaults.
    pub fn new(threads: usize) -> Self {
        Self {
            threads,
            per_thread: 4,
            assignment: Assignment::ThreadAware,
            retry: RetryPolicy::default(),
        }
    }

    /// Sets the assignment policy.
    pub fn with_assignment(mut self, assignment: Assignment) -> Self {
        self.assignment = assignment;
        self
    }

    /// Sets the transactions per thread and batch.
    pub fn with_per_thread(mut self, per_thread: usize) -> Self {
        self.per_thread = per_thread;
        self
    }

    /// Checks every field; the error names the field, its value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.threads == 0 || self.threads > MAX_THREADS {
            return Err(Error::invalid(
                "threads",
                self.threads,
                format!("1..={MAX_THREADS}"),
            ));
        }
        if self.per_thread == 0 || self.per_thread > MAX_PER_THREAD {
            return Err(Error::invalid(
                "per_thread",
                self.per_thread,
                format!("1..={MAX_PER_THREAD}"),
            ));
        }
        Ok(())
    }
}

/// What a [`ThreadAware::run`] measured.
#[derive(Debug, Clone)]
pub struct ThreadAwareStats {
    /// Wall-clock time of the run.
    pub elapsed: Duration,
    /// Transactions committed.
    pub committed: u64,
    /// Conflicts (aborted attempts that were retried).
    pub conflicts: u64,
    /// Transactions rolled back by their program.
    pub user_aborts: u64,
    /// Batches formed.
    pub batches: u64,
    /// Time spent generating, declaring and assigning batches (by whichever worker formed them).
    pub assign_time: Duration,
    /// Latency (microseconds) from the batch's formation to the commit.
    pub latency_us: Histogram<u64>,
}

impl ThreadAwareStats {
    /// Committed transactions per second.
    pub fn throughput(&self) -> f64 {
        self.committed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A decentralized engine driven with thread-aware batching (module docs).
#[derive(Debug)]
pub struct ThreadAware<E: Engine> {
    engine: E,
    config: ThreadAwareConfig,
}

struct Share<P> {
    /// The programs with the tickets they were issued with.
    programs: Vec<(P, Ticket)>,
}

impl<E: Engine> ThreadAware<E> {
    /// Wraps `engine`.
    pub fn new(engine: E, config: ThreadAwareConfig) -> Result<Self, Error> {
        config.validate()?;
        Ok(Self { engine, config })
    }

    /// The wrapped engine (load and check workloads through it).
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// The configuration.
    pub fn config(&self) -> &ThreadAwareConfig {
        &self.config
    }

    /// Runs `workload` (already loaded) until `limit` on `threads` worker threads, which form
    /// and assign the batches themselves (module docs). Generators are seeded with `seed`.
    pub fn run<W>(
        &self,
        workload: &W,
        limit: RunLimit,
        seed: u64,
    ) -> Result<ThreadAwareStats, Error>
    where
        W: Workload,
        W::Program: Clone + Send,
    {
        let meter = LimitMeter::new(limit)?;
        self.run_metered(workload, seed, &meter)?;
        let totals = meter.totals();
        Ok(ThreadAwareStats {
            elapsed: meter.elapsed(),
            committed: totals.committed,
            conflicts: totals.conflicts,
            user_aborts: totals.user_aborts,
            batches: totals.counter(BATCHES),
            assign_time: Duration::from_nanos(totals.counter(ASSIGN_NS)),
            latency_us: totals.latency_us,
        })
    }

    /// Runs `workload` (already loaded) until `meter` stops issuing, on `threads` worker
    /// threads, reporting to it (`txlab_core::meter`): worker `i` uses probe `i`, the worker
    /// forming a batch issues its transactions (so latency runs from the batch's formation to
    /// the commit), and each commit is reported with its conflicts by the worker that ran it.
    /// The engine counters `batches` and `assign_ns` (time spent generating, declaring and
    /// assigning batches) go through [`Probe::count`]. Generators are seeded with `seed`.
    pub fn run_metered<W, M>(&self, workload: &W, seed: u64, meter: &M) -> Result<(), Error>
    where
        W: Workload,
        W::Program: Clone + Send,
        M: Meter,
    {
        let threads = self.config.threads;
        let batch = threads * self.config.per_thread;
        let former = Mutex::new(Former {
            generator: workload.generator(0, seed),
            assigner: ThreadAssigner::new(),
            sets: vec![AccessSet::default(); batch],
            programs: Vec::with_capacity(batch),
            finished: false,
        });
        let queues: Vec<Mutex<VecDeque<Share<W::Program>>>> =
            (0..threads).map(|_| Mutex::new(VecDeque::new())).collect();
        let consumed = Condvar::new();
        let ctx = FormContext {
            queues: &queues,
            consumed: &consumed,
            threads,
            batch,
            policy: self.config.assignment,
        };
        let retry = self.config.retry;
        let workers: Vec<Result<(), Error>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|me| {
                    let (former, ctx) = (&former, &ctx);
                    scope.spawn(move || -> Result<(), Error> {
                        let mut probe = meter.probe(me);
                        let outcome = self.work(me, former, ctx, retry, &mut probe);
                        if outcome.is_err() {
                            // Let the others stop too instead of waiting for this one.
                            former.lock().ignore_poison().finished = true;
                            ctx.consumed.notify_all();
                            ctx.queues[me].lock().ignore_poison().clear();
                        }
                        outcome
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::Internal("a worker panicked".into())))
                })
                .collect()
        });
        workers.into_iter().collect()
    }

    /// One worker thread: runs the shares in its queue; when the queue is empty, forms the next
    /// batch for every thread (one worker at a time, under the former's lock).
    fn work<G, P>(
        &self,
        me: usize,
        former: &Mutex<Former<G>>,
        ctx: &FormContext<'_, G::Program>,
        retry: RetryPolicy,
        probe: &mut P,
    ) -> Result<(), Error>
    where
        G: Generator,
        G::Program: Clone + Send,
        P: Probe,
    {
        let mut worker = self.engine.worker()?;
        loop {
            let popped = {
                let mut queue = ctx.queues[me].lock().ignore_poison();
                queue.pop_front().map(|share| (share, queue.len()))
            };
            let share = match popped {
                Some((share, left)) => {
                    if left + 1 >= MAX_BACKLOG {
                        // A worker may be waiting for this queue to shrink. Taking the former's
                        // lock orders this pop before or after its check, so the wake-up is
                        // not lost.
                        drop(former.lock().ignore_poison());
                        ctx.consumed.notify_all();
                    }
                    share
                }
                None => {
                    let mut f = former.lock().ignore_poison();
                    loop {
                        // Another worker may have filled this queue meanwhile.
                        if !ctx.queues[me].lock().ignore_poison().is_empty() {
                            break;
                        }
                        if f.finished {
                            return Ok(());
                        }
                        // Do not run ahead of a slow thread by more than MAX_BACKLOG shares.
                        if ctx
                            .queues
                            .iter()
                            .any(|q| q.lock().ignore_poison().len() >= MAX_BACKLOG)
                        {
                            f = ctx.consumed.wait(f).ignore_poison();
                            continue;
                        }
                        if !f.form(ctx, probe) {
                            f.finished = true;
                            ctx.consumed.notify_all();
                            return Ok(());
                        }
                    }
                    continue;
                }
            };
            for (program, ticket) in &share.programs {
                match run(&mut worker, retry, |tx| program.run(tx)) {
                    Ok(c) => {
                        if c.attempts > 1 {
                            probe.retried(ticket, u64::from(c.attempts - 1));
                        }
                        probe.committed(ticket, program.kind());
                    }
                    Err(TxError::UserAbort(_)) => probe.user_aborted(ticket),
                    Err(TxError::Error(e)) => return Err(e),
                    Err(e) => {
                        return Err(Error::Internal(format!("retries exhausted: {e}")));
                    }
                }
            }
        }
    }
}

/// The engine counter of batches formed ([`ThreadAware::run_metered`]).
pub const BATCHES: &str = "batches";
/// The engine counter of nanoseconds spent forming batches ([`ThreadAware::run_metered`]).
pub const ASSIGN_NS: &str = "assign_ns";

/// Most shares a thread's queue may hold before the workers stop forming batches for it.
const MAX_BACKLOG: usize = 2;

/// The batch-formation state the workers share (under a mutex).
struct Former<G: Generator> {
    generator: G,
    assigner: ThreadAssigner,
    sets: Vec<AccessSet>,
    programs: Vec<Option<(G::Program, Ticket)>>,
    /// No more batches will be formed (the meter stopped issuing or a worker failed).
    finished: bool,
}

/// What forming a batch needs besides the [`Former`].
struct FormContext<'a, P> {
    queues: &'a [Mutex<VecDeque<Share<P>>>],
    consumed: &'a Condvar,
    threads: usize,
    batch: usize,
    policy: Assignment,
}

impl<G: Generator> Former<G>
where
    G::Program: Clone,
{
    /// Forms, declares and assigns the next batch (each transaction issued through `probe`) and
    /// queues every thread's share. Returns `false` when the meter issues nothing more (nothing
    /// queued); a batch cut short by the meter is still queued.
    fn form<P: Probe>(&mut self, ctx: &FormContext<'_, G::Program>, probe: &mut P) -> bool {
        let t0 = Instant::now();
        self.programs.clear();
        for set in self.sets.iter_mut().take(ctx.batch) {
            let Some(ticket) = probe.issue() else {
                break;
            };
            let p = self.generator.next().clone();
            set.clear();
            p.declare(set);
            self.programs.push(Some((p, ticket)));
        }
        let size = self.programs.len();
        if size == 0 {
            return false;
        }
        // Cannot fail: `threads` was validated with the configuration.
        let Ok(shares) = self
            .assigner
            .assign(&self.sets[..size], ctx.threads, ctx.policy)
        else {
            return false;
        };
        probe.count(BATCHES, 1);
        probe.count(ASSIGN_NS, t0.elapsed().as_nanos() as u64);
        for (t, share) in shares.iter().enumerate() {
            // Every index appears in exactly one share (checked by the assigner's tests), so
            // each program is taken once.
            let programs = share
                .iter()
                .filter_map(|&i| self.programs[i].take())
                .collect();
            ctx.queues[t]
                .lock()
                .ignore_poison()
                .push_back(Share { programs });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use txlab_core::{Access, TableId};

    fn set(accesses: &[(u64, Access)]) -> AccessSet {
        let mut s = AccessSet::default();
        for &(k, a) in accesses {
            s.push(TableId(0), k, a);
        }
        s
    }

    #[test]
    fn conflicting_transactions_land_on_the_same_thread() {
        use Access::*;
        // Two groups: {0, 2, 4} all write key 1; {1, 3, 5} all write key 2. Arrival order
        // interleaves them; round-robin over 2 threads would split every group.
        let sets: Vec<AccessSet> = (0..6)
            .map(|i| set(&[(1 + (i % 2), ReadWrite), (100 + i, Read)]))
            .collect();
        let mut a = ThreadAssigner::new();
        let shares = a
            .assign(&sets, 2, Assignment::ThreadAware)
            .unwrap()
            .to_vec();
        assert_eq!(shares.len(), 2);
        let mut groups: Vec<Vec<usize>> = shares
            .iter()
            .map(|s| {
                let mut s = s.clone();
                s.sort();
                s
            })
            .collect();
        groups.sort();
        assert_eq!(groups, vec![vec![0, 2, 4], vec![1, 3, 5]]);
        let rr = a.assign(&sets, 2, Assignment::RoundRobin).unwrap();
        assert_eq!(rr, &[vec![0, 2, 4], vec![1, 3, 5]]);
    }

    #[test]
    fn the_three_levels_break_ties_in_order() {
        use Access::*;
        // t0 conflicts with t1 and t2 (most conflicts: first pick). Next, t1 and t2 both
        // conflict with t0 (level 1 tie); t2 shares two keys with t0, t1 one (level 2 decides).
        // t3 only reads what t0 reads: no conflict, but it shares a key.
        let sets = vec![
            set(&[(1, ReadWrite), (2, Read), (3, Read)]),
            set(&[(1, Read)]),
            set(&[(1, Read), (3, Read)]),
            set(&[(2, Read)]),
        ];
        let mut a = ThreadAssigner::new();
        let shares = a.assign(&sets, 2, Assignment::ThreadAware).unwrap();
        assert_eq!(shares[0], vec![0, 2]);
        assert_eq!(shares[1], vec![1, 3]);
    }

    #[test]
    fn shares_are_even_and_cover_the_batch_once() {
        use Access::*;
        let sets: Vec<AccessSet> = (0..11u64)
            .map(|i| set(&[(i % 3, ReadWrite), (i * 7 % 5, Read)]))
            .collect();
        let mut a = ThreadAssigner::new();
        for threads in 1..=5 {
            let shares = a.assign(&sets, threads, Assignment::ThreadAware).unwrap();
            let mut all: Vec<usize> = shares.iter().flatten().copied().collect();
            all.sort();
            assert_eq!(all, (0..11).collect::<Vec<_>>(), "{threads} threads");
            let (min, max) = (
                shares.iter().map(Vec::len).min().unwrap(),
                shares.iter().map(Vec::len).max().unwrap(),
            );
            assert!(max - min <= 1, "{threads} threads: {min}..{max}");
        }
        let e = a.assign(&sets, 0, Assignment::ThreadAware).unwrap_err();
        assert!(e.to_string().contains("threads = 0"), "{e}");
    }

    #[test]
    fn a_reused_assigner_answers_like_a_fresh_one() {
        use Access::*;
        // Batches with different keys, sizes and repeated accesses, through one assigner: stale
        // buffers from an earlier batch must not leak into a later one.
        let batches: Vec<Vec<AccessSet>> = (0..20u64)
            .map(|b| {
                (0..(3 + b % 9))
                    .map(|i| {
                        set(&[
                            ((b * 31 + i * 7) % 13, ReadWrite),
                            ((b + i) % 5, Read),
                            ((b * 31 + i * 7) % 13, Read),
                            (1000 + b, if i % 2 == 0 { BlindWrite } else { Read }),
                        ])
                    })
                    .collect()
            })
            .collect();
        let mut reused = ThreadAssigner::new();
        for (b, sets) in batches.iter().enumerate() {
            for threads in [1, 2, 3] {
                let got = reused
                    .assign(sets, threads, Assignment::ThreadAware)
                    .unwrap()
                    .to_vec();
                let fresh = ThreadAssigner::new()
                    .assign(sets, threads, Assignment::ThreadAware)
                    .unwrap()
                    .to_vec();
                assert_eq!(got, fresh, "batch {b}, {threads} threads");
            }
        }
    }

    /// The greedy of the module docs computed from scratch for every pick (quadratic and slow,
    /// but obviously the definition).
    fn reference(sets: &[AccessSet], threads: usize) -> Vec<Vec<usize>> {
        use std::collections::BTreeSet;
        let keys = |i: usize| -> BTreeSet<(u16, u64)> {
            sets[i].accesses.iter().map(|a| (a.0.0, a.1)).collect()
        };
        let conflict = |i: usize, j: usize| {
            i != j
                && sets[i].accesses.iter().any(|a| {
                    sets[j]
                        .accesses
                        .iter()
                        .any(|b| (a.0, a.1) == (b.0, b.1) && (a.2.writes() || b.2.writes()))
                })
        };
        let n = sets.len();
        let mut assigned = vec![false; n];
        let mut out = vec![Vec::new(); threads];
        for (t, share) in out.iter_mut().enumerate() {
            for _ in 0..(n / threads + usize::from(t < n % threads)) {
                let in_thread: BTreeSet<(u16, u64)> = share.iter().flat_map(|&i| keys(i)).collect();
                let pick = (0..n)
                    .filter(|&x| !assigned[x])
                    .max_by_key(|&x| {
                        (
                            share.iter().filter(|&&y| conflict(x, y)).count(),
                            keys(x).intersection(&in_thread).count(),
                            (0..n).filter(|&y| !assigned[y] && conflict(x, y)).count(),
                            std::cmp::Reverse(x),
                        )
                    })
                    .unwrap();
                assigned[pick] = true;
                share.push(pick);
            }
        }
        out
    }

    #[test]
    fn the_assignment_matches_the_definition() {
        use Access::*;
        let mut state = 0x1234_5678_u64;
        let mut next = move |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        };
        let mut assigner = ThreadAssigner::new();
        for round in 0..60 {
            let n = 2 + next(14) as usize;
            let sets: Vec<AccessSet> = (0..n)
                .map(|_| {
                    let ops: Vec<(u64, Access)> = (0..1 + next(5))
                        .map(|_| {
                            let kind = [Read, ReadWrite, BlindWrite][next(3) as usize];
                            (next(12), kind)
                        })
                        .collect();
                    set(&ops)
                })
                .collect();
            for threads in [2, 3] {
                let got = assigner
                    .assign(&sets, threads, Assignment::ThreadAware)
                    .unwrap()
                    .to_vec();
                assert_eq!(
                    got,
                    reference(&sets, threads),
                    "round {round}, {threads} threads"
                );
            }
        }
    }
}
