//! `txlab cluster --local N -- run --protocol rococo|2pl-2pc|occ-2pc <run flags>`: the
//! distributed protocols one node per process (`txlab_harness::registry::distributed::remote`).
//!
//! The run flags are `txlab run`'s, parsed by the same parser on every node (the cluster file
//! carries them as `[workload] args`), and must describe one point (one protocol, workload,
//! theta, repeat). Nodes `0..N-1` serve, node `N-1` is the client process; `--servers` defaults
//! to `N-1` (given, it must equal it); `--client-threads` is 1 (the client process runs one
//! client node). Each server prints `{"node", "role": "server",
//! "counters"}`; the client prints `{"node", "role": "client", "record"}` with the run's
//! `RunRecord` (the fields of `txlab run`'s results.json), and with `--check` fails (exit 1,
//! the failure on stderr) when a check fails, as `txlab run --check` does.

use crate::{RunArgs, check_failures};
use std::time::Duration;
use txlab_harness::registry::distributed::remote::{RemoteOutcome, run_remote};
use txlab_harness::workloads::WorkloadParams;
use txlab_net::NodeId;
use txlab_net::cluster::ClusterFile;
use txlab_net::cluster::cli::{ClusterProtocol, Flags};
use txlab_rococo::Params;
use txlab_rococo::remote::Remote;

/// A distributed protocol of `txlab run` as a cluster protocol (module docs).
#[derive(Debug, Clone, Copy)]
pub struct Distributed(&'static str);

/// `rococo`, `2pl-2pc` and `occ-2pc`.
pub const DISTRIBUTED: [Distributed; 3] = [
    Distributed("rococo"),
    Distributed("2pl-2pc"),
    Distributed("occ-2pc"),
];

/// The hidden run flag naming a `txlab_rococo::config::Mutant` (feature `mutants`, tests only).
#[cfg(feature = "mutants")]
const MUTANT_FLAG: &str = "mutant";

/// `txlab run`'s flags for a cluster of `servers` servers, checked to describe one point.
fn parse(protocol: &str, args: &[String], servers: u16) -> Result<RunArgs, String> {
    let mut full = args.to_vec();
    if !args.iter().any(|a| a == "--servers") {
        full.extend(["--servers".to_string(), servers.to_string()]);
    }
    let run = RunArgs::parse_run_flags(&full)?;
    if run.protocol.len() != 1 || run.protocol[0].name() != protocol {
        let names: Vec<_> = run.protocol.iter().map(|p| p.name()).collect();
        return Err(format!(
            "--protocol {}: accepted: exactly one protocol, {protocol}, per cluster",
            names.join(",")
        ));
    }
    if run.params.servers != servers {
        return Err(format!(
            "--servers {}: accepted: {servers} with {} nodes (every node but the client process \
             is a server)",
            run.params.servers,
            servers + 1
        ));
    }
    if run.params.client_threads != 1 {
        return Err(format!(
            "--client-threads {}: accepted: 1 in a multi-process cluster (its client process \
             runs one client node)",
            run.params.client_threads
        ));
    }
    if args.iter().any(|a| a == "--link-latency-us") {
        return Err(
            "--link-latency-us: accepted only by `txlab run` (inproc); the links of a \
                    cluster are real TCP connections"
                .into(),
        );
    }
    let points = run.spec().points().len();
    if points != 1 {
        return Err(format!(
            "{points} points (--workload, --theta, --threads, --repeat): accepted: one point per \
             cluster"
        ));
    }
    run.spec().validate().map_err(|e| e.to_string())?;
    Ok(run)
}

/// What a node changes in the cluster's parameters (tests switch a mutant on).
type Tweak = Box<dyn Fn(&mut Params)>;

/// Splits the hidden `--mutant NAME` off `args` (feature `mutants`).
#[cfg(feature = "mutants")]
fn tweak(args: &mut Vec<String>) -> Result<Tweak, String> {
    use txlab_rococo::config::Mutant;
    let flag = format!("--{MUTANT_FLAG}");
    let Some(i) = args.iter().position(|a| *a == flag) else {
        return Ok(Box::new(|_| {}));
    };
    let name = args.get(i + 1).cloned().unwrap_or_default();
    args.drain(i..(i + 2).min(args.len()));
    let m = Mutant::ALL
        .into_iter()
        .find(|m| format!("{m:?}") == name)
        .ok_or_else(|| format!("--{MUTANT_FLAG} {name:?}: accepted: {:?}", Mutant::ALL))?;
    Ok(Box::new(move |p: &mut Params| p.mutant = Some(m)))
}

/// Without feature `mutants` nothing is split off (`--mutant` is an unknown flag).
#[cfg(not(feature = "mutants"))]
fn tweak(_args: &mut [String]) -> Result<Tweak, String> {
    Ok(Box::new(|_| {}))
}

impl ClusterProtocol for Distributed {
    fn name(&self) -> &'static str {
        self.0
    }

    fn check_nodes(&self, nodes: u16, run: &Flags) -> Result<(), String> {
        if nodes < 2 {
            return Err(format!(
                "--local {nodes}: accepted for {}: at least 2 (server processes and 1 client \
                 process)",
                self.0
            ));
        }
        let mut args = run.to_args();
        let _mutant = tweak(&mut args)?;
        parse(self.0, &args, nodes - 1).map(|_| ())
    }

    fn workload(&self, run: &Flags) -> Result<toml::Table, String> {
        Ok(run.to_workload())
    }

    fn run_node(
        &self,
        cluster: &ClusterFile,
        id: NodeId,
        git_revision: &str,
        timeout: Duration,
    ) -> Result<serde_json::Value, String> {
        let mut args = Flags::from_workload(cluster)?;
        let remote = Remote {
            cluster: cluster.clone(),
            id,
            git_revision: git_revision.to_string(),
            timeout,
        };
        let servers = remote.servers().map_err(|e| e.to_string())?;
        let tweak = tweak(&mut args)?;
        let run = parse(self.0, &args, servers)?;
        let spec = run.spec();
        let point = spec.points()[0];
        let params = WorkloadParams {
            theta: point.theta.unwrap_or(0.0),
            ..spec.params
        };
        let out = run_remote(
            point.protocol,
            point.workload,
            &params,
            &spec.engine,
            &spec.run_config(point.threads, point.workload),
            spec.check,
            &remote,
            &*tweak,
        )
        .map_err(|e| e.to_string())?;
        let out = match out {
            RemoteOutcome::Server(counters) => {
                let counters: serde_json::Map<_, _> =
                    counters.into_iter().map(|(k, v)| (k, v.into())).collect();
                return Ok(serde_json::json!({
                    "node": id.0, "role": "server", "counters": counters,
                }));
            }
            RemoteOutcome::Client(out) => out,
        };
        let record = spec.record(&point, *out);
        let failures = check_failures(std::slice::from_ref(&record));
        if !failures.is_empty() {
            return Err(format!("--check failed:\n{}", failures.join("\n")));
        }
        Ok(serde_json::json!({ "node": id.0, "role": "client", "record": record }))
    }
}
