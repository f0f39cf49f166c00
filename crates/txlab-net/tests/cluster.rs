//! The local launcher over real child processes (the `txlab-net-counter` binary): results are
//! gathered, and no child outlives a launch that succeeds, fails, times out or is cancelled.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use txlab_net::NodeId;
use txlab_net::cluster::{LocalLaunch, ReservedPort, launch_local};

const EXE: &str = env!("CARGO_BIN_EXE_txlab-net-counter");

/// `node_args` are the fault flags; the protocol's run flags follow `--`.
fn spec(name: &str, nodes: u16, distinct_hosts: bool, node_args: &[&str]) -> LocalLaunch {
    let mut args: Vec<String> = vec!["--".into()];
    args.extend(node_args.iter().map(|s| s.to_string()));
    let mut workload = toml::Table::new();
    workload.insert("increments".into(), 50.into());
    LocalLaunch {
        nodes,
        distinct_hosts,
        exe: PathBuf::from(EXE),
        node_args: args,
        protocol: "net-counter".into(),
        seed: 1,
        workload,
        engine: toml::Table::new(),
        dir: std::env::temp_dir().join(format!("txlab-net-test-{}-{name}", std::process::id())),
        timeout: Duration::from_secs(60),
    }
}

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Whether `pid` exists at all (zombies included).
fn exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

fn launch(
    s: &LocalLaunch,
) -> (
    Result<txlab_net::cluster::LaunchReport, txlab_net::NetError>,
    Vec<u32>,
) {
    let mut pids = Vec::new();
    let r = launch_local(s, |_, pid| pids.push(pid), std::future::pending());
    (r, pids)
}

#[test]
fn three_processes_converge_plain_and_on_distinct_hosts() {
    for distinct in [false, true] {
        let (r, pids) = launch(&spec(&format!("ok{distinct}"), 3, distinct, &[]));
        let report = r.unwrap();
        assert_eq!(pids.len(), 3);
        let text = std::fs::read_to_string(&report.cluster_file).unwrap();
        for (i, n) in report.nodes.iter().enumerate() {
            assert_eq!(n.id, NodeId(i as u16));
            assert_eq!(n.result["converged"], true, "{}", n.result);
            assert_eq!(n.result["total"], n.result["expected"]);
            if distinct {
                assert!(text.contains(&format!("\"127.0.0.{}:", i + 1)), "{text}");
            }
        }
        assert!(pids.iter().all(|&p| !exists(p)), "children left behind");
    }
}

#[test]
fn a_failing_node_stops_the_others() {
    let (r, pids) = launch(&spec(
        "fail",
        3,
        false,
        &["--fault-node", "1", "--fault", "exit"],
    ));
    let e = r.unwrap_err().to_string();
    assert!(e.contains("node 1") && e.contains("exit status: 3"), "{e}");
    assert_eq!(pids.len(), 3);
    assert!(pids.iter().all(|&p| !exists(p)), "children left behind");
}

#[test]
fn a_hanging_node_times_out_and_every_node_is_stopped() {
    let mut s = spec("hang", 3, false, &["--fault-node", "2", "--fault", "hang"]);
    s.timeout = Duration::from_secs(2);
    let (r, pids) = launch(&s);
    let e = r.unwrap_err();
    assert!(matches!(e, txlab_net::NetError::Timeout(..)), "{e}");
    assert!(pids.iter().all(|&p| !exists(p)), "children left behind");
}

#[test]
fn cancelling_stops_every_node() {
    let s = spec(
        "cancel",
        3,
        false,
        &["--fault-node", "0", "--fault", "hang"],
    );
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let mut tx = Some(tx);
    let mut pids = Vec::new();
    let r = launch_local(
        &s,
        |_, pid| {
            pids.push(pid);
            if pids.len() == 3 {
                let _ = tx.take().unwrap().send(());
            }
        },
        async {
            let _ = rx.await;
        },
    );
    assert!(r.unwrap_err().to_string().contains("cancelled"));
    assert!(pids.iter().all(|&p| !exists(p)), "children left behind");
}

/// A port the launcher reserved for a node is never handed to another bind of port 0 (another
/// launch picking its ports), and the node's own listener (`std`'s, as `TcpNode::start` binds)
/// still gets it. Ports picked and released instead come back to such binds within a few
/// thousand of them (tens of hits expected for 64 released ports).
#[test]
fn a_reserved_port_goes_to_the_node_only() {
    let reserved: Vec<ReservedPort> = (0..64)
        .map(|_| ReservedPort::on("127.0.0.1").unwrap())
        .collect();
    let ports: std::collections::BTreeSet<u16> = reserved.iter().map(ReservedPort::port).collect();
    assert_eq!(ports.len(), 64);
    for _ in 0..4000 {
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = other.local_addr().unwrap().port();
        assert!(!ports.contains(&port), "reserved port {port} handed out");
    }
    let node = std::net::TcpListener::bind(("127.0.0.1", reserved[0].port())).unwrap();
    let _client = std::net::TcpStream::connect(node.local_addr().unwrap()).unwrap();
    node.accept().unwrap();
    let e = ReservedPort::on("localhost").unwrap_err().to_string();
    assert!(
        e.contains("\"localhost\"") && e.contains("an IP address"),
        "{e}"
    );
}

/// Starts the launcher binary with node 0 hanging and returns it with its children's pids and
/// the rest of its stderr (open until dropped); `on_first_pid` gets the launcher's pid as soon as
/// it has reported its first child.
fn launcher_process(
    on_first_pid: impl FnOnce(u32),
) -> (
    std::process::Child,
    Vec<u32>,
    BufReader<std::process::ChildStderr>,
) {
    let mut launcher = Command::new(EXE)
        .args([
            "cluster",
            "--local",
            "3",
            "--fault-node",
            "0",
            "--fault",
            "hang",
            "--timeout-s",
            "60",
        ])
        .args(["--", "run", "--protocol", "net-counter"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(launcher.stderr.take().unwrap());
    let mut pid = || -> u32 {
        let mut l = String::new();
        stderr.read_line(&mut l).unwrap();
        l.trim_end().rsplit(' ').next().unwrap().parse().unwrap()
    };
    let first = pid();
    on_first_pid(launcher.id());
    let pids = vec![first, pid(), pid()];
    (launcher, pids, stderr)
}

/// Waits (bounded) for processes that end on their own.
fn wait_gone(pids: &[u32]) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if pids.iter().all(|&p| !alive(p)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Ctrl-C as soon as the launcher names its first child (its handler is in place before any
/// child starts): the launcher stops, reaps every child and exits with its error, instead of
/// dying by the signal and leaving them behind.
#[test]
fn ctrl_c_on_the_launcher_reaps_its_children() {
    let (mut launcher, pids, mut stderr) = launcher_process(|launcher| {
        let st = Command::new("kill")
            .args(["-INT", &launcher.to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    });
    let mut said = String::new();
    stderr.read_to_string(&mut said).unwrap();
    let status = launcher.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "{status}: not the launcher's own exit"
    );
    assert!(said.contains("launch cancelled"), "{said}");
    // The launcher killed and reaped them before exiting.
    assert!(
        pids.iter().all(|&p| !alive(p)),
        "children outlived the launcher"
    );
}

#[test]
fn children_of_a_killed_launcher_exit_on_their_own() {
    let (mut launcher, pids, _stderr) = launcher_process(|_| {});
    launcher.kill().unwrap();
    launcher.wait().unwrap();
    // SIGKILL gives the launcher no chance; the children see their stdin close and exit.
    assert!(wait_gone(&pids), "orphans left running");
}
