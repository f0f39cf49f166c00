//! Measurements behind `docs/results/net.md`. `net_bench suite [rounds]` runs every
//! configuration once per round in a child process of its own, rounds alternating forward and
//! reverse order (ABBA), prints each result as one JSON line and then the summary tables (median
//! and min-max over the rounds; the bars' ratios taken within each round). The single
//! configurations, each printing one JSON line:
//!
//! ```text
//! net_bench throughput <inproc|inproc-encode|tcp|tcp2> <bytes> <batching 0|1> [messages]
//! net_bench rtt <inproc|inproc-encode|inproc-link100|tcp|tcp2> <bytes> [round trips]
//! net_bench step [steps]      # step-driver events per second (the counter with faults)
//! net_bench sim <window|pingpong> [messages]  # simulated messages per second of wall time
//! ```
//!
//! `NET_BENCH_WORDS=1` sends the throughput payload as `Vec<u64>` instead of bytes.
//! `tcp` runs both nodes in this process; `tcp2` runs the receiver in a child process on
//! loopback (`net_bench peer ...` is that child).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use txlab_net::inproc::{InprocCluster, InprocConfig, LinkModel};
use txlab_net::tcp::{Identity, TcpConfig, TcpNode};
use txlab_net::{Ctx, Node, NodeId};

/// Messages the sender keeps unacknowledged (flow control, so no queue grows without bound).
const WINDOW: u64 = 4096;
/// The receiver acknowledges every this many messages.
const ACK_EVERY: u64 = 256;

#[derive(Debug, Serialize, Deserialize)]
enum Msg {
    Data(#[serde(with = "serde_bytes")] Vec<u8>),
    /// The same size as structured data: one `u64` per 8 bytes, encoded element by element.
    Words(Vec<u64>),
    Ack(u64),
    Ping(#[serde(with = "serde_bytes")] Vec<u8>),
    Pong(#[serde(with = "serde_bytes")] Vec<u8>),
}

#[derive(Debug)]
struct Bench {
    mode: Mode,
    sender: bool,
    size: usize,
    words: bool,
    total: u64,
    sent: u64,
    received: u64,
    acked: u64,
    rtts: Vec<Duration>,
    ping_sent: Duration,
    first: Option<Instant>,
    last: Option<Instant>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Throughput,
    Rtt,
}

impl Bench {
    fn new(mode: Mode, size: usize, total: u64, sender: bool) -> Self {
        Self {
            mode,
            sender,
            size,
            words: std::env::var_os("NET_BENCH_WORDS").is_some(),
            total,
            sent: 0,
            received: 0,
            acked: 0,
            rtts: Vec::new(),
            ping_sent: Duration::ZERO,
            first: None,
            last: None,
        }
    }

    fn done(&self) -> bool {
        match self.mode {
            Mode::Throughput => self.received >= self.total,
            Mode::Rtt => self.rtts.len() as u64 >= self.total,
        }
    }

    /// The measuring side is done (the receiver for throughput, the sender for round trips);
    /// the other side always counts as finished.
    fn finished(&self) -> bool {
        match (self.mode, self.sender) {
            (Mode::Throughput, false) | (Mode::Rtt, true) => self.done(),
            _ => true,
        }
    }

    fn pump(&mut self, ctx: &mut Ctx<'_, Msg>) {
        while self.sent < self.total && self.sent - self.acked < WINDOW {
            let m = if self.words {
                Msg::Words(vec![7; self.size / 8])
            } else {
                Msg::Data(vec![7; self.size])
            };
            ctx.send(NodeId(1), m).unwrap();
            self.sent += 1;
        }
    }

    fn ping(&mut self, ctx: &mut Ctx<'_, Msg>) {
        self.ping_sent = ctx.now();
        ctx.send(NodeId(1), Msg::Ping(vec![7; self.size])).unwrap();
    }
}

impl Node for Bench {
    type Msg = Msg;

    fn on_peer(&mut self, peer: NodeId, up: bool, ctx: &mut Ctx<'_, Msg>) {
        // Node 0 starts once its link to node 1 is up (after the handshake under tcp).
        if ctx.me() == NodeId(0) && peer == NodeId(1) && up && self.sent == 0 {
            match self.mode {
                Mode::Throughput => self.pump(ctx),
                Mode::Rtt => {
                    self.sent = 1;
                    self.ping(ctx);
                }
            }
        }
    }

    fn on_message(&mut self, from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Msg>) {
        match msg {
            Msg::Data(_) | Msg::Words(_) => {
                let now = Instant::now();
                self.first.get_or_insert(now);
                self.last = Some(now);
                self.received += 1;
                if self.received.is_multiple_of(ACK_EVERY) || self.received == self.total {
                    ctx.send(from, Msg::Ack(self.received)).unwrap();
                }
            }
            Msg::Ack(n) => {
                self.acked = self.acked.max(n);
                self.pump(ctx);
            }
            Msg::Ping(p) => ctx.send(from, Msg::Pong(p)).unwrap(),
            Msg::Pong(_) => {
                self.rtts.push(ctx.now() - self.ping_sent);
                if !self.done() {
                    self.ping(ctx);
                }
            }
        }
    }
}

fn identity() -> Identity {
    Identity {
        protocol: "net-bench".into(),
        git_revision: env!("CARGO_PKG_VERSION").into(),
        cluster_digest: "bench".into(),
    }
}

fn tcp_config(me: u16, peers: &[(NodeId, String)], batching: bool) -> TcpConfig {
    let mut c = TcpConfig::new(NodeId(me), peers.to_vec(), identity());
    c.batching = batching;
    c
}

/// Runs node 0 (sender) and node 1 (receiver) on `driver`; returns node 0 and node 1.
fn run(driver: &str, mode: Mode, size: usize, total: u64, batching: bool) -> (Bench, Bench) {
    let timeout = Duration::from_secs(120);
    let make = move |id: NodeId| Bench::new(mode, size, total, id == NodeId(0));
    let ids = [NodeId(0), NodeId(1)];
    let inproc = |cfg: InprocConfig| {
        let c = InprocCluster::start(&ids, cfg, make).unwrap();
        c.wait_until(timeout, |b: &Bench| b.finished()).unwrap();
        let mut nodes = c.stop().unwrap().nodes.into_iter().map(|(_, n)| n);
        (nodes.next().unwrap(), nodes.next().unwrap())
    };
    match driver {
        "inproc" => inproc(InprocConfig::default()),
        "inproc-encode" => inproc(InprocConfig {
            encode: true,
            ..InprocConfig::default()
        }),
        "inproc-link100" => inproc(InprocConfig {
            link: Some(LinkModel {
                latency: Duration::from_micros(100),
                jitter: Duration::ZERO,
                seed: 1,
            }),
            ..InprocConfig::default()
        }),
        "tcp" => {
            let ls: Vec<_> = (0..2)
                .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
                .collect();
            let peers: Vec<_> = ls
                .iter()
                .enumerate()
                .map(|(i, l)| (NodeId(i as u16), l.local_addr().unwrap().to_string()))
                .collect();
            let mut nodes: Vec<_> = ls
                .into_iter()
                .enumerate()
                .map(|(i, l)| {
                    let id = i as u16;
                    TcpNode::start_on(tcp_config(id, &peers, batching), l, make(NodeId(id)))
                        .unwrap()
                })
                .collect();
            for n in &nodes {
                n.wait_until(timeout, |b: &Bench| b.finished()).unwrap();
            }
            let b = nodes.pop().unwrap().stop().unwrap().node;
            let a = nodes.pop().unwrap().stop().unwrap().node;
            (a, b)
        }
        "tcp2" => {
            let l0 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let a1 = {
                let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                l.local_addr().unwrap().to_string()
            };
            let peers = vec![
                (NodeId(0), l0.local_addr().unwrap().to_string()),
                (NodeId(1), a1.clone()),
            ];
            let mode_arg = if mode == Mode::Throughput { "t" } else { "r" };
            let mut child = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "peer",
                    &peers[0].1,
                    &a1,
                    mode_arg,
                    &size.to_string(),
                    &total.to_string(),
                    if batching { "1" } else { "0" },
                ])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let node =
                TcpNode::start_on(tcp_config(0, &peers, batching), l0, make(NodeId(0))).unwrap();
            let mut out = String::new();
            if mode == Mode::Rtt {
                node.wait_until(timeout, |b: &Bench| b.done()).unwrap();
                child.kill().unwrap();
            } else {
                std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
            }
            child.wait().unwrap();
            let a = node.stop().unwrap().node;
            // The child reports its receive window in nanoseconds.
            let ns: u64 = out.trim().parse().unwrap_or(0);
            let mut b = Bench::new(mode, size, total, false);
            b.received = total;
            let t0 = Instant::now();
            b.first = Some(t0);
            b.last = Some(t0 + Duration::from_nanos(ns));
            (a, b)
        }
        other => panic!("unknown driver {other}"),
    }
}

fn peer(args: &[String]) {
    let peers = vec![(NodeId(0), args[0].clone()), (NodeId(1), args[1].clone())];
    let mode = if args[2] == "t" {
        Mode::Throughput
    } else {
        Mode::Rtt
    };
    let size: usize = args[3].parse().unwrap();
    let total: u64 = args[4].parse().unwrap();
    let batching = args[5] == "1";
    let node = TcpNode::start(
        tcp_config(1, &peers, batching),
        Bench::new(mode, size, total, false),
    )
    .unwrap();
    if mode == Mode::Throughput {
        node.wait_until(Duration::from_secs(120), |b: &Bench| b.done())
            .unwrap();
        // Let the final acknowledgement leave before the process exits.
        node.inspect(|_| ()).unwrap();
        let b = node.stop().unwrap().node;
        println!("{}", (b.last.unwrap() - b.first.unwrap()).as_nanos());
    } else {
        // Serve pongs until the parent is done with us.
        node.wait_until(Duration::from_secs(120), |_| false).ok();
    }
}

fn percentile(v: &mut [Duration], q: f64) -> u64 {
    v.sort();
    v[((v.len() - 1) as f64 * q) as usize].as_nanos() as u64
}

/// Every configuration of the suite: `(NET_BENCH_WORDS set, arguments)`.
const SUITE: &[(bool, &str)] = &[
    (false, "throughput inproc 64 1 100000"),
    (false, "throughput inproc 1024 1 100000"),
    (false, "throughput inproc 16384 1 20000"),
    (false, "throughput inproc-encode 64 1 100000"),
    (false, "throughput inproc-encode 1024 1 100000"),
    (false, "throughput inproc-encode 16384 1 20000"),
    (true, "throughput inproc 1024 1 100000"),
    (true, "throughput inproc-encode 1024 1 100000"),
    (false, "throughput tcp 64 1 100000"),
    (false, "throughput tcp 1024 1 100000"),
    (false, "throughput tcp 16384 1 20000"),
    (false, "throughput tcp 64 0 50000"),
    (false, "throughput tcp2 64 1 100000"),
    (false, "throughput tcp2 1024 1 100000"),
    (false, "throughput tcp2 16384 1 20000"),
    (false, "throughput tcp2 64 0 50000"),
    (false, "throughput tcp2 1024 0 50000"),
    (false, "rtt inproc 64 2000"),
    (false, "rtt inproc 1024 2000"),
    (false, "rtt inproc 16384 2000"),
    (false, "rtt inproc-encode 1024 2000"),
    (false, "rtt tcp 64 2000"),
    (false, "rtt tcp 1024 2000"),
    (false, "rtt tcp 16384 2000"),
    (false, "rtt tcp2 64 2000"),
    (false, "rtt tcp2 1024 2000"),
    (false, "rtt tcp2 16384 2000"),
    (false, "rtt inproc-link100 64 2000"),
    (false, "step 200000"),
    (false, "sim window 20000"),
    (false, "sim pingpong 5000"),
];

/// `(round, measure name, value)` of one configuration's JSON line: throughputs in messages per
/// second, round trips' p50 and p99 in microseconds, step events and sim messages per wall second.
fn measures(round: usize, line: &str) -> Vec<(usize, String, f64)> {
    let v: serde_json::Value = serde_json::from_str(line).expect("a JSON result line");
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let one = |name: String, value: f64| vec![(round, name, value)];
    match s("bench").as_str() {
        "throughput" => one(
            format!(
                "throughput {} {}B{} batching={}",
                s("driver"),
                v["bytes"],
                if v["words"].as_bool() == Some(true) {
                    " u64s"
                } else {
                    ""
                },
                if v["batching"].as_bool() == Some(true) {
                    "on"
                } else {
                    "off"
                }
            ),
            f("msgs_per_s"),
        ),
        "rtt" => {
            let key = format!("rtt {} {}B", s("driver"), v["bytes"]);
            vec![
                (round, format!("{key} p50 us"), f("p50_ns") / 1000.0),
                (round, format!("{key} p99 us"), f("p99_ns") / 1000.0),
            ]
        }
        "step" => one("step events/s".into(), f("events_per_s")),
        _ => one(
            format!("sim {} msgs/wall-s", s("workload")),
            f("msgs_per_wall_s"),
        ),
    }
}

/// Median, min and max.
fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

/// Runs the suite (module docs).
fn suite(rounds: usize) {
    let exe = std::env::current_exe().expect("the example's own path");
    let mut all = Vec::new();
    for round in 1..=rounds {
        let order: Vec<usize> = if round % 2 == 1 {
            (0..SUITE.len()).collect()
        } else {
            (0..SUITE.len()).rev().collect()
        };
        for i in order {
            let (words, args) = SUITE[i];
            let mut cmd = std::process::Command::new(&exe);
            cmd.args(args.split(' '));
            if words {
                cmd.env("NET_BENCH_WORDS", "1");
            }
            let out = cmd.output().expect("run one configuration");
            assert!(
                out.status.success(),
                "{args}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let line = String::from_utf8(out.stdout).expect("UTF-8 output");
            let line = line.trim();
            println!("{{\"round\":{round},{}", &line[1..]);
            all.extend(measures(round, line));
        }
    }
    let mut names: Vec<&String> = all.iter().map(|(_, n, _)| n).collect();
    names.sort();
    names.dedup();
    println!(
        "\n| configuration | median | min | max | rounds |\n| --- | ---: | ---: | ---: | ---: |"
    );
    for name in names {
        let v: Vec<f64> = all
            .iter()
            .filter(|(_, n, _)| n == name)
            .map(|m| m.2)
            .collect();
        let (n, (med, lo, hi)) = (v.len(), spread(v));
        println!("| {name} | {med:.1} | {lo:.1} | {hi:.1} | {n} |");
    }
    let value = |round: usize, name: &str| {
        all.iter()
            .find(|(r, n, _)| *r == round && n == name)
            .map(|m| m.2)
    };
    println!(
        "\n| ratio (within each round) | median | min | max | rounds |\n| --- | ---: | ---: | ---: | ---: |"
    );
    for (label, num, den) in [
        (
            "tcp2 64B batched / unbatched",
            "throughput tcp2 64B batching=on",
            "throughput tcp2 64B batching=off",
        ),
        (
            "inproc / inproc-encode, 1 KiB bytes",
            "throughput inproc 1024B batching=on",
            "throughput inproc-encode 1024B batching=on",
        ),
        (
            "inproc / inproc-encode, 1 KiB as u64s",
            "throughput inproc 1024B u64s batching=on",
            "throughput inproc-encode 1024B u64s batching=on",
        ),
        (
            "inproc / inproc-encode, 16 KiB bytes",
            "throughput inproc 16384B batching=on",
            "throughput inproc-encode 16384B batching=on",
        ),
    ] {
        let v: Vec<f64> = (1..=rounds)
            .filter_map(|r| Some(value(r, num)? / value(r, den)?))
            .collect();
        if !v.is_empty() {
            let (n, (med, lo, hi)) = (v.len(), spread(v));
            println!("| {label} | {med:.2} | {lo:.2} | {hi:.2} | {n} |");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    match args.first().map(String::as_str) {
        Some("suite") => suite(arg(1, "5").parse().expect("a round count")),
        Some("peer") => peer(&args[1..]),
        Some("throughput") => {
            let driver = arg(1, "inproc");
            let size: usize = arg(2, "64").parse().unwrap();
            let batching = arg(3, "1") == "1";
            let total: u64 = arg(4, "200000").parse().unwrap();
            let (_, b) = run(&driver, Mode::Throughput, size, total, batching);
            let secs = (b.last.unwrap() - b.first.unwrap()).as_secs_f64();
            println!(
                r#"{{"bench":"throughput","driver":"{driver}","bytes":{size},"words":{},"batching":{batching},"messages":{total},"msgs_per_s":{:.0}}}"#,
                std::env::var_os("NET_BENCH_WORDS").is_some(),
                total as f64 / secs
            );
        }
        Some("rtt") => {
            let driver = arg(1, "inproc");
            let size: usize = arg(2, "64").parse().unwrap();
            let total: u64 = arg(3, "2000").parse().unwrap();
            let (mut a, _) = run(&driver, Mode::Rtt, size, total, true);
            let warm = a.rtts.len() / 10;
            let rtts = &mut a.rtts[warm..];
            println!(
                r#"{{"bench":"rtt","driver":"{driver}","bytes":{size},"p50_ns":{},"p99_ns":{}}}"#,
                percentile(rtts, 0.5),
                percentile(rtts, 0.99)
            );
        }
        Some("step") => {
            use txlab_net::counter::{Counter, CounterConfig};
            use txlab_net::step::{Source, StepConfig, StepDriver};
            let steps: u64 = arg(1, "200000").parse().unwrap();
            let cfg = CounterConfig {
                increments: 1000,
                ..CounterConfig::default()
            };
            let mut d = StepDriver::new(
                &[NodeId(0), NodeId(1), NodeId(2)],
                StepConfig {
                    max_steps: u64::MAX,
                    ..StepConfig::default()
                },
                move |_| Counter::new(cfg),
            )
            .unwrap();
            let t0 = Instant::now();
            let r = d
                .run(
                    Source::Random {
                        steps,
                        drop: 0.05,
                        duplicate: 0.05,
                        delay: 0.05,
                        crash: 0.0,
                    },
                    |_| Ok(()),
                    |_| true,
                )
                .unwrap();
            let secs = t0.elapsed().as_secs_f64();
            println!(
                r#"{{"bench":"step","steps":{},"events_per_s":{:.0}}}"#,
                r.steps,
                r.steps as f64 / secs
            );
        }
        Some("sim") => {
            use txlab_net::sim::{SimCluster, SimConfig};
            // `window`: the throughput workload (flow-controlled stream, acks every 256);
            // `pingpong`: one message in flight at a time (each its own `deliver` call).
            let workload = arg(1, "window");
            let total: u64 = arg(2, "20000").parse().unwrap();
            let mode = if workload == "pingpong" {
                Mode::Rtt
            } else {
                Mode::Throughput
            };
            let mut c = SimCluster::new(&[NodeId(0), NodeId(1)], SimConfig::default(), move |id| {
                Bench::new(mode, 64, total, id == NodeId(0))
            })
            .unwrap();
            let t0 = Instant::now();
            let r = c
                .run_until(|v| v.iter().all(|(_, n)| n.is_some_and(|n| n.finished())))
                .unwrap();
            let secs = t0.elapsed().as_secs_f64();
            println!(
                r#"{{"bench":"sim","workload":"{workload}","messages":{},"simulated_s":{:.3},"wall_s":{secs:.3},"msgs_per_wall_s":{:.0}}}"#,
                r.messages,
                r.elapsed.as_secs_f64(),
                r.messages as f64 / secs
            );
        }
        _ => eprintln!("usage: see the module docs"),
    }
}
