//! ROCOCO's read-only reads (§4.1, Figure 10): a read runs only after every transaction of this
//! server that declared a write of one of its conflict keys when the read arrived has finished.
//! Writers that arrive later do not hold it back (so a stream of writers cannot starve it).
//!
//! Immediate writers count too, not only deferred ones: waiting for a transaction to finish
//! here is what forces it to have started on every server it involves, which is why two equal
//! rounds are consistent (§4.1); an immediate write seen without that wait could be the only
//! visible half of a transaction whose other half a second round still misses.
//!
//! A read records, per column group, the version it observed; the coordinator compares rounds
//! by these versions.

use super::{Accepted, Program, Server};
use crate::config::Recording;
use crate::msg::{Msg, PieceFailure, RoPiece, RoRead, RoReply};
use crate::store::TxnBuffer;
use crate::workload::PiecedWorkload;
use std::collections::{BTreeMap, BTreeSet};
use txlab_core::protocol::history::TxnId;
use txlab_net::{Ctx, NodeId};

/// A read waiting for writers to finish (its pieces moved into `accepted`).
#[derive(Debug)]
struct Waiting<P> {
    from: NodeId,
    read: RoRead<P>,
    accepted: Vec<Accepted>,
    blockers: BTreeSet<TxnId>,
}

/// Reads waiting, by `(transaction, round)`.
#[derive(Debug)]
pub(crate) struct Parked<P> {
    reads: BTreeMap<(TxnId, u32), Waiting<P>>,
}

impl<P> Default for Parked<P> {
    fn default() -> Self {
        Self {
            reads: BTreeMap::new(),
        }
    }
}

impl<P> Parked<P> {
    pub(crate) fn is_empty(&self) -> bool {
        self.reads.is_empty()
    }
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    /// One round's read request (Figure 10).
    pub(super) fn ro_read(
        &mut self,
        from: NodeId,
        mut read: RoRead<Program<W>>,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        if self.ro.reads.contains_key(&(read.txn, read.round)) {
            return;
        }
        let mut accepted = Vec::with_capacity(read.pieces.len());
        for req in std::mem::take(&mut read.pieces) {
            let piece = req.piece;
            match self.accept(&read.program, req) {
                Ok(a) => accepted.push(a),
                Err(e) => {
                    self.fail(e.to_string());
                    let pieces = vec![RoPiece {
                        piece,
                        result: Err(PieceFailure::Error(e.to_string())),
                        reads: Vec::new(),
                        scans: Vec::new(),
                    }];
                    let reply = RoReply {
                        txn: read.txn,
                        round: read.round,
                        pieces,
                    };
                    self.send(ctx, from, Msg::RoReply(Box::new(reply)));
                    return;
                }
            }
        }
        let mut writers = Vec::new();
        for a in &accepted {
            for (k, _) in &a.keys {
                self.keys.unfinished_writers(k, &mut writers);
            }
        }
        let blockers: BTreeSet<TxnId> = writers
            .into_iter()
            .filter(|&w| self.graph.get(w).is_some_and(|v| v.local && !v.finished))
            .collect();
        if blockers.is_empty() {
            self.ro_run(from, &read, &accepted, ctx);
        } else {
            self.counters.ro_waits += 1;
            self.ro.reads.insert(
                (read.txn, read.round),
                Waiting {
                    from,
                    read,
                    accepted,
                    blockers,
                },
            );
        }
    }

    /// `id` changed: reads it held back whose writers have all finished run now.
    pub(super) fn ro_unblock(&mut self, id: TxnId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        if self.ro.reads.is_empty() || self.graph.get(id).is_some_and(|v| !v.finished) {
            return;
        }
        let mut ready = Vec::new();
        for (key, w) in &mut self.ro.reads {
            if w.blockers.remove(&id) && w.blockers.is_empty() {
                ready.push(*key);
            }
        }
        for key in ready {
            if let Some(w) = self.ro.reads.remove(&key) {
                self.ro_run(w.from, &w.read, &w.accepted, ctx);
            }
        }
    }

    fn ro_run(
        &mut self,
        from: NodeId,
        read: &RoRead<Program<W>>,
        accepted: &[Accepted],
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        let mut pieces = Vec::with_capacity(accepted.len());
        for a in accepted {
            let mut buffer = TxnBuffer::default();
            let result = self.run_piece(&read.program, a, &mut buffer, true);
            if let Err(PieceFailure::Error(m)) = &result {
                self.fail(m.clone());
            }
            pieces.push(RoPiece {
                piece: a.piece,
                result,
                reads: buffer.reads,
                scans: buffer.scans,
            });
        }
        let reply = RoReply {
            txn: read.txn,
            round: read.round,
            pieces,
        };
        self.send(ctx, from, Msg::RoReply(Box::new(reply)));
    }
}
