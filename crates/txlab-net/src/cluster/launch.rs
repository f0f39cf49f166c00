//! The local launcher: N child processes of one executable on loopback, each running one node
//! of a generated cluster file, their JSON results gathered from stdout.
//!
//! Children are always reaped: on success, on the first failing child (the others are killed),
//! on timeout, and on cancellation (Ctrl-C in the CLI). Each child also gets a pipe on stdin
//! that the launcher never writes; with [`LAUNCHED_ENV`] set, the child exits when that pipe
//! closes ([`watch_parent`]), so even a launcher killed outright leaves no orphans.

use std::future::Future;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::io::AsyncReadExt;
use tokio::sync::oneshot;

use super::file::ClusterFile;
use crate::error::NetError;
use crate::node::NodeId;

/// Set (to `1`) in every child's environment.
pub const LAUNCHED_ENV: &str = "TXLAB_LAUNCHED";

/// What to launch.
#[derive(Clone, Debug)]
pub struct LocalLaunch {
    /// Nodes (1..=253 with `distinct_hosts`, else 1..=1024).
    pub nodes: u16,
    /// Bind node `i` on `127.0.0.{i+1}` instead of all on `127.0.0.1`.
    pub distinct_hosts: bool,
    /// The executable; each child runs `exe node --cluster FILE --id K <node_args>`.
    pub exe: PathBuf,
    /// Arguments after `--id K`.
    pub node_args: Vec<String>,
    /// The cluster's protocol.
    pub protocol: String,
    /// The cluster's seed.
    pub seed: u64,
    /// `[workload]` of the generated file.
    pub workload: toml::Table,
    /// `[engine]` of the generated file.
    pub engine: toml::Table,
    /// Where the cluster file goes.
    pub dir: PathBuf,
    /// Children still running after this are killed.
    pub timeout: Duration,
}

/// One child's result.
#[derive(Clone, Debug)]
pub struct NodeOutput {
    /// The node.
    pub id: NodeId,
    /// Its process id.
    pub pid: u32,
    /// The last non-empty line of its stdout, parsed as JSON.
    pub result: serde_json::Value,
}

/// A successful launch.
#[derive(Clone, Debug)]
pub struct LaunchReport {
    /// The generated cluster file.
    pub cluster_file: PathBuf,
    /// Every node's output, in id order.
    pub nodes: Vec<NodeOutput>,
}

/// In a child started by [`launch_local`] (its environment has [`LAUNCHED_ENV`]), exits the
/// process as soon as stdin closes, i.e. when the launcher is gone. Elsewhere, does nothing.
pub fn watch_parent() {
    if std::env::var_os(LAUNCHED_ENV).is_none() {
        return;
    }
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        // stderr may be a closed pipe by now: a failed write must not stop the exit.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"txlab node: the launcher is gone; exiting\n",
        );
        std::process::exit(3);
    });
}

/// A port held for one node of a launch: a socket bound to it with `SO_REUSEADDR` that never
/// listens, kept until the launch ends.
///
/// While it is held, the kernel hands the port to no other socket, neither to another bind of
/// port 0 (another launch picking its ports) nor as the local port of an outgoing connection,
/// so it is still free when the node's process starts and binds it. The node can: on Linux a
/// listener with `SO_REUSEADDR` (`std::net::TcpListener::bind` sets it) may bind a port whose
/// other sockets all have it too and none listens. A port picked by binding port 0 and released
/// at once could be taken in between by any of those.
#[derive(Debug)]
pub struct ReservedPort {
    port: u16,
    _socket: socket2::Socket,
}

impl ReservedPort {
    /// Reserves a free port on `ip` (an IP address, such as `127.0.0.1`).
    pub fn on(ip: &str) -> Result<Self, NetError> {
        let addr: std::net::IpAddr = ip.parse().map_err(|_| {
            NetError::Config(format!("{ip:?}: accepted: an IP address such as 127.0.0.1"))
        })?;
        let addr = std::net::SocketAddr::new(addr, 0);
        let io = |what: &str| {
            let what = format!("{what} to reserve a port on {ip}");
            move |e| NetError::io(what, e)
        };
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(addr),
            socket2::Type::STREAM,
            Some(socket2::Protocol::TCP),
        )
        .map_err(io("open a socket"))?;
        socket
            .set_reuse_address(true)
            .map_err(io("set SO_REUSEADDR"))?;
        socket.bind(&addr.into()).map_err(io("bind port 0"))?;
        let port = socket
            .local_addr()
            .map_err(io("read the bound address"))?
            .as_socket()
            .map(|a| a.port())
            .ok_or_else(|| NetError::Config(format!("{ip}: not an IP socket address")))?;
        Ok(Self {
            port,
            _socket: socket,
        })
    }

    /// The reserved port.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl LocalLaunch {
    fn validate(&self) -> Result<(), NetError> {
        let max = if self.distinct_hosts {
            253
        } else {
            crate::node::MAX_NODES as u16
        };
        if self.nodes == 0 || self.nodes > max {
            return Err(NetError::Config(format!(
                "--local {}: accepted: 1..={max}{}",
                self.nodes,
                if self.distinct_hosts {
                    " with --distinct-hosts (127.0.0.1..=127.0.0.253)"
                } else {
                    ""
                }
            )));
        }
        if self.timeout.is_zero() {
            return Err(NetError::Config(
                "launch timeout 0: accepted: a positive duration".into(),
            ));
        }
        Ok(())
    }

    /// Writes the cluster file: loopback addresses on reserved ports, held until the launch
    /// ends.
    fn write_cluster_file(&self) -> Result<(PathBuf, Vec<ReservedPort>), NetError> {
        let mut reserved = Vec::with_capacity(usize::from(self.nodes));
        let mut addresses = Vec::with_capacity(usize::from(self.nodes));
        for i in 0..self.nodes {
            let ip = if self.distinct_hosts {
                format!("127.0.0.{}", i + 1)
            } else {
                "127.0.0.1".into()
            };
            let port = ReservedPort::on(&ip)?;
            addresses.push((NodeId(i), format!("{ip}:{}", port.port())));
            reserved.push(port);
        }
        let text = ClusterFile::render(
            &self.protocol,
            self.seed,
            &self.workload,
            &self.engine,
            &addresses,
        );
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| NetError::io(format!("create {}", self.dir.display()), e))?;
        let path = self.dir.join("cluster.toml");
        std::fs::write(&path, text)
            .map_err(|e| NetError::io(format!("write {}", path.display()), e))?;
        Ok((path, reserved))
    }
}

/// How one child ended.
struct Ended {
    id: NodeId,
    pid: u32,
    status: std::io::Result<ExitStatus>,
    stdout: String,
    killed: bool,
}

/// Launches `spec`, calling `on_spawn(id, pid)` for each child, and returns every node's JSON
/// result. Fails (after killing and reaping every child) when a child exits unsuccessfully or
/// prints no JSON, when `spec.timeout` passes, or when `cancel` completes. `cancel` is first
/// polled before any child starts; every node's port is reserved ([`ReservedPort`]) from
/// before the cluster file is written until every child is reaped.
pub fn launch_local(
    spec: &LocalLaunch,
    mut on_spawn: impl FnMut(NodeId, u32),
    cancel: impl Future<Output = ()>,
) -> Result<LaunchReport, NetError> {
    spec.validate()?;
    // Every node's port stays reserved until every child is reaped (`ReservedPort`).
    let (cluster_file, _reserved) = spec.write_cluster_file()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| NetError::io("build the launcher runtime", e))?;
    rt.block_on(async {
        let mut cancel = std::pin::pin!(cancel);
        // Polled once before any child starts, so that a cancellation which takes effect when
        // first polled (`tokio::signal::ctrl_c` installs its handler then) is in place before
        // `on_spawn` tells anyone a child's pid: a Ctrl-C from then on stops the launch and
        // reaps the children instead of killing the launcher outright.
        if futures::poll!(cancel.as_mut()).is_ready() {
            return Err(NetError::Stopped(
                "launch cancelled before any node started".into(),
            ));
        }
        let mut kills = Vec::new();
        let mut running = FuturesUnordered::new();
        let mut spawn_error = None;
        for i in 0..spec.nodes {
            let id = NodeId(i);
            match spawn_child(spec, &cluster_file, id) {
                Ok((pid, kill, ended)) => {
                    on_spawn(id, pid);
                    kills.push(kill);
                    running.push(ended);
                }
                Err(e) => {
                    spawn_error = Some(e);
                    break;
                }
            }
        }
        let outcome = match spawn_error {
            Some(e) => Err(e),
            None => gather(spec, &mut running, cancel.as_mut()).await,
        };
        // Whatever happened, no child outlives the launch.
        for k in kills {
            let _ = k.send(());
        }
        while running.next().await.is_some() {}
        outcome.map(|nodes| LaunchReport {
            cluster_file,
            nodes,
        })
    })
}

type ChildFuture = std::pin::Pin<Box<dyn Future<Output = Ended>>>;

fn spawn_child(
    spec: &LocalLaunch,
    cluster_file: &std::path::Path,
    id: NodeId,
) -> Result<(u32, oneshot::Sender<()>, ChildFuture), NetError> {
    let mut cmd = tokio::process::Command::new(&spec.exe);
    cmd.arg("node")
        .arg("--cluster")
        .arg(cluster_file)
        .arg("--id")
        .arg(id.0.to_string())
        .args(&spec.node_args)
        .env(LAUNCHED_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| NetError::io(format!("start node {} ({})", id.0, spec.exe.display()), e))?;
    let pid = child.id().unwrap_or(0);
    let (kill, killed) = oneshot::channel::<()>();
    let mut stdout = child.stdout.take().expect("piped");
    let stdin = child.stdin.take();
    let fut = async move {
        let read = async {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s).await;
            s
        };
        let (out, (status, was_killed)) = futures::join!(read, async {
            tokio::select! {
                biased;
                status = child.wait() => (status, false),
                _ = killed => {
                    let _ = child.start_kill();
                    (child.wait().await, true)
                }
            }
        });
        drop(stdin);
        Ended {
            id,
            pid,
            status,
            stdout: out,
            killed: was_killed,
        }
    };
    Ok((pid, kill, Box::pin(fut)))
}

/// Collects children as they end; the first failure, the timeout or `cancel` ends the gathering.
async fn gather(
    spec: &LocalLaunch,
    running: &mut FuturesUnordered<ChildFuture>,
    mut cancel: std::pin::Pin<&mut impl Future<Output = ()>>,
) -> Result<Vec<NodeOutput>, NetError> {
    let mut done = Vec::new();
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    while done.len() < spec.nodes as usize {
        let ended = tokio::select! {
            biased;
            _ = cancel.as_mut() => return Err(NetError::Stopped("launch cancelled; every node was stopped".into())),
            _ = &mut deadline => return Err(NetError::Timeout(spec.timeout, format!(
                "{} of {} nodes finished; the others were stopped", done.len(), spec.nodes))),
            e = running.next() => e.expect("one future per unfinished child"),
        };
        done.push(result_of(ended)?);
    }
    done.sort_by_key(|o: &NodeOutput| o.id);
    Ok(done)
}

fn result_of(e: Ended) -> Result<NodeOutput, NetError> {
    let status = e
        .status
        .map_err(|err| NetError::io(format!("wait for node {}", e.id.0), err))?;
    if !status.success() || e.killed {
        return Err(NetError::Stopped(format!(
            "node {} (pid {}) failed: {status}",
            e.id.0, e.pid
        )));
    }
    let line = e
        .stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let result = serde_json::from_str(line).map_err(|err| {
        NetError::Decode(format!(
            "node {} printed no JSON result (last line {line:?}): {err}",
            e.id.0
        ))
    })?;
    Ok(NodeOutput {
        id: e.id,
        pid: e.pid,
        result,
    })
}
