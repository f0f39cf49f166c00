//! Counters every driver keeps: per link (sender side) messages, bytes, batches, reconnects and
//! drops; per node handler time; for `tcp`, the round trip of `deliver` calls. Exposed as
//! `(name, value)` pairs that the harness adds to `RunResult::counters`.

use std::collections::BTreeMap;

use crate::node::NodeId;

/// One link's counters, kept by the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Messages sent.
    pub messages: u64,
    /// Encoded bytes sent (0 where the driver does not encode).
    pub bytes: u64,
    /// Network batches (one `deliver` call each in `tcp`/`sim`).
    pub batches: u64,
    /// Connections re-established after a loss.
    pub reconnects: u64,
    /// Messages lost: dropped by the `step` driver, queued for or in flight on a broken link, or
    /// addressed to a crashed node.
    pub dropped: u64,
}

impl LinkStats {
    pub(crate) fn add(&mut self, o: &LinkStats) {
        self.messages += o.messages;
        self.bytes += o.bytes;
        self.batches += o.batches;
        self.reconnects += o.reconnects;
        self.dropped += o.dropped;
    }
}

/// A node's handler time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Handler calls.
    pub calls: u64,
    /// Wall-clock nanoseconds spent in handlers.
    pub handler_ns: u64,
}

/// A driver's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetMetrics {
    /// Per `(from, to)` link.
    pub links: BTreeMap<(NodeId, NodeId), LinkStats>,
    /// Per node.
    pub nodes: BTreeMap<NodeId, NodeStats>,
    /// Frames or connections refused as malformed.
    pub decode_errors: u64,
    /// Frames refused for exceeding the size limit.
    pub frame_too_large: u64,
    /// Round trips of `deliver` calls in nanoseconds (`tcp`/`sim`): `(p50, p99, samples)`. After
    /// [`merge`](Self::merge) of several nodes' metrics, each percentile is the largest of the
    /// nodes' (an upper bound of the percentile of all their samples together, which the nodes'
    /// summaries cannot give exactly).
    pub rtt_ns: Option<(u64, u64, u64)>,
}

impl NetMetrics {
    /// The link `(from, to)`'s counters, created at zero.
    pub fn link(&mut self, from: NodeId, to: NodeId) -> &mut LinkStats {
        self.links.entry((from, to)).or_default()
    }

    /// Adds another driver's (or process's) counters into these.
    pub fn merge(&mut self, other: &NetMetrics) {
        for (k, v) in &other.links {
            self.links.entry(*k).or_default().add(v);
        }
        for (k, v) in &other.nodes {
            let n = self.nodes.entry(*k).or_default();
            n.calls += v.calls;
            n.handler_ns += v.handler_ns;
        }
        self.decode_errors += other.decode_errors;
        self.frame_too_large += other.frame_too_large;
        self.rtt_ns = match (self.rtt_ns, other.rtt_ns) {
            (Some((a50, a99, an)), Some((b50, b99, bn))) => {
                Some((a50.max(b50), a99.max(b99), an + bn))
            }
            (a, b) => a.or(b),
        };
    }

    /// Totals over all links.
    pub fn total(&self) -> LinkStats {
        let mut t = LinkStats::default();
        for l in self.links.values() {
            t.add(l);
        }
        t
    }

    /// The counters as `(name, value)` pairs: totals first (`net.messages`, `net.bytes`,
    /// `net.batches`, `net.reconnects`, `net.dropped`, `net.decode_errors`,
    /// `net.frame_too_large`, `net.rtt_p50_ns`, `net.rtt_p99_ns`), then
    /// `net.link.<from>.<to>.<counter>` and `net.node.<id>.{handler_calls,handler_ns}`.
    pub fn counters(&self) -> Vec<(String, u64)> {
        let t = self.total();
        let mut out = vec![
            ("net.messages".to_string(), t.messages),
            ("net.bytes".to_string(), t.bytes),
            ("net.batches".to_string(), t.batches),
            ("net.reconnects".to_string(), t.reconnects),
            ("net.dropped".to_string(), t.dropped),
            ("net.decode_errors".to_string(), self.decode_errors),
            ("net.frame_too_large".to_string(), self.frame_too_large),
        ];
        if let Some((p50, p99, n)) = self.rtt_ns {
            out.push(("net.rtt_p50_ns".into(), p50));
            out.push(("net.rtt_p99_ns".into(), p99));
            out.push(("net.rtt_samples".into(), n));
        }
        for ((a, b), l) in &self.links {
            let p = format!("net.link.{}.{}", a.0, b.0);
            for (name, v) in [
                ("messages", l.messages),
                ("bytes", l.bytes),
                ("batches", l.batches),
                ("reconnects", l.reconnects),
                ("dropped", l.dropped),
            ] {
                out.push((format!("{p}.{name}"), v));
            }
        }
        for (id, n) in &self.nodes {
            out.push((format!("net.node.{}.handler_calls", id.0), n.calls));
            out.push((format!("net.node.{}.handler_ns", id.0), n.handler_ns));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_adds_counts_and_bounds_the_round_trip_percentiles_from_above() {
        let mut a = NetMetrics::default();
        a.link(NodeId(0), NodeId(1)).messages = 3;
        a.rtt_ns = Some((100, 900, 10));
        let mut b = NetMetrics::default();
        b.link(NodeId(0), NodeId(1)).messages = 2;
        b.link(NodeId(1), NodeId(0)).messages = 1;
        b.rtt_ns = Some((200, 400, 5));
        a.merge(&b);
        assert_eq!(a.total().messages, 6);
        assert_eq!(a.links[&(NodeId(0), NodeId(1))].messages, 5);
        assert_eq!(a.rtt_ns, Some((200, 900, 15)));
        let mut c = NetMetrics::default();
        c.merge(&b);
        assert_eq!(c.rtt_ns, Some((200, 400, 5)));
    }

    #[test]
    fn totals_and_names() {
        let mut m = NetMetrics::default();
        m.link(NodeId(0), NodeId(1)).messages = 3;
        let mut o = NetMetrics::default();
        o.link(NodeId(0), NodeId(1)).messages = 2;
        o.link(NodeId(1), NodeId(0)).bytes = 9;
        o.decode_errors = 1;
        m.merge(&o);
        let c: BTreeMap<_, _> = m.counters().into_iter().collect();
        assert_eq!(c["net.messages"], 5);
        assert_eq!(c["net.bytes"], 9);
        assert_eq!(c["net.link.0.1.messages"], 5);
        assert_eq!(c["net.decode_errors"], 1);
    }
}
