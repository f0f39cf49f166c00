//! What servers and coordinators count, merged over a cluster and reported as `(name, value)`
//! pairs (the harness adds them to its result's counters).
//!
//! Internal errors (`*_errors`, `scc_mismatches`, `mixed_edges`, `i_cycles`) must stay zero: the
//! correctness tests assert it.

use hdrhistogram::Histogram;

/// Sizes recorded in histograms (vertices, bytes, component sizes) are capped here.
const MAX_SIZE: u64 = 1 << 30;

fn histogram() -> Histogram<u64> {
    // Bounds are constants that hdrhistogram accepts.
    Histogram::new_with_bounds(1, MAX_SIZE, 2).expect("valid histogram bounds")
}

/// A value distribution: count, mean and p99.
#[derive(Debug, Clone)]
pub struct Distribution(Histogram<u64>);

impl Default for Distribution {
    fn default() -> Self {
        Self(histogram())
    }
}

impl Distribution {
    /// Records one value (values below 1 count as 1).
    pub fn record(&mut self, v: u64) {
        self.0.saturating_record(v.clamp(1, MAX_SIZE));
    }

    /// How many values were recorded.
    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// The mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.0.is_empty() {
            0.0
        } else {
            self.0.mean()
        }
    }

    /// The 99th percentile (0 when empty).
    pub fn p99(&self) -> u64 {
        if self.0.is_empty() {
            0
        } else {
            self.0.value_at_quantile(0.99)
        }
    }

    /// The largest value (0 when empty).
    pub fn max(&self) -> u64 {
        self.0.max()
    }

    fn merge(&mut self, o: &Distribution) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.0.add(&o.0);
    }
}

/// The counters of a node or of a whole cluster (module docs).
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Status requests sent (§3.2: an ancestor not involving the asking server).
    pub status_requests: u64,
    /// Status requests answered.
    pub status_replies: u64,
    /// Strongly connected components decided, by size.
    pub scc_sizes: Distribution,
    /// Vertices per commit message.
    pub commit_vertices: Distribution,
    /// Encoded bytes of the dependency graph per commit message.
    pub commit_bytes: Distribution,
    /// Read-only rounds that disagreed (the transaction restarted).
    pub ro_retries: u64,
    /// Read-only transactions abandoned after `ro_max_restarts` restarts.
    pub ro_abandoned: u64,
    /// Read-only reads that waited for unfinished writers.
    pub ro_waits: u64,
    /// Read-only rounds that held their keys (`Params::ro_hold_after`), counted when the round
    /// completes at its coordinator.
    pub ro_held_rounds: u64,
    /// Times a start request was parked by a read-only hold: a request parked again when the
    /// parked requests are replayed (a hold released or a writer let through) counts again.
    pub ro_parked: u64,
    /// Holds dropped at `Params::ro_hold_timeout` of age (their transaction's `RoRelease` had
    /// not come: still reading, lost, or never sent by a crashed coordinator).
    pub ro_hold_expiries: u64,
    /// Parked start requests let through after waiting `Params::ro_hold_timeout`, holds still
    /// on their keys.
    pub ro_park_timeouts: u64,
    /// The longest a start request stayed parked, in microseconds (a maximum over servers).
    pub ro_parked_wait_us_max: u64,
    /// 2PL attempts aborted by a wound.
    pub wound_aborts: u64,
    /// 2PL wounds inflicted on younger lock holders.
    pub wounds: u64,
    /// OCC attempts aborted by read validation.
    pub validation_aborts: u64,
    /// OCC attempts aborted on a locked key at prepare.
    pub lock_aborts: u64,
    /// Graph vertices dropped by GC.
    pub gc_vertices: u64,
    /// Epoch advances.
    pub epochs: u64,
    /// Vertices held, summed over servers at the end.
    pub graph_vertices: u64,
    /// The most vertices a server held at once.
    pub graph_vertices_max: u64,
    /// Retransmitted requests.
    pub retransmits: u64,
    /// Internal error: a status request for a transaction GC had collected.
    pub gc_status_errors: u64,
    /// Internal error: a decided vertex received with another component order.
    pub scc_mismatches: u64,
    /// Internal error: an edge between an immediate and a deferrable piece.
    pub mixed_edges: u64,
    /// Internal error: a cycle of `i`-edges inside a component.
    pub i_cycles: u64,
    /// Internal error: a status request for a vertex with no other server to ask.
    pub status_errors: u64,
}

impl Counters {
    /// Adds `o`'s counts (maxima take the maximum).
    pub fn merge(&mut self, o: &Counters) {
        self.status_requests += o.status_requests;
        self.status_replies += o.status_replies;
        self.scc_sizes.merge(&o.scc_sizes);
        self.commit_vertices.merge(&o.commit_vertices);
        self.commit_bytes.merge(&o.commit_bytes);
        self.ro_retries += o.ro_retries;
        self.ro_abandoned += o.ro_abandoned;
        self.ro_waits += o.ro_waits;
        self.ro_held_rounds += o.ro_held_rounds;
        self.ro_parked += o.ro_parked;
        self.ro_hold_expiries += o.ro_hold_expiries;
        self.ro_park_timeouts += o.ro_park_timeouts;
        self.ro_parked_wait_us_max = self.ro_parked_wait_us_max.max(o.ro_parked_wait_us_max);
        self.wound_aborts += o.wound_aborts;
        self.wounds += o.wounds;
        self.validation_aborts += o.validation_aborts;
        self.lock_aborts += o.lock_aborts;
        self.gc_vertices += o.gc_vertices;
        self.epochs += o.epochs;
        self.graph_vertices += o.graph_vertices;
        self.graph_vertices_max = self.graph_vertices_max.max(o.graph_vertices_max);
        self.retransmits += o.retransmits;
        self.gc_status_errors += o.gc_status_errors;
        self.scc_mismatches += o.scc_mismatches;
        self.mixed_edges += o.mixed_edges;
        self.i_cycles += o.i_cycles;
        self.status_errors += o.status_errors;
    }

    /// The internal errors, summed (must be zero).
    pub fn internal_errors(&self) -> u64 {
        self.gc_status_errors
            + self.scc_mismatches
            + self.mixed_edges
            + self.i_cycles
            + self.status_errors
    }

    /// Every counter as `(name, value)`; distributions as `_mean` (rounded, ×100 for the
    /// vertex and size means so small means keep two decimals: `_mean_x100`), `_p99` and
    /// `_max`.
    pub fn pairs(&self) -> Vec<(&'static str, u64)> {
        let x100 = |d: &Distribution| (d.mean() * 100.0).round() as u64;
        vec![
            ("status_requests", self.status_requests),
            ("status_replies", self.status_replies),
            ("scc_count", self.scc_sizes.count()),
            ("scc_size_mean_x100", x100(&self.scc_sizes)),
            ("scc_size_p99", self.scc_sizes.p99()),
            ("scc_size_max", self.scc_sizes.max()),
            ("commit_msgs", self.commit_vertices.count()),
            ("commit_vertices_mean_x100", x100(&self.commit_vertices)),
            ("commit_vertices_p99", self.commit_vertices.p99()),
            ("commit_bytes_mean", self.commit_bytes.mean().round() as u64),
            ("commit_bytes_p99", self.commit_bytes.p99()),
            ("ro_retries", self.ro_retries),
            ("ro_abandoned", self.ro_abandoned),
            ("ro_waits", self.ro_waits),
            ("ro_held_rounds", self.ro_held_rounds),
            ("ro_parked", self.ro_parked),
            ("ro_hold_expiries", self.ro_hold_expiries),
            ("ro_park_timeouts", self.ro_park_timeouts),
            ("ro_parked_wait_us_max", self.ro_parked_wait_us_max),
            ("wound_aborts", self.wound_aborts),
            ("wounds", self.wounds),
            ("validation_aborts", self.validation_aborts),
            ("lock_aborts", self.lock_aborts),
            ("gc_vertices", self.gc_vertices),
            ("epochs", self.epochs),
            ("graph_vertices", self.graph_vertices),
            ("graph_vertices_max", self.graph_vertices_max),
            ("retransmits", self.retransmits),
            ("internal_errors", self.internal_errors()),
        ]
    }
}
