//! Feedback vertex set algorithms: which transactions of a batch to abort so that the
//! dependency graph of the rest is acyclic.
//!
//! Finding a minimum feedback vertex set of a directed graph is NP-hard and APX-hard (Ding, Kot,
//! Gehrke, VLDB 2018, §3.2), so the paper proposes greedy algorithms (§4.1) steered by a
//! [`Policy`] (§4.2):
//!
//! | [`Algorithm`] | paper name | cost | result |
//! |---|---|---|---|
//! | [`Algorithm::SccGreedy`] | `greedy_max` / `_sum` / `_prod` (Algorithm 1) | `O(|V| (|V| + |E|))` | an FVS |
//! | [`Algorithm::RandomBest`] | `random`, `random_k` | `k` times Algorithm 1 | smallest of `k` random runs |
//! | [`Algorithm::SortGreedy`] | `greedy_sort` (Algorithm 2) | `O(|V|² / k + |V| + |E|)` | an FVS |
//! | [`Algorithm::Hybrid`] | `hybrid_m` | Algorithm 1 + exact on SCCs `≤ m` | an FVS, exact on small SCCs |
//! | [`Algorithm::Exact`] | `search` | exponential, budgeted | a minimum FVS |
//!
//! Every algorithm trims the graph first and after each removal ([`crate::trim`]). The
//! implementations are in `greedy` (Algorithm 1, hybrid, exact over components), `sort`
//! (Algorithm 2), [`exact`] (branch and bound on one component) and `scc` (Tarjan).
//!
//! A [`Refinement`] may follow any algorithm: [`Refinement::Minimal`] puts back every aborted
//! transaction that closes no cycle with the kept ones (`minimal`), which the paper's greedy
//! algorithms never revisit. It is txlab's addition, off by default so that the paper's
//! algorithms are measured as printed.

pub mod exact;
pub(crate) mod greedy;
pub(crate) mod minimal;
pub mod policy;
pub(crate) mod scc;
pub(crate) mod sort;

pub use exact::MAX_EXACT_NODES;
pub use policy::Policy;

use crate::graph::DependencyGraph;
use crate::residual::Residual;
use greedy::ExactUse;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::fmt;
use txlab_core::Error;

/// Search states the exact search may visit per component by default (a few hundred
/// milliseconds at most on the batches of the micro benchmark).
pub const DEFAULT_EXACT_BUDGET: u64 = 200_000;

/// Largest accepted number of runs of [`Algorithm::RandomBest`].
pub const MAX_RANDOM_RUNS: usize = 1024;

/// A feedback vertex set algorithm (module docs).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// SCC-based greedy (Algorithm 1): in every strongly connected component, remove the
    /// top-ranked node, re-split the rest into components, repeat.
    SccGreedy,
    /// The best (smallest) of `runs` runs of [`Algorithm::SccGreedy`] with [`Policy::Random`];
    /// the policy argument is not used. `runs` in `1..=1024`.
    RandomBest {
        /// Number of runs, `1..=MAX_RANDOM_RUNS`.
        runs: usize,
    },
    /// Sort-based greedy (Algorithm 2): remove the `multi` top-ranked nodes of the whole
    /// residual graph per round, no SCC decomposition.
    SortGreedy {
        /// The multi factor `k`, at least 1.
        multi: usize,
    },
    /// SCC-based greedy that solves components of at most `max_exact` nodes exactly (minimum
    /// size, ignoring the policy); greedy on larger ones or when the search exceeds `budget`.
    Hybrid {
        /// The largest component solved exactly, `1..=64`.
        max_exact: usize,
        /// Search states per component before falling back to greedy, at least 1.
        budget: u64,
    },
    /// A minimum feedback vertex set (component by component, branch and bound). Fails when a
    /// component has more than 64 nodes or needs more than `budget` search states.
    Exact {
        /// Search states per component, at least 1.
        budget: u64,
    },
}

impl Algorithm {
    /// `hybrid_m` with the default budget.
    pub const fn hybrid(max_exact: usize) -> Self {
        Algorithm::Hybrid {
            max_exact,
            budget: DEFAULT_EXACT_BUDGET,
        }
    }

    /// The exact search with the default budget.
    pub const fn exact() -> Self {
        Algorithm::Exact {
            budget: DEFAULT_EXACT_BUDGET,
        }
    }

    /// Checks the parameters; the error names the value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        match *self {
            Algorithm::SccGreedy => Ok(()),
            Algorithm::RandomBest { runs } => {
                if runs == 0 || runs > MAX_RANDOM_RUNS {
                    return Err(Error::invalid(
                        "runs",
                        runs,
                        format!("random_k needs 1..={MAX_RANDOM_RUNS} runs"),
                    ));
                }
                Ok(())
            }
            Algorithm::SortGreedy { multi } => {
                if multi == 0 {
                    return Err(Error::invalid(
                        "multi",
                        multi,
                        "the sort-based multi factor must be at least 1",
                    ));
                }
                Ok(())
            }
            Algorithm::Hybrid { max_exact, budget } => {
                if max_exact == 0 || max_exact > MAX_EXACT_NODES {
                    return Err(Error::invalid(
                        "max_exact",
                        max_exact,
                        format!("the hybrid threshold must be in 1..={MAX_EXACT_NODES}"),
                    ));
                }
                check_budget(budget)
            }
            Algorithm::Exact { budget } => check_budget(budget),
        }
    }
}

fn check_budget(budget: u64) -> Result<(), Error> {
    if budget == 0 {
        return Err(Error::invalid(
            "budget",
            budget,
            "the exact search needs at least 1 search state",
        ));
    }
    Ok(())
}

impl fmt::Display for Algorithm {
    /// The paper's names: `greedy`, `random_3`, `greedy_sort_2`, `hybrid_10`, `search`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Algorithm::SccGreedy => write!(f, "greedy"),
            Algorithm::RandomBest { runs } => write!(f, "random_{runs}"),
            Algorithm::SortGreedy { multi } => write!(f, "greedy_sort_{multi}"),
            Algorithm::Hybrid { max_exact, .. } => write!(f, "hybrid_{max_exact}"),
            Algorithm::Exact { .. } => write!(f, "search"),
        }
    }
}

/// A pass over an algorithm's feedback vertex set, before the validation order is computed.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refinement {
    /// The algorithm's set as it is (the paper's algorithms as printed).
    #[default]
    None,
    /// Make the set inclusion-minimal: restore, latest removal first, every aborted transaction
    /// that lies on no cycle of the kept ones. Never larger; costs one graph search per aborted
    /// transaction, `O(|F| (|V| + |E|))`.
    Minimal,
}

impl fmt::Display for Refinement {
    /// `none` or `minimal` (the CLI's spelling).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refinement::None => "none",
            Refinement::Minimal => "minimal",
        })
    }
}

/// Buffers of the FVS algorithms, kept across batches.
#[derive(Debug, Clone)]
pub(crate) struct FvsScratch {
    pub(crate) residual: Residual,
    pub(crate) tarjan: scc::Tarjan,
    pub(crate) comp: Vec<u32>,
    /// Region stack of Algorithm 1: `(start, end, component id)` into `frame_nodes`.
    pub(crate) frames: Vec<(u32, u32, u32)>,
    pub(crate) frame_nodes: Vec<u32>,
    pub(crate) work: Vec<u32>,
    pub(crate) scored: Vec<(policy::Score, u32)>,
    /// Integer ranking keys of the sort-based greedy ([`Policy::integer_key`]).
    pub(crate) keys: Vec<u64>,
    /// The alive nodes of the sort-based greedy's residual graph, compacted every round.
    pub(crate) live: Vec<u32>,
    pub(crate) exact: exact::ExactSolver,
    pub(crate) candidate: Vec<u32>,
    pub(crate) minimizer: minimal::Minimizer,
    pub(crate) rng: ChaCha8Rng,
}

impl FvsScratch {
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            residual: Residual::new(),
            tarjan: scc::Tarjan::default(),
            comp: Vec::new(),
            frames: Vec::new(),
            frame_nodes: Vec::new(),
            work: Vec::new(),
            scored: Vec::new(),
            keys: Vec::new(),
            live: Vec::new(),
            exact: exact::ExactSolver::default(),
            candidate: Vec::new(),
            minimizer: minimal::Minimizer::default(),
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

/// Appends a feedback vertex set of `graph` chosen by `algorithm` and `policy`, then refined by
/// `refinement`, to `abort` (parameters already validated).
pub(crate) fn feedback_vertex_set(
    graph: &DependencyGraph,
    algorithm: Algorithm,
    policy: &Policy<'_>,
    refinement: Refinement,
    s: &mut FvsScratch,
    abort: &mut Vec<u32>,
) -> Result<(), Error> {
    let start = abort.len();
    algorithm_fvs(graph, algorithm, policy, s, abort)?;
    if refinement == Refinement::Minimal {
        s.minimizer.minimize(graph, abort, start);
    }
    Ok(())
}

fn algorithm_fvs(
    graph: &DependencyGraph,
    algorithm: Algorithm,
    policy: &Policy<'_>,
    s: &mut FvsScratch,
    abort: &mut Vec<u32>,
) -> Result<(), Error> {
    match algorithm {
        Algorithm::SccGreedy => greedy::scc_greedy(graph, policy, ExactUse::Never, s, abort),
        Algorithm::RandomBest { runs } => {
            let start = abort.len();
            for run in 0..runs {
                let mut candidate = std::mem::take(&mut s.candidate);
                candidate.clear();
                greedy::scc_greedy(graph, &Policy::Random, ExactUse::Never, s, &mut candidate)?;
                if run == 0 || candidate.len() < abort.len() - start {
                    abort.truncate(start);
                    abort.extend_from_slice(&candidate);
                }
                s.candidate = candidate;
            }
            Ok(())
        }
        Algorithm::SortGreedy { multi } => {
            sort::sort_greedy(graph, policy, multi, s, abort);
            Ok(())
        }
        Algorithm::Hybrid { max_exact, budget } => greedy::scc_greedy(
            graph,
            policy,
            ExactUse::UpTo {
                max_nodes: max_exact,
                budget,
            },
            s,
            abort,
        ),
        Algorithm::Exact { budget } => {
            greedy::scc_greedy(graph, policy, ExactUse::Always { budget }, s, abort)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

        /// Every algorithm chooses the same transactions whether the residual graph is kept as
        /// bit sets or as degree lists (`crate::residual`, "Two representations"); the random
        /// policy draws the same numbers because the control flow is the same.
        #[test]
        fn both_residual_representations_give_the_same_sets(
            graph in crate::graph::small_graphs(),
            seed in any::<u64>(),
        ) {
            let n = graph.node_count();
            let restarts: Vec<u32> = (0..n as u32).map(|v| v % 3).collect();
            for (algorithm, policy) in [
                (Algorithm::SccGreedy, Policy::ProdDegree),
                (Algorithm::SccGreedy, Policy::MaxDegree),
                (Algorithm::RandomBest { runs: 2 }, Policy::Random),
                (Algorithm::SortGreedy { multi: 1 }, Policy::SumDegree),
                (Algorithm::SortGreedy { multi: 2 }, Policy::ProdDegree),
                (Algorithm::SortGreedy { multi: 2 }, Policy::Rdeg { restarts: &restarts }),
                (Algorithm::hybrid(8), Policy::ProdDegree),
            ] {
                for refinement in [Refinement::None, Refinement::Minimal] {
                    let mut bits = FvsScratch::new(seed);
                    let mut lists = FvsScratch::new(seed);
                    lists.residual.set_bitset_max_nodes(0);
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    feedback_vertex_set(&graph, algorithm, &policy, refinement, &mut bits, &mut a)
                        .unwrap();
                    feedback_vertex_set(&graph, algorithm, &policy, refinement, &mut lists, &mut b)
                        .unwrap();
                    prop_assert_eq!(&a, &b, "{} {} {}", algorithm, policy.name(), refinement);
                }
            }
        }
    }
}
