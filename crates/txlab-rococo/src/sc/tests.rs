use super::examples::{self, DISTRICT, ORDER, STOCK};
use super::graph::{EdgeKind, ScGraph};
use super::*;
use proptest::prelude::*;
use txlab_core::pieces::PieceProfile;
use txlab_core::{Access, TableId};

fn check(e: &examples::Example) -> ScReport {
    report(e, ScOptions::default()).unwrap()
}

#[test]
fn figure4_new_order_fragments_are_safe() {
    let r = check(&examples::figure4());
    assert!(r.is_safe(), "{r}");
    r.require_safe().unwrap();
    // 2 instances x (p1 + 2 x p2 + 2 x p3) = 10 vertices; each instance a 5-clique.
    assert_eq!((r.vertices, r.s_edges), (10, 20));
    // I-I: p1-p1. D-D: p2 x p2 (2 x 2) and p3 x p3 (2 x 2).
    assert_eq!((r.c_edges_ii, r.c_edges_dd), (1, 8));
    assert!(r.promotions.is_empty());
    assert_eq!(r.pairs.len(), 1);
    assert_eq!(r.pairs[0].verdict, PairVerdict::Safe);
    // Plain chopping sees SC-cycles (the D-D edges it cannot reorder).
    assert_eq!(r.chopping.pairs[0].verdict, PairVerdict::Unsafe);
    assert!(r.chopping.blocks_with_sc_cycles >= 1);
    assert_eq!(r.never_written, vec!["district.static".to_string()]);
    let text = r.to_string();
    assert!(text.contains("verdict: SAFE"), "{text}");
}

#[test]
fn figure2_all_immediate_is_unsafe_and_the_merge_is_proposed() {
    let r = check(&examples::figure2(
        PieceKind::Immediate,
        PieceKind::Immediate,
    ));
    assert!(!r.is_safe(), "{r}");
    assert_eq!(r.unreorderable.len(), 1);
    let c = &r.unreorderable[0];
    // Both instances' pieces form one block: K4 minus nothing (S within, C across).
    assert_eq!((c.block_vertices, c.block_edges), (4, 6));
    // Shortest: a triangle T1.p1 -S- T1.p2 -C- T2.p1 -C- T1.p1.
    let cycle: Vec<(&str, &str)> = c
        .cycle
        .iter()
        .map(|s| (s.vertex.as_str(), s.edge.as_str()))
        .collect();
    assert_eq!(
        cycle,
        vec![
            ("new_order_fragment[1].p1", "S"),
            ("new_order_fragment[1].p2", "C I-I on stock"),
            ("new_order_fragment[2].p1", "C I-I on stock"),
        ]
    );
    assert_eq!(
        c.merge,
        vec![MergeProposal {
            txn: "new_order_fragment".into(),
            pieces: vec!["p1".into(), "p2".into()],
        }]
    );
    let e = r.require_safe().unwrap_err().to_string();
    assert!(e.contains("merge new_order_fragment: p1 + p2"), "{e}");
    assert_eq!(r.pairs[0].verdict, PairVerdict::Unsafe);
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["unreorderable"][0]["merge"][0]["pieces"][1], "p2");
}

#[test]
fn figure2_with_a_deferrable_piece_is_safe_after_promotion_stops() {
    // p1 immediate, p2 deferrable: p2's C-edges to p1 of the other instance promote it, since
    // both write STOCK; with p2 on another table it stays deferrable and the workload is safe.
    let promoted = check(&examples::figure2(
        PieceKind::Immediate,
        PieceKind::Deferrable,
    ));
    assert!(!promoted.is_safe());
    assert_eq!(promoted.promotions.len(), 1);
    let p = &promoted.promotions[0];
    assert_eq!(
        (p.promoted.as_str(), p.by.as_str(), p.on.clone()),
        (
            "new_order_fragment[2].p2",
            "new_order_fragment[1].p1",
            vec!["stock".to_string()]
        )
    );

    let mut e = examples::figure2(PieceKind::Immediate, PieceKind::Deferrable);
    e.profiles[0].pieces[1].accesses = vec![(ORDER, ColumnGroup::ROW, Access::ReadWrite)];
    let r = check(&e);
    assert!(r.is_safe(), "{r}");
    assert!(r.promotions.is_empty());
    assert_eq!((r.c_edges_ii, r.c_edges_dd), (1, 1));
}

#[test]
fn read_only_types_are_left_out_unless_asked() {
    let mut e = examples::figure4();
    e.profiles.push(TxnProfile {
        kind: "peek",
        read_only: true,
        pieces: vec![
            PieceProfile::new("oid", PieceKind::Immediate).access(
                DISTRICT,
                ColumnGroup(1),
                Access::Read,
            ),
            PieceProfile::new("orders", PieceKind::Immediate)
                .access(ORDER, ColumnGroup::ROW, Access::Read)
                .inputs_from(&[0]),
        ],
    });
    let r = check(&e);
    assert!(r.is_safe());
    assert_eq!(r.excluded_read_only, vec!["peek".to_string()]);
    let r = report(
        &e,
        ScOptions {
            include_read_only: true,
        },
    )
    .unwrap();
    // peek.orders (I) reads ORDER, which p3 (D) writes: p3 becomes immediate, and the cycle
    // peek.oid -S- peek.orders -C- p3 -S- p1 -C- peek.oid has only I-I C-edges.
    assert!(!r.is_safe(), "{r}");
    assert!(
        r.promotions
            .iter()
            .any(|p| p.promoted.ends_with(".p3[1]") && p.by.starts_with("peek"))
    );
    let pair = r
        .pairs
        .iter()
        .find(|p| p.a == "simplified_new_order" && p.b == "peek")
        .unwrap();
    assert_eq!(pair.verdict, PairVerdict::Unsafe);
}

fn profile(kind: &'static str, pieces: Vec<PieceProfile>) -> TxnProfile {
    TxnProfile {
        kind,
        read_only: false,
        pieces,
    }
}

#[test]
fn bad_profiles_are_refused_with_every_problem_named() {
    let tables = examples::figure4().tables;
    let i = |name| PieceProfile::new(name, PieceKind::Immediate);
    let d = |name| PieceProfile::new(name, PieceKind::Deferrable);
    let profiles = vec![
        profile(
            "a",
            vec![
                i("x").inputs_from(&[1]),
                d("y").inputs_from(&[5]),
                i("x"),
                d("z").inputs_from(&[1]),
            ],
        ),
        profile("a", vec![]),
        profile(
            "b",
            vec![
                i("p")
                    .inputs_from(&[1])
                    .access(TableId(9), ColumnGroup::ROW, Access::Read),
                i("q")
                    .inputs_from(&[0])
                    .access(DISTRICT, ColumnGroup::ROW, Access::Read)
                    .access(STOCK, ColumnGroup(1), Access::Read),
            ],
        ),
        TxnProfile {
            kind: "ro",
            read_only: true,
            pieces: vec![d("w").access(STOCK, ColumnGroup::ROW, Access::BlindWrite)],
        },
    ];
    let errors = analyze(&profiles, &tables, ScOptions::default()).unwrap_err();
    let text = errors.to_string();
    for needle in [
        "a.x: inputs_from names y, a later piece",
        "a.x: inputs_from names y, a deferrable piece",
        "a.y: inputs_from names piece 5, but a has pieces 0..4",
        "a has two pieces named x",
        "a.z: inputs_from names y, a deferrable piece",
        "transaction type a is profiled twice",
        "a has no pieces",
        "b.p: table id 9 is not a table",
        "b.q: table district has no column group 0 (its groups: [1, 2])",
        "b.q: table stock has no column group 1 (its groups: [0])",
        "b: inputs_from forms a cycle: p -> q",
        "ro.w: writes stock, but ro is profiled as read-only",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let self_input = vec![profile("s", vec![i("loop").inputs_from(&[0])])];
    let text = analyze(&self_input, &tables, ScOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("s: inputs_from forms a cycle: loop"),
        "{text}"
    );
    let e = analyze(&[], &tables, ScOptions::default()).unwrap_err();
    assert_eq!(e.0, vec![ProfileError::NoProfiles]);
    let core: txlab_core::Error = e.into();
    assert!(
        core.to_string()
            .contains("invalid piece profiles = 1 problems"),
        "{core}"
    );
}

// ---- property test: the block test and the shortest witness against brute force ----

/// Every simple cycle of the kept edges, as its edges (each cycle found in both directions).
fn simple_cycles(g: &ScGraph, keep: &dyn Fn(u32) -> bool) -> Vec<Vec<u32>> {
    fn extend(
        g: &ScGraph,
        keep: &dyn Fn(u32) -> bool,
        start: u32,
        path: &mut Vec<u32>,
        edges: &mut Vec<u32>,
        out: &mut Vec<Vec<u32>>,
    ) {
        let v = *path.last().unwrap();
        for &(w, e) in &g.adj[v as usize] {
            if !keep(e) || edges.last() == Some(&e) {
                continue;
            }
            if w == start && path.len() >= 3 {
                let mut c = edges.clone();
                c.push(e);
                out.push(c);
            } else if w > start && !path.contains(&w) {
                path.push(w);
                edges.push(e);
                extend(g, keep, start, path, edges, out);
                path.pop();
                edges.pop();
            }
        }
    }
    let mut out = Vec::new();
    for s in 0..g.vertices.len() as u32 {
        extend(g, keep, s, &mut vec![s], &mut Vec::new(), &mut out);
    }
    out
}

fn has_both(g: &ScGraph, edges: &[u32]) -> bool {
    edges
        .iter()
        .any(|&e| g.edges[e as usize].kind == EdgeKind::Sibling)
        && edges
            .iter()
            .any(|&e| g.edges[e as usize].kind == EdgeKind::Conflict)
}

fn random_piece() -> impl Strategy<Value = PieceProfile> {
    let access = prop_oneof![
        Just(Access::Read),
        Just(Access::ReadWrite),
        Just(Access::BlindWrite),
        Just(Access::Insert),
    ];
    let target = prop_oneof![
        Just((STOCK, ColumnGroup::ROW)),
        Just((DISTRICT, ColumnGroup(1))),
        Just((DISTRICT, ColumnGroup(2))),
        Just((ORDER, ColumnGroup::ROW)),
    ];
    (
        any::<bool>(),
        prop::bool::weighted(0.25),
        prop::collection::vec((target, access), 1..=2),
    )
        .prop_map(|(immediate, repeated, accesses)| {
            let kind = if immediate {
                PieceKind::Immediate
            } else {
                PieceKind::Deferrable
            };
            let mut p = PieceProfile::new("p", kind);
            p.repeated = repeated;
            for ((t, g), a) in accesses {
                p = p.access(t, g, a);
            }
            p
        })
}

const NAMES: [&str; 3] = ["t0", "t1", "t2"];
const PIECES: [&str; 3] = ["a", "b", "c"];

fn random_profiles() -> impl Strategy<Value = Vec<TxnProfile>> {
    prop::collection::vec(prop::collection::vec(random_piece(), 1..=3), 1..=3)
        .prop_map(|types| {
            types
                .into_iter()
                .enumerate()
                .map(|(t, pieces)| {
                    let pieces = pieces
                        .into_iter()
                        .enumerate()
                        .map(|(i, mut p)| {
                            p.name = PIECES[i];
                            p
                        })
                        .collect();
                    profile(NAMES[t], pieces)
                })
                .collect()
        })
        .prop_filter(
            "at most 10 vertices (brute force)",
            |ps: &Vec<TxnProfile>| {
                let v: usize = ps
                    .iter()
                    .flat_map(|t| &t.pieces)
                    .map(|p| if p.repeated { 4 } else { 2 })
                    .sum();
                v <= 10
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn blocks_find_exactly_the_forbidden_cycles_and_a_shortest_one(profiles in random_profiles()) {
        let all: Vec<usize> = (0..profiles.len()).collect();
        let g = ScGraph::build(&profiles, &all);
        let (kinds, _) = immediacy::propagate(&g, &profiles);
        // Immediacy: a fixpoint computed by plain iteration agrees with the BFS.
        let mut fix: Vec<PieceKind> =
            g.vertices.iter().map(|v| profiles[v.txn].pieces[v.piece].kind).collect();
        loop {
            let next: Vec<PieceKind> = (0..fix.len())
                .map(|v| {
                    let hot = g.adj[v].iter().any(|&(w, e)| {
                        g.edges[e as usize].kind == EdgeKind::Conflict
                            && fix[w as usize] == PieceKind::Immediate
                    });
                    if hot { PieceKind::Immediate } else { fix[v] }
                })
                .collect();
            if next == fix { break; }
            fix = next;
        }
        prop_assert_eq!(&kinds, &fix);

        let rococo = |e: u32| {
            let x = &g.edges[e as usize];
            x.kind == EdgeKind::Sibling
                || (kinds[x.a as usize] == PieceKind::Immediate
                    && kinds[x.b as usize] == PieceKind::Immediate)
        };
        for keep in [&rococo as &dyn Fn(u32) -> bool, &|_| true] {
            let brute: Vec<Vec<u32>> =
                simple_cycles(&g, keep).into_iter().filter(|c| has_both(&g, c)).collect();
            let blocks: Vec<Vec<u32>> =
                blocks::blocks(&g, keep).into_iter().filter(|b| cycles::mixed(&g, b)).collect();
            prop_assert_eq!(blocks.is_empty(), brute.is_empty());
            for b in &blocks {
                let w = cycles::shortest_sc_cycle(&g, b).expect("a mixed block has a witness");
                // A simple cycle of kept block edges with both kinds...
                let n = w.vertices.len();
                prop_assert!(n >= 3 && w.edges.len() == n);
                let mut vs = w.vertices.clone();
                vs.sort_unstable();
                vs.dedup();
                prop_assert_eq!(vs.len(), n);
                for i in 0..n {
                    let e = &g.edges[w.edges[i] as usize];
                    let (u, v) = (w.vertices[i], w.vertices[(i + 1) % n]);
                    prop_assert!((e.a, e.b) == (u, v) || (e.a, e.b) == (v, u));
                    prop_assert!(b.contains(&w.edges[i]) && keep(w.edges[i]));
                }
                prop_assert!(has_both(&g, &w.edges));
                // ...and no forbidden cycle inside the block is shorter.
                let shortest = brute
                    .iter()
                    .filter(|c| c.iter().all(|e| b.contains(e)))
                    .map(Vec::len)
                    .min();
                prop_assert_eq!(shortest, Some(n));
            }
        }
        let r = analyze(&profiles, &examples::figure4().tables, ScOptions::default()).unwrap();
        let brute_any = simple_cycles(&g, &rococo).iter().any(|c| has_both(&g, c));
        prop_assert_eq!(r.is_safe(), !brute_any);
    }
}
