//! The OCC baseline's server (§5.1 of the paper: "servers return the versions of data items read
//! to the coordinator during the execute phase. In 2PC's prepare phase, each involved server
//! acquires write locks, acquires read locks to validate the freshness of reads ...").
//!
//! - **Execute.** Pieces run at once against the committed rows (and the attempt's own
//!   buffered writes); the reply carries the version of every conflict key they read. A
//!   conflict key's version counts the commits that wrote it.
//! - **Prepare** write-locks the attempt's write keys, read-locks its read keys and validates
//!   its reads: a read key whose version moved, or that another prepared attempt has
//!   write-locked, refuses the vote, as does a write key locked (either way) by another. The
//!   read locks keep a validated read valid until the commit, where the attempt takes its
//!   place in the order. The `mutation` feature's `OccNoValidation` skips the reads.
//! - **Commit** installs the buffered writes, bumps the written keys' versions and unlocks;
//!   abort unlocks. The commit is where the attempt takes its place in the server's execution
//!   order (the one-order log), since its reads were validated up to then.
//! - Attempts as in [`super::twopl`]: late messages of ended attempts are ignored, a newer
//!   attempt replaces an older one.

use super::{Finished, Program, Server};
use crate::config::{Mutant, Recording};
use crate::msg::{Exec, ExecReply, HistoryPart, Msg, PieceFailure, Refusal};
use crate::store::TxnBuffer;
use crate::workload::PiecedWorkload;
use foldhash::HashMap;
use std::collections::BTreeMap;
use txlab_core::TxError;
use txlab_core::pieces::{ConflictKey, PieceRef, PieceValues};
use txlab_core::protocol::history::TxnId;
use txlab_net::{Ctx, NodeId};

/// A live attempt.
#[derive(Debug)]
struct Attempt<P> {
    attempt: u32,
    program: P,
    done: BTreeMap<PieceRef, (PieceValues, Vec<(ConflictKey, u64)>)>,
    writes: Vec<ConflictKey>,
    /// The keys it read (read-locked while prepared).
    reads: Vec<ConflictKey>,
    /// Every conflict key its pieces declared (logged at commit, its place in the order).
    keys: Vec<(ConflictKey, txlab_core::Access)>,
    buffer: TxnBuffer,
    history: HistoryPart,
    prepared: bool,
}

/// Versions, prepare locks and live attempts (module docs).
#[derive(Debug)]
pub(crate) struct Versions<P> {
    versions: HashMap<ConflictKey, u64>,
    locked: HashMap<ConflictKey, TxnId>,
    read_locked: HashMap<ConflictKey, Vec<TxnId>>,
    attempts: BTreeMap<TxnId, Attempt<P>>,
    pub(crate) finished: Finished,
}

impl<P> Default for Versions<P> {
    fn default() -> Self {
        Self {
            versions: HashMap::default(),
            locked: HashMap::default(),
            read_locked: HashMap::default(),
            attempts: BTreeMap::new(),
            finished: Finished::default(),
        }
    }
}

impl<P> Versions<P> {
    pub(crate) fn is_empty(&self) -> bool {
        self.attempts.is_empty()
    }

    fn version(&self, k: &ConflictKey) -> u64 {
        self.versions.get(k).copied().unwrap_or(0)
    }

    fn unlock(&mut self, txn: TxnId, writes: &[ConflictKey], reads: &[ConflictKey]) {
        for k in writes {
            if self.locked.get(k) == Some(&txn) {
                self.locked.remove(k);
            }
        }
        for k in reads {
            if let Some(holders) = self.read_locked.get_mut(k) {
                holders.retain(|&h| h != txn);
                if holders.is_empty() {
                    self.read_locked.remove(k);
                }
            }
        }
    }

    /// Drops `txn`'s live attempt, unlocking what it locked.
    fn drop_attempt(&mut self, txn: TxnId) -> Option<Attempt<P>> {
        let a = self.attempts.remove(&txn)?;
        if a.prepared {
            self.unlock(txn, &a.writes, &a.reads);
        }
        Some(a)
    }
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    pub(super) fn occ_exec(
        &mut self,
        from: NodeId,
        e: Exec<Program<W>>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        if let Some(why) = self.occ.finished.ended(e.txn, e.attempt) {
            return self.refuse_again(from, e.txn, e.attempt, why, ctx);
        }
        match self.occ.attempts.get(&e.txn) {
            Some(a) if a.attempt > e.attempt => return,
            Some(a) if a.attempt < e.attempt => {
                self.occ.drop_attempt(e.txn);
            }
            _ => {}
        }
        let mut a = self.occ.attempts.remove(&e.txn).unwrap_or_else(|| Attempt {
            attempt: e.attempt,
            program: e.program,
            done: BTreeMap::new(),
            writes: Vec::new(),
            reads: Vec::new(),
            keys: Vec::new(),
            buffer: TxnBuffer::default(),
            history: HistoryPart::default(),
            prepared: false,
        });
        let mut outputs = Vec::new();
        let mut versions = Vec::new();
        let mut refusal = None;
        for req in &e.pieces {
            if let Some((out, v)) = a.done.get(&req.piece) {
                outputs.push((req.piece, out.clone()));
                versions.extend_from_slice(v);
                continue;
            }
            if a.prepared {
                continue;
            }
            let accepted = match self.accept(&a.program, req.clone()) {
                Ok(acc) => acc,
                Err(err) => {
                    self.fail(err.to_string());
                    refusal = Some(Refusal::Piece(PieceFailure::Error(err.to_string())));
                    break;
                }
            };
            let read: Vec<(ConflictKey, u64)> = accepted
                .keys
                .iter()
                .filter(|(_, acc)| acc.reads())
                .map(|(k, _)| (*k, self.occ.version(k)))
                .collect();
            match self.run_piece_tx(&a.program, &accepted, &mut a.buffer, R::ENABLED) {
                Ok(out) => {
                    for (k, acc) in &accepted.keys {
                        if acc.writes() && !a.writes.contains(k) {
                            a.writes.push(*k);
                        }
                        if acc.reads() && !a.reads.contains(k) {
                            a.reads.push(*k);
                        }
                    }
                    a.keys.extend_from_slice(&accepted.keys);
                    versions.extend_from_slice(&read);
                    a.done.insert(req.piece, (out.clone(), read));
                    outputs.push((req.piece, out));
                }
                // Pieces read committed rows without locks, so one may find rows that other
                // transactions changed between this attempt's pieces (an order line without
                // its order): the attempt could not have validated, and retries.
                Err(TxError::Conflict(_)) => {
                    refusal = Some(Refusal::Validation);
                    break;
                }
                Err(e) => {
                    let f = PieceFailure::from(e);
                    if let PieceFailure::Error(m) = &f {
                        self.fail(m.clone());
                    }
                    refusal = Some(Refusal::Piece(f));
                    break;
                }
            }
        }
        let attempt = a.attempt;
        let result = match refusal {
            Some(r) => {
                self.occ
                    .finished
                    .refuse(e.txn, attempt, ctx.now(), r.clone());
                Err(r)
            }
            None => {
                self.occ.attempts.insert(e.txn, a);
                Ok(outputs)
            }
        };
        let reply = ExecReply {
            txn: e.txn,
            attempt,
            result,
            versions,
        };
        self.send(ctx, from, Msg::ExecReply(Box::new(reply)));
    }

    pub(super) fn occ_prepare(
        &mut self,
        from: NodeId,
        txn: TxnId,
        attempt: u32,
        read: &[(ConflictKey, u64)],
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let vote = match self.occ.attempts.get(&txn) {
            Some(a) if a.attempt == attempt && a.prepared => Ok(()),
            Some(a) if a.attempt == attempt => self.occ_validate(txn, &a.writes, read),
            _ if self.occ.finished.committed(txn, attempt) => Ok(()),
            _ => Err(Refusal::Validation),
        };
        if vote.is_ok()
            && let Some(a) = self.occ.attempts.get_mut(&txn)
            && !a.prepared
        {
            a.prepared = true;
            for k in &a.writes {
                self.occ.locked.insert(*k, txn);
            }
            if !self.shared.params.mutant(Mutant::OccNoValidation) {
                for k in &a.reads {
                    self.occ.read_locked.entry(*k).or_default().push(txn);
                }
            }
        }
        self.send(ctx, from, Msg::Vote { txn, attempt, vote });
    }

    /// The prepare-time checks (module docs).
    fn occ_validate(
        &self,
        txn: TxnId,
        writes: &[ConflictKey],
        read: &[(ConflictKey, u64)],
    ) -> Result<(), Refusal> {
        let locked_by_other = |k: &ConflictKey| self.occ.locked.get(k).is_some_and(|&o| o != txn);
        let read_by_other = |k: &ConflictKey| {
            self.occ
                .read_locked
                .get(k)
                .is_some_and(|h| h.iter().any(|&o| o != txn))
        };
        if writes
            .iter()
            .any(|k| locked_by_other(k) || read_by_other(k))
        {
            return Err(Refusal::Locked);
        }
        if self.shared.params.mutant(Mutant::OccNoValidation) {
            return Ok(());
        }
        for (k, v) in read {
            if locked_by_other(k) {
                return Err(Refusal::Locked);
            }
            if self.occ.version(k) != *v {
                return Err(Refusal::Validation);
            }
        }
        Ok(())
    }

    pub(super) fn occ_decide(
        &mut self,
        from: NodeId,
        txn: TxnId,
        attempt: u32,
        commit: bool,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let live = self
            .occ
            .attempts
            .get(&txn)
            .is_some_and(|a| a.attempt == attempt);
        if live {
            let mut a = self.occ.drop_attempt(txn).expect("live");
            let history = if commit {
                for k in &a.writes {
                    *self.occ.versions.entry(*k).or_insert(0) += 1;
                }
                a.history.order.extend(self.log_entry(&a.keys));
                Some(self.install(&mut a.buffer, std::mem::take(&mut a.history)))
            } else {
                None
            };
            self.occ.finished.insert(txn, attempt, ctx.now(), history);
        }
        let reply = self
            .occ
            .finished
            .decided(txn, attempt, commit, live, ctx.now());
        self.send(ctx, from, reply);
    }
}
