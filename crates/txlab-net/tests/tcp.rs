//! The tcp driver's bad input: ports in use, mismatched peers, oversize frames, malformed bytes.

mod common;

use common::loopback;

use std::io::{Read, Write};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use txlab_net::tcp::{Identity, TcpConfig, TcpNode};
use txlab_net::{Ctx, NetError, Node, NodeId};

fn identity(protocol: &str, rev: &str, digest: &str) -> Identity {
    Identity {
        protocol: protocol.into(),
        git_revision: rev.into(),
        cluster_digest: digest.into(),
    }
}

#[derive(Debug, Serialize, Deserialize)]
enum Blob {
    Big(Vec<u8>),
    Small,
}

#[derive(Debug, Default)]
struct Sink {
    small: u32,
    big: u32,
}

impl Node for Sink {
    type Msg = Blob;
    fn on_message(&mut self, _: NodeId, m: Blob, _: &mut Ctx<'_, Blob>) {
        match m {
            Blob::Big(_) => self.big += 1,
            Blob::Small => self.small += 1,
        }
    }
}

/// One node on a free loopback port, and the peer list naming it.
fn one_node() -> (TcpNode<Sink>, Vec<(NodeId, String)>) {
    let (ls, peers) = loopback(1);
    let cfg = TcpConfig::new(NodeId(0), peers.clone(), identity("p", "r", "d"));
    let node = TcpNode::start_on(cfg, ls.into_iter().next().unwrap(), Sink::default()).unwrap();
    (node, peers)
}

#[test]
fn a_port_in_use_is_an_error_naming_the_address() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let cfg = TcpConfig::new(
        NodeId(0),
        vec![(NodeId(0), addr.clone())],
        identity("p", "r", "d"),
    );
    let e = TcpNode::start(cfg, Sink::default()).unwrap_err();
    assert!(matches!(e, NetError::Io { .. }), "{e}");
    assert!(e.to_string().contains(&format!("bind {addr}")), "{e}");
}

#[test]
fn mismatched_peers_are_refused_naming_both_values() {
    for (field, theirs, want) in [
        ("protocol", identity("other", "r", "d"), "protocol"),
        ("rev", identity("p", "r2", "d"), "git revision"),
        ("digest", identity("p", "r", "d2"), "cluster digest"),
    ] {
        let (ls, peers) = loopback(2);
        let mut ls = ls.into_iter();
        let a = TcpNode::start_on(
            TcpConfig::new(NodeId(0), peers.clone(), identity("p", "r", "d")),
            ls.next().unwrap(),
            Sink::default(),
        )
        .unwrap();
        let b = TcpNode::start_on(
            TcpConfig::new(NodeId(1), peers, theirs.clone()),
            ls.next().unwrap(),
            Sink::default(),
        )
        .unwrap();
        let e = a
            .wait_until(Duration::from_secs(20), |_| false)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{field}: {e}");
        let ours = match field {
            "protocol" => ("\"p\"", "\"other\""),
            "rev" => ("\"r\"", "\"r2\""),
            _ => ("\"d\"", "\"d2\""),
        };
        assert!(e.contains(ours.0) && e.contains(ours.1), "{field}: {e}");
        // The other side refuses too (its own connection attempt, or the refused hello).
        assert!(b.wait_until(Duration::from_secs(20), |_| false).is_err());
        let sb = b.stop().unwrap();
        assert!(
            matches!(sb.fatal, Some(NetError::Handshake { .. })),
            "{:?}",
            sb.fatal
        );
        let sa = a.stop().unwrap();
        assert!(sa.fatal.is_some());
    }
}

#[test]
fn oversize_frames_are_refused_by_sender_and_receiver() {
    let (ls, peers) = loopback(2);
    let mut ls = ls.into_iter();
    let mut big_limit = TcpConfig::new(NodeId(0), peers.clone(), identity("p", "r", "d"));
    big_limit.max_frame = 1 << 20;
    let mut small_limit = TcpConfig::new(NodeId(1), peers, identity("p", "r", "d"));
    small_limit.max_frame = 1024;
    let a = TcpNode::start_on(big_limit, ls.next().unwrap(), Sink::default()).unwrap();
    let b = TcpNode::start_on(small_limit, ls.next().unwrap(), Sink::default()).unwrap();
    // Sender side: over its own limit.
    let e = a
        .transport()
        .send(NodeId(1), Blob::Big(vec![0; 2 << 20]))
        .unwrap_err();
    assert!(
        matches!(e, NetError::FrameTooLarge { max, .. } if max == 1 << 20),
        "{e}"
    );
    let e = b
        .transport()
        .send(NodeId(0), Blob::Big(vec![0; 4096]))
        .unwrap_err();
    assert!(
        e.to_string().contains("exceeds the limit of 1024 bytes"),
        "{e}"
    );
    // Receiver side: within the sender's limit, over the receiver's.
    let t = a.transport();
    t.send(NodeId(1), Blob::Big(vec![1; 10_000])).unwrap();
    t.send(NodeId(1), Blob::Small).unwrap();
    b.wait_until(Duration::from_secs(20), |s: &Sink| s.small == 1)
        .unwrap();
    let sb = b.stop().unwrap();
    assert_eq!(sb.node.big, 0);
    let refused = sb.metrics.frame_too_large;
    assert_eq!(refused, 1, "{:?}", sb.metrics);
    a.stop().unwrap();
}

#[test]
fn malformed_bytes_drop_the_connection_and_are_counted() {
    let (node, peers) = one_node();
    let garbage: [&[u8]; 2] = [
        // A well-framed message that is not a tarpc request.
        &[0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        // A length prefix far over the limit.
        &[0x7f, 0xff, 0xff, 0xff, 1, 2, 3],
    ];
    for (k, bytes) in garbage.iter().enumerate() {
        let mut s = std::net::TcpStream::connect(&peers[0].1).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(bytes).unwrap();
        // The server closes the connection after counting: read until EOF (or reset).
        let mut buf = [0u8; 64];
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        assert_eq!(node.io_metrics().decode_errors, k as u64 + 1);
    }
    node.stop().unwrap();
}

#[test]
fn unknown_nodes_and_bad_settings_are_refused() {
    let (node, peers) = one_node();
    let e = node.transport().send(NodeId(4), Blob::Small).unwrap_err();
    assert!(e.to_string().contains("unknown node n4"), "{e}");
    node.stop().unwrap();
    let mut cfg = TcpConfig::new(NodeId(0), peers.clone(), identity("p", "r", "d"));
    cfg.window = 0;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let e = TcpNode::start_on(cfg, l, Sink::default()).unwrap_err();
    assert!(e.to_string().contains("window 0"), "{e}");
    let cfg = TcpConfig::new(NodeId(3), peers, identity("p", "r", "d"));
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let e = TcpNode::start_on(cfg, l, Sink::default()).unwrap_err();
    assert!(e.to_string().contains("unknown node n3"), "{e}");
}

#[test]
fn a_handler_burst_larger_than_a_batch_is_split_and_delivered() {
    #[derive(Debug, Default)]
    struct Burst {
        got: u32,
    }
    impl Node for Burst {
        type Msg = Blob;
        fn on_peer(&mut self, p: NodeId, up: bool, ctx: &mut Ctx<'_, Blob>) {
            if ctx.me() == NodeId(0) && up {
                // 64 × 16 KiB in one handler: one chunk of 1 MiB against 64 KiB batches.
                for _ in 0..64 {
                    ctx.send(p, Blob::Big(vec![3; 16 << 10])).unwrap();
                }
            }
        }
        fn on_message(&mut self, _: NodeId, _: Blob, _: &mut Ctx<'_, Blob>) {
            self.got += 1;
        }
    }
    let (ls, peers) = loopback(2);
    let nodes: Vec<_> = ls
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let mut c = TcpConfig::new(NodeId(i as u16), peers.clone(), identity("p", "r", "d"));
            c.max_batch_bytes = 64 << 10;
            c.max_frame = 32 << 10;
            TcpNode::start_on(c, l, Burst::default()).unwrap()
        })
        .collect();
    nodes[1]
        .wait_until(Duration::from_secs(20), |b: &Burst| b.got == 64)
        .unwrap();
    let mut it = nodes.into_iter();
    let sender = it.next().unwrap().stop().unwrap();
    let t = sender.metrics.total();
    assert_eq!((t.messages, t.dropped), (64, 0));
    // About 4 frames per 64 KiB batch.
    assert!(t.batches >= 16, "{t:?}");
}
