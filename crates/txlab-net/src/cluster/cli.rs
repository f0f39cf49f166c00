//! The `node` and `cluster` subcommands shared by every binary that runs a distributed protocol
//! (`txlab node`, `txlab cluster`, and `txlab-net-counter`): argument handling over
//! [`run_node`](super::run_node) and [`launch_local`], with each protocol
//! plugged in as a [`ClusterProtocol`].
//!
//! ```text
//! node --cluster FILE --id K [--timeout-s S] [-- <run args>]
//! cluster --local N [--distinct-hosts] [--timeout-s S] [--protocol NAME] [-- [run] --protocol NAME <flags>]
//! ```
//!
//! `cluster` writes a cluster file for N nodes on loopback, starts `<this binary> node --cluster
//! FILE --id K -- <run args>` N times, and prints `{"protocol": .., "nodes": [..]}` with every
//! node's JSON result. `--fault-node K --fault exit|hang` makes node K exit with status 3 or hang
//! at start: the launcher's failure and timeout tests use it.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use super::{ClusterFile, LocalLaunch, launch_local, watch_parent};
use crate::node::NodeId;

/// `--name value` pairs and bare `--flag`s, as given after the subcommand or after `--`.
#[derive(Clone, Debug, Default)]
pub struct Flags(BTreeMap<String, String>);

impl Flags {
    /// Parses `args` (`--name value` or `--flag`; a leading `run` is skipped).
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut m = BTreeMap::new();
        let mut it = args.iter().skip_while(|a| *a == "run").peekable();
        while let Some(a) = it.next() {
            let name = a
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected argument {a:?}: accepted: --name value"))?;
            let value = match it.peek() {
                Some(v) if !v.starts_with("--") => it.next().cloned().unwrap_or_default(),
                _ => String::new(),
            };
            m.insert(name.to_string(), value);
        }
        Ok(Self(m))
    }

    /// The value of `--name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Whether `--name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// Every `(name, value)`, by name (`value` is empty for a bare `--flag`).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// `--name` parsed as a number, or `default`.
    pub fn number<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{name} {v:?}: accepted: a non-negative integer")),
        }
    }
}

/// A protocol that runs as one node per process.
pub trait ClusterProtocol {
    /// Its name (`--protocol`, `protocol` in the cluster file).
    fn name(&self) -> &'static str;

    /// The `[workload]` table of a generated cluster file, from the run flags.
    fn workload(&self, run: &Flags) -> Result<toml::Table, String>;

    /// Checks a `--local` launch of `nodes` nodes with these run flags before any is started
    /// (a protocol whose nodes have roles says how many it needs).
    fn check_nodes(&self, _nodes: u16, _run: &Flags) -> Result<(), String> {
        Ok(())
    }

    /// Runs node `id` of `cluster` until it finishes; returns its JSON result.
    fn run_node(
        &self,
        cluster: &ClusterFile,
        id: NodeId,
        git_revision: &str,
        timeout: Duration,
    ) -> Result<serde_json::Value, String>;
}

/// Runs `node` or `cluster` (`args` start with the subcommand); errors go to stderr.
pub fn main(args: &[String], protocols: &[&dyn ClusterProtocol], git_revision: &str) -> ExitCode {
    let (own, run) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let result = match own.first().map(String::as_str) {
        Some("node") => node(&own[1..], run, protocols, git_revision),
        Some("cluster") => cluster(&own[1..], run, protocols),
        other => Err(format!(
            "unknown subcommand {other:?}: accepted: node, cluster"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("txlab {}: {e}", own.first().map_or("", String::as_str));
            ExitCode::FAILURE
        }
    }
}

fn protocol<'a>(
    protocols: &[&'a dyn ClusterProtocol],
    name: &str,
) -> Result<&'a dyn ClusterProtocol, String> {
    protocols
        .iter()
        .copied()
        .find(|p| p.name() == name)
        .ok_or_else(|| {
            let names: Vec<_> = protocols.iter().map(|p| p.name()).collect();
            format!("unknown protocol {name:?}: accepted: {}", names.join(", "))
        })
}

fn node(
    own: &[String],
    run: &[String],
    protocols: &[&dyn ClusterProtocol],
    git_revision: &str,
) -> Result<(), String> {
    watch_parent();
    let f = Flags::parse(own)?;
    let run = Flags::parse(run)?;
    let path = f.get("cluster").ok_or("node needs --cluster FILE")?;
    let id = NodeId(f.number("id", u16::MAX)?);
    let timeout = Duration::from_secs(f.number("timeout-s", 600)?);
    let cluster = ClusterFile::load(path.as_ref()).map_err(|e| e.to_string())?;
    if run.get("fault-node") == Some(id.0.to_string().as_str()) {
        match run.get("fault") {
            Some("exit") => std::process::exit(3),
            Some("hang") => loop {
                std::thread::park();
            },
            other => return Err(format!("--fault {other:?}: accepted: exit, hang")),
        }
    }
    let p = protocol(protocols, &cluster.protocol)?;
    if let Some(asked) = run.get("protocol")
        && asked != cluster.protocol
    {
        return Err(format!(
            "--protocol {asked:?} but the cluster file runs {:?}",
            cluster.protocol
        ));
    }
    let result = p.run_node(&cluster, id, git_revision, timeout)?;
    println!("{result}");
    Ok(())
}

fn cluster(
    own: &[String],
    run: &[String],
    protocols: &[&dyn ClusterProtocol],
) -> Result<(), String> {
    let f = Flags::parse(own)?;
    let run_flags = Flags::parse(run)?;
    let name = run_flags
        .get("protocol")
        .or(f.get("protocol"))
        .ok_or("cluster needs --protocol NAME (or -- run --protocol NAME)")?;
    let p = protocol(protocols, name)?;
    let timeout: u64 = f.number("timeout-s", 600)?;
    let nodes: u16 = f.number("local", 0)?;
    p.check_nodes(nodes, &run_flags)?;
    let mut node_args = vec!["--timeout-s".to_string(), timeout.to_string(), "--".into()];
    node_args.extend(run.iter().cloned());
    for k in ["fault-node", "fault"] {
        if let Some(v) = f.get(k) {
            node_args.extend([format!("--{k}"), v.to_string()]);
        }
    }
    let spec = LocalLaunch {
        nodes,
        distinct_hosts: f.has("distinct-hosts"),
        exe: std::env::current_exe().map_err(|e| format!("this executable: {e}"))?,
        node_args,
        protocol: p.name().into(),
        seed: run_flags.number("seed", 0)?,
        workload: p.workload(&run_flags)?,
        engine: toml::Table::new(),
        dir: std::env::temp_dir().join(format!("txlab-cluster-{}", std::process::id())),
        timeout: Duration::from_secs(timeout + 10),
    };
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let report = launch_local(
        &spec,
        |id, pid| eprintln!("node {} pid {pid}", id.0),
        ctrl_c,
    )
    .map_err(|e| e.to_string())?;
    let nodes: Vec<_> = report.nodes.iter().map(|n| n.result.clone()).collect();
    println!(
        "{}",
        serde_json::json!({ "protocol": p.name(), "nodes": nodes })
    );
    Ok(())
}
