//! Real-time edges without `O(n²)` pairs: the frontier reduction.
//!
//! Strict serializability adds the constraint `T1 <rt T2` whenever `T1.end_ns < T2.begin_ns`.
//! Adding every such pair is quadratic. Instead, following the idea of Elle's real-time graph
//! (Kingsbury and Alvaro, VLDB 2020), we sweep the begin and end instants in time order, keeping
//! a *frontier*: the finished transactions not yet known to precede a later finished one.
//!
//! ```text
//! begin(T): preds(T) := frontier; add edges f -> T for f in preds(T)
//! end(T):   frontier := (frontier \ preds(T)) ∪ {T}
//! ```
//!
//! At equal instants begins are processed before ends, so `T1.end == T2.begin` gives no edge
//! (the relation is strict).
//!
//! **Soundness.** An edge `f -> T` is added only when `f` is in the frontier at `begin(T)`, i.e.
//! `f` has finished: `f.end < T.begin`.
//!
//! **Completeness** (every `A <rt B` is a path). At `begin(B)`, `A` has finished. Either `A` is
//! still in the frontier, giving the edge `A -> B`, or `A` was removed at `end(C)` for some `C`
//! with `A ∈ preds(C)` (edge `A -> C`), and `end(C)` was processed before `begin(B)`, so
//! `C <rt B`. Since `end(C)` comes strictly after `end(A)` in the sweep, induction on the number
//! of sweep events between the predecessor's end and `begin(B)` gives a path `C ⇝ B`, hence
//! `A -> C ⇝ B`. So the transitive closure of the added edges is exactly `<rt`.
//!
//! **Size.** Two frontier members never precede one another: if `X <rt Y` and both were in the
//! frontier, `X` was in it at `begin(Y)`, so `X ∈ preds(Y)` and `end(Y)` removed it. Pairwise
//! overlapping intervals share a common instant (Helly's theorem in one dimension), so the
//! frontier never holds more transactions than were in flight at one instant, `c`. The sweep adds
//! at most `n·c` edges and runs in `O(n log n + n·c)`; for an engine running one transaction per
//! worker, `c` is at most the number of workers.

/// Calls `edge(from, to)` for the frontier reduction of the real-time order over `spans`
/// (`(begin_ns, end_ns)` of node `i` at index `i`).
pub(crate) fn real_time_edges(spans: &[(u64, u64)], mut edge: impl FnMut(u32, u32)) {
    // (instant, 0 = begin / 1 = end, node): sorting puts begins before ends at equal instants.
    let mut events: Vec<(u64, u8, u32)> = Vec::with_capacity(spans.len() * 2);
    for (i, &(begin, end)) in spans.iter().enumerate() {
        events.push((begin, 0, i as u32));
        events.push((end, 1, i as u32));
    }
    events.sort_unstable();

    let mut frontier: Vec<u32> = Vec::new();
    let mut in_frontier = vec![false; spans.len()];
    // preds(T) as a range of `pred_list`.
    let mut pred_range = vec![(0usize, 0usize); spans.len()];
    let mut pred_list: Vec<u32> = Vec::new();
    for (_, is_end, node) in events {
        let n = node as usize;
        if is_end == 0 {
            let start = pred_list.len();
            for &f in &frontier {
                edge(f, node);
                pred_list.push(f);
            }
            pred_range[n] = (start, pred_list.len());
        } else {
            let (start, stop) = pred_range[n];
            for &p in &pred_list[start..stop] {
                in_frontier[p as usize] = false;
            }
            frontier.retain(|&f| in_frontier[f as usize]);
            frontier.push(node);
            in_frontier[n] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reachable(n: usize, edges: &[(u32, u32)]) -> Vec<Vec<bool>> {
        let mut r = vec![vec![false; n]; n];
        for &(a, b) in edges {
            r[a as usize][b as usize] = true;
        }
        for k in 0..n {
            let row_k = r[k].clone();
            for row in r.iter_mut().filter(|row| row[k]) {
                for (x, &y) in row.iter_mut().zip(&row_k) {
                    *x |= y;
                }
            }
        }
        r
    }

    /// The closure of the reduced edges equals the real-time order, on pseudo-random intervals.
    #[test]
    fn the_closure_of_the_reduction_is_exactly_the_real_time_order() {
        let mut state = 0x1234_5678_u64;
        let mut next = move |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        for _ in 0..200 {
            let n = 1 + next(12) as usize;
            let spans: Vec<(u64, u64)> = (0..n)
                .map(|_| {
                    let b = next(30);
                    (b, b + next(8))
                })
                .collect();
            let mut edges = Vec::new();
            real_time_edges(&spans, |a, b| edges.push((a, b)));
            let r = reachable(n, &edges);
            for i in 0..n {
                for j in 0..n {
                    let expected = spans[i].1 < spans[j].0;
                    assert_eq!(r[i][j], expected, "{i} -> {j} in {spans:?} with {edges:?}");
                }
            }
        }
    }

    #[test]
    fn a_serial_chain_gets_one_edge_per_transaction() {
        let spans: Vec<(u64, u64)> = (0..100).map(|i| (i * 10, i * 10 + 5)).collect();
        let mut edges = Vec::new();
        real_time_edges(&spans, |a, b| edges.push((a, b)));
        assert_eq!(edges, (0..99).map(|i| (i, i + 1)).collect::<Vec<_>>());
    }

    #[test]
    fn touching_intervals_are_not_ordered() {
        let mut edges = Vec::new();
        real_time_edges(&[(0, 5), (5, 9)], |a, b| edges.push((a, b)));
        assert!(edges.is_empty());
    }
}
