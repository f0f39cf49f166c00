//! `cluster.toml`: who the nodes are, where they listen, what they run.
//!
//! ```toml
//! protocol = "net-counter"     # checked by the handshake
//! seed = 7                     # node RNGs
//!
//! [workload]                   # protocol-specific, passed through
//! increments = 100
//!
//! [engine]                     # protocol-specific, passed through
//!
//! [[node]]
//! id = 0                       # 0..=65535, distinct
//! role = "server"              # free text for the protocol (default "node")
//! address = "127.0.0.1:7000"   # host:port it binds and peers connect to
//! ```
//!
//! Every error names the line it is about. The digest (of the file's bytes) goes into the
//! handshake, so nodes started from different files refuse each other.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

use serde::Deserialize;

use crate::error::NetError;
use crate::node::{MAX_NODES, NodeId};

/// One `[[node]]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Its id.
    pub id: NodeId,
    /// Its role (free text for the protocol).
    pub role: String,
    /// `host:port`.
    pub address: String,
    /// The line of its `[[node]]` table.
    pub line: usize,
}

/// A parsed, validated cluster file.
#[derive(Clone, Debug)]
pub struct ClusterFile {
    /// The protocol the cluster runs.
    pub protocol: String,
    /// Seed of the node RNGs.
    pub seed: u64,
    /// The nodes, in file order.
    pub nodes: Vec<NodeSpec>,
    /// `[workload]`, passed to the protocol.
    pub workload: toml::Table,
    /// `[engine]`, passed to the protocol.
    pub engine: toml::Table,
    /// Digest of the file's bytes (hex).
    pub digest: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    protocol: String,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    workload: toml::Table,
    #[serde(default)]
    engine: toml::Table,
    #[serde(default)]
    node: Vec<toml::Spanned<RawNode>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    id: u16,
    role: Option<String>,
    address: Option<String>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Checks `host:port` syntax (a non-empty host and a port in 1..=65535).
fn check_address(a: &str) -> bool {
    match a.rsplit_once(':') {
        Some((host, port)) => {
            !host.is_empty()
                && !host.contains(char::is_whitespace)
                && port.parse::<u16>().is_ok_and(|p| p > 0)
        }
        None => false,
    }
}

impl ClusterFile {
    /// Parses and validates `text`.
    pub fn parse(text: &str) -> Result<Self, NetError> {
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            NetError::Config(format!("cluster file, line {line}: {}", e.message()))
        })?;
        if raw.node.is_empty() {
            return Err(NetError::Config(format!(
                "cluster file, line {}: 0 nodes; accepted: 1..={MAX_NODES} [[node]] tables",
                line_of(text, text.len())
            )));
        }
        let mut nodes = Vec::new();
        let mut seen: BTreeMap<u16, usize> = BTreeMap::new();
        for spanned in &raw.node {
            let line = line_of(text, spanned.span().start);
            let n = spanned.get_ref();
            if nodes.len() == MAX_NODES {
                return Err(NetError::Config(format!(
                    "cluster file, line {line}: node {} is node number {}; accepted: at most \
                     {MAX_NODES} nodes",
                    n.id,
                    MAX_NODES + 1
                )));
            }
            if let Some(first) = seen.insert(n.id, line) {
                return Err(NetError::Config(format!(
                    "cluster file, line {line}: node id {} already used at line {first}; \
                     accepted: distinct ids",
                    n.id
                )));
            }
            let address = n.address.clone().ok_or_else(|| {
                NetError::Config(format!(
                    "cluster file, line {line}: node {} has no address; accepted: \
                     address = \"host:port\"",
                    n.id
                ))
            })?;
            if !check_address(&address) {
                return Err(NetError::Config(format!(
                    "cluster file, line {line}: node {} address {address:?} is not host:port \
                     (port 1..=65535)",
                    n.id
                )));
            }
            nodes.push(NodeSpec {
                id: NodeId(n.id),
                role: n.role.clone().unwrap_or_else(|| "node".into()),
                address,
                line,
            });
        }
        let mut h = DefaultHasher::new();
        h.write(text.as_bytes());
        Ok(Self {
            protocol: raw.protocol,
            seed: raw.seed,
            nodes,
            workload: raw.workload,
            engine: raw.engine,
            digest: format!("{:016x}", h.finish()),
        })
    }

    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<Self, NetError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| NetError::io(format!("read cluster file {}", path.display()), e))?;
        Self::parse(&text)
    }

    /// Every node's `(id, address)`.
    pub fn peers(&self) -> Vec<(NodeId, String)> {
        self.nodes
            .iter()
            .map(|n| (n.id, n.address.clone()))
            .collect()
    }

    /// Node `id`'s entry.
    pub fn node(&self, id: NodeId) -> Result<&NodeSpec, NetError> {
        self.nodes.iter().find(|n| n.id == id).ok_or_else(|| {
            let ids: Vec<NodeId> = self.nodes.iter().map(|n| n.id).collect();
            NetError::unknown_node(id, &ids)
        })
    }

    /// A cluster file's text for `nodes` listening on `addresses`.
    pub fn render(
        protocol: &str,
        seed: u64,
        workload: &toml::Table,
        engine: &toml::Table,
        addresses: &[(NodeId, String)],
    ) -> String {
        let mut out = format!(
            "protocol = {protocol:?}\nseed = {seed}\n\n[workload]\n{workload}\n[engine]\n{engine}\n"
        );
        for (id, addr) in addresses {
            out.push_str(&format!("[[node]]\nid = {}\naddress = {addr:?}\n\n", id.0));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        ClusterFile::parse(text).unwrap_err().to_string()
    }

    const HEAD: &str = "protocol = \"p\"\nseed = 3\n";

    #[test]
    fn parses_and_renders() {
        let mut w = toml::Table::new();
        w.insert("increments".into(), 5.into());
        let text = ClusterFile::render(
            "p",
            3,
            &w,
            &toml::Table::new(),
            &[
                (NodeId(0), "127.0.0.1:7000".into()),
                (NodeId(1), "127.0.0.2:7001".into()),
            ],
        );
        let c = ClusterFile::parse(&text).unwrap();
        assert_eq!((c.protocol.as_str(), c.seed, c.nodes.len()), ("p", 3, 2));
        assert_eq!(c.workload["increments"].as_integer(), Some(5));
        assert_eq!(c.node(NodeId(1)).unwrap().address, "127.0.0.2:7001");
        assert_eq!(c.node(NodeId(1)).unwrap().role, "node");
        assert!(c.node(NodeId(2)).is_err());
        let other = ClusterFile::parse(&text.replace("seed = 3", "seed = 4")).unwrap();
        assert_ne!(c.digest, other.digest);
    }

    #[test]
    fn bad_files_name_the_line() {
        let dup = format!(
            "{HEAD}[[node]]\nid = 0\naddress = \"a:1\"\n[[node]]\nid = 0\naddress = \"b:1\"\n"
        );
        assert_eq!(
            err(&dup),
            "cluster file, line 6: node id 0 already used at line 3; accepted: distinct ids"
        );
        let missing = format!("{HEAD}[[node]]\nid = 0\n");
        assert!(err(&missing).starts_with("cluster file, line 3: node 0 has no address"));
        for bad in ["nohost", ":7000", "h:0", "h:99999", "h:x"] {
            let t = format!("{HEAD}[[node]]\nid = 1\naddress = {bad:?}\n");
            let e = err(&t);
            assert!(e.contains("line 3") && e.contains(bad), "{e}");
        }
        assert!(err(HEAD).contains("0 nodes; accepted: 1..=1024"));
        let mut many = HEAD.to_string();
        for i in 0..1025 {
            many.push_str(&format!("[[node]]\nid = {i}\naddress = \"h:1\"\n"));
        }
        let e = err(&many);
        assert!(
            e.contains(&format!("line {}", 3 + 1024 * 3)) && e.contains("at most 1024"),
            "{e}"
        );
        let e = err(&format!("{HEAD}[[node]]\nid = 70000\naddress = \"h:1\"\n"));
        assert!(e.contains("line 4"), "{e}");
        let e = err("protocol = \"p\"\nbogus = 1\n");
        assert!(e.contains("line 2") && e.contains("bogus"), "{e}");
        assert!(err("seed = 1\n").contains("protocol"));
    }
}
