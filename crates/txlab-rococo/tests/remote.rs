//! Multi-process runs (`remote`) with every node in the test process, on loopback TCP: the
//! client node starts the warm-up and issues its first transaction only after every server has
//! loaded its shard and every link is up, however long a server takes to load; a server that
//! never comes up fails the run with an error naming it and the timeout, and nothing is issued.
//!
//! A slow server is held back by the test itself (no sleep): server 1 loads its shard only once
//! server 0 has heard from the client node, either its readiness request or a transaction's
//! start request. A client that did not wait sends the latter, and its first issue then comes
//! before server 1 loads.
//!
//! The test's meter stamps tickets with the wall clock, as a driver does.
#![allow(clippy::disallowed_methods)]

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use txlab_core::ConflictCause;
use txlab_core::protocol::meter::{Meter, Probe, Ticket};
use txlab_net::NodeId;
use txlab_net::cluster::{ClusterFile, ReservedPort};
use txlab_net::tcp::TcpNode;
use txlab_rococo::client::Issue;
use txlab_rococo::cluster::node_factory;
use txlab_rococo::remote::Remote;
use txlab_rococo::{NoRecording, Params, Protocol, RococoCluster, RococoNode, RunOptions};
use txlab_workload::Workload as _;
use txlab_workload::ycsb::Ycsb;

const REVISION: &str = "test";
/// Bounds every wait that must end; reaching it fails the test.
const BOUND: Duration = Duration::from_secs(60);

type Node = RococoNode<Ycsb, NoRecording>;

/// A cluster file of `servers` servers and one client node on loopback ports reserved for them
/// (held until the returned reservations drop, so that the other test's picks cannot take a port
/// before its node binds it).
fn cluster_file(servers: u16) -> (ClusterFile, Vec<ReservedPort>) {
    let mut text = String::from("protocol = \"rococo\"\nseed = 1\n");
    let mut reserved = Vec::new();
    for id in 0..=servers {
        let port = ReservedPort::on("127.0.0.1").unwrap();
        text.push_str(&format!(
            "\n[[node]]\nid = {id}\naddress = \"127.0.0.1:{}\"\n",
            port.port()
        ));
        reserved.push(port);
    }
    (ClusterFile::parse(&text).unwrap(), reserved)
}

fn remote(cluster: &ClusterFile, id: u16, timeout: Duration) -> Remote {
    Remote {
        cluster: cluster.clone(),
        id: NodeId(id),
        git_revision: REVISION.into(),
        timeout,
    }
}

fn workload() -> Ycsb {
    txlab_testkit::distributed::kit::hot_ycsb(200)
}

fn cluster(servers: u16) -> RococoCluster<Ycsb> {
    let params = Params {
        seed: 1,
        ..Params::default()
    };
    RococoCluster::new(workload(), Protocol::Rococo, servers, params).unwrap()
}

/// Server `id` with its shard loaded, started on its own as a node the test can watch.
fn start_server(file: &ClusterFile, servers: u16, id: u16) -> TcpNode<Node> {
    let c = cluster(servers).loading_only(id);
    workload().load(&c).unwrap();
    let shards = c.take_shards().unwrap();
    let mut factory = node_factory(
        Arc::clone(c.shared()),
        shards,
        Vec::new(),
        Issue::Quota(0),
        Arc::new(NoRecording),
    );
    txlab_net::cluster::start_node(file, NodeId(id), REVISION, factory(NodeId(id))).unwrap()
}

/// What happened, in order, across the test's threads.
#[derive(Default)]
struct Events(Mutex<Vec<&'static str>>);

impl Events {
    fn push(&self, e: &'static str) {
        self.0.lock().unwrap().push(e);
    }

    fn push_once(&self, e: &'static str) {
        let mut v = self.0.lock().unwrap();
        if !v.contains(&e) {
            v.push(e);
        }
    }

    fn take(&self) -> Vec<&'static str> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

/// A meter that issues a fixed number of transactions, counts the ends, and logs the first issue.
struct Limited<'e> {
    events: &'e Events,
    left: AtomicU64,
    ended: AtomicU64,
}

impl<'e> Limited<'e> {
    /// Issues `transactions`, logging the first issue in `events`.
    fn new(events: &'e Events, transactions: u64) -> Self {
        Limited {
            events,
            left: AtomicU64::new(transactions),
            ended: AtomicU64::new(0),
        }
    }
}

struct LimitedProbe<'m>(&'m Limited<'m>);

impl<'e> Meter for Limited<'e> {
    type Probe<'m>
        = LimitedProbe<'m>
    where
        Self: 'm;

    fn probe(&self, _thread: usize) -> LimitedProbe<'_> {
        LimitedProbe(self)
    }
}

impl Probe for LimitedProbe<'_> {
    fn issue(&mut self) -> Option<Ticket> {
        self.0
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .ok()?;
        self.0.events.push_once("first issue");
        Some(Ticket::new(Instant::now(), true))
    }

    fn committed(&mut self, _ticket: &Ticket, _kind: &'static str) {
        self.0.ended.fetch_add(1, Ordering::Relaxed);
    }

    fn user_aborted(&mut self, _ticket: &Ticket) {
        self.0.ended.fetch_add(1, Ordering::Relaxed);
    }

    fn conflict(&mut self, _ticket: &Ticket, _cause: &ConflictCause) {}

    fn retried(&mut self, _ticket: &Ticket, _attempts: u64) {}

    fn count(&mut self, _name: &'static str, _n: u64) {}
}

fn released(n: &Node) -> bool {
    n.server().is_some_and(|s| s.released())
}

#[test]
fn the_warm_up_starts_only_after_every_server_loaded_and_linked() {
    let (file, _reserved) = cluster_file(2);
    let events = Events::default();
    let meter = Limited::new(&events, 40);
    std::thread::scope(|s| {
        let servers = s.spawn(|| {
            let server0 = start_server(&file, 2, 0);
            // Server 1 loads once server 0 has heard from the client node: its readiness
            // request, or the start request of a transaction issued without waiting.
            server0
                .wait_until(BOUND, |n: &Node| {
                    n.server()
                        .is_some_and(|s| s.asked_ready() || s.txns_held() > 0)
                })
                .unwrap();
            let c1 = cluster(2).loading_only(1);
            workload().load(&c1).unwrap();
            events.push("server 1 loaded");
            let served = c1.serve::<NoRecording>(&remote(&file, 1, BOUND)).unwrap();
            server0.wait_until(BOUND, released).unwrap();
            let stopped = server0.stop().unwrap();
            assert!(stopped.fatal.is_none());
            served
        });
        let client = cluster(2);
        let opts = RunOptions {
            clients_per_server: 2,
            link: None,
            ..RunOptions::default()
        };
        let report = client
            .run_client(
                &remote(&file, 2, BOUND),
                &opts,
                Arc::new(NoRecording),
                &meter,
                false,
                || events.push("warm-up starts"),
            )
            .unwrap();
        let served = servers.join().unwrap();
        assert_eq!(served.counters.internal_errors(), 0);
        assert_eq!(report.counters.internal_errors(), 0);
    });
    assert_eq!(
        events.take(),
        ["server 1 loaded", "warm-up starts", "first issue"],
        "the warm-up and the first transaction must follow every server's load"
    );
    assert_eq!(
        meter.ended.load(Ordering::Relaxed),
        40,
        "every issued transaction ended"
    );
}

#[test]
fn a_server_that_never_comes_up_fails_the_run_naming_it_and_the_timeout() {
    let (file, _reserved) = cluster_file(2);
    let events = Events::default();
    let meter = Limited::new(&events, 10);
    // Server 0 runs; server 1 never starts.
    let server0 = start_server(&file, 2, 0);
    let timeout = Duration::from_secs(2);
    let err = cluster(2)
        .run_client(
            &remote(&file, 2, timeout),
            &RunOptions {
                link: None,
                ..RunOptions::default()
            },
            Arc::new(NoRecording),
            &meter,
            false,
            || events.push("warm-up starts"),
        )
        .unwrap_err()
        .to_string();
    let addr = |id: u16| file.node(NodeId(id)).unwrap().address.clone();
    assert!(err.contains("not ready within 2s (--timeout-s)"), "{err}");
    assert!(
        err.contains(&format!(
            "server 1 at {}: not connected (still loading its shard, or unreachable)",
            addr(1)
        )),
        "{err}"
    );
    // Server 0 is up, but its link to server 1 is not.
    assert!(
        err.contains(&format!(
            "server 0 at {}: connected, but not all of its links",
            addr(0)
        )),
        "{err}"
    );
    assert!(events.take().is_empty(), "no warm-up, nothing issued");
    // The server it reaches is released.
    server0.wait_until(BOUND, released).unwrap();
    server0.stop().unwrap();
}
