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
//! Building the conflict matrix costs `O(n² + Σ accesses)` for a batch of `n`; each pick is
//! `O(n)` plus the keys it adds.
//!
//! A transaction is never moved across batch boundaries: a thread runs its share of batch `b`
//! before its share of batch `b + 1`, though threads do not wait for each other between batches.
//!
//! # The wrapper ([`ThreadAware`])
//!
//! [`ThreadAware::run`] drives a workload on any [`Engine`]: one batcher thread generates,
//! batches and assigns; `threads` worker threads run their shares with [`txlab_core::run`]
//! (retrying conflicts). [`Assignment::RoundRobin`] keeps the arrival order instead (the
//! baseline the paper compares against). Correctness is the wrapped engine's: the wrapper only
//! decides which thread runs which transaction.

use crate::pipeline::RunLimit;
use hdrhistogram::Histogram;
use std::collections::HashMap;
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};
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

/// Computes thread assignments, reusing its buffers across batches.
#[derive(Debug, Default, Clone)]
pub struct ThreadAssigner {
    /// `conflict[i * n + j]`.
    conflict: Vec<bool>,
    /// Key → transactions accessing it, and whether each writes it.
    by_key: HashMap<(u16, u64), Vec<(u32, bool)>>,
    /// Distinct keys of every transaction.
    keys: Vec<Vec<(u16, u64)>>,
    in_thread: HashMap<(u16, u64), ()>,
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
        if policy == Assignment::RoundRobin {
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
                for key in &self.keys[pick] {
                    if self.in_thread.insert(*key, ()).is_none() {
                        for &(y, _) in &self.by_key[key] {
                            self.shared[y as usize] += 1;
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
        // Cleared, not emptied in place: the map must not keep the keys of earlier batches.
        self.by_key.clear();
        self.keys.iter_mut().for_each(Vec::clear);
        self.keys.resize_with(n, Vec::new);
        for (i, set) in sets.iter().enumerate() {
            for &(table, key, access) in &set.accesses {
                let k = (table.0, key);
                let list = self.by_key.entry(k).or_default();
                match list.last_mut() {
                    Some(last) if last.0 == i as u32 => last.1 |= access.writes(),
                    _ => {
                        list.push((i as u32, access.writes()));
                        self.keys[i].push(k);
                    }
                }
            }
        }
        for list in self.by_key.values() {
            for (a, &(i, wi)) in list.iter().enumerate() {
                for &(j, wj) in &list[a + 1..] {
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
    /// Time the batcher spent declaring and assigning.
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
    formed: Instant,
    programs: Vec<P>,
}

#[derive(Debug, Default)]
struct WorkerResult {
    committed: u64,
    conflicts: u64,
    user_aborts: u64,
}

fn histogram() -> Result<Histogram<u64>, Error> {
    Histogram::new_with_bounds(1, 60_000_000, 3)
        .map_err(|e| Error::Internal(format!("latency histogram: {e}")))
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

    /// Runs `workload` (already loaded) until `limit`: a batcher thread assigns batches,
    /// `threads` workers run them (module docs). Generators are seeded with `seed`.
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
        let threads = self.config.threads;
        let batch = threads * self.config.per_thread;
        let started = Instant::now();
        let (total, deadline) = match limit {
            RunLimit::Transactions(0) => {
                return Err(Error::invalid("transactions", 0, "at least 1"));
            }
            RunLimit::Transactions(n) => (n, None),
            RunLimit::Duration(d) => (u64::MAX, Some(started + d)),
        };
        let mut senders = Vec::new();
        let mut inboxes = Vec::new();
        for _ in 0..threads {
            let (tx, rx) = sync_channel::<Share<W::Program>>(2);
            senders.push(tx);
            inboxes.push(rx);
        }
        let policy = self.config.assignment;
        let retry = self.config.retry;
        let (batcher, workers) = std::thread::scope(|scope| {
            let batcher = scope.spawn(move || -> Result<(u64, Duration), Error> {
                let mut generator = workload.generator(0, seed);
                let mut assigner = ThreadAssigner::new();
                let mut programs: Vec<W::Program> = Vec::with_capacity(batch);
                let mut sets: Vec<AccessSet> = vec![AccessSet::default(); batch];
                let (mut produced, mut batches, mut assign_time) = (0u64, 0u64, Duration::ZERO);
                while produced < total && deadline.is_none_or(|d| Instant::now() < d) {
                    let t0 = Instant::now();
                    let size = batch.min((total - produced) as usize);
                    programs.clear();
                    for set in sets.iter_mut().take(size) {
                        let p = generator.next().clone();
                        set.clear();
                        p.declare(set);
                        programs.push(p);
                    }
                    produced += size as u64;
                    batches += 1;
                    let shares = assigner.assign(&sets[..size], threads, policy)?;
                    let formed = Instant::now();
                    assign_time += formed - t0;
                    for (t, share) in shares.iter().enumerate() {
                        let programs = share.iter().map(|&i| programs[i].clone()).collect();
                        if senders[t].send(Share { formed, programs }).is_err() {
                            return Err(Error::Internal("a worker thread stopped".into()));
                        }
                    }
                }
                drop(senders);
                Ok((batches, assign_time))
            });
            let workers: Vec<_> = inboxes
                .into_iter()
                .map(|inbox| {
                    scope.spawn(move || -> Result<(WorkerResult, Histogram<u64>), Error> {
                        let mut worker = self.engine.worker()?;
                        let mut result = WorkerResult::default();
                        let mut latency = histogram()?;
                        while let Ok(share) = inbox.recv() {
                            for program in &share.programs {
                                match run(&mut worker, retry, |tx| program.run(tx)) {
                                    Ok(c) => {
                                        result.committed += 1;
                                        result.conflicts += u64::from(c.attempts - 1);
                                        let us = share.formed.elapsed().as_micros() as u64;
                                        latency.saturating_record(us.max(1));
                                    }
                                    Err(TxError::UserAbort(_)) => result.user_aborts += 1,
                                    Err(TxError::Error(e)) => return Err(e),
                                    Err(e) => {
                                        return Err(Error::Internal(format!(
                                            "retries exhausted: {e}"
                                        )));
                                    }
                                }
                            }
                        }
                        Ok((result, latency))
                    })
                })
                .collect();
            let workers: Vec<_> = workers
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::Internal("a worker panicked".into())))
                })
                .collect();
            let batcher = batcher
                .join()
                .unwrap_or_else(|_| Err(Error::Internal("the batcher panicked".into())));
            (batcher, workers)
        });
        let (batches, assign_time) = batcher?;
        let mut stats = ThreadAwareStats {
            elapsed: started.elapsed(),
            committed: 0,
            conflicts: 0,
            user_aborts: 0,
            batches,
            assign_time,
            latency_us: histogram()?,
        };
        for w in workers {
            let (r, h) = w?;
            stats.committed += r.committed;
            stats.conflicts += r.conflicts;
            stats.user_aborts += r.user_aborts;
            stats
                .latency_us
                .add(&h)
                .map_err(|e| Error::Internal(format!("latency histogram: {e}")))?;
        }
        Ok(stats)
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
}
