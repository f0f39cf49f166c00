//! The replicated counter across processes (the launcher tests' child process too):
//!
//! ```text
//! txlab-net-counter cluster --local N [--distinct-hosts] [--increments K] [--timeout-s S]
//! txlab-net-counter node --cluster FILE --id K [--timeout-s S]
//! ```
//!
//! `--fault-node K --fault exit|hang` makes node K exit with status 3 or hang at start (for the
//! launcher's failure and timeout tests).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use txlab_net::NodeId;
use txlab_net::cluster::{ClusterFile, LocalLaunch, launch_local, run_node, watch_parent};
use txlab_net::counter::{Counter, CounterConfig, expected_total};

const USAGE: &str = "usage: txlab-net-counter cluster --local N [--distinct-hosts] \
                     [--increments K] [--timeout-s S] | node --cluster FILE --id K";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("node") => node(&args[1..]),
        Some("cluster") => cluster(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("txlab-net-counter: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--name value` pairs and bare `--flag`s.
fn flags(args: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut m = BTreeMap::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let name = a
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {a:?}; {USAGE}"))?;
        let value = match it.peek() {
            Some(v) if !v.starts_with("--") => it.next().cloned().unwrap_or_default(),
            _ => String::new(),
        };
        m.insert(name.to_string(), value);
    }
    Ok(m)
}

fn number<T: std::str::FromStr>(
    f: &BTreeMap<String, String>,
    name: &str,
    default: T,
) -> Result<T, String> {
    match f.get(name) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| format!("--{name} {v:?}: accepted: a non-negative integer")),
    }
}

fn node(args: &[String]) -> Result<(), String> {
    watch_parent();
    let f = flags(args)?;
    let path = f.get("cluster").ok_or("node needs --cluster FILE")?;
    let id = NodeId(number(&f, "id", u16::MAX)?);
    let timeout = Duration::from_secs(number(&f, "timeout-s", 60)?);
    let cluster = ClusterFile::load(path.as_ref()).map_err(|e| e.to_string())?;
    if f.get("fault-node").is_some_and(|n| *n == id.0.to_string()) {
        match f.get("fault").map(String::as_str) {
            Some("exit") => std::process::exit(3),
            Some("hang") => loop {
                std::thread::park();
            },
            other => return Err(format!("--fault {other:?}: accepted: exit, hang")),
        }
    }
    let increments = cluster
        .workload
        .get("increments")
        .and_then(toml::Value::as_integer)
        .unwrap_or(100);
    let config = CounterConfig {
        increments: u32::try_from(increments)
            .map_err(|_| format!("increments {increments}: accepted: 0..=4294967295"))?,
        ..CounterConfig::default()
    };
    let ids: Vec<NodeId> = cluster.nodes.iter().map(|n| n.id).collect();
    let (counter, metrics) = run_node(
        &cluster,
        id,
        env!("CARGO_PKG_VERSION"),
        Counter::new(config),
        Counter::finished,
        timeout,
    )
    .map_err(|e| e.to_string())?;
    let want = expected_total(&ids, &config);
    let counters: serde_json::Map<String, serde_json::Value> = metrics
        .counters()
        .into_iter()
        .filter(|(k, _)| !k.starts_with("net.link.") && !k.starts_with("net.node."))
        .map(|(k, v)| (k, v.into()))
        .collect();
    let result = serde_json::json!({
        "node": id.0, "total": counter.total, "expected": want,
        "converged": counter.total == want, "counters": counters,
    });
    println!("{result}");
    Ok(())
}

fn cluster(args: &[String]) -> Result<(), String> {
    let f = flags(args)?;
    let mut workload = toml::Table::new();
    workload.insert(
        "increments".into(),
        number::<i64>(&f, "increments", 100)?.into(),
    );
    let mut node_args = Vec::new();
    for k in ["fault-node", "fault"] {
        if let Some(v) = f.get(k) {
            node_args.extend([format!("--{k}"), v.clone()]);
        }
    }
    let timeout = number(&f, "timeout-s", 60)?;
    node_args.extend(["--timeout-s".to_string(), timeout.to_string()]);
    let spec = LocalLaunch {
        nodes: number(&f, "local", 3)?,
        distinct_hosts: f.contains_key("distinct-hosts"),
        exe: std::env::current_exe().map_err(|e| e.to_string())?,
        node_args,
        protocol: "net-counter".into(),
        seed: 0,
        workload,
        engine: toml::Table::new(),
        dir: std::env::temp_dir().join(format!("txlab-cluster-{}", std::process::id())),
        timeout: Duration::from_secs(timeout + 5),
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
    let converged = nodes.iter().all(|n| n["converged"] == true);
    println!(
        "{}",
        serde_json::json!({ "converged": converged, "nodes": nodes })
    );
    if converged {
        Ok(())
    } else {
        Err("not every node converged".into())
    }
}
