//! [`check`]: builds the direct serialization graph of a history and reports Adya's anomalies.
//!
//! Steps (all over committed transactions only; aborted ones matter only as writers of versions
//! that committed transactions must not have read):
//!
//! 1. index every write ([`VersionIndex`]): per key, the installed versions in `order`;
//! 2. resolve every read of a committed transaction: a missing tag is a garbage read, an aborted
//!    writer is G1a, a non-final write is G1b, an invisible version is an omitted read; a read of
//!    version `v` by `R` adds `wr: writer(v) -> R` and `rw: R -> writer(next(v))`; reads of the
//!    transaction's own writes add nothing;
//! 3. add `ww: writer(v) -> writer(next(v))` for consecutive installed versions;
//! 4. with `real_time`, add the frontier reduction of the real-time order ([`crate::realtime`]);
//! 5. search cycles class by class, each class in the SCCs of its own edge set, reporting one
//!    shortest cycle per component ([`CycleFinder`]), classified by its edges:
//!    G0 (`ww` SCCs), G1c (`ww`+`wr` SCCs, cycles through a `wr` edge), G-single / G2-item
//!    (data-edge SCCs, cycles through an `rw` edge, preferring exactly one `rw`), and the
//!    real-time classes (all-edge SCCs, cycles through an `rt` edge).

use crate::anomaly::{Anomaly, AnomalyKind, BadRead, Dependency, DependencyKind, Evidence};
use crate::cycle::CycleFinder;
use crate::graph::{
    Dsg, GraphBuilder, MASK_ALL, MASK_DATA, MASK_DEPENDENCY, MASK_WW, NO_KEY, kind_bit,
};
use crate::realtime::real_time_edges;
use crate::report::{GraphStats, Report};
use crate::scc::strongly_connected;
use crate::versions::{ReadQuery, Resolved, VersionIndex};
use crate::{History, Key, display_txn};
use txlab_core::protocol::history::{Outcome, TxnRecord};

/// What [`check`] checks.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckOptions {
    /// Also order transactions by real time (`T1.end_ns < T2.begin_ns`): checks strict
    /// serializability instead of serializability.
    pub real_time: bool,
    /// Keep at most this many example anomalies per kind (all are counted).
    pub max_examples: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            real_time: false,
            max_examples: 16,
        }
    }
}

impl CheckOptions {
    /// Serializability: data dependencies only.
    pub fn serializable() -> Self {
        Self::default()
    }

    /// Strict serializability: data dependencies and real-time order.
    pub fn strict() -> Self {
        Self {
            real_time: true,
            ..Self::default()
        }
    }

    /// Sets whether real-time order is checked.
    pub fn with_real_time(mut self, real_time: bool) -> Self {
        self.real_time = real_time;
        self
    }

    /// Sets how many examples per kind are kept (0: counts only).
    pub fn with_max_examples(mut self, max_examples: usize) -> Self {
        self.max_examples = max_examples;
        self
    }
}

/// Collects anomalies, keeping a bounded number of examples per kind.
struct Findings {
    max_examples: usize,
    report: Report,
}

impl Findings {
    fn add(&mut self, kind: AnomalyKind, evidence: impl FnOnce() -> Evidence) {
        let count = self.report.counts.entry(kind).or_insert(0);
        *count += 1;
        if *count <= self.max_examples {
            self.report.anomalies.push(Anomaly {
                kind,
                evidence: evidence(),
            });
        }
    }
}

/// Checks `history` and reports every anomaly class found (see the crate docs).
pub fn check(history: &History, opts: CheckOptions) -> Report {
    let records = history.records();
    let mut findings = Findings {
        max_examples: opts.max_examples,
        report: Report {
            real_time: opts.real_time,
            ..Report::default()
        },
    };

    // Nodes: committed records.
    let committed: Vec<bool> = records
        .iter()
        .map(|r| r.outcome == Outcome::Committed)
        .collect();
    let mut node_of = vec![u32::MAX; records.len()];
    let mut record_of: Vec<u32> = Vec::new();
    for (i, _) in committed.iter().enumerate().filter(|(_, c)| **c) {
        node_of[i] = record_of.len() as u32;
        record_of.push(i as u32);
    }
    findings.report.committed = record_of.len();
    findings.report.aborted = records.len() - record_of.len();

    check_ids(records, &mut findings);
    let versions = VersionIndex::build(records, &committed, &mut |msg| {
        findings.add(AnomalyKind::InvalidHistory, || Evidence::Invalid(msg))
    });

    // Sized up front: the history may fill most of the memory, and a growing vector would hold
    // two copies at once.
    let committed_reads = records
        .iter()
        .zip(&committed)
        .filter(|(_, c)| **c)
        .map(|(r, _)| r.reads.len())
        .sum();
    let mut reads: Vec<ReadQuery> = Vec::with_capacity(committed_reads);
    reads.extend(
        records
            .iter()
            .enumerate()
            .filter(|(ri, _)| committed[*ri])
            .flat_map(|(ri, r)| {
                r.reads.iter().map(move |read| ReadQuery {
                    key: Key::new(read.table, read.key),
                    version: read.version,
                    record: ri as u32,
                })
            }),
    );
    // A read adds at most two data edges (`wr` and `rw`) and an installed write one `ww`; scans'
    // and real-time edges, when there are any, may grow the vector beyond this.
    let writes: usize = records.iter().map(|r| r.writes.len()).sum();
    let mut builder = GraphBuilder::with_capacity(2 * reads.len() + writes);
    versions.resolve_all(reads, |query, resolved| {
        add_read_edges(
            query,
            resolved,
            records,
            &versions,
            &node_of,
            &mut builder,
            &mut findings,
        )
    });
    add_predicate_edges(
        records,
        &committed,
        &versions,
        &node_of,
        &mut builder,
        &mut findings,
    );
    for (a, b) in versions.successive_installs() {
        builder.add(
            node_of[a.record as usize],
            node_of[b.record as usize],
            DependencyKind::Ww,
            a.key,
        );
    }
    if opts.real_time {
        let spans: Vec<(u64, u64)> = record_of
            .iter()
            .map(|&ri| {
                let r = &records[ri as usize];
                if r.end_ns < r.begin_ns {
                    findings.add(AnomalyKind::InvalidHistory, || {
                        Evidence::Invalid(format!(
                            "{} ends at {} ns, before it begins at {} ns",
                            display_txn(r.id),
                            r.end_ns,
                            r.begin_ns
                        ))
                    });
                }
                (r.begin_ns, r.end_ns.max(r.begin_ns))
            })
            .collect();
        real_time_edges(&spans, |a, b| {
            builder.add(a, b, DependencyKind::RealTime, NO_KEY)
        });
    }

    let graph = builder.build(record_of.len());
    findings.report.graph = GraphStats {
        ww: graph.count(DependencyKind::Ww),
        wr: graph.count(DependencyKind::Wr),
        rw: graph.count(DependencyKind::Rw),
        real_time: graph.count(DependencyKind::RealTime),
    };
    find_cycles(&graph, records, &record_of, opts.real_time, &mut findings);

    let mut report = findings.report;
    report
        .anomalies
        .sort_by_key(|a| AnomalyKind::ALL.iter().position(|k| *k == a.kind));
    report
}

/// Reports duplicate transaction ids.
fn check_ids(records: &[TxnRecord], findings: &mut Findings) {
    let mut ids: Vec<u64> = records.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    for pair in ids.windows(2) {
        if pair[0] == pair[1] {
            findings.add(AnomalyKind::InvalidHistory, || {
                Evidence::Invalid(format!(
                    "transaction id {} is used twice",
                    display_txn(pair[0])
                ))
            });
        }
    }
}

/// Adds the edges or the anomaly of one resolved read by a committed transaction.
fn add_read_edges(
    query: ReadQuery,
    resolved: Resolved<'_>,
    records: &[TxnRecord],
    versions: &VersionIndex,
    node_of: &[u32],
    builder: &mut GraphBuilder,
    findings: &mut Findings,
) {
    let reader = node_of[query.record as usize];
    let key = query.key;
    let bad = |writer: Option<u32>| {
        Evidence::Read(BadRead {
            reader: records[query.record as usize].id,
            key,
            version: query.version,
            writer: writer.map(|w| records[w as usize].id),
        })
    };
    let write = match resolved {
        Resolved::Initial(first) => {
            if let Some(first) = first {
                builder.add(
                    reader,
                    node_of[first.record as usize],
                    DependencyKind::Rw,
                    key,
                );
            }
            return;
        }
        Resolved::Missing => return findings.add(AnomalyKind::GarbageRead, || bad(None)),
        Resolved::Write(write) => write,
    };
    if write.record == query.record {
        return; // reads its own write
    }
    if !write.committed {
        return findings.add(AnomalyKind::G1a, || bad(Some(write.record)));
    }
    if !write.is_final {
        return findings.add(AnomalyKind::G1b, || bad(Some(write.record)));
    }
    if !write.visible {
        findings.add(AnomalyKind::OmittedRead, || bad(Some(write.record)));
    }
    builder.add(
        node_of[write.record as usize],
        reader,
        DependencyKind::Wr,
        key,
    );
    if let Some(next) = versions.next_installed(write) {
        builder.add(
            reader,
            node_of[next.record as usize],
            DependencyKind::Rw,
            key,
        );
    }
}

/// Adds the edges implied by range scans (predicate reads).
///
/// A committed scan of `table` over `lo..=hi` that did not return key `k` (and whose transaction
/// neither read nor wrote `k` in any other way) observed `k` absent. The versions it could have
/// observed are the absent ones: the initial version unless some read showed it present, and
/// every installed delete. If exactly one candidate remains, the scan read it:
/// `wr` from its writer, `rw` to the writer of the next installed version. With several
/// candidates the observation is ambiguous and adds no edge (a documented blind spot); with none,
/// the scan skipped a key present in every version it could have seen: a [`AnomalyKind::PhantomMiss`].
fn add_predicate_edges(
    records: &[TxnRecord],
    committed: &[bool],
    versions: &VersionIndex,
    node_of: &[u32],
    builder: &mut GraphBuilder,
    findings: &mut Findings,
) {
    if records.iter().all(|r| r.scans.is_empty()) {
        return;
    }
    let mut initially_present: Vec<Key> = records
        .iter()
        .flat_map(|r| r.reads.iter())
        .filter(|rd| rd.version == 0 && rd.present)
        .map(|rd| Key::new(rd.table, rd.key))
        .collect();
    initially_present.sort_unstable();
    initially_present.dedup();
    let mut seen: Vec<Key> = Vec::new();
    for (ri, r) in records.iter().enumerate() {
        if !committed[ri] || r.scans.is_empty() {
            continue;
        }
        let reader = node_of[ri];
        seen.clear();
        // Keys it read, and keys it wrote: a scan may have returned its own buffered write,
        // which is not recorded as a read, so it claims nothing about keys it wrote itself.
        seen.extend(r.reads.iter().map(|rd| Key::new(rd.table, rd.key)));
        seen.extend(r.writes.iter().map(|w| Key::new(w.table, w.key)));
        seen.sort_unstable();
        for scan in &r.scans {
            let lo = Key::new(scan.table, scan.lo);
            let hi = Key::new(scan.table, scan.hi);
            for run in versions.chains_in(lo, hi).chunk_by(|a, b| a.key == b.key) {
                let key = run[0].key;
                if seen.binary_search(&key).is_ok() {
                    continue;
                }
                let before_own = run;
                let initial = initially_present.binary_search(&key).is_err();
                let deletes = before_own.iter().filter(|c| c.delete).count();
                match (initial, deletes) {
                    (true, 0) => {
                        if let Some(first) = run.first() {
                            builder.add(
                                reader,
                                node_of[first.record as usize],
                                DependencyKind::Rw,
                                key,
                            );
                        }
                    }
                    (false, 1) => {
                        let i = before_own
                            .iter()
                            .position(|c| c.delete)
                            .expect("one delete");
                        builder.add(
                            node_of[run[i].record as usize],
                            reader,
                            DependencyKind::Wr,
                            key,
                        );
                        if let Some(next) = run.get(i + 1) {
                            builder.add(
                                reader,
                                node_of[next.record as usize],
                                DependencyKind::Rw,
                                key,
                            );
                        }
                    }
                    (false, 0) => findings.add(AnomalyKind::PhantomMiss, || {
                        Evidence::Read(BadRead {
                            reader: r.id,
                            key,
                            version: 0,
                            writer: None,
                        })
                    }),
                    _ => {}
                }
            }
        }
    }
}

/// Searches the cycle classes (module docs, step 5).
fn find_cycles(
    g: &Dsg,
    records: &[TxnRecord],
    record_of: &[u32],
    real_time: bool,
    findings: &mut Findings,
) {
    let ww = kind_bit(DependencyKind::Ww);
    let wr = kind_bit(DependencyKind::Wr);
    let rw = kind_bit(DependencyKind::Rw);
    let rt = kind_bit(DependencyKind::RealTime);
    // (SCC edge set, [(first edge kinds, remaining edge kinds)] tried in order until one matches)
    let mut classes: Vec<(u8, Vec<(u8, u8)>)> = vec![
        (MASK_WW, vec![(ww, MASK_WW)]),
        (MASK_DEPENDENCY, vec![(wr, MASK_DEPENDENCY)]),
        (MASK_DATA, vec![(rw, MASK_DEPENDENCY), (rw, MASK_DATA)]),
    ];
    if real_time {
        classes.push((MASK_ALL, vec![(rt, MASK_ALL & !rw), (rt, MASK_ALL)]));
    }
    let mut finder: Option<CycleFinder<'_>> = None;
    for (scc_mask, searches) in classes {
        let components = strongly_connected(g, scc_mask);
        for c in 0..components.members.len() {
            let finder = finder.get_or_insert_with(|| CycleFinder::new(g));
            let found = searches
                .iter()
                .find_map(|&(start, rest)| finder.shortest(&components, c, start, rest));
            if let Some(edges) = found {
                let cycle: Vec<Dependency> = edges
                    .iter()
                    .map(|&e| Dependency {
                        from: records[record_of[g.source(e) as usize] as usize].id,
                        to: records[record_of[g.target(e) as usize] as usize].id,
                        kind: g.kind(e),
                        key: g.key(e),
                    })
                    .collect();
                findings.add(classify(&cycle), || Evidence::Cycle(cycle));
            }
        }
    }
}

/// The anomaly a cycle shows, by the kinds of its edges.
fn classify(cycle: &[Dependency]) -> AnomalyKind {
    let count = |k: DependencyKind| cycle.iter().filter(|d| d.kind == k).count();
    let realtime = count(DependencyKind::RealTime) > 0;
    match (
        count(DependencyKind::Rw),
        count(DependencyKind::Wr) > 0,
        realtime,
    ) {
        (0, false, false) => AnomalyKind::G0,
        (0, true, false) => AnomalyKind::G1c,
        (1, _, false) => AnomalyKind::GSingle,
        (_, _, false) => AnomalyKind::G2Item,
        (0, false, true) => AnomalyKind::G0Realtime,
        (0, true, true) => AnomalyKind::G1cRealtime,
        (1, _, true) => AnomalyKind::GSingleRealtime,
        (_, _, true) => AnomalyKind::G2ItemRealtime,
    }
}
