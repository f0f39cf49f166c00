//! The deterministic execution model: a log of one-shot programs executed with the effect of
//! running them one after another in log order.
//!
//! A deterministic engine (DOCC, a Calvin-style locking engine) receives the order from a
//! sequencer before anything runs; how it overlaps the programs is its own business, but the
//! outcome must be that of the serial execution in log order: the same result for every program
//! and the same final state. `txlab_check::serial::SerialEngine` implements this trait trivially
//! (one program after another) and is the oracle the others are tested against.

use crate::error::{Error, TxResult};
use crate::program::Program;
use crate::txn::Engine;

/// Executes a log of one-shot programs with the effect of running them serially in log order.
pub trait Deterministic: Engine {
    /// Runs every program of `log` on `workers` threads and returns one result per program, in
    /// log order: `Ok(output)`, `Err(TxError::UserAbort)` (the program rolled itself back and
    /// wrote nothing), or a real error. Conflicts are never visible here: a deterministic engine
    /// retries internally. An `Err` of the outer result is a real error of the run itself (e.g.
    /// `workers == 0`).
    fn execute_log<P>(&self, log: &[P], workers: usize) -> Result<Vec<TxResult<P::Output>>, Error>
    where
        P: Program + Sync,
        P::Output: Send;
}
