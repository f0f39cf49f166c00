//! Random transaction profiles that run: a [`ProfileSpec`] is 2–3 transaction types of 2–3
//! pieces each (random kinds, column groups, reads or read-modify-writes, `inputs_from`) over
//! 1–3 keys per table, and [`RandomPieces`] is the workload that runs it, on ROCOCO's servers
//! or as plain programs. It feeds the offline SC-graph checker (`txlab_rococo::sc`) and the
//! servers with the same profiles, so a test can check that what the checker accepts runs
//! serializably and that what it rejects is really unsafe.
//!
//! Tables: `a` ([`TABLE_A`]) has two column groups of one `u64` each (group 1: bytes 0..8,
//! group 2: bytes 8..16), so pieces on different groups of one row commute; `b` ([`TABLE_B`])
//! is one `u64` (group 0, the row). Every key is its own conflict unit.
//!
//! A piece reads its target group of its key and outputs the value in the slot of its piece
//! index; a writing piece then stores `old * 31 + 1 + salt + inputs` (the transaction's random
//! salt, the sum of the values its `inputs_from` pieces read). A transaction's pieces that share
//! a target get distinct keys ([`ProfileSpec::keys`] is at least their number), so no
//! transaction conflicts with itself. Pieces are never `repeated`.
//!
//! [`brute_force_safe`] is the checker's specification by enumeration, independent of its
//! block decomposition: build the SC-graph, promote immediacy to a fixpoint, and look for a
//! simple cycle with an S-edge and a C-edge whose C-edges all join immediate pieces.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::sync::Arc;
use txlab_core::partition::{Partitioner, RangePartitioner};
use txlab_core::pieces::{
    ColumnGroup, ConflictKey, PieceKind, PieceProfile, PieceProfiles, PieceRef, PieceValues,
    Pieced, TableLayout, TxnProfile,
};
use txlab_core::{
    Access, AccessSet, Engine, Error, Program, Schema, TableId, TableSpec, TxError, TxOps, TxResult,
};
use txlab_rococo::PiecedWorkload;
use txlab_workload::rng::{WorkloadRng, worker_rng};
use txlab_workload::{Generator, Workload};

/// Table `a`: two column groups (module docs).
pub const TABLE_A: TableId = TableId(0);
/// Table `b`: one group, the row.
pub const TABLE_B: TableId = TableId(1);

const TYPE_NAMES: [&str; 3] = ["t0", "t1", "t2"];
const PIECE_NAMES: [&str; 3] = ["p0", "p1", "p2"];

/// The most keys per table.
pub const MAX_KEYS: u64 = 3;

/// The `(table, column group)` a piece accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    /// `a`, group 1.
    AFirst,
    /// `a`, group 2.
    ASecond,
    /// `b`, the row.
    B,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 3] = [Target::AFirst, Target::ASecond, Target::B];

    /// Its table.
    pub fn table(self) -> TableId {
        match self {
            Target::AFirst | Target::ASecond => TABLE_A,
            Target::B => TABLE_B,
        }
    }

    /// Its column group.
    pub fn group(self) -> ColumnGroup {
        match self {
            Target::AFirst => ColumnGroup(1),
            Target::ASecond => ColumnGroup(2),
            Target::B => ColumnGroup::ROW,
        }
    }

    /// Its bytes in the row.
    fn span(self) -> Range<usize> {
        match self {
            Target::AFirst | Target::B => 0..8,
            Target::ASecond => 8..16,
        }
    }
}

/// One piece of a random type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PieceSpec {
    /// Immediate (else deferrable).
    pub immediate: bool,
    /// What it accesses.
    pub target: Target,
    /// Read-modify-write (else read).
    pub writes: bool,
    /// The earlier immediate piece whose output it takes, if any.
    pub input: Option<usize>,
}

impl PieceSpec {
    fn access(&self) -> Access {
        if self.writes {
            Access::ReadWrite
        } else {
            Access::Read
        }
    }
}

/// A random set of transaction types (module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileSpec {
    /// Keys per table, `1..=MAX_KEYS`.
    pub keys: u64,
    /// The types, each a list of pieces.
    pub types: Vec<Vec<PieceSpec>>,
}

impl ProfileSpec {
    /// Makes a raw draw valid: `input` names an earlier immediate piece or nothing, and there
    /// are enough keys for a type's pieces on one target to have distinct keys.
    fn normalized(mut self) -> Self {
        for pieces in &mut self.types {
            let kinds: Vec<bool> = pieces.iter().map(|p| p.immediate).collect();
            for (j, p) in pieces.iter_mut().enumerate() {
                p.input = p.input.filter(|&i| i < j && kinds[i]);
            }
            for t in Target::ALL {
                let n = pieces.iter().filter(|p| p.target == t).count() as u64;
                self.keys = self.keys.max(n);
            }
        }
        self
    }

    /// The checker's view: one [`TxnProfile`] per type.
    pub fn profiles(&self) -> Vec<TxnProfile> {
        self.types
            .iter()
            .zip(TYPE_NAMES)
            .map(|(pieces, kind)| TxnProfile {
                kind,
                read_only: false,
                pieces: pieces
                    .iter()
                    .zip(PIECE_NAMES)
                    .map(|(p, name)| {
                        let kind = if p.immediate {
                            PieceKind::Immediate
                        } else {
                            PieceKind::Deferrable
                        };
                        PieceProfile::new(name, kind)
                            .access(p.target.table(), p.target.group(), p.access())
                            .inputs_from(p.input.as_slice())
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Raw draws for one piece: immediate with probability `immediate`.
fn piece(immediate: f64) -> impl Strategy<Value = PieceSpec> {
    (
        prop::bool::weighted(immediate),
        prop::sample::select(Target::ALL.to_vec()),
        any::<bool>(),
        prop::option::of(0usize..2),
    )
        .prop_map(|(immediate, target, writes, input)| PieceSpec {
            immediate,
            target,
            writes,
            input,
        })
}

/// Random specs (module docs): 2–3 types of 2–3 pieces over 1–3 keys, each piece immediate with
/// probability `immediate`.
pub fn profile_spec(immediate: f64) -> impl Strategy<Value = ProfileSpec> {
    (
        1..=MAX_KEYS,
        prop::collection::vec(prop::collection::vec(piece(immediate), 2..=3), 2..=3),
    )
        .prop_map(|(keys, types)| ProfileSpec { keys, types }.normalized())
}

/// The workload that runs a [`ProfileSpec`] (module docs).
#[derive(Debug, Clone)]
pub struct RandomPieces {
    spec: Arc<ProfileSpec>,
    schema: Schema,
}

impl RandomPieces {
    /// The workload of `spec`; an error names a spec out of range.
    pub fn new(spec: ProfileSpec) -> Result<Self, Error> {
        if !(1..=MAX_KEYS).contains(&spec.keys) {
            return Err(Error::invalid("keys", spec.keys, format!("1..={MAX_KEYS}")));
        }
        if !(1..=TYPE_NAMES.len()).contains(&spec.types.len()) {
            return Err(Error::invalid("types", spec.types.len(), "1..=3"));
        }
        if let Some(n) = spec
            .types
            .iter()
            .map(Vec::len)
            .find(|n| !(1..=PIECE_NAMES.len()).contains(n))
        {
            return Err(Error::invalid("pieces per type", n, "1..=3"));
        }
        let mut schema = Schema::new();
        let a = schema.add(TableSpec::dense("a", 16, spec.keys))?;
        let b = schema.add(TableSpec::dense("b", 8, spec.keys))?;
        debug_assert_eq!((a, b), (TABLE_A, TABLE_B));
        Ok(Self {
            spec: Arc::new(spec),
            schema,
        })
    }

    /// The spec it runs.
    pub fn spec(&self) -> &ProfileSpec {
        &self.spec
    }
}

impl Workload for RandomPieces {
    type Program = RandomTxn;
    type Generator = RandomGenerator;

    fn name(&self) -> String {
        "random-profiles".to_string()
    }

    fn schema(&self) -> Schema {
        self.schema.clone()
    }

    fn load<E: Engine>(&self, engine: &E) -> Result<(), Error> {
        for key in 0..self.spec.keys {
            engine.load(TABLE_A, key, &[0; 16])?;
            engine.load(TABLE_B, key, &[0; 8])?;
        }
        Ok(())
    }

    fn generator(&self, thread: usize, seed: u64) -> RandomGenerator {
        RandomGenerator {
            rng: worker_rng(seed, thread),
            spec: Arc::clone(&self.spec),
            txn: RandomTxn::default(),
        }
    }

    fn parameters(&self) -> Vec<(&'static str, String)> {
        vec![
            ("keys", self.spec.keys.to_string()),
            ("types", self.spec.types.len().to_string()),
        ]
    }
}

impl PieceProfiles for RandomPieces {
    fn profiles(&self) -> Vec<TxnProfile> {
        self.spec.profiles()
    }

    fn table_layouts(&self) -> Vec<TableLayout> {
        vec![
            TableLayout::whole(TABLE_A, "a")
                .group(1, "first", &[(0, 8)])
                .group(2, "second", &[(8, 16)]),
            TableLayout::whole(TABLE_B, "b"),
        ]
    }
}

impl PiecedWorkload for RandomPieces {
    fn partitioner(&self, servers: u32) -> Result<Arc<dyn Partitioner>, Error> {
        let keys = self.spec.keys;
        Ok(Arc::new(RangePartitioner::new(servers, vec![keys, keys])?))
    }
}

/// Draws [`RandomTxn`]s of a spec.
#[derive(Debug)]
pub struct RandomGenerator {
    rng: WorkloadRng,
    spec: Arc<ProfileSpec>,
    txn: RandomTxn,
}

impl Generator for RandomGenerator {
    type Program = RandomTxn;

    fn next(&mut self) -> &RandomTxn {
        let ty = self.rng.random_range(0..self.spec.types.len());
        let keys = self.spec.keys;
        let t = &mut self.txn;
        t.ty = ty;
        t.pieces.clone_from(&self.spec.types[ty]);
        t.salt = self.rng.random_range(0..1 << 20);
        t.keys.clear();
        let bases = Target::ALL.map(|_| self.rng.random_range(0..keys));
        for (j, p) in t.pieces.iter().enumerate() {
            let i = Target::ALL.iter().position(|&x| x == p.target).unwrap_or(0);
            let rank = t.pieces[..j]
                .iter()
                .filter(|q| q.target == p.target)
                .count() as u64;
            t.keys.push((bases[i] + rank) % keys);
        }
        t
    }
}

/// One transaction of a random type: its pieces, a key each, and a salt for its writes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RandomTxn {
    ty: usize,
    pieces: Vec<PieceSpec>,
    keys: Vec<u64>,
    salt: u64,
}

impl RandomTxn {
    fn piece(&self, p: PieceRef) -> TxResult<(usize, &PieceSpec, u64)> {
        let j = usize::from(p.piece);
        match (self.pieces.get(j), self.keys.get(j)) {
            (Some(s), Some(&k)) if p.instance == 0 => Ok((j, s, k)),
            _ => Err(TxError::Error(Error::invalid(
                "piece",
                format!("{}/{}", p.piece, p.instance),
                format!("instance 0 of a piece in 0..{}", self.pieces.len()),
            ))),
        }
    }
}

impl Program for RandomTxn {
    type Output = ();

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<()> {
        let mut plan = Vec::new();
        self.plan(&mut plan);
        let mut values = PieceValues::new();
        let mut out = PieceValues::new();
        for p in plan {
            out.clear();
            self.run_piece(p, &values, tx, &mut out)?;
            values.extend_from(&out);
        }
        Ok(())
    }

    fn declare(&self, out: &mut AccessSet) {
        for (p, &key) in self.pieces.iter().zip(&self.keys) {
            out.push(p.target.table(), key, p.access());
        }
    }

    fn kind(&self) -> &'static str {
        TYPE_NAMES[self.ty]
    }
}

impl Pieced for RandomTxn {
    fn profile(&self) -> usize {
        self.ty
    }

    fn plan(&self, out: &mut Vec<PieceRef>) {
        for (j, (p, &key)) in (0u16..).zip(self.pieces.iter().zip(&self.keys)) {
            out.push(PieceRef::new(j, 0, p.target.table(), key));
        }
    }

    fn conflict_keys(
        &self,
        p: PieceRef,
        _inputs: &PieceValues,
        out: &mut Vec<(ConflictKey, Access)>,
    ) {
        if let Ok((_, s, key)) = self.piece(p) {
            let k = ConflictKey::new(s.target.table(), s.target.group(), key);
            out.push((k, s.access()));
        }
    }

    fn run_piece<T: TxOps + ?Sized>(
        &self,
        p: PieceRef,
        inputs: &PieceValues,
        tx: &mut T,
        out: &mut PieceValues,
    ) -> TxResult<()> {
        let (j, s, key) = self.piece(p)?;
        let input = match s.input {
            Some(i) => inputs
                .require_u64(i as u16, PIECE_NAMES[j])
                .map_err(TxError::Error)?,
            None => 0,
        };
        let (table, span) = (s.target.table(), s.target.span());
        let row = tx.read(table, key)?.ok_or_else(|| {
            TxError::Error(Error::Invariant(format!(
                "row {key} of table {table:?} is absent"
            )))
        })?;
        let mut word = [0u8; 8];
        word.copy_from_slice(&row[span.clone()]);
        let old = u64::from_le_bytes(word);
        out.put_u64(j as u16, old);
        if s.writes {
            let new = old
                .wrapping_mul(31)
                .wrapping_add(1 + self.salt)
                .wrapping_add(input);
            tx.update(table, key, &mut |v| {
                v[span.clone()].copy_from_slice(&new.to_le_bytes())
            })?;
        }
        Ok(())
    }
}

/// Whether `profiles` (read-write types, no repeated pieces needed) have no unreorderable
/// SC-cycle, by enumeration (module docs). Exponential: for small profiles only.
pub fn brute_force_safe(profiles: &[TxnProfile]) -> bool {
    // Vertices: (type, instance, piece), two copies of a repeated piece.
    let mut v: Vec<(usize, u8, &PieceProfile)> = Vec::new();
    for (t, ty) in profiles.iter().enumerate().filter(|(_, t)| !t.read_only) {
        for inst in 0..2u8 {
            for p in &ty.pieces {
                for _ in 0..if p.repeated { 2 } else { 1 } {
                    v.push((t, inst, p));
                }
            }
        }
    }
    let n = v.len();
    let conflict = |a: &PieceProfile, b: &PieceProfile| {
        a.accesses.iter().any(|&(ta, ga, xa)| {
            b.accesses
                .iter()
                .any(|&(tb, gb, xb)| ta == tb && ga == gb && (xa.writes() || xb.writes()))
        })
    };
    // 0: no edge, 1: S, 2: C.
    let mut edge = vec![vec![0u8; n]; n];
    for a in 0..n {
        for b in 0..n {
            if a != b {
                edge[a][b] = if (v[a].0, v[a].1) == (v[b].0, v[b].1) {
                    1
                } else if conflict(v[a].2, v[b].2) {
                    2
                } else {
                    0
                };
            }
        }
    }
    let mut immediate: Vec<bool> = v.iter().map(|x| x.2.kind == PieceKind::Immediate).collect();
    loop {
        let next: Vec<bool> = (0..n)
            .map(|a| immediate[a] || (0..n).any(|b| edge[a][b] == 2 && immediate[b]))
            .collect();
        if next == immediate {
            break;
        }
        immediate = next;
    }
    for a in 0..n {
        for b in 0..n {
            if edge[a][b] == 2 && !(immediate[a] && immediate[b]) {
                edge[a][b] = 0;
            }
        }
    }
    // A simple cycle through `start` and vertices above it, with both kinds of edge.
    fn search(edge: &[Vec<u8>], start: usize, path: &mut Vec<usize>, kinds: u8) -> bool {
        let last = *path.last().unwrap_or(&start);
        (0..edge.len()).any(|w| {
            let e = edge[last][w];
            if e == 0 {
                return false;
            }
            let k = kinds | e;
            if w == start {
                return path.len() >= 3 && k == 3;
            }
            if w < start || path.contains(&w) {
                return false;
            }
            path.push(w);
            let found = search(edge, start, path, k);
            path.pop();
            found
        })
    }
    !(0..n).any(|s| search(&edge, s, &mut vec![s], 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use txlab_check::serial::SerialEngine;
    use txlab_core::Transaction;
    use txlab_core::Worker;

    #[test]
    fn a_spec_out_of_range_is_refused_by_name() {
        let p = PieceSpec {
            immediate: false,
            target: Target::B,
            writes: true,
            input: None,
        };
        let e = RandomPieces::new(ProfileSpec {
            keys: 4,
            types: vec![vec![p]],
        })
        .unwrap_err();
        assert!(e.to_string().contains("keys = 4"), "{e}");
        let e = RandomPieces::new(ProfileSpec {
            keys: 1,
            types: vec![vec![p; 4]],
        })
        .unwrap_err();
        assert!(e.to_string().contains("pieces per type = 4"), "{e}");
    }

    #[test]
    fn a_writing_piece_feeds_its_input_into_the_value_it_writes() {
        let spec = ProfileSpec {
            keys: 1,
            types: vec![vec![
                PieceSpec {
                    immediate: true,
                    target: Target::AFirst,
                    writes: true,
                    input: None,
                },
                PieceSpec {
                    immediate: false,
                    target: Target::ASecond,
                    writes: true,
                    input: Some(0),
                },
            ]],
        };
        let w = RandomPieces::new(spec).unwrap();
        let e = SerialEngine::new(w.schema());
        w.load(&e).unwrap();
        let mut g = w.generator(0, 1);
        let txn = g.next().clone();
        for _ in 0..2 {
            let mut worker = e.worker().unwrap();
            let mut tx = worker.begin();
            txn.run(&mut tx).unwrap();
            tx.commit().unwrap();
        }
        let row = e.peek(TABLE_A, 0).unwrap();
        let word = |r: Range<usize>| u64::from_le_bytes(row[r].try_into().unwrap());
        let first = |old: u64| old * 31 + 1 + txn.salt;
        // Run 1: first = f(0), second = f(0) + 0; run 2: first = f(f(0)), second reads f(0)
        // written by run 1 and adds run 2's input, the first group's old value f(0).
        assert_eq!(word(0..8), first(first(0)));
        assert_eq!(word(8..16), first(first(0)) + first(0));
    }
}
