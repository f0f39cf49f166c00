//! The step driver does exactly what each choice says, replays from its schedule, and reports
//! failures with a schedule that reproduces them.

mod common;

use std::time::Duration;

use common::{Toy, ToyMsg, ids};
use serde::{Deserialize, Serialize};
use txlab_net::step::{Choice, Schedule, Source, StepConfig, StepDriver};
use txlab_net::{Ctx, NetError, Node, NodeId, TimerId};

#[test]
fn schedules_print_and_parse_and_bad_tokens_are_named() {
    let s: Schedule = "d0 x3 u1 w2 c1 r1".parse().unwrap();
    assert_eq!(
        s.0,
        vec![
            Choice::Deliver(0),
            Choice::Drop(3),
            Choice::Duplicate(1),
            Choice::Delay(2),
            Choice::Crash(1),
            Choice::Restart(1)
        ]
    );
    assert_eq!(s.to_string(), "d0 x3 u1 w2 c1 r1");
    let err = "d0 q7".parse::<Schedule>().unwrap_err().to_string();
    assert!(err.contains("\"q7\"") && err.contains("accepted"), "{err}");
    assert!("d70000".parse::<Schedule>().is_err());
}

/// A node that logs what reaches it.
#[derive(Debug, Default)]
struct Log {
    got: Vec<(NodeId, u32)>,
    peer_events: Vec<(NodeId, bool)>,
    timers: u32,
    starts_seen_in_durable: u32,
    send_error: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Num(u32);

impl Node for Log {
    type Msg = Num;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Num>) {
        let d = ctx.durable();
        let starts: u32 = d.get_value(b"starts").unwrap().unwrap_or(0);
        d.put_value(b"starts", &(starts + 1)).unwrap();
        self.starts_seen_in_durable = starts;
        if ctx.me() == NodeId(0) && starts == 0 {
            ctx.send(NodeId(1), Num(1)).unwrap();
            ctx.send(NodeId(1), Num(2)).unwrap();
            ctx.set_timer(Duration::from_millis(5), TimerId(0));
            self.send_error = ctx.send(NodeId(9), Num(0)).err().map(|e| e.to_string());
        }
    }

    fn on_message(&mut self, from: NodeId, msg: Num, _: &mut Ctx<'_, Num>) {
        self.got.push((from, msg.0));
    }

    fn on_timer(&mut self, _: TimerId, _: &mut Ctx<'_, Num>) {
        self.timers += 1;
    }

    fn on_peer(&mut self, peer: NodeId, up: bool, _: &mut Ctx<'_, Num>) {
        self.peer_events.push((peer, up));
    }
}

fn run(schedule: &str) -> StepDriver<Log, impl FnMut(NodeId) -> Log> {
    let mut d = StepDriver::new(&ids(2), StepConfig::default(), |_| Log::default()).unwrap();
    d.run(
        Source::Choices(schedule.parse().unwrap()),
        |_| Ok(()),
        |_| false,
    )
    .unwrap();
    d
}

fn got(d: &StepDriver<Log, impl FnMut(NodeId) -> Log>, id: u16) -> Vec<u32> {
    d.world()
        .node(NodeId(id))
        .unwrap()
        .got
        .iter()
        .map(|g| g.1)
        .collect()
}

#[test]
fn each_choice_does_what_it_says() {
    // Reorder: the second message first.
    assert_eq!(got(&run("d1 d0"), 1), vec![2, 1]);
    // Drop: lost for good (nothing retransmits here).
    let d = run("x0");
    assert_eq!(got(&d, 1), vec![2]);
    assert_eq!(d.metrics().total().dropped, 1);
    // Duplicate: delivered twice.
    assert_eq!(got(&run("u0 d0 d0"), 1), vec![1, 1, 2]);
    // Delay: held past node 0's 5 ms timer (the timer fires at the first clock advance).
    let d = run("w0 d0");
    assert_eq!(got(&d, 1), vec![2, 1]);
    assert_eq!(d.world().node(NodeId(0)).unwrap().timers, 1);
    assert_eq!(d.world().now(), Duration::from_millis(10));
}

#[test]
fn unknown_destinations_are_errors_naming_the_id() {
    let d = run("");
    let err = d
        .world()
        .node(NodeId(0))
        .unwrap()
        .send_error
        .clone()
        .unwrap();
    assert!(
        err.contains("unknown node n9") && err.contains("[0, 1]"),
        "{err}"
    );
    let t = d.transport(NodeId(0)).unwrap();
    assert!(matches!(
        t.send(NodeId(5), Num(0)),
        Err(NetError::UnknownNode { .. })
    ));
    assert!(d.transport(NodeId(3)).is_err());
}

#[test]
fn crash_loses_memory_not_durable_state_and_peers_see_it() {
    // Crash node 1 with both messages in flight; they reach the crashed node and are lost.
    let d = run("c1 d0 d0 r1");
    let n1 = d.world().node(NodeId(1)).unwrap();
    assert!(n1.got.is_empty());
    assert_eq!(n1.starts_seen_in_durable, 1);
    assert_eq!(n1.peer_events, vec![(NodeId(0), true)]);
    let n0 = d.world().node(NodeId(0)).unwrap();
    assert_eq!(
        n0.peer_events,
        vec![(NodeId(1), true), (NodeId(1), false), (NodeId(1), true)]
    );
    assert_eq!(d.metrics().total().dropped, 2);
}

#[test]
fn outside_sends_join_the_pool() {
    let mut d = StepDriver::new(&ids(2), StepConfig::default(), |_| Log::default()).unwrap();
    let t = d.transport(NodeId(1)).unwrap();
    t.send(NodeId(0), Num(42)).unwrap();
    d.run(Source::Choices(Schedule::default()), |_| Ok(()), |_| false)
        .unwrap();
    assert!(
        d.world()
            .node(NodeId(0))
            .unwrap()
            .got
            .contains(&(NodeId(1), 42))
    );
}

#[test]
fn failures_carry_a_schedule_that_replays_them() {
    let n = 3usize;
    let faulty = |w: &txlab_net::step::World<Toy>| {
        // "No node ever hears the same ping twice" breaks on the first duplicate.
        for (id, t) in w.nodes() {
            if t.pings.values().any(|&c| c > 1) {
                return Err(format!("{id} heard a ping twice"));
            }
        }
        Ok(())
    };
    let random = Source::Random {
        steps: 200,
        drop: 0.1,
        duplicate: 0.2,
        delay: 0.1,
        crash: 0.0,
    };
    let mut d = StepDriver::new(&ids(3), StepConfig::default(), |_| Toy::new(n)).unwrap();
    let failure = d.run(random, faulty, |_| false).unwrap_err();
    assert!(failure.message.contains("heard a ping twice"));
    let printed = failure.to_string();
    assert!(printed.contains("TXLAB_STEP_SCHEDULE='"), "{printed}");
    // Replaying the printed schedule fails at the same step.
    let mut again = StepDriver::new(&ids(3), StepConfig::default(), |_| Toy::new(n)).unwrap();
    let replay = again
        .run(Source::Choices(failure.schedule.clone()), faulty, |_| false)
        .unwrap_err();
    assert_eq!(replay.step, failure.step);
    assert_eq!(replay.schedule, failure.schedule);
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another() {
    let go = |seed| {
        let random = Source::Random {
            steps: 300,
            drop: 0.05,
            duplicate: 0.05,
            delay: 0.1,
            crash: 0.02,
        };
        let cfg = StepConfig {
            seed,
            ..StepConfig::default()
        };
        let mut d = StepDriver::new(&ids(3), cfg, |_| Toy::new(3)).unwrap();
        let r = d.run(random, |_| Ok(()), |_| false).unwrap();
        let state: Vec<_> = d
            .world()
            .nodes()
            .map(|(id, t)| format!("{id}{:?}{:?}", t.pongs, t.rumors))
            .collect();
        (r.schedule, state)
    };
    assert_eq!(go(1), go(1));
    assert_ne!(go(1).0, go(2).0);
}

#[test]
fn a_run_that_never_finishes_is_a_liveness_failure() {
    #[derive(Debug)]
    struct Chatty;
    impl Node for Chatty {
        type Msg = ToyMsg;
        fn on_start(&mut self, ctx: &mut Ctx<'_, ToyMsg>) {
            ctx.set_timer(Duration::from_millis(1), TimerId(0));
        }
        fn on_message(&mut self, _: NodeId, _: ToyMsg, _: &mut Ctx<'_, ToyMsg>) {}
        fn on_timer(&mut self, t: TimerId, ctx: &mut Ctx<'_, ToyMsg>) {
            ctx.set_timer(Duration::from_millis(1), t);
        }
    }
    let cfg = StepConfig {
        max_steps: 50,
        ..StepConfig::default()
    };
    let mut d = StepDriver::new(&ids(1), cfg, |_| Chatty).unwrap();
    let f = d
        .run(Source::Choices(Schedule::default()), |_| Ok(()), |_| false)
        .unwrap_err();
    assert!(f.message.contains("max_steps = 50"), "{f}");
}

#[test]
fn bad_cluster_shapes_are_refused() {
    let e = StepDriver::new(&[], StepConfig::default(), |_| Toy::new(0)).unwrap_err();
    assert!(e.to_string().contains("got 0"), "{e}");
    let e = StepDriver::new(&[NodeId(1), NodeId(1)], StepConfig::default(), |_| {
        Toy::new(2)
    })
    .unwrap_err();
    assert!(e.to_string().contains("node id 1 appears twice"), "{e}");
    let many: Vec<_> = (0..1025).map(NodeId).collect();
    let e = StepDriver::new(&many, StepConfig::default(), |_| Toy::new(0)).unwrap_err();
    assert!(e.to_string().contains("1025") && e.to_string().contains("1..=1024"));
}

#[test]
fn a_choice_made_on_an_empty_pool_is_recorded_so_the_schedule_replays() {
    /// Node 0 sends 1 and 2 at start and 3 and 4 when its timer fires; node 1 logs arrivals.
    #[derive(Debug, Default)]
    struct Ticker {
        got: Vec<u32>,
    }
    impl Node for Ticker {
        type Msg = Num;
        fn on_start(&mut self, ctx: &mut Ctx<'_, Num>) {
            if ctx.me() == NodeId(0) {
                ctx.send(NodeId(1), Num(1)).unwrap();
                ctx.send(NodeId(1), Num(2)).unwrap();
                ctx.set_timer(Duration::from_millis(1), TimerId(0));
            }
        }
        fn on_message(&mut self, _: NodeId, msg: Num, _: &mut Ctx<'_, Num>) {
            self.got.push(msg.0);
        }
        fn on_timer(&mut self, _: TimerId, ctx: &mut Ctx<'_, Num>) {
            ctx.send(NodeId(1), Num(3)).unwrap();
            ctx.send(NodeId(1), Num(4)).unwrap();
        }
    }
    let go = |s: Schedule| {
        let mut d = StepDriver::new(&ids(2), StepConfig::default(), |_| Ticker::default()).unwrap();
        let r = d.run(Source::Choices(s), |_| Ok(()), |_| false).unwrap();
        (d.world().node(NodeId(1)).unwrap().got.clone(), r.schedule)
    };
    // The third choice finds the pool empty and advances the clock (the timer sends 3 and 4);
    // the fourth then delivers 4 before 3.
    let (got, recorded) = go("d0 d0 d7 d1".parse().unwrap());
    assert_eq!(got, vec![1, 2, 4, 3]);
    assert!(
        recorded.to_string().starts_with("d0 d0 d0 d1"),
        "{recorded}"
    );
    let (again, recorded_again) = go(recorded.clone());
    assert_eq!(again, got);
    assert_eq!(recorded_again, recorded);
}
