//! Policies: how the greedy algorithms rank the nodes that may enter the feedback vertex set.
//!
//! A policy is a ranking function over the nodes of the (sub)graph being processed; the
//! top-ranked node is removed into the FVS (Ding, Kot, Gehrke, VLDB 2018, §4.2). Degrees are
//! the live ones: within the strongly connected component for the SCC-based algorithms, within
//! the whole residual graph for the sort-based one.
//!
//! | policy | ranks highest | source |
//! |---|---|---|
//! | [`Policy::Random`] | a uniformly random node | §4.2, §5.2 baseline |
//! | [`Policy::MaxDegree`] | `max(in, out)` | §4.2 |
//! | [`Policy::SumDegree`] | `in + out` | §4.2 |
//! | [`Policy::ProdDegree`] | `in × out` | §4.2 (the paper's default) |
//! | [`Policy::Rct`] | fewest restarts, then `in × out` | §5.5 "rct" |
//! | [`Policy::Rdeg`] | `in × out / 2^restarts` | §5.5 "rdeg" |
//! | [`Policy::Priority`] | lowest caller priority, then `in × out` | §4.2 (e.g. monetary value) |
//!
//! Ties are broken towards the lowest node id, so every policy but `Random` is deterministic.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;
use txlab_core::Error;

/// A node ranking (module docs). Per-transaction data is borrowed: slices are indexed by node id
/// and must have one entry per node of the graph.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy<'a> {
    /// Uniformly random choice.
    Random,
    /// Largest of in-degree and out-degree.
    MaxDegree,
    /// Largest in-degree plus out-degree.
    SumDegree,
    /// Largest in-degree times out-degree.
    ProdDegree,
    /// Fewest restarts enters the FVS first (transactions restarted often are protected); ties
    /// by prod-degree.
    Rct {
        /// How often each transaction has already been aborted and restarted.
        restarts: &'a [u32],
    },
    /// Largest `in × out / 2^restarts`: a high-degree node is still preferred, but each restart
    /// halves its weight.
    Rdeg {
        /// How often each transaction has already been aborted and restarted.
        restarts: &'a [u32],
    },
    /// Lowest `keep` enters the FVS first (e.g. a transaction's monetary value); ties by
    /// prod-degree.
    Priority {
        /// How much each transaction should commit; finite values.
        keep: &'a [f64],
    },
}

/// A node's rank: `(primary, secondary)` compared lexicographically, larger first.
pub(crate) type Score = (f64, f64);

impl Policy<'_> {
    /// A short name for reports (`prod`, `rct`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Random => "random",
            Policy::MaxDegree => "max",
            Policy::SumDegree => "sum",
            Policy::ProdDegree => "prod",
            Policy::Rct { .. } => "rct",
            Policy::Rdeg { .. } => "rdeg",
            Policy::Priority { .. } => "priority",
        }
    }

    /// Checks the per-node data against a graph of `nodes` nodes.
    pub fn validate(&self, nodes: usize) -> Result<(), Error> {
        let len = match self {
            Policy::Rct { restarts } | Policy::Rdeg { restarts } => restarts.len(),
            Policy::Priority { keep } => {
                if let Some((i, bad)) = keep.iter().enumerate().find(|(_, p)| !p.is_finite()) {
                    return Err(Error::invalid(
                        "priority",
                        bad,
                        format!("a finite number (node {i})"),
                    ));
                }
                keep.len()
            }
            _ => return Ok(()),
        };
        if len != nodes {
            return Err(Error::invalid(
                "policy data length",
                len,
                format!("one entry per transaction of the batch ({nodes})"),
            ));
        }
        Ok(())
    }

    /// The score of `node` with live degrees `din`, `dout` (larger enters the FVS first).
    #[inline]
    pub(crate) fn score(&self, node: usize, din: u32, dout: u32, rng: &mut ChaCha8Rng) -> Score {
        let prod = f64::from(din) * f64::from(dout);
        match self {
            Policy::Random => (rng.random::<f64>(), 0.0),
            Policy::MaxDegree => (f64::from(din.max(dout)), 0.0),
            Policy::SumDegree => (f64::from(din) + f64::from(dout), 0.0),
            Policy::ProdDegree => (prod, 0.0),
            Policy::Rct { restarts } => (-f64::from(restarts[node]), prod),
            Policy::Rdeg { restarts } => (prod / f64::from(restarts[node]).exp2(), 0.0),
            Policy::Priority { keep } => (-keep[node], prod),
        }
    }

    /// The score as one integer key, for the policies whose score is a function of the degrees
    /// alone (max, sum, prod): the score in the high 32 bits, saturated (`in × out` above
    /// 2^32 - 1 needs a batch of more than 65,536 transactions), the complement of the node id in
    /// the low 32 bits. A larger key ranks higher and ties go to the lowest id, the order
    /// [`rank`] gives the float scores. `None` for the other policies.
    #[inline]
    pub(crate) fn integer_key(&self, node: u32, din: u32, dout: u32) -> Option<u64> {
        let score = match self {
            Policy::MaxDegree => u64::from(din.max(dout)),
            Policy::SumDegree => u64::from(din) + u64::from(dout),
            Policy::ProdDegree => u64::from(din) * u64::from(dout),
            _ => return None,
        };
        Some((score.min(u64::from(u32::MAX)) << 32) | u64::from(!node))
    }
}

/// Orders `(score, node)` so that `Greater` means "`a` enters the FVS before `b`": higher score,
/// then lower node id.
#[inline]
pub(crate) fn rank(a: &(Score, u32), b: &(Score, u32)) -> Ordering {
    a.0.0
        .total_cmp(&b.0.0)
        .then(a.0.1.total_cmp(&b.0.1))
        .then(b.1.cmp(&a.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn integer_keys_rank_like_the_float_scores() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for policy in [Policy::MaxDegree, Policy::SumDegree, Policy::ProdDegree] {
            for (a, b) in [
                ((0u32, 3u32, 4u32), (1u32, 4u32, 3u32)),
                ((5, 2, 9), (2, 9, 1)),
                ((3, 0, 7), (4, 1, 1)),
                ((9, 6, 6), (8, 5, 8)),
            ] {
                let fa = (policy.score(a.0 as usize, a.1, a.2, &mut rng), a.0);
                let fb = (policy.score(b.0 as usize, b.1, b.2, &mut rng), b.0);
                let ka = policy.integer_key(a.0, a.1, a.2).unwrap();
                let kb = policy.integer_key(b.0, b.1, b.2).unwrap();
                assert_eq!(ka.cmp(&kb), rank(&fa, &fb), "{policy:?} {a:?} {b:?}");
            }
        }
        assert_eq!(Policy::Random.integer_key(0, 1, 1), None);
    }

    #[test]
    fn scores_follow_the_definitions() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let restarts = [0, 3];
        assert_eq!(Policy::MaxDegree.score(0, 2, 5, &mut rng), (5.0, 0.0));
        assert_eq!(Policy::SumDegree.score(0, 2, 5, &mut rng), (7.0, 0.0));
        assert_eq!(Policy::ProdDegree.score(0, 2, 5, &mut rng), (10.0, 0.0));
        let rct = Policy::Rct {
            restarts: &restarts,
        };
        assert_eq!(rct.score(1, 2, 5, &mut rng), (-3.0, 10.0));
        let rdeg = Policy::Rdeg {
            restarts: &restarts,
        };
        assert_eq!(rdeg.score(1, 2, 4, &mut rng), (1.0, 0.0));
        assert_eq!(rdeg.score(0, 2, 4, &mut rng), (8.0, 0.0));
        // Equal scores: the lower node id ranks higher.
        assert_eq!(rank(&((1.0, 0.0), 3), &((1.0, 0.0), 4)), Ordering::Greater);
        assert_eq!(rank(&((1.0, 0.0), 3), &((2.0, 0.0), 4)), Ordering::Less);
    }

    #[test]
    fn bad_policy_data_is_rejected() {
        let e = Policy::Rct { restarts: &[1, 2] }
            .validate(3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("length = 2") && e.contains("(3)"), "{e}");
        let e = Policy::Priority {
            keep: &[1.0, f64::NAN],
        }
        .validate(2)
        .unwrap_err()
        .to_string();
        assert!(e.contains("priority = NaN") && e.contains("node 1"), "{e}");
        assert!(Policy::ProdDegree.validate(7).is_ok());
    }
}
