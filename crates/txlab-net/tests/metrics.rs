//! Per-link counters include the messages that threads send through a `Transport` handle, not
//! only those of handlers.

use std::time::Duration;

use txlab_net::inproc::{InprocCluster, InprocConfig};
use txlab_net::step::{Schedule, Source, StepConfig, StepDriver};
use txlab_net::{Ctx, Node, NodeId};

/// Counts what it receives; sends nothing.
#[derive(Debug, Default)]
struct Sink {
    me: u16,
    got: u64,
}

impl Node for Sink {
    type Msg = u64;

    fn on_message(&mut self, _from: NodeId, _msg: u64, _ctx: &mut Ctx<'_, u64>) {
        self.got += 1;
    }
}

const SENT: u64 = 5;

#[test]
fn inproc_counts_transport_sends_per_link() {
    for encode in [false, true] {
        let ids = [NodeId(0), NodeId(1)];
        let config = InprocConfig {
            encode,
            ..InprocConfig::default()
        };
        let c = InprocCluster::start(&ids, config, |id| Sink { me: id.0, got: 0 }).unwrap();
        let t = c.transport(NodeId(0)).unwrap();
        for i in 0..SENT {
            t.send(NodeId(1), i).unwrap();
        }
        c.wait_until(Duration::from_secs(20), |s: &Sink| {
            s.me == 0 || s.got == SENT
        })
        .unwrap();
        let m = c.stop().unwrap().metrics;
        let link = m.links[&(NodeId(0), NodeId(1))];
        assert_eq!(link.messages, SENT, "encode: {encode}");
        assert_eq!(
            link.bytes > 0,
            encode,
            "bytes are counted where messages are encoded"
        );
        assert!(!m.links.contains_key(&(NodeId(1), NodeId(0))));
    }
}

#[test]
fn step_counts_transport_sends_per_link() {
    let mut d = StepDriver::new(&[NodeId(0), NodeId(1)], StepConfig::default(), |id| Sink {
        me: id.0,
        got: 0,
    })
    .unwrap();
    let t = d.transport(NodeId(1)).unwrap();
    for i in 0..SENT {
        t.send(NodeId(0), i).unwrap();
    }
    d.run(Source::Choices(Schedule::default()), |_| Ok(()), |_| false)
        .unwrap();
    assert_eq!(d.world().node(NodeId(0)).unwrap().got, SENT);
    assert_eq!(d.metrics().links[&(NodeId(1), NodeId(0))].messages, SENT);
}
