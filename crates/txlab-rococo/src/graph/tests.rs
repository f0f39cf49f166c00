use super::*;
use std::collections::BTreeSet;

fn info(id: TxnId, status: Status, parents: &[(TxnId, u8)]) -> VertexInfo {
    VertexInfo {
        id,
        status,
        epoch: 1,
        servers: vec![0],
        parents: parents.to_vec(),
        order: None,
    }
}

/// A component of five transactions: 1 -i-> 2 -d-> 3 -d-> 1, 4 -i-> 3, 3 -d-> 4, 5 -d-> 1
/// (5 is an ancestor outside the component: nothing leads back to it).
fn edges() -> Vec<(TxnId, TxnId, u8)> {
    vec![
        (1, 2, EDGE_I),
        (2, 3, EDGE_D),
        (3, 1, EDGE_D),
        (4, 3, EDGE_I),
        (3, 4, EDGE_D),
        (5, 1, EDGE_D),
    ]
}

fn build(vertex_order: &[TxnId], edge_order: &[usize]) -> Graph {
    let mut g = Graph::default();
    for &id in vertex_order {
        g.local(id, 0, 1);
        g.raise(id, Status::Committing);
    }
    let e = edges();
    for &i in edge_order {
        g.add_edge(e[i].0, e[i].1, e[i].2);
    }
    g
}

#[test]
fn one_component_has_one_execution_order_whatever_the_insertion_order() {
    let mut seen = BTreeSet::new();
    let vertex_orders: [&[TxnId]; 3] = [&[1, 2, 3, 4, 5], &[5, 4, 3, 2, 1], &[3, 5, 1, 4, 2]];
    let edge_orders: [&[usize]; 3] = [
        &[0, 1, 2, 3, 4, 5],
        &[5, 4, 3, 2, 1, 0],
        &[2, 0, 5, 3, 1, 4],
    ];
    for vo in vertex_orders {
        for eo in edge_orders {
            let g = build(vo, eo);
            for t in [1, 2, 3, 4] {
                let anc = g.undecided_ancestors(t);
                assert_eq!(anc, vec![1, 2, 3, 4, 5], "ancestors of {t}");
                let comp = component_of(&g, t, &anc);
                assert_eq!(comp, vec![1, 2, 3, 4], "component of {t}");
                let (order, cycle) = execution_order(&g, &comp);
                assert!(!cycle);
                seen.insert(order);
            }
        }
    }
    // i-edges 1 -> 2 and 4 -> 3; ready first {1, 4} → 1, then {2, 4} → 2, then 4, then 3.
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![vec![1, 2, 4, 3]]);
}

#[test]
fn an_ancestor_outside_the_component_stays_out() {
    let g = build(&[1, 2, 3, 4, 5], &[0, 1, 2, 3, 4, 5]);
    assert_eq!(component_of(&g, 5, &g.undecided_ancestors(5)), vec![5]);
}

#[test]
fn an_i_cycle_is_flagged_and_falls_back_to_id_order() {
    let mut g = Graph::default();
    for id in [7, 8] {
        g.local(id, 0, 1);
    }
    g.add_edge(7, 8, EDGE_I);
    g.add_edge(8, 7, EDGE_I);
    let (order, cycle) = execution_order(&g, &[7, 8]);
    assert!(cycle);
    assert_eq!(order, vec![7, 8]);
}

#[test]
fn decided_ancestors_stop_the_walk_and_are_pruned_from_exports() {
    let mut g = build(&[1, 2, 3, 4, 5], &[0, 1, 2, 3, 4, 5]);
    g.decide(&[5], 1);
    assert_eq!(g.undecided_ancestors(1), vec![1, 2, 3, 4]);
    let d = g.export(&[1]);
    // 3 -> 1 stays (3 is undecided), 5 -> 1 is pruned (5 is decided).
    assert_eq!(d.vertices[0].parents, vec![(3, EDGE_D)]);
    // A collected (absent) parent counts as decided too.
    g.retain(|id, _| id != 3);
    assert!(g.decided_or_collected(3));
    assert_eq!(g.undecided_ancestors(1), vec![1]);
}

#[test]
fn merging_takes_the_highest_status_and_the_union_of_edges() {
    let mut g = Graph::default();
    g.merge(&info(4, Status::Started, &[(1, EDGE_D)]));
    g.merge(&info(4, Status::Committing, &[(2, EDGE_I), (1, EDGE_I)]));
    g.merge(&info(4, Status::Started, &[]));
    let v = g.get(4).unwrap();
    assert_eq!(v.status, Status::Committing);
    assert_eq!(v.parents, vec![(1, EDGE_I | EDGE_D), (2, EDGE_I)]);
    assert!(!v.local);

    let mut a = Deps::default();
    a.merge(&Deps {
        vertices: vec![info(2, Status::Started, &[(1, EDGE_D)])],
    });
    a.merge(&Deps {
        vertices: vec![
            info(1, Status::Committing, &[]),
            info(2, Status::Committing, &[(0, EDGE_D)]),
        ],
    });
    assert_eq!(a.vertices.len(), 2);
    assert_eq!(a.get(2).unwrap().status, Status::Committing);
    assert_eq!(a.get(2).unwrap().parents, vec![(0, EDGE_D), (1, EDGE_D)]);
    assert_eq!(a.edges(), 2);
}

#[test]
fn a_different_order_for_a_decided_vertex_is_counted_not_adopted() {
    let mut g = Graph::default();
    g.decide(&[1, 2], 1);
    g.decide(&[2, 1], 1);
    assert_eq!(g.scc_mismatches, 2);
    assert_eq!(&*g.get(1).unwrap().order.clone().unwrap(), &[1, 2]);
    let mut decided = info(3, Status::Decided, &[]);
    decided.order = Some(vec![3]);
    g.merge(&decided);
    assert!(g.get(3).unwrap().decided());
    // A decided vertex without its order is malformed.
    g.merge(&info(9, Status::Decided, &[]));
    assert_eq!(g.scc_mismatches, 3);
}

#[test]
fn a_collected_vertex_stays_collected_when_a_message_names_it_again() {
    let mut g = Graph::default();
    g.local(7, 0, 1);
    let mut old = info(5, Status::Started, &[]);
    old.epoch = 1;
    let mut known = info(7, Status::Committing, &[(5, EDGE_D)]);
    known.epoch = 1;
    let mut new = info(8, Status::Started, &[(7, EDGE_D)]);
    new.epoch = 3;
    let deps = Deps {
        vertices: vec![old, known, new],
    };
    // Epoch 1 may have been collected: 5, absent, stays out (it finished everywhere); 7, still
    // here, is merged as usual; 8 is too recent to have been collected.
    g.merge_all(&deps, |epoch| epoch <= 1);
    assert!(g.get(5).is_none());
    assert!(g.decided_or_collected(5));
    assert_eq!(g.get(7).unwrap().status, Status::Committing);
    assert!(g.get(8).is_some());
    assert_eq!(g.undecided_ancestors(8), vec![7, 8]);
}
