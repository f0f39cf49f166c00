//! YCSB as ROCOCO's pieces: every operation is a deferrable piece on the server owning its key
//! (reads too: their values go to the client at commit, in the operation's output slot), so YCSB
//! never needs an immediate piece and every SC-cycle has a D-D edge.
//!
//! Profiles: `read_write` (piece `op`, repeated, reads and writes `usertable`) and `read_only`
//! (piece `read`, repeated). Instance `n` is operation `n`, routed by its key; a read outputs the
//! value in slot `n`. Piece instances are `u16`s, so a pieced transaction has at most
//! [`MAX_PIECED_OPS`] operations ([`PieceProfiles::check_pieced`]).

use super::{Ycsb, YcsbOpKind, YcsbTxn};
use txlab_core::pieces::{
    ColumnGroup, ConflictKey, PieceKind, PieceProfile, PieceProfiles, PieceRef, PieceValues,
    Pieced, TableLayout, TxnProfile,
};
use txlab_core::{Access, Error, Program, TxError, TxOps, TxResult};

/// The most operations a transaction run as pieces may have.
pub const MAX_PIECED_OPS: usize = u16::MAX as usize + 1;

impl PieceProfiles for Ycsb {
    fn profiles(&self) -> Vec<TxnProfile> {
        let t = self.table;
        vec![
            TxnProfile {
                kind: "read_write",
                read_only: false,
                pieces: vec![
                    PieceProfile::new("op", PieceKind::Deferrable)
                        .access(t, ColumnGroup::ROW, Access::ReadWrite)
                        .repeated(),
                ],
            },
            TxnProfile {
                kind: "read_only",
                read_only: true,
                pieces: vec![
                    PieceProfile::new("read", PieceKind::Deferrable)
                        .access(t, ColumnGroup::ROW, Access::Read)
                        .repeated(),
                ],
            },
        ]
    }

    fn table_layouts(&self) -> Vec<TableLayout> {
        vec![TableLayout::whole(self.table, "usertable")]
    }

    /// `ops_per_txn` at most [`MAX_PIECED_OPS`] (one piece per operation).
    fn check_pieced(&self) -> Result<(), Error> {
        if self.cfg.ops_per_txn > MAX_PIECED_OPS {
            return Err(Error::invalid(
                "ops_per_txn",
                self.cfg.ops_per_txn,
                format!("at most {MAX_PIECED_OPS} to run as pieces (one piece per operation)"),
            ));
        }
        Ok(())
    }
}

fn access(kind: YcsbOpKind) -> Access {
    match kind {
        YcsbOpKind::Read => Access::Read,
        YcsbOpKind::BlindUpdate => Access::BlindWrite,
        YcsbOpKind::ReadModifyWrite => Access::ReadWrite,
    }
}

impl Pieced for YcsbTxn {
    fn profile(&self) -> usize {
        usize::from(self.read_only())
    }

    fn plan(&self, out: &mut Vec<PieceRef>) {
        for (n, op) in (0..=u16::MAX).zip(&self.ops) {
            out.push(PieceRef::new(0, n, self.table, op.key));
        }
    }

    fn conflict_keys(
        &self,
        p: PieceRef,
        _inputs: &PieceValues,
        out: &mut Vec<(ConflictKey, Access)>,
    ) {
        if let Some(op) = self.ops.get(usize::from(p.instance)) {
            let key = ConflictKey::new(self.table, ColumnGroup::ROW, op.key);
            out.push((key, access(op.kind)));
        }
    }

    fn run_piece<T: TxOps + ?Sized>(
        &self,
        p: PieceRef,
        _inputs: &PieceValues,
        tx: &mut T,
        out: &mut PieceValues,
    ) -> TxResult<()> {
        let Some(op) = self
            .ops
            .get(usize::from(p.instance))
            .filter(|_| p.piece == 0)
        else {
            return Err(TxError::Error(Error::invalid(
                "piece",
                format!("{}/{}", p.piece, p.instance),
                format!("piece 0, instance in 0..{}", self.ops.len()),
            )));
        };
        self.run_op(op, tx, |v| out.put(p.instance, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Generator, Workload, YcsbConfig, YcsbPreset};
    use txlab_check::digest::StateDigest;
    use txlab_check::serial::SerialEngine;
    use txlab_core::pieces::{CheckedOps, check_plan, conflicts};
    use txlab_core::{Engine, Transaction, Worker};

    fn transact(e: &SerialEngine, f: impl FnOnce(&mut dyn TxOps) -> TxResult<()>) -> TxResult<()> {
        let mut w = e.worker().unwrap();
        let mut tx = w.begin();
        match f(&mut tx) {
            Ok(()) => tx.commit().map(|_| ()),
            Err(e) => Err(e),
        }
    }

    #[test]
    fn ycsb_pieces_equal_the_program_and_reads_return_their_values() {
        for preset in [YcsbPreset::A, YcsbPreset::C, YcsbPreset::F] {
            let ycsb = Ycsb::new(YcsbConfig {
                records: 50,
                ops_per_txn: 8,
                theta: 0.9,
                ..YcsbConfig::preset(preset)
            })
            .unwrap();
            ycsb.check_pieced().unwrap();
            let too_many = Ycsb::new(YcsbConfig {
                records: 1 << 17,
                ops_per_txn: MAX_PIECED_OPS + 1,
                ..YcsbConfig::preset(preset)
            })
            .unwrap();
            let e = too_many.check_pieced().unwrap_err().to_string();
            assert!(e.contains("ops_per_txn = 65537"), "{e}");
            let profiles = ycsb.profiles();
            let layouts = ycsb.table_layouts();
            let (a, b) = (
                SerialEngine::new(ycsb.schema()),
                SerialEngine::new(ycsb.schema()),
            );
            ycsb.load(&a).unwrap();
            ycsb.load(&b).unwrap();
            let mut generator = ycsb.generator(0, 3);
            for _ in 0..200 {
                let txn = generator.next();
                transact(&a, |tx| txn.run(tx)).unwrap();
                let profile = &profiles[txn.profile()];
                assert_eq!(profile.read_only, txn.read_only());
                let mut plan = Vec::new();
                txn.plan(&mut plan);
                check_plan(profile, &plan).unwrap();
                assert_eq!(plan.len(), txn.ops().len());
                for p in plan {
                    assert_eq!(p.route_key, txn.ops()[usize::from(p.instance)].key);
                    let mut declared = Vec::new();
                    txn.conflict_keys(p, &PieceValues::new(), &mut declared);
                    assert_eq!(declared.len(), 1);
                    let mut out = PieceValues::new();
                    transact(&b, |tx| {
                        let mut ops = CheckedOps::new(tx, "op", &declared, &layouts);
                        txn.run_piece(p, &PieceValues::new(), &mut ops, &mut out)
                    })
                    .unwrap();
                    let op = txn.ops()[usize::from(p.instance)];
                    if op.kind == YcsbOpKind::Read {
                        assert_eq!(out.get(p.instance), b.peek(ycsb.table, op.key).as_deref());
                    } else {
                        assert!(out.is_empty());
                    }
                }
                assert!(StateDigest::of_serial(&a) == StateDigest::of_serial(&b));
            }
        }
    }

    #[test]
    fn ycsb_pieces_conflict_exactly_on_a_shared_key_with_a_write() {
        let ycsb = Ycsb::new(YcsbConfig {
            records: 4,
            ops_per_txn: 4,
            ..YcsbConfig::preset(YcsbPreset::A)
        })
        .unwrap();
        let mut generator = ycsb.generator(0, 1);
        let mut keys = Vec::new();
        for _ in 0..20 {
            let txn = generator.next();
            let mut plan = Vec::new();
            txn.plan(&mut plan);
            for p in plan {
                let mut k = Vec::new();
                txn.conflict_keys(p, &PieceValues::new(), &mut k);
                keys.push((txn.ops()[usize::from(p.instance)], k[0]));
            }
        }
        for (opa, ka) in &keys {
            for (opb, kb) in &keys {
                let expected = opa.key == opb.key
                    && (opa.kind != YcsbOpKind::Read || opb.kind != YcsbOpKind::Read);
                assert_eq!(conflicts(*ka, *kb), expected, "{opa:?} {opb:?}");
            }
        }
    }
}
