//! The piece DAG of one transaction at its coordinator: which piece instances can be sent (every
//! planned instance of each piece in its profile's `inputs_from` has answered), to which server,
//! with which inputs; and what has answered. Every protocol's coordinator uses it: ROCOCO's
//! start phase and read-only rounds, the baselines' execute phase. The coordinator "issues
//! every piece whose inputs are available, in parallel, blocking only on missing inputs" (§3.2).

use crate::msg::PieceReq;
use crate::workload::{PieceProgram, Routing};
use std::collections::BTreeMap;
use txlab_core::Error;
use txlab_core::pieces::{PieceRef, PieceValues, TxnProfile};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Sent(u16),
    Done(u16),
}

/// One transaction's pieces (module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct Dispatch {
    plan: Vec<PieceRef>,
    state: Vec<State>,
    /// Outputs per planned instance.
    outputs: Vec<PieceValues>,
    /// Every output so far (what `plan_after` sees).
    all: PieceValues,
    /// Whether a piece that writes has been sent.
    pub(crate) wrote: bool,
    /// The plan index after the last answered instance (where the next answer likely is).
    next: usize,
}

impl Dispatch {
    /// The plan of `program` (checked against its profile).
    pub(crate) fn new<P: PieceProgram>(program: &P, profile: &TxnProfile) -> Result<Self, Error> {
        let mut plan = Vec::new();
        program.plan(&mut plan);
        txlab_core::pieces::check_plan(profile, &plan)?;
        let n = plan.len();
        Ok(Self {
            plan,
            state: vec![State::Waiting; n],
            outputs: vec![PieceValues::new(); n],
            all: PieceValues::new(),
            wrote: false,
            next: 0,
        })
    }

    /// Whether every planned instance answered.
    pub(crate) fn complete(&self) -> bool {
        self.state.iter().all(|s| matches!(s, State::Done(_)))
    }

    /// Whether no sent instance is still unanswered.
    pub(crate) fn settled(&self) -> bool {
        !self.state.iter().any(|s| matches!(s, State::Sent(_)))
    }

    /// Per piece of `profile`: whether every planned instance of it has answered (true for a
    /// piece with no planned instance). One pass over the plan.
    fn pieces_done(&self, profile: &TxnProfile) -> Vec<bool> {
        let mut done = vec![true; profile.pieces.len()];
        for (p, s) in self.plan.iter().zip(&self.state) {
            if !matches!(s, State::Done(_)) {
                done[usize::from(p.piece)] = false;
            }
        }
        done
    }

    /// The inputs of piece `piece`: the outputs of every planned instance of the pieces in its
    /// `inputs_from`, in plan order. The same for every instance of the piece.
    fn inputs(&self, piece: usize, profile: &TxnProfile) -> PieceValues {
        let from = &profile.pieces[piece].inputs_from;
        let mut inputs = PieceValues::new();
        for (j, p) in self.plan.iter().enumerate() {
            if from.contains(&usize::from(p.piece)) {
                inputs.extend_from(&self.outputs[j]);
            }
        }
        inputs
    }

    /// The requests for the instances `which` (plan indexes, in plan order), grouped by
    /// server; each piece's inputs are gathered once and cloned into its instances.
    fn requests(
        &self,
        which: impl Iterator<Item = (usize, u16)>,
        profile: &TxnProfile,
    ) -> BTreeMap<u16, Vec<PieceReq>> {
        let mut inputs: Vec<Option<PieceValues>> = vec![None; profile.pieces.len()];
        let mut out: BTreeMap<u16, Vec<PieceReq>> = BTreeMap::new();
        for (i, server) in which {
            let piece = usize::from(self.plan[i].piece);
            let inputs = inputs[piece].get_or_insert_with(|| self.inputs(piece, profile));
            out.entry(server).or_default().push(PieceReq {
                piece: self.plan[i],
                inputs: inputs.clone(),
            });
        }
        out
    }

    /// Marks every waiting instance whose inputs are in as sent and returns them grouped by
    /// server (in server order, plan order within a server).
    pub(crate) fn send_ready(
        &mut self,
        kind: &str,
        profile: &TxnProfile,
        routing: &Routing,
    ) -> Result<BTreeMap<u16, Vec<PieceReq>>, Error> {
        let done = self.pieces_done(profile);
        let mut sent = Vec::new();
        for i in 0..self.plan.len() {
            let piece = &profile.pieces[usize::from(self.plan[i].piece)];
            let ready = piece
                .inputs_from
                .iter()
                .all(|&q| done.get(q) != Some(&false));
            if self.state[i] != State::Waiting || !ready {
                continue;
            }
            let server = routing.server_of(kind, self.plan[i])?;
            self.state[i] = State::Sent(server);
            self.wrote |= piece.writes();
            sent.push((i, server));
        }
        Ok(self.requests(sent.into_iter(), profile))
    }

    /// The instances sent and not answered, grouped by server (for retransmission).
    pub(crate) fn unanswered(&self, profile: &TxnProfile) -> BTreeMap<u16, Vec<PieceReq>> {
        let sent = self.state.iter().enumerate().filter_map(|(i, s)| match s {
            State::Sent(server) => Some((i, *server)),
            _ => None,
        });
        self.requests(sent, profile)
    }

    /// Instance `p` answered with `outputs`; instances known only now are planned
    /// (`plan_after`). Returns false for an instance that is not sent (a duplicate answer).
    pub(crate) fn answered<P: PieceProgram>(
        &mut self,
        program: &P,
        p: PieceRef,
        outputs: &PieceValues,
    ) -> bool {
        // Answers come in plan order within a reply: try the instance after the last one.
        let i = match self.plan.get(self.next) {
            Some(&q) if q == p => self.next,
            _ => match self.plan.iter().position(|&q| q == p) {
                Some(i) => i,
                None => return false,
            },
        };
        self.next = i + 1;
        let State::Sent(server) = self.state[i] else {
            return false;
        };
        self.state[i] = State::Done(server);
        self.outputs[i] = outputs.clone();
        self.all.extend_from(outputs);
        let before = self.plan.len();
        program.plan_after(p, &self.all, &mut self.plan);
        let added = self.plan.len() - before;
        self.state
            .extend(std::iter::repeat_n(State::Waiting, added));
        self.outputs
            .extend(std::iter::repeat_n(PieceValues::new(), added));
        true
    }

    /// The servers the sent instances went to, sorted.
    pub(crate) fn servers(&self) -> Vec<u16> {
        let mut s: Vec<u16> = self
            .state
            .iter()
            .filter_map(|&st| match st {
                State::Sent(s) | State::Done(s) => Some(s),
                State::Waiting => None,
            })
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    }
}
