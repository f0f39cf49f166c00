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
//! The conflict matrix is kept as bit rows: building it costs `O(a + Σ_k m_k · n / 64)` for a
//! batch of `n` transactions with `a` accesses, `m_k` of them on key `k` (keys are numbered
//! through a reused open-addressing table); each pick is `O(n)` plus its conflicts and the keys
//! it adds. The weight is one `u128` (levels in its high bits, the tie-break in the low ones),
//! so a pick is one maximum over a slice. A batch of at most 64 transactions (up to 16 threads
//! at the paper's 4 per thread) keeps a key's accessors and writers as one word each in the
//! key's slot of the numbering table (no key ids, member lists or per-key vectors), so numbering
//! an access is one probe and two `OR`s; a key joins the batch's list of shared keys when a
//! second transaction reaches it, and only that list is visited afterwards. Under skew most
//! keys of a batch are accessed once, so the list is short. From it come the conflict rows (one
//! word each) and, per transaction, the set of shared keys it accesses (one word per 64 shared
//! keys). The thread being filled keeps the set of shared keys its transactions access, so a
//! pick raises the second level of each unassigned transaction by one `popcount` of that
//! transaction's set against the keys the pick brings (its set minus the thread's). The weight
//! is one `u64` whose tie-break bits name the transaction, so a pick is the maximum of at most
//! 64 words. Rows, weights and key sets are fixed-size arrays indexed by a transaction's bit, so
//! their accesses need no bounds checks. Such a batch in which no key is accessed by two
//! transactions is split in arrival order without computing weights: with every weight reduced
//! to the tie-break, that is what the greedy picks.
//!
//! A transaction is never moved across batch boundaries: it runs on the thread its batch's
//! assignment gave it, or on a thread that took that thread's whole share (below).
//!
//! # The wrapper ([`ThreadAware`])
//!
//! [`ThreadAware::run`] drives a workload on any [`Engine`] with `threads` worker threads and no
//! other thread; the harness pins them as it pins the interactive workers. Formation and
//! assignment are the paper's preprocessing step, kept off the other workers' critical path:
//!
//! - every worker owns a former (its generator and its assigner's buffers), so no lock is held
//!   while a batch is generated, declared and assigned;
//! - a worker whose queue is empty first takes a whole share from the longest other queue
//!   holding at least two (work stealing), and otherwise forms, declares and assigns the next
//!   batch itself and queues share `t` to worker `(me + t) mod threads` (its own share is the
//!   first the assignment filled). While one worker forms, the others run the shares already
//!   queued, and workers that run dry at the same time form disjoint batches in parallel;
//! - queues are short mutex-guarded deques touched once per share (a share is `per_thread`
//!   transactions), with their lengths readable without the lock for stealing;
//! - a former copies each generated program into one it keeps (`Clone::clone_from`, which reuses
//!   the kept one's buffers where the program implements it, as YCSB's does) and swaps it into
//!   a share vector that has been run and handed back to its bin, so in a steady run forming and
//!   running a batch allocates and frees nothing per transaction.
//!
//! Each transaction runs to its end on the worker that popped its share: conflicts are retried
//! with the interactive runner's backoff and reported with their causes, and a transaction past
//! the retry policy's `max_attempts` is abandoned. The counters [`FORM_NS`], [`ASSIGN_NS`] and
//! [`WAIT_NS`] give the time spent generating and declaring, assigning, and queued, per
//! transaction once divided by the commits. [`Assignment::RoundRobin`] keeps the arrival order
//! instead (the baseline the paper compares against), through the same code. Correctness is the
//! wrapped engine's: the wrapper only decides which thread runs which transaction.
//!
//! End of run (`Board`): once the meter stops issuing, workers finish their queues, take the
//! shares left in others', and exit when no former is still queueing; one that must wait for a
//! former sleeps on a condition variable rather than spinning, so oversubscribed runs end within
//! the duration plus the queued shares' work.

use crate::meter::LimitMeter;
use crate::pipeline::RunLimit;
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use txlab_core::protocol::meter::{Meter, Probe, Ticket};
use txlab_core::protocol::sync::{AtomicBool, AtomicUsize, Condvar, IgnorePoison, Mutex, Ordering};
use txlab_core::retry::Backoff;
use txlab_core::{
    AccessSet, Engine, Error, Program, RetryPolicy, TableId, Transaction, TxError, Worker,
};
use txlab_workload::{Generator, Workload};

/// Largest accepted number of threads.
pub const MAX_THREADS: usize = 1024;
/// Largest accepted number of transactions per thread and batch.
pub const MAX_PER_THREAD: usize = 1024;
/// Largest accepted batch (`threads × per_thread`): the conflict matrix has a bit per pair, so
/// this bounds it at 32 MiB (the paper's batches are `4 × 28`).
pub const MAX_BATCH: usize = 16_384;

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

/// A transaction's weight while a thread is filled, in a batch of more than 64 transactions:
/// the three levels and the tie-break packed into one `u128`, compared as a number (module
/// docs). Bits 96..128: conflicts with the thread's transactions; 64..96: shared keys; 32..64:
/// conflicts with the unassigned ones; 0..32: `u32::MAX - index` (earliest first on ties, and
/// never 0). An assigned transaction's weight is 0.
type Weight = u128;
const WITH_THREAD: Weight = 1 << 96;
const SHARED: Weight = 1 << 64;
const WITH_REST: Weight = 1 << 32;
/// The bits that survive from one thread to the next: conflicts with the unassigned ones and the
/// tie-break.
const KEPT: Weight = (1 << 64) - 1;

/// The weight in a batch of at most 64 transactions, packed the same way into one `u64`: bits
/// 57..64: conflicts with the thread's transactions (at most 63); 14..57: shared keys (fewer
/// than 2^43, as the batch has fewer than [`SMALL_MAX_ACCESSES`] accesses); 7..14: conflicts
/// with the unassigned ones (at most 63); 0..7: `64 - index` (1..=64, so the maximum weight
/// names its transaction). An assigned transaction's weight is 0.
type SmallWeight = u64;
const SMALL_WITH_THREAD: SmallWeight = 1 << 57;
const SMALL_SHARED: SmallWeight = 1 << 14;
const SMALL_WITH_REST: SmallWeight = 1 << 7;
/// The tie-break bits of a [`SmallWeight`].
const SMALL_TIE: SmallWeight = SMALL_WITH_REST - 1;
/// The bits of a [`SmallWeight`] that survive from one thread to the next.
const SMALL_KEPT: SmallWeight = SMALL_SHARED - 1;
/// A batch of at most 64 transactions takes the one-word path below this many accesses, so its
/// shared-key counts fit their bits of [`SmallWeight`].
const SMALL_MAX_ACCESSES: usize = 1 << 43;

/// Computes thread assignments, reusing its buffers across batches: after the first batches of
/// a run it allocates nothing. Keys are numbered through an open-addressing table whose slots
/// carry the number of the batch that filled them, so starting a batch clears nothing.
#[derive(Debug, Default, Clone)]
pub struct ThreadAssigner {
    /// Conflict bit rows: transaction `i`'s row is `conflict[i * words..(i + 1) * words]`.
    conflict: Vec<u64>,
    /// `(batch stamp, key, key id)`; a slot whose stamp is not the current one is empty.
    slots: Vec<(u32, (u16, u64), u32)>,
    stamp: u32,
    /// Per key id: the last member accessing it (`NONE` if none).
    heads: Vec<u32>,
    /// `(transaction, writes, previous member of the same key)`: one per (key, transaction).
    members: Vec<(u32, bool, u32)>,
    /// Scratch: one key's members and writers as bit sets.
    scratch: Vec<u64>,
    /// Batches of at most 64 transactions: the numbering table, whose slots hold the key's
    /// accessors and writers as one word each (no key ids, member lists or per-key vectors).
    small: Vec<SmallSlot>,
    /// The current batch's stamp in `small` (its own: the two tables are sized apart).
    small_stamp: u32,
    /// Batches of at most 64 transactions: the slots of `small` whose key two or more
    /// transactions access, in the order they became shared (shared key `s` is `shared[s]`).
    shared: Vec<u32>,
    /// Batches of at most 64 transactions, per 64 shared keys: entry `w` holds, per
    /// transaction `i`, bit `s` set when `i` accesses shared key `64 w + s`.
    shared_bits: Vec<[u64; 64]>,
    /// Per word of `shared_bits`: the shared keys that a transaction of the thread being filled
    /// accesses.
    covered: Vec<u64>,
    /// The ids of every transaction's keys that other transactions of the batch also access.
    keys: Vec<Vec<u32>>,
    /// Per key id: the number (from 1) of the last thread of this batch one of whose
    /// transactions accesses it.
    in_thread: Vec<u32>,
    /// Bit set of the unassigned transactions.
    unassigned: Vec<u64>,
    weight: Vec<Weight>,
    result: Vec<Vec<usize>>,
}

/// A slot of the small batches' numbering table: one key with its accessors and writers.
#[derive(Debug, Default, Clone, Copy)]
struct SmallSlot {
    key: u64,
    /// Bit `i`: transaction `i` accesses the key.
    all: u64,
    /// Bit `i`: transaction `i` writes it.
    writers: u64,
    /// The batch stamp; a slot whose stamp is not the current one is empty.
    stamp: u32,
    table: u16,
}

/// The slot of the numbering table where `(table, key)` starts its probe.
#[inline]
fn home(table: u16, key: u64, mask: usize) -> usize {
    let hash = (key ^ (u64::from(table) << 48)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (hash >> 32) as usize & mask
}

/// The lowest set bit of a non-zero word, as an index below 64.
#[inline]
fn lowest(bits: u64) -> usize {
    bits.trailing_zeros() as usize & 63
}

/// Splits `0..n` among the shares in arrival order, `n / shares` each and one more for the first
/// `n % shares`.
fn split_in_order(result: &mut [Vec<usize>], n: usize) {
    let (base, extra) = (n / result.len(), n % result.len());
    let mut next = 0;
    for (t, share) in result.iter_mut().enumerate() {
        let end = next + base + usize::from(t < extra);
        share.extend(next..end);
        next = end;
    }
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
        if n >= u32::MAX as usize {
            return Err(Error::invalid(
                "batch",
                n,
                format!("fewer than {} transactions", u32::MAX),
            ));
        }
        self.result.iter_mut().for_each(Vec::clear);
        self.result.resize_with(threads, Vec::new);
        self.result.truncate(threads);
        // With one thread there is no other thread to conflict with: keep the arrival order.
        if policy == Assignment::RoundRobin || threads == 1 {
            for i in 0..n {
                self.result[i % threads].push(i);
            }
            return Ok(&self.result);
        }
        let total: usize = sets.iter().map(|s| s.accesses.len()).sum();
        if n <= 64 && total < SMALL_MAX_ACCESSES {
            self.assign_small(sets, total)?;
        } else {
            self.assign_large(sets, total)?;
        }
        Ok(&self.result)
    }

    /// The assignment of a batch of at most 64 transactions with fewer than
    /// [`SMALL_MAX_ACCESSES`] accesses: conflict rows, weights and shared-key sets are one word
    /// per transaction (per 64 shared keys for the latter), kept in fixed-size arrays.
    fn assign_small(&mut self, sets: &[AccessSet], total: usize) -> Result<(), Error> {
        let n = sets.len();
        self.number_small(sets, total);
        if self.shared.is_empty() {
            // No key is accessed by two transactions: every weight is the tie-break alone, so
            // the greedy gives each thread the next transactions in arrival order.
            split_in_order(&mut self.result, n);
            return Ok(());
        }
        // Only shared keys make conflicts or shared accesses: a key's accessors conflict with
        // its writers, and its writers with all its accessors.
        let table = &self.small[..];
        let Some(mask) = table.len().checked_sub(1) else {
            return Err(Error::Internal("thread assignment lost its table".into()));
        };
        let mut conflict = [0u64; 64];
        self.shared_bits.clear();
        self.shared_bits
            .resize(self.shared.len().div_ceil(64), [0; 64]);
        for (slots, bits) in self.shared.chunks(64).zip(self.shared_bits.iter_mut()) {
            for (s, &h) in slots.iter().enumerate() {
                let slot = &table[h as usize & mask];
                let (all, writers) = (slot.all, slot.writers);
                let key_bit = 1u64 << (s & 63);
                let mut rest = all;
                while rest != 0 {
                    let i = lowest(rest);
                    rest &= rest - 1;
                    conflict[i] |= if writers >> i & 1 != 0 { all } else { writers };
                    bits[i] |= key_bit;
                }
            }
        }
        let mut weight = [0 as SmallWeight; 64];
        for (i, (w, row)) in weight[..n].iter_mut().zip(&mut conflict[..n]).enumerate() {
            // A transaction does not conflict with itself.
            *row &= !(1u64 << i);
            *w = SmallWeight::from(row.count_ones()) * SMALL_WITH_REST + (64 - i as u64);
        }
        let mut unassigned = u64::MAX >> (64 - n);
        self.covered.clear();
        self.covered.resize(self.shared_bits.len(), 0);
        let threads = self.result.len();
        let (base, extra) = (n / threads, n % threads);
        for (t, share) in self.result.iter_mut().enumerate() {
            let quota = base + usize::from(t < extra);
            if quota == 0 {
                break;
            }
            if t > 0 {
                weight[..n].iter_mut().for_each(|w| *w &= SMALL_KEPT);
                self.covered.fill(0);
            }
            for _ in 0..quota {
                let best = weight[..n].iter().copied().max().unwrap_or(0);
                if best == 0 {
                    return Err(Error::Internal(
                        "thread assignment ran out of transactions".into(),
                    ));
                }
                let pick = (64 - (best & SMALL_TIE)) as usize & 63;
                share.push(pick);
                unassigned &= !(1u64 << pick);
                weight[pick] = 0;
                let mut bits = conflict[pick] & unassigned;
                while bits != 0 {
                    weight[lowest(bits)] += SMALL_WITH_THREAD - SMALL_WITH_REST;
                    bits &= bits - 1;
                }
                for (keys, covered) in self.shared_bits.iter().zip(self.covered.iter_mut()) {
                    let fresh = keys[pick] & !*covered;
                    if fresh == 0 {
                        continue;
                    }
                    *covered |= fresh;
                    let mut bits = unassigned;
                    while bits != 0 {
                        let y = lowest(bits);
                        bits &= bits - 1;
                        weight[y] +=
                            SmallWeight::from((keys[y] & fresh).count_ones()) * SMALL_SHARED;
                    }
                }
            }
        }
        Ok(())
    }

    /// Numbers the accesses of a batch of at most 64 transactions through `small`: a key's
    /// slot collects its accessors and writers as bits, and joins `shared` when a second
    /// transaction accesses it.
    fn number_small(&mut self, sets: &[AccessSet], total: usize) {
        let capacity = (total * 2).next_power_of_two().max(16);
        if self.small.len() < capacity {
            self.small = vec![SmallSlot::default(); capacity];
            self.small_stamp = 0;
        }
        self.small_stamp = self.small_stamp.wrapping_add(1);
        if self.small_stamp == 0 {
            // Wrapped around: old stamps could look current.
            self.small.iter_mut().for_each(|slot| slot.stamp = 0);
            self.small_stamp = 1;
        }
        self.shared.clear();
        let stamp = self.small_stamp;
        let table = &mut self.small[..];
        let Some(mask) = table.len().checked_sub(1) else {
            return;
        };
        for (i, set) in sets.iter().enumerate() {
            let bit = 1u64 << (i & 63);
            for &(TableId(t), key, access) in &set.accesses {
                let writes = if access.writes() { bit } else { 0 };
                let mut h = home(t, key, mask);
                loop {
                    let slot = &mut table[h];
                    if slot.stamp != stamp {
                        *slot = SmallSlot {
                            key,
                            all: bit,
                            writers: writes,
                            stamp,
                            table: t,
                        };
                        break;
                    }
                    if slot.key == key && slot.table == t {
                        if slot.all & bit == 0 {
                            // One accessor so far (another transaction): now shared.
                            if slot.all.is_power_of_two() {
                                self.shared.push(h as u32);
                            }
                            slot.all |= bit;
                        }
                        slot.writers |= writes;
                        break;
                    }
                    h = (h + 1) & mask;
                }
            }
        }
    }

    /// The assignment of any other batch (module docs): conflict rows of `n.div_ceil(64)` words,
    /// keys numbered with member lists.
    fn assign_large(&mut self, sets: &[AccessSet], total: usize) -> Result<(), Error> {
        let n = sets.len();
        let threads = self.result.len();
        let words = n.div_ceil(64);
        self.build_conflicts(sets, words, total);
        self.unassigned.clear();
        self.unassigned.resize(words, !0);
        if !n.is_multiple_of(64) {
            self.unassigned[words - 1] = (1u64 << (n % 64)) - 1;
        }
        self.weight.clear();
        self.weight.extend(
            self.conflict
                .chunks_exact(words)
                .enumerate()
                .map(|(i, row)| {
                    let with_rest: u32 = row.iter().map(|w| w.count_ones()).sum();
                    Weight::from(with_rest) * WITH_REST + Weight::from(u32::MAX - i as u32)
                }),
        );
        self.in_thread.clear();
        self.in_thread.resize(self.heads.len(), 0);
        let (base, extra) = (n / threads, n % threads);
        for t in 0..threads {
            let mark = t as u32 + 1;
            self.weight.iter_mut().for_each(|w| *w &= KEPT);
            for _ in 0..base + usize::from(t < extra) {
                let pick = self.pick()?;
                self.result[t].push(pick);
                self.take(pick, words, mark);
            }
        }
        Ok(())
    }

    /// The unassigned transaction of highest weight.
    fn pick(&self) -> Result<usize, Error> {
        let (pick, best) =
            self.weight.iter().enumerate().fold(
                (0, 0),
                |(bi, bw), (i, &w)| if w > bw { (i, w) } else { (bi, bw) },
            );
        if best == 0 {
            return Err(Error::Internal(
                "thread assignment ran out of transactions".into(),
            ));
        }
        Ok(pick)
    }

    /// Gives `pick` to the thread numbered `mark` and updates the others' weights.
    fn take(&mut self, pick: usize, words: usize, mark: u32) {
        self.weight[pick] = 0;
        self.unassigned[pick / 64] &= !(1 << (pick % 64));
        let row = &self.conflict[pick * words..(pick + 1) * words];
        for (j, (&row, &unassigned)) in row.iter().zip(&self.unassigned).enumerate() {
            let mut bits = row & unassigned;
            while bits != 0 {
                let y = j * 64 + lowest(bits);
                bits &= bits - 1;
                self.weight[y] += WITH_THREAD - WITH_REST;
            }
        }
        for &key in &self.keys[pick] {
            if std::mem::replace(&mut self.in_thread[key as usize], mark) == mark {
                continue;
            }
            let mut m = self.heads[key as usize];
            while m != NONE {
                let (y, _, previous) = self.members[m as usize];
                let w = &mut self.weight[y as usize];
                if *w != 0 {
                    *w += SHARED;
                }
                m = previous;
            }
        }
    }

    fn build_conflicts(&mut self, sets: &[AccessSet], words: usize, total: usize) {
        let n = sets.len();
        self.conflict.clear();
        self.conflict.resize(n * words, 0);
        self.keys.iter_mut().for_each(Vec::clear);
        self.keys.resize_with(n, Vec::new);
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
                let mut h = home(table.0, key, mask);
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
        // Only keys of two or more transactions make conflicts or shared accesses: a key's
        // members conflict with its writers, and its writers with all its members (bit rows, so
        // a hot key costs its members times the row length, not its members squared).
        let (heads, members) = (&self.heads, &self.members);
        let shared = |id: u32| members[heads[id as usize] as usize].2 != NONE;
        for keys in &mut self.keys[..n] {
            keys.retain(|&id| shared(id));
        }
        self.scratch.clear();
        self.scratch.resize(2 * words, 0);
        for id in 0..heads.len() as u32 {
            if !shared(id) {
                continue;
            }
            let (all, writers) = self.scratch.split_at_mut(words);
            all.fill(0);
            writers.fill(0);
            let mut m = heads[id as usize];
            while m != NONE {
                let (txn, writes, previous) = members[m as usize];
                let bit = 1 << (txn % 64);
                all[txn as usize / 64] |= bit;
                if writes {
                    writers[txn as usize / 64] |= bit;
                }
                m = previous;
            }
            let mut m = heads[id as usize];
            while m != NONE {
                let (txn, writes, previous) = members[m as usize];
                let with = if writes { &*all } else { &*writers };
                let row = &mut self.conflict[txn as usize * words..(txn as usize + 1) * words];
                row.iter_mut().zip(with).for_each(|(r, w)| *r |= w);
                m = previous;
            }
        }
        for i in 0..n {
            // A transaction does not conflict with itself.
            self.conflict[i * words + i / 64] &= !(1 << (i % 64));
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
        let batch = self.threads * self.per_thread;
        if batch > MAX_BATCH {
            return Err(Error::invalid(
                "threads × per_thread",
                format!("{} × {} = {batch}", self.threads, self.per_thread),
                format!("at most {MAX_BATCH} transactions per batch"),
            ));
        }
        Ok(())
    }
}

/// What a [`ThreadAware::run`] measured.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ThreadAwareStats {
    /// Wall-clock time of the run.
    pub elapsed: Duration,
    /// Transactions committed.
    pub committed: u64,
    /// Conflicts (aborted attempts, retried or not).
    pub conflicts: u64,
    /// Transactions given up after the retry policy's `max_attempts`.
    pub abandoned: u64,
    /// Transactions rolled back by their program.
    pub user_aborts: u64,
    /// Batches formed.
    pub batches: u64,
    /// Shares a worker took from another worker's queue.
    pub stolen: u64,
    /// Time spent generating and declaring the batches' transactions (all formers together).
    pub form_time: Duration,
    /// Time spent in the assignment ([`ThreadAssigner::assign`], all formers together).
    pub assign_time: Duration,
    /// Time transactions spent queued, from their batch's formation to the start of their share.
    pub wait_time: Duration,
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

/// The engine counter of batches formed ([`ThreadAware::run_metered`]).
pub const BATCHES: &str = "batches";
/// The engine counter of nanoseconds spent generating and declaring batches' transactions.
pub const FORM_NS: &str = "form_ns";
/// The engine counter of nanoseconds spent in the assignment.
pub const ASSIGN_NS: &str = "assign_ns";
/// The engine counter of nanoseconds transactions spent queued: per share, the time from its
/// batch's formation to the start of the share, times its transactions.
pub const WAIT_NS: &str = "wait_ns";
/// The engine counter of shares taken from another worker's queue.
pub const STOLEN: &str = "stolen_shares";

/// A worker whose queue is empty takes a share from another worker's queue holding at least
/// this many shares instead of forming a batch (module docs).
const STEAL_AT: usize = 2;

/// One thread's transactions of one batch, in the order the assignment gave.
struct Share<P> {
    /// When the batch was formed (the start of its queueing time).
    formed: Instant,
    /// The worker whose former made it (where its vector goes back once run).
    origin: usize,
    /// The programs with the tickets they were issued with.
    programs: Vec<(P, Ticket)>,
}

/// A share's programs with their tickets.
type Programs<P> = Vec<(P, Ticket)>;

/// At most this many run shares' vectors wait in a former's bin for reuse; more are dropped.
const SPARE_SHARES: usize = 64;

/// One worker's queue of shares.
struct ShareQueue<P> {
    shares: Mutex<VecDeque<Share<P>>>,
    /// `shares.len()`, readable without the lock (a hint for stealing).
    len: AtomicUsize,
}

/// What the workers share: their queues and the end-of-run protocol.
///
/// End of run: a former registers in `forming` before it checks `stopped` and issues anything,
/// and leaves after its shares are queued; the first former whose meter stops issuing sets
/// `stopped`. A worker exits once `stopped` is set, no former is registered and its own queue is
/// empty. All three are `SeqCst`: a former that registers after an exiting worker read
/// `forming == 0` then reads `stopped` as set and forms nothing, and one that registered before
/// has queued its shares before that worker reads its queue. A worker that finds the run
/// stopped while formers are still registered sleeps on `left` (not spinning: oversubscribed,
/// spinning workers would keep the last formers off the CPUs); a former leaving takes `idle`
/// before notifying, so the sleeper either sees the new count or is woken.
struct Board<P> {
    queues: Box<[ShareQueue<P>]>,
    /// Per former: the vectors of its shares that have been run, with their programs, to be
    /// refilled (`Former::deal`).
    spare: Box<[Mutex<Vec<Programs<P>>>]>,
    forming: AtomicUsize,
    stopped: AtomicBool,
    idle: Mutex<()>,
    left: Condvar,
}

impl<P> Board<P> {
    fn new(threads: usize) -> Self {
        Self {
            queues: (0..threads)
                .map(|_| ShareQueue {
                    shares: Mutex::new(VecDeque::new()),
                    len: AtomicUsize::new(0),
                })
                .collect(),
            spare: (0..threads).map(|_| Mutex::new(Vec::new())).collect(),
            forming: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
            idle: Mutex::new(()),
            left: Condvar::new(),
        }
    }

    fn push(&self, thread: usize, share: Share<P>) {
        let q = &self.queues[thread];
        let mut shares = q.shares.lock().ignore_poison();
        shares.push_back(share);
        q.len.store(shares.len(), Ordering::Relaxed);
    }

    fn pop(&self, thread: usize) -> Option<Share<P>> {
        let q = &self.queues[thread];
        let mut shares = q.shares.lock().ignore_poison();
        let share = shares.pop_front();
        q.len.store(shares.len(), Ordering::Relaxed);
        share
    }

    /// Hands a run share's vector (programs included) back to the former that made it.
    fn recycle(&self, share: Share<P>) {
        let mut spare = self.spare[share.origin].lock().ignore_poison();
        if spare.len() < SPARE_SHARES {
            spare.push(share.programs);
        }
    }

    /// The longest other queue holding at least `at_least` shares, if any.
    fn backlogged(&self, me: usize, at_least: usize) -> Option<usize> {
        (0..self.queues.len())
            .filter(|&t| t != me)
            .map(|t| (self.queues[t].len.load(Ordering::Relaxed), t))
            .filter(|&(len, _)| len >= at_least)
            .max()
            .map(|(_, t)| t)
    }

    /// Registers a former; `false` (unregistered) once the run has stopped.
    fn begin_forming(&self) -> bool {
        self.forming.fetch_add(1, Ordering::SeqCst);
        if self.stopped.load(Ordering::SeqCst) {
            self.forming.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    fn end_forming(&self, meter_stopped: bool) {
        if meter_stopped {
            self.stop();
        }
        self.forming.fetch_sub(1, Ordering::SeqCst);
        if self.stopped.load(Ordering::SeqCst) {
            drop(self.idle.lock().ignore_poison());
            self.left.notify_all();
        }
    }

    /// After the run stopped: sleeps until no former is registered or one queued a share for
    /// `me`.
    fn await_formers(&self, me: usize) {
        let idle = self.idle.lock().ignore_poison();
        let _idle = self
            .left
            .wait_while(idle, |_| {
                self.forming.load(Ordering::SeqCst) > 0
                    && self.queues[me].len.load(Ordering::SeqCst) == 0
            })
            .ignore_poison();
    }

    fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    fn may_exit(&self) -> bool {
        self.stopped.load(Ordering::SeqCst) && self.forming.load(Ordering::SeqCst) == 0
    }
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

    /// Runs `workload` (already loaded) until `limit` on `threads` unpinned worker threads,
    /// which form and assign the batches themselves (module docs). Worker `i`'s generator is
    /// `workload.generator(i, seed)`.
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
        self.run_metered(workload, seed, &meter, |_| None)?;
        let totals = meter.totals();
        let ns = |name| Duration::from_nanos(totals.counter(name));
        Ok(ThreadAwareStats {
            elapsed: meter.elapsed(),
            committed: totals.committed,
            conflicts: totals.conflicts,
            abandoned: totals.abandoned,
            user_aborts: totals.user_aborts,
            batches: totals.counter(BATCHES),
            stolen: totals.counter(STOLEN),
            form_time: ns(FORM_NS),
            assign_time: ns(ASSIGN_NS),
            wait_time: ns(WAIT_NS),
            latency_us: totals.latency_us,
        })
    }

    /// Runs `workload` (already loaded) until `meter` stops issuing, on `threads` worker
    /// threads, reporting to it (`txlab_core::protocol::meter`): worker `i` first calls `start(i)` (the
    /// harness pins it there and returns its CPU), then uses probe `i` and generator
    /// `workload.generator(i, seed)`. A worker forming a batch issues its transactions (latency
    /// runs from the batch's formation to the commit); the worker that runs a transaction reports
    /// each aborted attempt with its cause, then the commit, the user abort, or the abandonment
    /// after the retry policy's `max_attempts`. The engine counters [`BATCHES`], [`FORM_NS`],
    /// [`ASSIGN_NS`], [`WAIT_NS`] and [`STOLEN`] go through [`Probe::count`]. Returns what each
    /// worker's `start` returned.
    pub fn run_metered<W, M, S>(
        &self,
        workload: &W,
        seed: u64,
        meter: &M,
        start: S,
    ) -> Result<Vec<Option<usize>>, Error>
    where
        W: Workload,
        W::Program: Clone + Send,
        M: Meter,
        S: Fn(usize) -> Option<usize> + Sync,
    {
        let threads = self.config.threads;
        let board = Board::new(threads);
        let workers: Vec<Result<Option<usize>, Error>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|me| {
                    let (board, start) = (&board, &start);
                    scope.spawn(move || -> Result<Option<usize>, Error> {
                        let cpu = start(me);
                        let mut probe = meter.probe(me);
                        let mut former = Former::new(workload.generator(me, seed), &self.config);
                        let outcome = self.work(me, board, &mut former, &mut probe);
                        if outcome.is_err() {
                            // The others stop forming and finish their queues.
                            board.stop();
                        }
                        outcome.map(|()| cpu)
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

    /// One worker thread: runs its queue's shares; when its queue is empty, takes a share from a
    /// backlogged queue or forms the next batch itself (module docs).
    fn work<G, P>(
        &self,
        me: usize,
        board: &Board<G::Program>,
        former: &mut Former<G>,
        probe: &mut P,
    ) -> Result<(), Error>
    where
        G: Generator,
        G::Program: Clone + Send,
        P: Probe,
    {
        let mut worker = self.engine.worker()?;
        let mut backoff = Backoff::new(self.config.retry, 0x9E37_79B9 ^ me as u64);
        loop {
            let share = match board.pop(me) {
                Some(share) => share,
                None => match self.next_share(me, board, former, probe) {
                    Some(share) => share,
                    None => return Ok(()),
                },
            };
            let started = Instant::now();
            let waited = started.saturating_duration_since(share.formed).as_nanos() as u64;
            probe.count(WAIT_NS, waited * share.programs.len() as u64);
            for (program, ticket) in &share.programs {
                self.execute(&mut worker, &mut backoff, program, ticket, probe)?;
            }
            board.recycle(share);
        }
    }

    /// A share for worker `me`, whose queue was empty: its own queue's if filled meanwhile,
    /// a backlogged worker's, or the first of a batch it forms; `None` once the run has ended.
    fn next_share<G, P>(
        &self,
        me: usize,
        board: &Board<G::Program>,
        former: &mut Former<G>,
        probe: &mut P,
    ) -> Option<Share<G::Program>>
    where
        G: Generator,
        G::Program: Clone + Send,
        P: Probe,
    {
        loop {
            if let Some(share) = board.pop(me) {
                return Some(share);
            }
            let stopped = board.stopped.load(Ordering::SeqCst);
            let victim = board.backlogged(me, if stopped { 1 } else { STEAL_AT });
            if let Some(share) = victim.and_then(|v| board.pop(v)) {
                probe.count(STOLEN, 1);
                return Some(share);
            }
            if board.begin_forming() {
                let issuing = former.form(me, board, self.config.assignment, probe);
                board.end_forming(!issuing);
                continue;
            }
            if board.may_exit() {
                // A former that registered before the check above has queued its shares.
                return board.pop(me);
            }
            board.await_formers(me);
        }
    }

    /// Runs one transaction to its end, retrying conflicts with backoff like the interactive
    /// runner, and reports it.
    fn execute<P: Probe, Prog: Program>(
        &self,
        worker: &mut E::Worker<'_>,
        backoff: &mut Backoff,
        program: &Prog,
        ticket: &Ticket,
        probe: &mut P,
    ) -> Result<(), Error> {
        let policy = self.config.retry;
        backoff.reset();
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let mut tx = worker.begin();
            let outcome = match program.run(&mut tx) {
                Ok(_) => tx.commit().map(|_| ()),
                Err(e) => {
                    tx.abort();
                    Err(e)
                }
            };
            match outcome {
                Ok(()) => {
                    probe.committed(ticket, program.kind());
                    return Ok(());
                }
                Err(TxError::Conflict(c)) => {
                    if policy.max_attempts.is_some_and(|m| attempts >= m) {
                        probe.abandoned(ticket, &c.cause);
                        return Ok(());
                    }
                    probe.conflict(ticket, &c.cause);
                    backoff.wait();
                }
                Err(TxError::UserAbort(_)) => {
                    probe.user_aborted(ticket);
                    return Ok(());
                }
                Err(TxError::Error(e)) => return Err(e),
                Err(other) => return Err(Error::Internal(format!("unexpected outcome: {other}"))),
            }
        }
    }
}

/// One worker's batch former: its generator, the assigner's buffers and the programs it keeps
/// for reuse.
///
/// Programs are copied into kept ones with `Clone::clone_from` (no allocation for programs that
/// reuse their buffers, such as YCSB's), then swapped into the vectors of shares that have been
/// run and came back (`Board::recycle`), so in a steady run forming a batch allocates nothing.
struct Former<G: Generator> {
    generator: G,
    assigner: ThreadAssigner,
    sets: Vec<AccessSet>,
    /// The batch being formed in arrival order (`..size`); the entries past it are kept programs
    /// whose buffers the next batches reuse.
    programs: Vec<(G::Program, Ticket)>,
    /// Share vectors to refill, taken from this former's bin in `Board::spare`.
    free: Vec<Vec<(G::Program, Ticket)>>,
    threads: usize,
}

impl<G: Generator> Former<G>
where
    G::Program: Clone,
{
    fn new(generator: G, config: &ThreadAwareConfig) -> Self {
        let batch = config.threads * config.per_thread;
        Self {
            generator,
            assigner: ThreadAssigner::new(),
            sets: vec![AccessSet::default(); batch],
            programs: Vec::with_capacity(batch),
            free: Vec::new(),
            threads: config.threads,
        }
    }

    /// Forms, declares and assigns the next batch (each transaction issued through `probe`) and
    /// queues share `t` to worker `(me + t) % threads`, so the former's own share is the first
    /// the assignment filled. Returns `false` when the meter stopped issuing (a batch cut short
    /// by it is still queued).
    fn form<P: Probe>(
        &mut self,
        me: usize,
        board: &Board<G::Program>,
        policy: Assignment,
        probe: &mut P,
    ) -> bool {
        let t0 = Instant::now();
        let mut size = 0;
        let mut issuing = true;
        for set in self.sets.iter_mut() {
            let Some(ticket) = probe.issue() else {
                issuing = false;
                break;
            };
            let p = self.generator.next();
            set.clear();
            p.declare(set);
            match self.programs.get_mut(size) {
                Some(kept) => {
                    kept.0.clone_from(p);
                    kept.1 = ticket;
                }
                None => self.programs.push((p.clone(), ticket)),
            }
            size += 1;
        }
        if size == 0 {
            return issuing;
        }
        let t1 = Instant::now();
        // `threads` was validated with the configuration, so the assignment cannot fail.
        let shares = match self
            .assigner
            .assign(&self.sets[..size], self.threads, policy)
        {
            Ok(shares) => shares,
            Err(_) => return false,
        };
        let t2 = Instant::now();
        probe.count(BATCHES, 1);
        probe.count(FORM_NS, (t1 - t0).as_nanos() as u64);
        probe.count(ASSIGN_NS, (t2 - t1).as_nanos() as u64);
        for (t, share) in shares.iter().enumerate() {
            if share.is_empty() {
                continue;
            }
            if self.free.is_empty() {
                std::mem::swap(&mut self.free, &mut *board.spare[me].lock().ignore_poison());
            }
            let mut programs = self.free.pop().unwrap_or_default();
            programs.truncate(share.len());
            // Every index appears in exactly one share (checked by the assigner's tests), so
            // each program of the batch goes to one share; the kept program swapped in for it
            // is overwritten by a later batch.
            for (k, &i) in share.iter().enumerate() {
                match programs.get_mut(k) {
                    Some(slot) => std::mem::swap(slot, &mut self.programs[i]),
                    None => programs.push(self.programs[i].clone()),
                }
            }
            board.push(
                (me + t) % self.threads,
                Share {
                    formed: t0,
                    origin: me,
                    programs,
                },
            );
        }
        issuing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use txlab_core::Access;

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

    #[test]
    fn the_numbering_stamp_wraps_around_cleanly() {
        use Access::*;
        // Keys of one batch left in the table must not look current once the stamp wraps.
        let batches: Vec<Vec<AccessSet>> = (0..4u64)
            .map(|b| {
                (0..6)
                    .map(|i| set(&[((b + i) % 3, ReadWrite), (10 + i % 2, Read)]))
                    .collect()
            })
            .collect();
        let mut a = ThreadAssigner::new();
        a.assign(&batches[0], 2, Assignment::ThreadAware).unwrap();
        a.small_stamp = u32::MAX - 1;
        for (b, sets) in batches.iter().enumerate() {
            let got = a.assign(sets, 2, Assignment::ThreadAware).unwrap().to_vec();
            assert_eq!(got, reference(sets, 2), "batch {b}");
        }
        assert_eq!(a.small_stamp, 3, "the stamp wrapped to 1 and went on");
    }

    /// The greedy of the module docs computed from scratch for every pick (slow, but obviously
    /// the definition; only the pairwise conflicts are computed once).
    fn reference(sets: &[AccessSet], threads: usize) -> Vec<Vec<usize>> {
        use std::collections::BTreeSet;
        let n = sets.len();
        let keys: Vec<BTreeSet<(u16, u64)>> = sets
            .iter()
            .map(|s| s.accesses.iter().map(|a| (a.0.0, a.1)).collect())
            .collect();
        let conflicts = |i: usize, j: usize| {
            i != j
                && sets[i].accesses.iter().any(|a| {
                    sets[j]
                        .accesses
                        .iter()
                        .any(|b| (a.0, a.1) == (b.0, b.1) && (a.2.writes() || b.2.writes()))
                })
        };
        let conflict: Vec<Vec<bool>> = (0..n)
            .map(|i| (0..n).map(|j| conflicts(i, j)).collect())
            .collect();
        let mut assigned = vec![false; n];
        let mut out: Vec<Vec<usize>> = vec![Vec::new(); threads];
        for (t, share) in out.iter_mut().enumerate() {
            for _ in 0..(n / threads + usize::from(t < n % threads)) {
                let in_thread: BTreeSet<(u16, u64)> = share
                    .iter()
                    .flat_map(|&i| keys[i].iter().copied())
                    .collect();
                let pick = (0..n)
                    .filter(|&x| !assigned[x])
                    .max_by_key(|&x| {
                        (
                            share.iter().filter(|&&y| conflict[x][y]).count(),
                            keys[x].intersection(&in_thread).count(),
                            (0..n).filter(|&y| !assigned[y] && conflict[x][y]).count(),
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

    /// A seeded linear congruential stream: each call draws a number below its argument.
    fn lcg(mut state: u64) -> impl FnMut(u64) -> u64 {
        move |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        }
    }

    #[test]
    fn more_than_64_shared_keys_in_a_small_batch_match_the_definition() {
        use Access::*;
        // 64 transactions of 12 accesses on 300 keys: well over 64 keys are shared, so the
        // shared-key sets of the one-word path take several words.
        let mut next = lcg(0x9e37_79b9);
        let sets: Vec<AccessSet> = (0..64)
            .map(|_| {
                let ops: Vec<(u64, Access)> = (0..12)
                    .map(|_| ([Read, ReadWrite, BlindWrite][next(3) as usize], next(300)))
                    .map(|(kind, key)| (key, kind))
                    .collect();
                set(&ops)
            })
            .collect();
        let mut a = ThreadAssigner::new();
        for threads in [2, 5, 16] {
            let got = a
                .assign(&sets, threads, Assignment::ThreadAware)
                .unwrap()
                .to_vec();
            assert!(a.shared.len() > 64, "{} shared keys", a.shared.len());
            assert_eq!(got, reference(&sets, threads), "{threads} threads");
        }
    }

    /// A batch of random accesses: `n` transactions of up to `ops` accesses each on `keys` keys
    /// of two tables.
    fn batch(n: usize, keys: u64, ops: usize) -> impl Strategy<Value = Vec<AccessSet>> {
        let access = (0u16..2, 0..keys, 0usize..3).prop_map(|(table, key, kind)| {
            (
                TableId(table),
                key,
                [Access::Read, Access::ReadWrite, Access::BlindWrite][kind],
            )
        });
        proptest::collection::vec(proptest::collection::vec(access, 0..=ops), n).prop_map(|txns| {
            txns.into_iter()
                .map(|accesses| AccessSet {
                    accesses,
                    dependent: false,
                })
                .collect()
        })
    }

    /// Batches of 1..=200 transactions (most of them at most 64, the one-word path), 1..=16
    /// threads, and key spaces from one key (everything overlaps) to 400.
    fn batches() -> impl Strategy<Value = (Vec<Vec<AccessSet>>, usize)> {
        let size = prop_oneof![3 => 1usize..=64, 1 => 65usize..=200];
        let one =
            (size, 1u64..=400, 1usize..=20).prop_flat_map(|(n, keys, ops)| batch(n, keys, ops));
        (proptest::collection::vec(one, 1..=3), 1usize..=16)
    }

    proptest::proptest! {
        #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

        /// One assigner, reused across the batches of a case, gives every batch the
        /// definition's assignment (and one thread the arrival order).
        #[test]
        fn random_batches_match_the_definition((batches, threads) in batches()) {
            let mut assigner = ThreadAssigner::new();
            for (b, sets) in batches.iter().enumerate() {
                let got = assigner
                    .assign(sets, threads, Assignment::ThreadAware)
                    .unwrap()
                    .to_vec();
                let want = if threads == 1 {
                    vec![(0..sets.len()).collect()]
                } else {
                    reference(sets, threads)
                };
                prop_assert_eq!(got, want, "batch {} of {} transactions", b, sets.len());
            }
        }
    }

    #[test]
    fn a_batch_sharing_no_key_splits_in_arrival_order() {
        use Access::*;
        // Seven transactions on distinct keys (one repeats its own key): nothing conflicts or
        // is shared, so the greedy takes the transactions in arrival order, thread by thread.
        let sets: Vec<AccessSet> = (0..7u64)
            .map(|i| set(&[(10 * i, ReadWrite), (10 * i + 1, Read), (10 * i, Read)]))
            .collect();
        let mut a = ThreadAssigner::new();
        for threads in [2, 3] {
            let got = a
                .assign(&sets, threads, Assignment::ThreadAware)
                .unwrap()
                .to_vec();
            assert_eq!(got, reference(&sets, threads), "{threads} threads");
        }
        let got = a.assign(&sets, 3, Assignment::ThreadAware).unwrap();
        assert_eq!(got, &[vec![0, 1, 2], vec![3, 4], vec![5, 6]]);
        // One shared key makes the weights differ again: 6 reads key 0, which 0 writes.
        let mut sets = sets;
        sets[6].push(TableId(0), 0, Read);
        let got = a
            .assign(&sets, 2, Assignment::ThreadAware)
            .unwrap()
            .to_vec();
        assert_eq!(got, reference(&sets, 2));
        assert_eq!(got[0][..2], [0, 6]);
    }

    #[test]
    fn the_assignment_matches_the_definition() {
        use Access::*;
        let mut next = lcg(0x1234_5678);
        let mut assigner = ThreadAssigner::new();
        for round in 0..60 {
            // Every tenth batch has more than 64 transactions (more than one word per row).
            let n = if round % 10 == 9 {
                65 + next(40) as usize
            } else {
                2 + next(14) as usize
            };
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
