//! The tests that keep the pieces and the programs one definition (module docs of
//! [`txlab_core::pieces`], invariants 1–5), on the serial reference engine:
//!
//! - **equivalence**: for generated transactions of every type (with forced rollbacks), the
//!   pieces run in plan order (each its own serial transaction, inputs restricted to the outputs
//!   of the pieces named in `inputs_from`) leave the same state digest and outcome as
//!   `Program::run`; read-only types compute the same answers;
//! - **profile consistency**: every declared conflict key is in the piece's profile, every access
//!   a piece makes is covered by its keys (through [`CheckedOps`]), a failing piece comes before
//!   any writing piece, every plan fits its profile and every route has a `ByDistrict` owner;
//! - **conflict-key soundness**: two piece instances whose keys do not conflict commute.

use super::super::partition::ByDistrict;
use super::super::{order_status, stock_level, warehouse_ytd};
use super::*;
use crate::rng::worker_rng;
use crate::tpcc::{TpccConfig, TpccGenerator, TpccKind};
use crate::{Generator, Workload};
use rand::RngExt;
use txlab_check::digest::StateDigest;
use txlab_check::serial::SerialEngine;
use txlab_core::partition::Partitioner;
use txlab_core::pieces::{CheckedOps, check_plan, conflicts, permits};
use txlab_core::{Engine, Program, Transaction, TxError, Worker};

fn config(items: u32, customers: u32) -> TpccConfig {
    TpccConfig {
        warehouses: 2,
        districts_per_warehouse: 3,
        customers_per_district: customers,
        items,
        scaled: true,
        ..TpccConfig::default()
    }
}

fn loaded(tpcc: &Tpcc) -> SerialEngine {
    let e = SerialEngine::new(tpcc.schema());
    tpcc.load(&e).unwrap();
    e
}

fn copy(e: &SerialEngine, tpcc: &Tpcc) -> SerialEngine {
    let c = SerialEngine::new(tpcc.schema());
    for (t, k, v) in e.rows() {
        c.insert_raw(t, k, &v).unwrap();
    }
    c
}

/// Runs `f` in one serial transaction, committed when it succeeds.
fn transact<R>(e: &SerialEngine, f: impl FnOnce(&mut dyn TxOps) -> TxResult<R>) -> TxResult<R> {
    let mut w = e.worker().unwrap();
    let mut tx = w.begin();
    let r = f(&mut tx);
    match r {
        Ok(v) => tx.commit().map(|_| v),
        Err(e) => {
            tx.abort();
            Err(e)
        }
    }
}

/// What running a transaction's pieces did.
#[derive(Debug)]
struct PieceRun {
    outcome: TxResult<()>,
    /// Every output.
    outputs: PieceValues,
    /// Each instance that ran, with the inputs it was given.
    ran: Vec<(PieceRef, PieceValues)>,
}

/// Runs `txn`'s pieces in plan order, each in its own serial transaction, checking invariants
/// 2, 3 and 5 as it goes (module docs).
fn run_pieces(
    e: &SerialEngine,
    txn: &TpccTxn,
    profiles: &[TxnProfile],
    layouts: &[TableLayout],
) -> PieceRun {
    let profile = &profiles[txn.profile()];
    let mut plan = Vec::new();
    txn.plan(&mut plan);
    let mut by_piece = vec![PieceValues::new(); profile.pieces.len()];
    let mut run = PieceRun {
        outcome: Ok(()),
        outputs: PieceValues::new(),
        ran: Vec::new(),
    };
    let mut declared = Vec::new();
    let mut i = 0;
    while i < plan.len() {
        let p = plan[i];
        let piece = &profile.pieces[usize::from(p.piece)];
        let mut inputs = PieceValues::new();
        for &from in &piece.inputs_from {
            inputs.extend_from(&by_piece[from]);
        }
        declared.clear();
        txn.conflict_keys(p, &inputs, &mut declared);
        assert!(
            !declared.is_empty(),
            "{}.{} declares no key",
            profile.kind,
            piece.name
        );
        for (k, a) in &declared {
            assert!(
                piece
                    .accesses
                    .iter()
                    .any(|&(t, g, pa)| (t, g) == (k.table, k.group) && permits(pa, *a)),
                "{}.{}: runtime key {k} {a:?} is not in its profile",
                profile.kind,
                piece.name
            );
        }
        let mut out = PieceValues::new();
        let mut checked = 0;
        let r = transact(e, |tx| {
            let mut ops = CheckedOps::new(tx, piece.name, &declared, layouts);
            let r = txn.run_piece(p, &inputs, &mut ops, &mut out);
            checked = ops.checked();
            r
        });
        if let Err(err) = r {
            // Invariant 5: nothing that writes ran before a failing piece.
            for (q, _) in &run.ran {
                let earlier = &profile.pieces[usize::from(q.piece)];
                assert!(
                    !earlier.writes(),
                    "{}.{} failed ({err}) after the writing piece {} ran",
                    profile.kind,
                    piece.name,
                    earlier.name
                );
            }
            run.outcome = Err(err);
            return run;
        }
        assert!(
            checked > 0,
            "{}.{} made no access",
            profile.kind,
            piece.name
        );
        by_piece[usize::from(p.piece)].extend_from(&out);
        run.outputs.extend_from(&out);
        run.ran.push((p, inputs));
        txn.plan_after(p, &run.outputs, &mut plan);
        i += 1;
    }
    check_plan(profile, &plan).unwrap();
    run
}

fn run_program(e: &SerialEngine, txn: &TpccTxn) -> TxResult<()> {
    transact(e, |tx| txn.run(tx))
}

/// The answers the read-only types' pieces output agree with their programs' on `e`.
fn assert_same_answers(e: &SerialEngine, txn: &TpccTxn, out: &PieceValues) {
    let ctx = txn.ctx;
    match txn.input() {
        TpccInput::StockLevel(i) => {
            let low = transact(e, |tx| stock_level::run(&ctx, i, tx)).unwrap();
            let from_pieces = (STOCKS..)
                .map_while(|s| out.get(s))
                .filter(|q| i32::from_le_bytes([q[0], q[1], q[2], q[3]]) < i.threshold)
                .count();
            assert_eq!(from_pieces as u32, low, "{i:?}");
        }
        TpccInput::OrderStatus(i) => {
            let s = transact(e, |tx| order_status::run(&ctx, i, tx)).unwrap();
            let v = out.get(0).unwrap();
            assert_eq!(&v[..4], &s.c_id.to_le_bytes());
            assert_eq!(&v[4..12], &s.balance.to_le_bytes());
            assert_eq!(&v[12..16], &s.o_id.unwrap_or(0).to_le_bytes());
            assert_eq!(&v[16..20], &s.lines.to_le_bytes());
            assert_eq!(&v[20..], &s.amount.to_le_bytes());
        }
        TpccInput::WarehouseYtd(i) => {
            let sum = transact(e, |tx| warehouse_ytd::run(&ctx, i, tx)).unwrap();
            let from_pieces: i64 = out
                .iter()
                .map(|(_, v)| i64::from_le_bytes(v.try_into().unwrap()))
                .sum();
            assert_eq!(from_pieces, sum);
        }
        _ => {}
    }
}

#[test]
fn pieces_in_plan_order_equal_the_program_on_the_serial_engine() {
    let tpcc = Tpcc::new(config(200, 30)).unwrap();
    let (profiles, layouts) = (tpcc.profiles(), tpcc.table_layouts());
    tpcc.check_pieced().unwrap();
    let owners = ByDistrict::new(tpcc.config(), *tpcc.tables(), 2).unwrap();
    let by_program = loaded(&tpcc);
    let by_pieces = copy(&by_program, &tpcc);
    let mut kinds = std::collections::BTreeMap::new();
    for seed in 0..3u64 {
        let mut generator = tpcc.generator(seed as usize, seed);
        for n in 0..150 {
            let mut txn = generator.next().clone();
            if let TpccInput::NewOrder(i) = &mut txn.input
                && n % 10 == 0
            {
                let last = usize::from(i.ol_cnt) - 1;
                i.lines[last].item = tpcc.config().items + 1;
            }
            if n % 25 == 0 {
                txn = tpcc.warehouse_ytd_txn(1 + (n / 25) as u32 % 2).unwrap();
            }
            let mut plan = Vec::new();
            txn.plan(&mut plan);
            for p in &plan {
                owners.partition_of(p.route_table, p.route_key).unwrap();
            }
            let expected = run_program(&by_program, &txn);
            let got = run_pieces(&by_pieces, &txn, &profiles, &layouts);
            assert_eq!(got.outcome, expected, "{txn:?}");
            let (a, b) = (
                StateDigest::of_serial(&by_program),
                StateDigest::of_serial(&by_pieces),
            );
            assert!(
                a == b,
                "{txn:?}: states differ: {:?}",
                StateDigest::diff(&by_program, &by_pieces, 3)
            );
            if got.outcome.is_ok() {
                assert_same_answers(&by_program, &txn, &got.outputs);
            }
            let outcome = match &expected {
                Ok(()) => "ok",
                Err(TxError::UserAbort(_)) => "rollback",
                Err(e) => panic!("{txn:?} failed: {e}"),
            };
            *kinds.entry((txn.kind(), outcome)).or_insert(0) += 1;
        }
    }
    for kind in TpccKind::ALL
        .iter()
        .map(|k| k.name())
        .chain(["warehouse_ytd"])
    {
        assert!(
            kinds.contains_key(&(kind, "ok")),
            "no {kind} ran: {kinds:?}"
        );
    }
    assert!(kinds[&("new_order", "rollback")] >= 10, "{kinds:?}");
    tpcc.check(&by_pieces).unwrap();
}

#[test]
fn only_the_scaled_variant_with_u16_district_pieces_runs_as_pieces() {
    let unscaled = Tpcc::new(TpccConfig {
        scaled: false,
        ..config(200, 30)
    })
    .unwrap();
    let e = unscaled.check_pieced().unwrap_err().to_string();
    assert!(e.contains("scaled = false"), "{e}");
    let wide = Tpcc::new(TpccConfig {
        warehouses: 1,
        districts_per_warehouse: MAX_PIECED_DISTRICTS + 1,
        customers_per_district: 1,
        ..config(200, 1)
    })
    .unwrap();
    let e = wide.check_pieced().unwrap_err().to_string();
    assert!(e.contains("districts_per_warehouse = 65537"), "{e}");
    Tpcc::new(TpccConfig::rococo_scaled())
        .unwrap()
        .check_pieced()
        .unwrap();
}

#[test]
fn layouts_cover_every_row_and_profiles_name_laid_out_groups() {
    let tpcc = Tpcc::new(config(200, 30)).unwrap();
    let schema = tpcc.schema();
    let layouts = tpcc.table_layouts();
    assert_eq!(layouts.len(), schema.len());
    for l in &layouts {
        l.validate(schema.table(l.table).unwrap().value_size)
            .unwrap();
    }
    for t in tpcc.profiles() {
        for p in &t.pieces {
            for (table, group, _) in &p.accesses {
                let l = layouts.iter().find(|l| l.table == *table).unwrap();
                assert!(l.has_group(*group), "{}.{}", t.kind, p.name);
            }
        }
    }
}

#[test]
fn a_piece_touching_an_undeclared_group_is_refused() {
    // Payment's district piece declares D_YTD only; with its key replaced by D_NEXT_O_ID's,
    // the guard names the piece and the group it changed.
    let tpcc = Tpcc::new(config(200, 30)).unwrap();
    let layouts = tpcc.table_layouts();
    let e = loaded(&tpcc);
    let mut generator = tpcc.generator(0, 7);
    let txn = loop {
        let t = generator.next();
        if t.txn_kind() == TpccKind::Payment {
            break t.clone();
        }
    };
    let mut plan = Vec::new();
    txn.plan(&mut plan);
    let p = *plan.iter().find(|p| p.piece == 1).unwrap();
    let mut declared = Vec::new();
    txn.conflict_keys(p, &PieceValues::new(), &mut declared);
    declared[0].0.group = groups::DISTRICT_NEXT_O_ID;
    let r = transact(&e, |tx| {
        let mut ops = CheckedOps::new(tx, "district", &declared, &layouts);
        txn.run_piece(p, &PieceValues::new(), &mut ops, &mut PieceValues::new())
    });
    let Err(TxError::Error(txlab_core::Error::Invariant(m))) = r else {
        panic!("expected an invariant error, got {r:?}");
    };
    assert!(
        m.contains("piece district") && m.contains("group 2 ytd"),
        "{m}"
    );
}

/// A random state: a loaded database after `n` generated transactions.
fn random_state(tpcc: &Tpcc, seed: u64, n: usize) -> SerialEngine {
    let e = loaded(tpcc);
    let mut generator: TpccGenerator = tpcc.generator(0, seed);
    for _ in 0..n {
        let _ = run_program(&e, generator.next());
    }
    e
}

/// Runs one piece instance with its recorded inputs as one serial transaction.
fn run_one(
    e: &SerialEngine,
    txn: &TpccTxn,
    p: PieceRef,
    inputs: &PieceValues,
) -> (TxResult<()>, PieceValues) {
    let mut out = PieceValues::new();
    let r = transact(e, |tx| txn.run_piece(p, inputs, tx, &mut out));
    (r, out)
}

#[test]
fn piece_instances_whose_keys_do_not_conflict_commute() {
    // A small, hot database: 15 items, 5 customers per district, 2 x 3 districts.
    let tpcc = Tpcc::new(config(15, 5)).unwrap();
    let (profiles, layouts) = (tpcc.profiles(), tpcc.table_layouts());
    let mut rng = worker_rng(0x5eed, 0);
    let (mut commuting, mut sharing_a_row_unit, mut conflicting) = (0, 0, 0);
    for round in 0..24u64 {
        let base = random_state(&tpcc, round, 40);
        // Two batches of transactions, their pieces and recorded inputs (from the base state).
        let mut instances = Vec::new();
        let mut generator = tpcc.generator(1 + round as usize, round);
        for _ in 0..12 {
            let txn = generator.next().clone();
            let scratch = copy(&base, &tpcc);
            let run = run_pieces(&scratch, &txn, &profiles, &layouts);
            for (p, inputs) in run.ran {
                instances.push((txn.clone(), p, inputs));
            }
        }
        let keys: Vec<Vec<_>> = instances
            .iter()
            .map(|(txn, p, inputs)| {
                let mut k = Vec::new();
                txn.conflict_keys(*p, inputs, &mut k);
                k
            })
            .collect();
        let share = |x: &[(ConflictKey, Access)], y: &[(ConflictKey, Access)]| {
            x.iter().any(|a| {
                y.iter()
                    .any(|b| (a.0.table, a.0.key) == (b.0.table, b.0.key))
            })
        };
        for _ in 0..40 {
            let i = rng.random_range(0..instances.len());
            // Half of the partners share a unit of a table with the first instance.
            let near: Vec<usize> = (0..instances.len())
                .filter(|&j| share(&keys[i], &keys[j]))
                .collect();
            let j = if rng.random_range(0..2) == 0 && !near.is_empty() {
                near[rng.random_range(0..near.len())]
            } else {
                rng.random_range(0..instances.len())
            };
            let (a, b, ka, kb) = (&instances[i], &instances[j], &keys[i], &keys[j]);
            if ka.iter().any(|&x| kb.iter().any(|&y| conflicts(x, y))) {
                conflicting += 1;
                continue;
            }
            commuting += 1;
            if share(ka, kb) {
                sharing_a_row_unit += 1;
            }
            let ab = copy(&base, &tpcc);
            let first_a = (run_one(&ab, &a.0, a.1, &a.2), run_one(&ab, &b.0, b.1, &b.2));
            let ba = copy(&base, &tpcc);
            let second_b = run_one(&ba, &b.0, b.1, &b.2);
            let second_a = run_one(&ba, &a.0, a.1, &a.2);
            assert_eq!(first_a.0, second_a, "{a:?} then {b:?}");
            assert_eq!(first_a.1, second_b, "{a:?} then {b:?}");
            assert!(
                StateDigest::of_serial(&ab) == StateDigest::of_serial(&ba),
                "{a:?} and {b:?} do not commute: {:?}",
                StateDigest::diff(&ab, &ba, 3)
            );
        }
    }
    // Not vacuous: many pairs touch one unit of one table (different groups, or both read), and
    // many conflict.
    assert!(
        commuting >= 300 && sharing_a_row_unit >= 100 && conflicting >= 100,
        "{commuting} commuting ({sharing_a_row_unit} sharing a unit), {conflicting} conflicting"
    );
}
