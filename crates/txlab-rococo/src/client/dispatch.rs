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

    fn ready(&self, i: usize, profile: &TxnProfile) -> bool {
        let piece = &profile.pieces[usize::from(self.plan[i].piece)];
        piece.inputs_from.iter().all(|&q| {
            self.plan
                .iter()
                .zip(&self.state)
                .all(|(p, s)| usize::from(p.piece) != q || matches!(s, State::Done(_)))
        })
    }

    fn inputs(&self, i: usize, profile: &TxnProfile) -> PieceValues {
        let piece = &profile.pieces[usize::from(self.plan[i].piece)];
        let mut inputs = PieceValues::new();
        for (j, p) in self.plan.iter().enumerate() {
            if piece.inputs_from.contains(&usize::from(p.piece)) {
                inputs.extend_from(&self.outputs[j]);
            }
        }
        inputs
    }

    /// Marks every waiting instance whose inputs are in as sent and returns them grouped by
    /// server (in server order, plan order within a server).
    pub(crate) fn send_ready(
        &mut self,
        kind: &str,
        profile: &TxnProfile,
        routing: &Routing,
    ) -> Result<BTreeMap<u16, Vec<PieceReq>>, Error> {
        let mut out: BTreeMap<u16, Vec<PieceReq>> = BTreeMap::new();
        for i in 0..self.plan.len() {
            if self.state[i] != State::Waiting || !self.ready(i, profile) {
                continue;
            }
            let server = routing.server_of(kind, self.plan[i])?;
            self.state[i] = State::Sent(server);
            self.wrote |= profile.pieces[usize::from(self.plan[i].piece)].writes();
            out.entry(server).or_default().push(PieceReq {
                piece: self.plan[i],
                inputs: self.inputs(i, profile),
            });
        }
        Ok(out)
    }

    /// The instances sent and not answered, grouped by server (for retransmission).
    pub(crate) fn unanswered(&self, profile: &TxnProfile) -> BTreeMap<u16, Vec<PieceReq>> {
        let mut out: BTreeMap<u16, Vec<PieceReq>> = BTreeMap::new();
        for i in 0..self.plan.len() {
            if let State::Sent(s) = self.state[i] {
                out.entry(s).or_default().push(PieceReq {
                    piece: self.plan[i],
                    inputs: self.inputs(i, profile),
                });
            }
        }
        out
    }

    /// Instance `p` answered with `outputs`; instances known only now are planned
    /// (`plan_after`). Returns false for an instance that is not sent (a duplicate answer).
    pub(crate) fn answered<P: PieceProgram>(
        &mut self,
        program: &P,
        p: PieceRef,
        outputs: &PieceValues,
    ) -> bool {
        let Some(i) = self.plan.iter().position(|&q| q == p) else {
            return false;
        };
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
