//! The `node` and `cluster` subcommands shared by every binary that runs a distributed protocol
//! (`txlab node`, `txlab cluster`, and `txlab-net-counter`): argument handling over
//! [`run_node`](super::run_node) and [`launch_local`], with each protocol
//! plugged in as a [`ClusterProtocol`].
//!
//! ```text
//! node --cluster FILE --id K [--timeout-s S] [-- <run args>]
//! cluster --local N [--distinct-hosts] [--timeout-s S] [--protocol NAMES] [-- [run] --protocol NAMES [--repeat R] <flags>]
//! ```
//!
//! `cluster` writes a cluster file for N nodes on loopback, starts `<this binary> node --cluster
//! FILE --id K -- <run args>` N times, and prints one line `{"protocol": .., "round": ..,
//! "nodes": [..], "cluster": ..}` with every node's JSON result and the protocol's conclusion
//! from them ([`ClusterProtocol::conclude`]; a failed conclusion fails the command after the
//! line is printed). A comma-separated `--protocol` launches each protocol in turn, `--repeat R`
//! rounds of them interleaved (ABAB); every launch gets its own cluster file, with its one
//! protocol in the run flags. `--fault-node K --fault exit|hang|digest` makes node K exit with
//! status 3, hang at start, or report a corrupted `digest` in its result: the launcher's failure
//! and timeout tests and the cluster checks' tests use it.

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

    /// Sets `--name` to `value` (an empty value is a bare `--name`).
    pub fn set(&mut self, name: &str, value: &str) {
        self.0.insert(name.to_string(), value.to_string());
    }

    /// Removes `--name`.
    pub fn remove(&mut self, name: &str) {
        self.0.remove(name);
    }

    /// The flags as arguments again (`--name value`, or `--name` for a bare flag), by name.
    pub fn to_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (k, v) in &self.0 {
            out.push(format!("--{k}"));
            if !v.is_empty() {
                out.push(v.clone());
            }
        }
        out
    }

    /// The flags as a cluster file's `[workload]` table, `args = ["--name", "value", ..]`: how
    /// a protocol that parses `txlab run`'s flags on every node ships them ([`Self::from_workload`]
    /// reads them back).
    pub fn to_workload(&self) -> toml::Table {
        let mut w = toml::Table::new();
        w.insert("args".into(), self.to_args().into());
        w
    }

    /// The arguments a cluster file's `[workload]` carries as `args` ([`Self::to_workload`]).
    pub fn from_workload(cluster: &ClusterFile) -> Result<Vec<String>, String> {
        let args = cluster
            .workload
            .get("args")
            .and_then(toml::Value::as_array)
            .ok_or("the cluster file's [workload] has no args = [<run flags>]")?;
        args.iter()
            .map(|a| a.as_str().map(String::from))
            .collect::<Option<_>>()
            .ok_or_else(|| "the cluster file's [workload] args holds a non-string".to_string())
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

    /// After every node of a launch with the run flags `run` finished: the cluster's result
    /// from the nodes' results (say, checks over their merged state). Default: none.
    fn conclude(&self, run: &Flags, nodes: &[serde_json::Value]) -> Result<Concluded, String> {
        let _ = (run, nodes);
        Ok(Concluded::default())
    }
}

/// What [`ClusterProtocol::conclude`] found.
#[derive(Clone, Debug, Default)]
pub struct Concluded {
    /// The cluster's result (`null`: none).
    pub result: serde_json::Value,
    /// Why the run failed, if it did (printed after the result; the command fails).
    pub failed: Option<String>,
}

/// Runs `node` or `cluster` (`args` start with the subcommand); errors go to stderr.
pub fn main(args: &[String], protocols: &[&dyn ClusterProtocol], git_revision: &str) -> ExitCode {
    let (own, run) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let result = match own.first().map(String::as_str) {
        Some("node") => node(&own[1..], run, protocols, git_revision),
        Some("cluster") => cluster(&own[1..], run, protocols, &mut |line| println!("{line}")),
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
    let faulty = run.get("fault-node") == Some(id.0.to_string().as_str());
    if faulty {
        match run.get("fault") {
            Some("exit") => std::process::exit(3),
            Some("hang") => loop {
                std::thread::park();
            },
            Some("digest") => {}
            other => return Err(format!("--fault {other:?}: accepted: exit, hang, digest")),
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
    let mut result = p.run_node(&cluster, id, git_revision, timeout)?;
    if faulty && let Some(d) = result.get_mut("digest") {
        // `--fault digest`: the reported digest's first hex digit changed.
        let text = d.as_str().unwrap_or("");
        let first = if text.starts_with('0') { "1" } else { "0" };
        let flipped = format!("{first}{}", text.get(1..).unwrap_or(""));
        *d = flipped.into();
    }
    println!("{result}");
    Ok(())
}

/// `cluster` with its flags `own` and the run flags `run`: launches every protocol and round
/// and hands each launch's line to `on_line` as it ends (`main` prints it); an error names
/// every launch that failed.
pub fn cluster(
    own: &[String],
    run: &[String],
    protocols: &[&dyn ClusterProtocol],
    on_line: &mut dyn FnMut(&serde_json::Value),
) -> Result<(), String> {
    let f = Flags::parse(own)?;
    let run_flags = Flags::parse(run)?;
    let names = run_flags
        .get("protocol")
        .or(f.get("protocol"))
        .ok_or("cluster needs --protocol NAME (or -- run --protocol NAME)")?;
    let chosen = names
        .split(',')
        .map(|n| protocol(protocols, n.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    let rounds: u32 = run_flags.number("repeat", 1)?;
    if rounds == 0 {
        return Err("--repeat 0: accepted: 1 or more rounds".into());
    }
    let timeout: u64 = f.number("timeout-s", 600)?;
    let nodes: u16 = f.number("local", 0)?;
    // What each launch runs: its one protocol, one round.
    let flags_of = |p: &dyn ClusterProtocol| {
        let mut flags = run_flags.clone();
        flags.set("protocol", p.name());
        flags.remove("repeat");
        flags
    };
    for &p in &chosen {
        p.check_nodes(nodes, &flags_of(p))?;
    }
    let mut failures = Vec::new();
    for round in 0..rounds {
        for &p in &chosen {
            let (line, failed) = launch(&f, &flags_of(p), p, timeout, round)
                .map_err(|e| format!("{} (round {round}): {e}", p.name()))?;
            if let Some(failed) = failed {
                failures.push(format!("{} (round {round}): {failed}", p.name()));
            }
            on_line(&line);
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// One launch of `p` with the run flags `run`: its line and its failure, if any.
fn launch(
    f: &Flags,
    run: &Flags,
    p: &dyn ClusterProtocol,
    timeout: u64,
    round: u32,
) -> Result<(serde_json::Value, Option<String>), String> {
    let mut node_args = vec!["--timeout-s".to_string(), timeout.to_string(), "--".into()];
    node_args.extend(run.to_args());
    for k in ["fault-node", "fault"] {
        if let Some(v) = f.get(k) {
            node_args.extend([format!("--{k}"), v.to_string()]);
        }
    }
    let spec = LocalLaunch {
        nodes: f.number("local", 0)?,
        distinct_hosts: f.has("distinct-hosts"),
        exe: std::env::current_exe().map_err(|e| format!("this executable: {e}"))?,
        node_args,
        protocol: p.name().into(),
        seed: run.number("seed", 0)?,
        workload: p.workload(run)?,
        engine: toml::Table::new(),
        dir: std::env::temp_dir().join(format!("txlab-cluster-{}", std::process::id())),
        timeout: Duration::from_secs(timeout + 10),
    };
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let report = launch_local(
        &spec,
        |id, pid| eprintln!("{} node {} pid {pid}", p.name(), id.0),
        ctrl_c,
    )
    .map_err(|e| e.to_string())?;
    let nodes: Vec<_> = report.nodes.iter().map(|n| n.result.clone()).collect();
    let concluded = p.conclude(run, &nodes)?;
    let line = serde_json::json!({
        "protocol": p.name(), "round": round, "nodes": nodes, "cluster": concluded.result,
    });
    Ok((line, concluded.failed))
}
