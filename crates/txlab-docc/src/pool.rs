//! Where a run's threads come from: fresh scoped threads per run (single-node runs: one run, one
//! start-up), or a [`WorkerPool`] started once and reused by every run (a partition of a cluster
//! runs its share of the order as many short runs, one between two multi-partition
//! transactions, so starting threads per run would cost more than the work).
//!
//! A run asks for `n` concurrent tasks `task(0..n)` plus work on the calling thread (`caller`:
//! Calvin's admission; nothing for DOCC), and returns once all have ended. The tasks of one run
//! wait for each other (DOCC's waiting phase, Calvin's lock queues), so all `n` must run at once:
//! a pool has at least as many threads as the largest run it is given (a larger run is
//! refused, naming both numbers).
//!
//! The pool is rayon's (`rayon::ThreadPool::in_place_scope`): tasks borrow the run's state, the
//! caller's work runs on the caller, and the scope ends only when every task has. Threads are
//! spawned by the pool's spawn handler, which keeps their join handles so that dropping the pool
//! joins them.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use txlab_core::Error;

/// Persistent threads for a partition's runs (module docs).
pub struct WorkerPool {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
    handles: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl WorkerPool {
    /// Starts `threads` threads named `name-<i>`. Errors: 0 threads, or the OS refusing a thread.
    pub fn new(threads: usize, name: &str) -> Result<Self, Error> {
        if threads == 0 {
            return Err(Error::invalid("pool threads", threads, "at least 1"));
        }
        let handles = Mutex::new(Vec::with_capacity(threads));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name({
                let name = name.to_string();
                move |i| format!("{name}-{i}")
            })
            .spawn_handler(|thread| {
                let mut b = std::thread::Builder::new();
                if let Some(name) = thread.name() {
                    b = b.name(name.to_string());
                }
                let h = b.spawn(|| thread.run())?;
                handles
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(h);
                Ok(())
            })
            .build()
            .map_err(|e| Error::Internal(format!("starting {threads} pool threads: {e}")))?;
        Ok(Self {
            pool: Some(pool),
            threads,
            handles: handles.into_inner().unwrap_or_else(PoisonError::into_inner),
        })
    }

    /// Its number of threads.
    pub fn threads(&self) -> usize {
        self.threads
    }
}

impl Drop for WorkerPool {
    /// Ends the threads and joins them.
    fn drop(&mut self) {
        drop(self.pool.take());
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// The threads of one run (module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Threads<'p> {
    /// Fresh scoped threads, joined at the end of the run.
    Scoped,
    /// A persistent pool's.
    Pool(&'p WorkerPool),
}

impl Threads<'_> {
    /// Runs `task(i)` for every `i` in `0..n` at once and `caller` on this thread; returns the
    /// tasks' results by index (a panicked task as `Error::Internal`) and `caller`'s, once every
    /// task has ended. Errors: `n` above a pool's threads.
    pub fn run<R, C>(
        self,
        n: usize,
        task: impl Fn(usize) -> R + Sync,
        caller: impl FnOnce() -> C,
    ) -> Result<(Vec<Result<R, Error>>, C), Error>
    where
        R: Send,
    {
        match self {
            Threads::Pool(pool) => {
                if n > pool.threads {
                    return Err(Error::invalid(
                        "threads of a run",
                        n,
                        format!("at most the pool's {} threads", pool.threads),
                    ));
                }
                let rayon = pool.pool.as_ref().expect("the pool lives until dropped");
                let slots: Vec<Mutex<Option<Result<R, Error>>>> =
                    (0..n).map(|_| Mutex::new(None)).collect();
                let c = rayon.in_place_scope(|s| {
                    for (i, slot) in slots.iter().enumerate() {
                        let task = &task;
                        s.spawn(move |_| {
                            let r = catch_unwind(AssertUnwindSafe(|| task(i)))
                                .map_err(|_| Error::Internal(format!("pool task {i} panicked")));
                            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
                        });
                    }
                    caller()
                });
                let results = slots
                    .into_iter()
                    .map(|s| {
                        s.into_inner()
                            .unwrap_or_else(PoisonError::into_inner)
                            .unwrap_or_else(|| Err(Error::Internal("a pool task never ran".into())))
                    })
                    .collect();
                Ok((results, c))
            }
            Threads::Scoped => Ok(txlab_core::protocol::sync::thread::scope(|s| {
                let task = &task;
                let handles: Vec<_> = (0..n).map(|i| s.spawn(move || task(i))).collect();
                let c = caller();
                let results = handles
                    .into_iter()
                    .enumerate()
                    .map(|(i, h)| {
                        h.join()
                            .map_err(|_| Error::Internal(format!("run thread {i} panicked")))
                    })
                    .collect();
                (results, c)
            })),
        }
    }
}
