//! Calvin's pipeline: lock-manager threads, a ready queue, worker threads executing under locks,
//! and the three ways to feed it (`execute_log`, the driver, `replay`). See the parent module.

use super::locks::{LockManager, LockReq, LockSpace, Mode, Msg, covers};
use super::{BARRIER_AFTER, CalvinTxn, MAX_RESTARTS};
use crate::calvin::Calvin;
use crate::config::mutated;
use crate::driver::{
    Metered, MeteredLog, Reporter, RunStats, StandAlone, metered_by_run_metered, sequence,
};
use crate::exec::{Attempt, Exec, ExecState, WriteKind, misuse_message};
use crate::layout::{InPlace, InPlaceRecord, Keep, Layout};
use crate::pool::Threads;
use crate::recon::{Predicted, Prediction, Recon};
use crate::run::Recording;
use crate::schedule::{Entry, Job, Positioned, in_order};
use crate::seq::Seq;
use crate::sequencer::{BatchSink, DriverConfig, InputLog, Sequencer, Submission};
use std::collections::{BTreeMap, VecDeque};
use std::marker::PhantomData;
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use txlab_core::deterministic::Deterministic;
use txlab_core::protocol::history::{
    Outcome, Recorder, ScanEvent, WriteEvent, WriteKind as HWriteKind,
};
use txlab_core::protocol::meter::{Meter, Probe};
use txlab_core::protocol::storage::Index;
use txlab_core::{
    Access, Conflict, ConflictCause, Error, Program, TableId, TxError, TxOps, TxResult,
};
use txlab_workload::Workload;

/// What Calvin did (engine-wide, over every run so far; `Calvin::stats`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CalvinStats {
    /// Reconnaissance restarts (`ollp_restarts`), and by transaction type.
    pub ollp_restarts: u64,
    /// Restarts by `Program::kind`.
    pub restarts_by_kind: BTreeMap<&'static str, u64>,
    /// Nanoseconds the lock managers spent handling messages (summed over managers).
    pub lock_manager_busy_ns: u64,
    /// Reconnaissance runs.
    pub reconnaissance: u64,
    /// Transactions admitted as barriers (parent module).
    pub barriers: u64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Transactions whose locks are all granted, waiting for a worker.
struct Ready<J> {
    queue: Mutex<(VecDeque<Arc<CalvinTxn<J>>>, bool)>,
    available: Condvar,
}

impl<J> Ready<J> {
    fn new() -> Self {
        Self {
            queue: Mutex::new((VecDeque::new(), false)),
            available: Condvar::new(),
        }
    }

    fn push(&self, txn: Arc<CalvinTxn<J>>) {
        lock(&self.queue).0.push_back(txn);
        self.available.notify_one();
    }

    fn pop(&self) -> Option<Arc<CalvinTxn<J>>> {
        let mut q = lock(&self.queue);
        loop {
            if let Some(t) = q.0.pop_front() {
                return Some(t);
            }
            if q.1 {
                return None;
            }
            q = self
                .available
                .wait(q)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn close(&self) {
        lock(&self.queue).1 = true;
        self.available.notify_all();
    }
}

/// Transactions admitted and not finished (the barrier of `execute_log`).
struct Outstanding {
    count: Mutex<usize>,
    zero: Condvar,
}

impl Outstanding {
    fn add(&self, n: usize) {
        *lock(&self.count) += n;
    }

    fn done(&self) {
        let mut c = lock(&self.count);
        *c -= 1;
        if *c == 0 {
            self.zero.notify_all();
        }
    }

    fn wait_zero(&self) {
        let mut c = lock(&self.count);
        while *c != 0 {
            c = self.zero.wait(c).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// How one transaction's attempt ended.
enum Ended<T> {
    /// With this result (committed, rolled back, or an error).
    Done(TxResult<T>),
    /// An access outside the lock set: these are the keys it touched, the last one outside.
    Outside(Prediction, TableId, u64),
}

/// The running pipeline of one run: managers' inboxes, the ready queue, the admission count.
struct Pipe<J> {
    inboxes: Vec<Sender<Msg<J>>>,
    ready: Ready<J>,
    outstanding: Outstanding,
    managers: usize,
    skip_last_lock: bool,
}

impl<J> Pipe<J> {
    /// Admits a transaction with lock set `locks` to its managers, in order.
    fn admit(&self, job: J, rank: u64, seq: u64, locks: Vec<LockReq>) -> Result<(), Error> {
        let acquire = if self.skip_last_lock {
            locks.len().saturating_sub(1)
        } else {
            locks.len()
        };
        let txn = Arc::new(CalvinTxn::new(
            job,
            rank,
            seq,
            locks,
            acquire,
            self.managers,
        ));
        self.outstanding.add(1);
        if txn.lock_free() {
            self.ready.push(txn);
            return Ok(());
        }
        for m in txn.managers() {
            self.inboxes[m]
                .send(Msg::Admit(Arc::clone(&txn)))
                .map_err(|_| Error::Internal("a lock manager stopped".into()))?;
        }
        Ok(())
    }

    fn release(&self, txn: &Arc<CalvinTxn<J>>) {
        for m in txn.managers() {
            // Managers stop only after every transaction finished.
            let _ = self.inboxes[m].send(Msg::Release(Arc::clone(txn)));
        }
    }
}

/// A Calvin worker thread's state.
struct CWorker<'e, Rec: Recorder> {
    calvin: &'e Calvin<Rec>,
    handle: crossbeam_epoch::LocalHandle,
    st: ExecState<InPlaceRecord>,
    history: Recording,
    seen: Prediction,
}

/// The execution `TxOps` of a locked transaction: every access is checked against the lock set
/// before it runs (the parent module's "guard").
struct Guarded<'a, 'b, Rec: Recorder> {
    ops: Exec<'a, InPlace, Rec>,
    space: &'a LockSpace,
    locks: &'b [LockReq],
    managers: usize,
    seen: &'b mut Prediction,
    outside: Option<(TableId, u64)>,
}

impl<Rec: Recorder> Guarded<'_, '_, Rec> {
    fn allow(&mut self, table: TableId, key: u64, access: Access) -> TxResult<()> {
        self.seen.accesses.push(table, key, access);
        let mode = if access.writes() {
            Mode::Exclusive
        } else {
            Mode::Shared
        };
        if covers(
            self.locks,
            self.space.point(table, key),
            mode,
            self.managers,
        ) {
            Ok(())
        } else {
            self.outside = Some((table, key));
            Err(Conflict::at(ConflictCause::LockBusy, table, key).into())
        }
    }
}

impl<Rec: Recorder> TxOps for Guarded<'_, '_, Rec> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.allow(table, key, Access::Read)?;
        self.ops.read(table, key)
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.allow(table, key, Access::BlindWrite)?;
        self.ops.write(table, key, value)
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.allow(table, key, Access::ReadWrite)?;
        self.ops.update(table, key, f)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.allow(table, key, Access::Insert)?;
        self.ops.insert(table, key, value)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.allow(table, key, Access::Delete)?;
        self.ops.delete(table, key)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        self.seen.scans.push(ScanEvent { table, lo, hi });
        // The scan must hold the locks of the range up to where it stops (the stripes of
        // `lo..=k` before it visits key `k`, and of the whole range if it runs to the end),
        // which is what reconnaissance predicted.
        let (space, locks, managers) = (self.space, self.locks, self.managers);
        let covered = |a: u64, b: u64| {
            let mut ok = true;
            space.scan(table, a, b, |k| {
                ok &= covers(locks, k, Mode::Shared, managers)
            });
            ok
        };
        let (mut from, mut bad, mut stopped) = (Some(lo), false, false);
        self.ops.scan(table, lo, hi, &mut |k, v| {
            if from.is_some_and(|f| !covered(f, k)) {
                bad = true;
                return false;
            }
            from = k.checked_add(1);
            let go = visit(k, v);
            stopped = !go;
            go
        })?;
        if !bad && !stopped && from.is_some_and(|f| f <= hi && !covered(f, hi)) {
            bad = true;
        }
        if bad {
            self.outside = Some((table, lo));
            return Err(Conflict::at(ConflictCause::LockBusy, table, lo).into());
        }
        Ok(())
    }
}

impl<'e, Rec: Recorder> CWorker<'e, Rec> {
    fn new(calvin: &'e Calvin<Rec>) -> Self {
        let id = calvin
            .db
            .next_worker
            .fetch_add(1, txlab_core::protocol::sync::Ordering::Relaxed);
        Self {
            calvin,
            handle: crossbeam_epoch::default_collector().register(),
            st: ExecState::default(),
            history: Recording::new(id),
            seen: Prediction::default(),
        }
    }

    /// Runs a transaction whose locks are all held, installs its writes, and records it.
    fn execute<J: Job>(&mut self, txn: &CalvinTxn<J>) -> Ended<<J::P as Program>::Output> {
        let db = &self.calvin.db;
        let program = txn.job.program();
        let guard = self.handle.pin();
        self.st.clear();
        self.seen.accesses.clear();
        self.seen.scans.clear();
        let begin_ns = db.now_ns();
        let read_only = program.read_only().then(|| program.kind());
        let (result, outside) = {
            let mut g = Guarded {
                ops: Exec {
                    tables: &db.tables,
                    st: &mut self.st,
                    guard: &guard,
                    bound: u64::MAX,
                    attempt: Attempt::First { keep: false },
                    read_only,
                    retired_tags: &db.retired_tags,
                    _rec: PhantomData::<Rec>,
                },
                space: &self.calvin.space,
                locks: &txn.locks,
                managers: self.calvin.config.lock_managers,
                seen: &mut self.seen,
                outside: None,
            };
            let r = program.run(&mut g);
            (r, g.outside)
        };
        if let Some((table, key)) = outside {
            if Rec::ENABLED {
                self.history.record(
                    db,
                    &mut self.st,
                    Some(txn.rank),
                    begin_ns,
                    Outcome::Aborted(ConflictCause::LockBusy),
                    false,
                );
            }
            self.st.clear();
            return Ended::Outside(self.seen.clone(), table, key);
        }
        let result = match (result, self.st.misuse) {
            (Ok(_), Some(kind)) => Err(Error::Misuse(misuse_message(kind)).into()),
            (Err(TxError::Conflict(c)), _) => Err(Error::Internal(format!(
                "a program of kind '{}' reported {c} while holding its locks",
                program.kind()
            ))
            .into()),
            (r, _) => r,
        };
        let result = match result {
            Ok(v) if !self.st.writes.is_empty() => match self.install(txn.seq, &guard) {
                Ok(()) => Ok(v),
                Err(e) => Err(e.into()),
            },
            r => r,
        };
        if Rec::ENABLED {
            let outcome = if result.is_ok() {
                Outcome::Committed
            } else {
                Outcome::UserAborted
            };
            let ok = result.is_ok();
            self.history
                .record(db, &mut self.st, Some(txn.rank), begin_ns, outcome, ok);
        }
        self.st.clear();
        Ended::Done(result)
    }

    /// Installs the buffered writes with version `seq`; a deleted record on a hash or ordered
    /// table leaves its index at once (its exclusive lock keeps every other transaction away).
    fn install(&mut self, seq: u64, guard: &crossbeam_epoch::Guard) -> Result<(), Error> {
        let db = &self.calvin.db;
        for w in &self.st.writes {
            let value = match w.kind {
                WriteKind::Delete => None,
                _ => Some(&self.st.wbuf[w.off as usize..(w.off + w.len) as usize]),
            };
            let index = db.tables.get(w.table)?;
            // SAFETY: obtained under `guard`, pinned for the whole transaction.
            let mut rec: &InPlaceRecord = unsafe { &*w.rec };
            if InPlace::install(rec, seq, value, Keep::Below(&[]), guard).sealed {
                rec = index.get_or_insert(w.key, guard)?.record;
                InPlace::install(rec, seq, value, Keep::Below(&[]), guard);
            }
            if value.is_none()
                && index.unlinks_deleted_records()
                && InPlace::seal_tombstone(rec, seq, guard)
            {
                if Rec::ENABLED {
                    db.retired_tags.remember(w.table, w.key, seq);
                }
                index.unlink(w.key, rec, guard)?;
            }
            if Rec::ENABLED {
                self.history.writes.push(WriteEvent {
                    table: w.table,
                    key: w.key,
                    version: seq,
                    order: seq,
                    kind: if value.is_none() {
                        HWriteKind::Delete
                    } else {
                        HWriteKind::Put
                    },
                    visible: true,
                });
            }
        }
        Ok(())
    }
}

impl<Rec: Recorder> Calvin<Rec> {
    /// The engine's counters so far.
    pub fn stats(&self) -> CalvinStats {
        let mut s = lock(&self.stats).clone();
        s.lock_manager_busy_ns = self.busy_ns.load(std::sync::atomic::Ordering::Relaxed);
        s
    }

    /// The lock set of a program: its prediction if it has one, else its declared keys.
    fn locks_of(&self, prediction: &Prediction, out: &mut Vec<LockReq>) {
        self.space
            .lock_set(prediction, self.config.lock_managers, out);
    }

    /// Runs the pipeline: lock managers and `workers` workers behind `feed`, which admits
    /// transactions through the `Pipe` on the calling thread. `each` receives every finished
    /// transaction with its worker's state; `outside` every one that left its lock set.
    fn pipeline<J, S, M, F, O, R>(
        &self,
        workers: usize,
        threads: Threads<'_>,
        make: M,
        each: F,
        outside: O,
        feed: impl FnOnce(&Pipe<J>) -> Result<R, Error>,
    ) -> Result<(R, Vec<S>), Error>
    where
        J: Job,
        S: Send,
        M: Fn() -> Result<S, Error> + Sync,
        F: Fn(&mut S, &CalvinTxn<J>, TxResult<<J::P as Program>::Output>) + Sync,
        O: Fn(&mut S, &CalvinTxn<J>, Prediction, TableId, u64) + Sync,
    {
        let managers = self.config.lock_managers;
        let mut inboxes = Vec::new();
        let mut rxs: Vec<Mutex<Option<Receiver<Msg<J>>>>> = Vec::new();
        for _ in 0..managers {
            let (tx, rx) = channel();
            inboxes.push(tx);
            rxs.push(Mutex::new(Some(rx)));
        }
        let pipe = Pipe {
            inboxes,
            ready: Ready::new(),
            outstanding: Outstanding {
                count: Mutex::new(0),
                zero: Condvar::new(),
            },
            managers,
            skip_last_lock: mutated!(self.db.config, CalvinSkipLock),
        };
        let out_of_order = mutated!(self.db.config, CalvinGrantOutOfOrder);
        // Tasks `0..managers` are the lock managers, the rest the workers.
        let task = |t: usize| -> Result<Option<S>, Error> {
            if t < managers {
                let rx = lock(&rxs[t])
                    .take()
                    .expect("each manager's inbox is taken once");
                let mut lm = LockManager::<J>::new(t, out_of_order);
                let mut ready = |txn| pipe.ready.push(txn);
                while let Ok(msg) = rx.recv() {
                    if !lm.handle(msg, &mut ready, &self.busy_ns) {
                        break;
                    }
                }
                return Ok(None);
            }
            let mut state = make()?;
            let mut w = CWorker::new(self);
            while let Some(txn) = pipe.ready.pop() {
                let ended = w.execute(&txn);
                pipe.release(&txn);
                match ended {
                    Ended::Done(r) => each(&mut state, &txn, r),
                    Ended::Outside(p, t, k) => outside(&mut state, &txn, p, t, k),
                }
                pipe.outstanding.done();
            }
            Ok(Some(state))
        };
        let (ended, fed) = threads.run(managers + workers, task, || {
            let fed = feed(&pipe);
            pipe.outstanding.wait_zero();
            for inbox in &pipe.inboxes {
                let _ = inbox.send(Msg::Stop);
            }
            pipe.ready.close();
            fed
        })?;
        let fed = fed?;
        let mut states = Vec::with_capacity(workers);
        for e in ended {
            states.extend(e.and_then(|s| s)?);
        }
        Ok((fed, states))
    }

    /// Waits until every admitted transaction finished, then predicts `p` on exactly the state
    /// it will see (a barrier, parent module).
    fn exact_prediction<J, P: Program>(&self, pipe: &Pipe<J>, program: &P) -> Prediction {
        pipe.outstanding.wait_zero();
        let guard = crossbeam_epoch::pin();
        let p = Recon::predict(self.tables(), program, &guard);
        let mut s = lock(&self.stats);
        s.reconnaissance += 1;
        s.barriers += 1;
        p
    }

    fn count_restart(&self, kind: &'static str) {
        let mut s = lock(&self.stats);
        s.ollp_restarts += 1;
        *s.restarts_by_kind.entry(kind).or_default() += 1;
    }
}

/// The error of a program that accessed a key outside its lock set where it cannot be
/// re-sequenced, or too often.
fn outside_error(kind: &str, table: TableId, key: u64, why: &str) -> Error {
    Error::Invariant(format!(
        "calvin: a program of kind '{kind}' accessed table {} key {key} outside its locked set \
         ({why})",
        table.0
    ))
}

impl<Rec: Recorder> Deterministic for Calvin<Rec> {
    /// Runs the log through the lock managers (parent module): reconnaissance for a dependent
    /// program runs once every earlier transaction finished, so it is exact.
    fn execute_log<P>(&self, log: &[P], workers: usize) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send,
    {
        crate::config::check_workers(workers)?;
        let _run = self.db.begin_run()?;
        let jobs = self.db.log_jobs(log)?;
        self.run_positioned(&jobs, workers, Threads::Scoped)
    }
}

impl<Rec: Recorder> Calvin<Rec> {
    /// Runs `jobs` at their positions, in order, exactly as `execute_log` does (a partition of a
    /// cluster runs its share of the global order this way), on `threads`.
    pub(crate) fn run_positioned<P>(
        &self,
        jobs: &[Positioned<'_, P>],
        workers: usize,
        threads: Threads<'_>,
    ) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send,
    {
        type Out<T> = Vec<(usize, TxResult<T>)>;
        let ((), parts) = self.pipeline(
            workers,
            threads,
            || Ok(Out::<P::Output>::new()),
            |out: &mut Out<P::Output>, txn: &CalvinTxn<Entry<'_, P>>, r| {
                out.push((txn.job.index, r))
            },
            |out: &mut Out<P::Output>, txn: &CalvinTxn<Entry<'_, P>>, _, t, k| {
                let e = outside_error(
                    txn.job.program.kind(),
                    t,
                    k,
                    "its declared keys or exact reconnaissance must cover every access",
                );
                out.push((txn.job.index, Err(e.into())));
            },
            |pipe| {
                let mut set = Vec::new();
                let guard = crossbeam_epoch::pin();
                for (index, job) in jobs.iter().enumerate() {
                    let program = job.program;
                    let mut prediction = Prediction::declared(program);
                    if prediction.accesses.dependent {
                        pipe.outstanding.wait_zero();
                        prediction = Recon::predict(self.tables(), program, &guard);
                        lock(&self.stats).reconnaissance += 1;
                    }
                    self.locks_of(&prediction, &mut set);
                    let entry = Entry { program, index };
                    pipe.admit(entry, job.rank, job.seq.raw(), std::mem::take(&mut set))?;
                }
                Ok(())
            },
        )?;
        in_order(parts.into_iter().flatten(), jobs.len())
    }
}

/// Calvin's admission as the sequencer's sink: reconnaissance, lock sets, managers.
struct CalvinSink<'a, Rec: Recorder, P> {
    calvin: &'a Calvin<Rec>,
    pipe: &'a Pipe<Submission<Predicted<P>>>,
    set: std::cell::RefCell<Vec<LockReq>>,
}

impl<Rec: Recorder, P: Program + Send + Sync> BatchSink<Predicted<P>> for CalvinSink<'_, Rec, P> {
    fn prepare(&self, jobs: &mut [Submission<Predicted<P>>]) {
        let guard = crossbeam_epoch::pin();
        for job in jobs.iter_mut() {
            let p = &mut job.program;
            if p.prediction.is_none() {
                let declared = Prediction::declared(&p.program);
                if declared.accesses.dependent {
                    let predicted = Recon::predict(self.calvin.tables(), &p.program, &guard);
                    p.prediction = Some(Arc::new(predicted));
                    lock(&self.calvin.stats).reconnaissance += 1;
                }
            }
        }
    }

    fn push(&self, first: Seq, jobs: Vec<Submission<Predicted<P>>>) -> Result<(), Error> {
        let base = self.calvin.db.take_ranks(jobs.len() as u64);
        let mut set = self.set.borrow_mut();
        for (i, mut job) in jobs.into_iter().enumerate() {
            if job.program.barrier {
                let exact = self
                    .calvin
                    .exact_prediction(self.pipe, &job.program.program);
                job.program.prediction = Some(Arc::new(exact));
            }
            match &job.program.prediction {
                Some(p) => self.calvin.locks_of(p, &mut set),
                None => self
                    .calvin
                    .locks_of(&Prediction::declared(&job.program.program), &mut set),
            }
            let locks = std::mem::take(&mut *set);
            self.pipe
                .admit(job, base + i as u64, first.raw() + i as u64, locks)?;
        }
        Ok(())
    }

    fn next_epoch(&self) -> Result<u32, Error> {
        self.calvin.db.take_epochs(1)
    }
}

/// A worker's state in a driven run: its reporting, and where restarts go.
struct DriverState<R, P> {
    reporter: Reporter<R>,
    restarts: Sender<Submission<Predicted<P>>>,
}

impl<Rec: Recorder> Calvin<Rec> {
    /// Runs `workload` (already loaded) with the sequencer on this thread, `lock_managers`
    /// lock-manager threads and `workers` workers, reporting to `meter` until it stops issuing
    /// (as `Docc::run_metered`; a restart is reported as a retry and counted in `ollp_restarts`
    /// and `restarts:<kind>`). Returns the input log (programs with their predictions, restarts
    /// marked) if `driver.keep_log` is set.
    pub fn run_metered<W, M>(
        &self,
        workload: &W,
        driver: DriverConfig,
        meter: &M,
    ) -> Result<MeteredLog<Predicted<W::Program>>, Error>
    where
        W: Workload,
        W::Program: Clone + Send + Sync,
        M: Meter,
    {
        let mut seq = Sequencer::new(workload, self.config.batch, &driver, Predicted::new)?;
        let _run = self.db.begin_run()?;
        let (done_tx, done_rx) = channel();
        let (restart_tx, restart_rx) = channel::<Submission<Predicted<W::Program>>>();
        let mut run = Metered::default();
        type Job<P> = Submission<Predicted<P>>;
        type State<'m, M, P> = DriverState<<M as Meter>::Probe<'m>, P>;
        let workers = AtomicUsize::new(0);
        let ((), states) = self.pipeline(
            self.config.workers,
            Threads::Scoped,
            || {
                let w = workers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(DriverState {
                    reporter: Reporter::new(meter.probe(1 + w), done_tx.clone()),
                    restarts: restart_tx.clone(),
                })
            },
            |s: &mut State<'_, M, W::Program>, txn: &CalvinTxn<Job<W::Program>>, r| {
                let job = &txn.job;
                s.reporter
                    .finished(job.program.kind(), job.client, &job.ticket, &r);
            },
            |s: &mut State<'_, M, W::Program>, txn: &CalvinTxn<Job<W::Program>>, found, t, k| {
                let job = &txn.job;
                let kind = job.program.kind();
                if job.program.restarts + 1 >= MAX_RESTARTS {
                    let e = outside_error(kind, t, k, "after 16 reconnaissance restarts");
                    let r = Err::<(), _>(e.into());
                    s.reporter.finished(kind, job.client, &job.ticket, &r);
                    return;
                }
                self.count_restart(kind);
                s.reporter.restarted(kind, &job.ticket);
                s.reporter.probe.count("ollp_restarts", 1);
                let mut prediction = job
                    .program
                    .prediction
                    .as_deref()
                    .cloned()
                    .unwrap_or_else(|| Prediction::declared(&job.program.program));
                prediction.merge(&found);
                let mut again = job.clone();
                again.program.prediction = Some(Arc::new(prediction));
                again.program.restarts += 1;
                again.program.barrier = again.program.restarts >= BARRIER_AFTER;
                again.origin = Some(job.logged_at);
                // The sequencer outlives every worker.
                let _ = s.restarts.send(again);
            },
            |pipe| {
                let sink = CalvinSink {
                    calvin: self,
                    pipe,
                    set: std::cell::RefCell::new(Vec::new()),
                };
                let mut probe = meter.probe(0);
                sequence(
                    &mut seq,
                    &sink,
                    &mut probe,
                    &done_rx,
                    Some(&restart_rx),
                    &mut run,
                )
            },
        )?;
        for s in states {
            s.reporter.into_errors(&mut run);
        }
        Ok((run, seq.log))
    }

    /// Re-executes a recorded input log (with its predictions) on this engine, which must hold
    /// the state the recorded run started from: every transaction that restarted in the run
    /// restarts again (its re-sequenced entry is in the log). Returns the results in log order,
    /// `TxError::Conflict` (`ConflictCause::Reordering`) for entries that restarted.
    pub fn replay<P>(
        &self,
        log: &InputLog<Predicted<P>>,
        workers: usize,
    ) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send,
    {
        log.validate()?;
        crate::config::check_workers(workers)?;
        let _run = self.db.begin_run()?;
        let first = log.batches.first().map_or(1, |b| b.first.epoch());
        let last = log.batches.last().map_or(0, |b| b.first.epoch());
        self.db.reserve_epochs(first, last)?;
        let total = log.len();
        let base = self.db.take_ranks(total as u64);
        type Out<T> = Vec<(usize, TxResult<T>)>;
        let ((), parts) = self.pipeline(
            workers,
            Threads::Scoped,
            || Ok(Out::<P::Output>::new()),
            |out: &mut Out<P::Output>, txn: &CalvinTxn<Entry<'_, Predicted<P>>>, r| {
                out.push((txn.job.index, r))
            },
            |out: &mut Out<P::Output>, txn: &CalvinTxn<Entry<'_, Predicted<P>>>, _, _, _| {
                let c = Conflict::new(ConflictCause::Reordering);
                out.push((txn.job.index, Err(c.into())));
            },
            |pipe| {
                let mut set = Vec::new();
                let mut at = 0usize;
                for b in &log.batches {
                    for (i, program) in b.programs.iter().enumerate() {
                        if program.barrier {
                            let exact = self.exact_prediction(pipe, &program.program);
                            self.locks_of(&exact, &mut set);
                        } else {
                            match &program.prediction {
                                Some(p) => self.locks_of(p, &mut set),
                                None => {
                                    self.locks_of(&Prediction::declared(&program.program), &mut set)
                                }
                            }
                        }
                        let entry = Entry { program, index: at };
                        let seq = b.first.raw() + i as u64;
                        pipe.admit(entry, base + at as u64, seq, std::mem::take(&mut set))?;
                        at += 1;
                    }
                }
                Ok(())
            },
        )?;
        let mut results: Vec<Option<TxResult<P::Output>>> = (0..total).map(|_| None).collect();
        for (i, r) in parts.into_iter().flatten() {
            results[i] = Some(r);
        }
        results
            .into_iter()
            .enumerate()
            .map(|(i, r)| r.ok_or_else(|| Error::Internal(format!("log entry {i} never ran"))))
            .collect()
    }
}

impl<Rec: Recorder> StandAlone for Calvin<Rec> {
    type Entry<P>
        = Predicted<P>
    where
        P: Program + Clone + Send + Sync;
    type Before = (CalvinStats, u64);

    metered_by_run_metered!();

    fn before(&self) -> Self::Before {
        (self.stats(), self.db.gc().tombstones_retired)
    }

    fn since(&self, (before, retired): Self::Before, stats: &mut RunStats) {
        let after = self.stats();
        stats.ollp_restarts = after.ollp_restarts - before.ollp_restarts;
        stats.barriers = after.barriers - before.barriers;
        stats.lock_manager_busy_ns = after.lock_manager_busy_ns - before.lock_manager_busy_ns;
        stats.lock_managers = self.config.lock_managers;
        stats.gc.tombstones_retired = self.db.gc().tombstones_retired - retired;
    }
}
