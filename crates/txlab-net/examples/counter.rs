//! The replicated counter (`txlab_net::counter`) on every driver, the same node code each time:
//!
//! ```text
//! cargo run -p txlab-net --features tcp,sim --example counter -- inproc [nodes] [increments]
//! cargo run -p txlab-net --features tcp,sim --example counter -- step   [nodes] [increments] [seed]
//! cargo run -p txlab-net --features tcp,sim --example counter -- sim    [nodes] [increments] [seed]
//! cargo run -p txlab-net --features tcp,sim --example counter -- tcp    [nodes] [increments]
//! ```
//!
//! `step` injects drops, duplicates, delays and crashes from the seed; `sim` partitions node 0
//! away for 100 ms and crashes the last node for 100 ms. Each run prints one JSON line and exits
//! non-zero unless every replica converged to the expected total. Across processes:
//! `txlab cluster --local 3 -- run --protocol net-counter`.

use std::process::ExitCode;
use std::time::Duration;

use txlab_net::NodeId;
use txlab_net::counter::{Counter, CounterConfig, expected_total};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let driver = args.first().map(String::as_str).unwrap_or("inproc");
    let num = |i: usize, default: u64| -> u64 {
        args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
    };
    let n = num(1, 3).clamp(1, 64) as u16;
    let config = CounterConfig {
        increments: num(2, 100) as u32,
        ..CounterConfig::default()
    };
    let seed = num(3, 0);
    let ids: Vec<NodeId> = (0..n).map(NodeId).collect();
    let totals = match run(driver, &ids, config, seed) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("counter on {driver}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let want = expected_total(&ids, &config);
    let ok = totals.iter().all(|&t| t == want);
    println!(
        r#"{{"driver":"{driver}","nodes":{n},"expected":{want},"totals":{totals:?},"converged":{ok}}}"#
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run(
    driver: &str,
    ids: &[NodeId],
    config: CounterConfig,
    seed: u64,
) -> Result<Vec<u64>, Box<dyn std::error::Error>> {
    let make = move |_| Counter::new(config);
    let timeout = Duration::from_secs(60);
    match driver {
        "inproc" => {
            use txlab_net::inproc::{InprocCluster, InprocConfig};
            let c = InprocCluster::start(ids, InprocConfig::default(), make)?;
            c.wait_until(timeout, |n: &Counter| n.converged())?;
            Ok(c.stop()?.nodes.iter().map(|(_, n)| n.total).collect())
        }
        "step" => {
            use txlab_net::step::{Source, StepConfig, StepDriver};
            let cfg = StepConfig {
                seed,
                ..StepConfig::default()
            };
            let mut d = StepDriver::new(ids, cfg, make)?;
            let faults = Source::Random {
                steps: 2_000,
                drop: 0.1,
                duplicate: 0.05,
                delay: 0.1,
                crash: 0.005,
            };
            let report = d.run(
                faults,
                |w| w.nodes().try_for_each(|(id, c)| c.check(id)),
                |w| w.nodes().count() == ids.len() && w.nodes().all(|(_, c)| c.converged()),
            )?;
            eprintln!(
                "step: {} steps, {} deliveries",
                report.steps, report.delivered
            );
            Ok(d.world().nodes().map(|(_, c)| c.total).collect())
        }
        "sim" => {
            use txlab_net::sim::{Crash, Partition, SimCluster, SimConfig};
            let last = *ids.last().expect("at least one node");
            let mut cfg = SimConfig {
                seed,
                crashes: vec![Crash {
                    at: Duration::from_millis(50),
                    node: last,
                    restart_after: Duration::from_millis(100),
                }],
                ..SimConfig::default()
            };
            if ids.len() > 1 {
                cfg.partitions.push(Partition {
                    at: Duration::ZERO,
                    duration: Duration::from_millis(100),
                    side_a: ids[..1].to_vec(),
                    side_b: ids[1..].to_vec(),
                });
            }
            let mut c = SimCluster::new(ids, cfg, make)?;
            let r = c.run_until(|v| v.iter().all(|(_, n)| n.is_some_and(|n| n.converged())))?;
            eprintln!("sim: {} messages in {:?} simulated", r.messages, r.elapsed);
            Ok(c.view(|v| v.iter().map(|(_, n)| n.map_or(0, |n| n.total)).collect()))
        }
        "tcp" => {
            use txlab_net::tcp::{Identity, TcpConfig, TcpNode};
            let listeners = ids
                .iter()
                .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
                .collect::<Result<Vec<_>, _>>()?;
            let peers = ids
                .iter()
                .zip(&listeners)
                .map(|(&id, l)| Ok((id, l.local_addr()?.to_string())))
                .collect::<Result<Vec<_>, std::io::Error>>()?;
            let identity = Identity {
                protocol: "net-counter".into(),
                git_revision: env!("CARGO_PKG_VERSION").into(),
                cluster_digest: "example".into(),
            };
            let nodes = ids
                .iter()
                .zip(listeners)
                .map(|(&id, l)| {
                    TcpNode::start_on(
                        TcpConfig::new(id, peers.clone(), identity.clone()),
                        l,
                        make(id),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            for n in &nodes {
                n.wait_until(timeout, |c: &Counter| c.finished())?;
            }
            nodes
                .into_iter()
                .map(|n| Ok(n.stop()?.node.total))
                .collect::<Result<Vec<_>, txlab_net::NetError>>()
                .map_err(Into::into)
        }
        other => Err(format!("unknown driver {other:?}: accepted: inproc, step, sim, tcp").into()),
    }
}
