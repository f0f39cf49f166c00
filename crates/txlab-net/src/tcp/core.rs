//! The synchronous half shared by the `tcp` and `sim` drivers: a [`Host`] plus the routing of
//! its sends into per-destination chunks, the loop-back of self-sends, and inbound decoding.
//! The `tcp` node thread and the `sim` host task both drive a node only through this type.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use super::io::Inbound;
use crate::ctx::Payload;
use crate::error::NetError;
use crate::host::{Event, Host};
use crate::node::{Node, NodeId};
use crate::wire::Frame;

/// A running hash of delivered messages `(time, from, to, bytes)`: equal traces hash equal.
#[derive(Debug, Default)]
pub(crate) struct Trace {
    hasher: DefaultHasher,
    pub(crate) messages: u64,
}

impl Trace {
    fn record(&mut self, now: Duration, from: NodeId, to: NodeId, frame: &[u8]) {
        self.hasher.write_u128(now.as_nanos());
        self.hasher.write_u16(from.0);
        self.hasher.write_u16(to.0);
        self.hasher.write(frame);
        self.messages += 1;
    }

    #[cfg_attr(not(feature = "sim"), allow(dead_code))]
    pub(crate) fn hash(&self) -> u64 {
        self.hasher.finish()
    }
}

pub(crate) struct NodeCore<N: Node> {
    pub(crate) host: Host<N>,
    /// Per destination (indexed like `host.nodes`); `None` for this node.
    links: Vec<Option<UnboundedSender<Vec<Frame>>>>,
    batching: bool,
    max_frame: usize,
    local: VecDeque<Frame>,
    pub(crate) decode_errors: u64,
    pub(crate) frame_too_large: u64,
    pub(crate) fatal: Option<NetError>,
    trace: Option<Arc<Mutex<Trace>>>,
}

impl<N: Node> NodeCore<N> {
    pub(crate) fn new(
        host: Host<N>,
        links: Vec<Option<UnboundedSender<Vec<Frame>>>>,
        batching: bool,
        max_frame: usize,
        trace: Option<Arc<Mutex<Trace>>>,
    ) -> Self {
        Self {
            host,
            links,
            batching,
            max_frame,
            local: VecDeque::new(),
            decode_errors: 0,
            frame_too_large: 0,
            fatal: None,
            trace,
        }
    }

    /// Adds this node's handler time and refused input into `into` (`sim` keeps no I/O counters
    /// per incarnation, so it reports through here).
    #[cfg_attr(not(feature = "sim"), allow(dead_code))]
    pub(crate) fn report(&self, into: &mut crate::metrics::NetMetrics) {
        self.host.report(into);
        into.decode_errors += self.decode_errors;
        into.frame_too_large += self.frame_too_large;
    }

    pub(crate) fn start(&mut self, now: Duration) {
        self.host.handle(now, Event::Start);
        self.flush(now);
    }

    pub(crate) fn inbound(&mut self, ev: Inbound, now: Duration) {
        match ev {
            Inbound::Frames(from, frames) => {
                for f in frames {
                    self.deliver(from, &f.0, now);
                }
            }
            Inbound::Peer(p, up) => self.host.handle(now, Event::Peer(p, up)),
            Inbound::Fatal(e) => {
                self.fatal.get_or_insert(e);
            }
        }
        self.flush(now);
    }

    pub(crate) fn timers(&mut self, now: Duration) {
        if self.host.fire_due(now) > 0 {
            self.flush(now);
        }
    }

    pub(crate) fn next_deadline(&self) -> Option<Duration> {
        self.host.timers.next()
    }

    fn deliver(&mut self, from: NodeId, frame: &[u8], now: Duration) {
        if let Some(t) = &self.trace {
            t.lock().unwrap().record(now, from, self.host.id, frame);
        }
        match self.host.handle_frame(now, from, frame, self.max_frame) {
            Ok(()) => {}
            Err(NetError::FrameTooLarge { .. }) => self.frame_too_large += 1,
            Err(_) => self.decode_errors += 1,
        }
    }

    /// Routes the handlers' sends: one chunk per destination (per message without batching),
    /// self-sends looped back here; then runs the looped-back messages.
    pub(crate) fn flush(&mut self, now: Duration) {
        loop {
            let me = self.host.id;
            let mut chunks: Vec<Vec<Frame>> = vec![Vec::new(); self.links.len()];
            let sends: Vec<_> = self.host.take_sends().collect();
            for (to, payload) in sends {
                let Payload::Encoded(bytes) = payload else {
                    unreachable!("tcp and sim nodes encode every send")
                };
                if to == me {
                    self.local.push_back(Frame(bytes));
                    continue;
                }
                let i = self
                    .host
                    .nodes
                    .binary_search(&to)
                    .expect("ctx checked the id");
                if self.batching {
                    chunks[i].push(Frame(bytes));
                } else if let Some(tx) = &self.links[i] {
                    let _ = tx.send(vec![Frame(bytes)]);
                }
            }
            for (i, chunk) in chunks.into_iter().enumerate() {
                if let (false, Some(tx)) = (chunk.is_empty(), &self.links[i]) {
                    let _ = tx.send(chunk);
                }
            }
            let Some(f) = self.local.pop_front() else {
                return;
            };
            self.deliver(me, &f.0, now);
        }
    }
}
