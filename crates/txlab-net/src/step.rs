//! The `step` driver: every node in one thread, one event per step, every choice explicit.
//!
//! The driver keeps a pool of messages in flight. Each step applies one [`Choice`]: deliver,
//! drop, duplicate or delay a pooled message, or crash or restart a node. Choices come from an
//! explicit list (a proptest strategy generates it: `strategy::choices` with feature
//! `proptest`, so a failing interleaving shrinks to a minimal one) or from a seeded RNG
//! ([`Source::Random`]); either way the choices executed are recorded and print as a
//! [`Schedule`] (`d0 x1 u0 w2 c1 r1`) that replays the run exactly, through
//! `TXLAB_STEP_SCHEDULE` ([`schedule_from_env`]).
//!
//! Invariants:
//! - **Virtual time.** The clock advances only when no message is deliverable: to the earliest
//!   pending timer or delayed message, whose timers then fire (nodes in id order). So timers fire
//!   only when the network is idle, unless a delay choice holds a message back past them.
//! - **Determinism.** Given the node factory, the seed and the choices, a run is a pure function:
//!   messages are pooled in send order, node RNGs are derived from the seed, and nothing reads a
//!   real clock.
//! - **Every message crosses the wire codec** (it is pooled as its encoding), so a duplicate is a
//!   second decoding and state that would not survive a real network fails here first.
//! - A crash drops the node (its memory and timers); its [`Durable`] store survives. A restart
//!   builds a fresh node with the factory and runs `on_start`. Peers see `on_peer(down/up)`.
//!   Messages to a crashed node are lost when chosen.
//! - After the choice list, crashed nodes restart (in id order) and the pool drains oldest first
//!   until the stop condition holds, nothing is left to do, or `max_steps` is reached (a
//!   liveness failure).
//! - The invariant callback runs after every step, including the initial start and every clock
//!   advance.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::{RngExt, SeedableRng};

use crate::durable::Durable;
use crate::error::NetError;
use crate::host::{Event, Host, sorted_ids};
use crate::metrics::NetMetrics;
use crate::node::{Message, Node, NodeId};
use crate::transport::{Route, Transport};
use crate::wire::DEFAULT_MAX_FRAME;

/// One scheduling decision. Indices are taken modulo the pool size (messages) or the node count
/// (crash, restart), so every list is valid and shrinking keeps it valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Choice {
    /// Deliver pooled message `i`.
    Deliver(u16),
    /// Drop pooled message `i`.
    Drop(u16),
    /// Deliver a copy of pooled message `i`, keeping the original in the pool.
    Duplicate(u16),
    /// Hold pooled message `i` back until the clock has advanced by [`StepConfig::delay`].
    Delay(u16),
    /// Crash node `i` (no effect on a crashed node).
    Crash(u16),
    /// Restart node `i` (no effect on a running node).
    Restart(u16),
}

impl Choice {
    fn letter_and_index(self) -> (char, u16) {
        match self {
            Choice::Deliver(i) => ('d', i),
            Choice::Drop(i) => ('x', i),
            Choice::Duplicate(i) => ('u', i),
            Choice::Delay(i) => ('w', i),
            Choice::Crash(i) => ('c', i),
            Choice::Restart(i) => ('r', i),
        }
    }

    fn is_message(self) -> bool {
        !matches!(self, Choice::Crash(_) | Choice::Restart(_))
    }
}

/// A message choice made while the pool is empty, as recorded (it advances the clock instead).
fn reduce_to_empty_pool(c: Choice) -> Choice {
    match c {
        Choice::Deliver(_) => Choice::Deliver(0),
        Choice::Drop(_) => Choice::Drop(0),
        Choice::Duplicate(_) => Choice::Duplicate(0),
        Choice::Delay(_) => Choice::Delay(0),
        other => other,
    }
}

/// A list of choices with a compact text form: `d` deliver, `x` drop, `u` duplicate, `w` delay,
/// `c` crash, `r` restart, each followed by its index, separated by spaces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule(pub Vec<Choice>);

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, c) in self.0.iter().enumerate() {
            let (l, i) = c.letter_and_index();
            if k > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{l}{i}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Schedule {
    type Err = NetError;

    fn from_str(s: &str) -> Result<Self, NetError> {
        let parse = |tok: &str| -> Result<Choice, NetError> {
            let bad = || {
                NetError::Config(format!(
                    "bad step choice {tok:?}: accepted: d<i> deliver, x<i> drop, u<i> duplicate, \
                     w<i> delay, c<i> crash, r<i> restart, with i in 0..=65535"
                ))
            };
            let mut chars = tok.chars();
            let letter = chars.next().ok_or_else(bad)?;
            let i: u16 = chars.as_str().parse().map_err(|_| bad())?;
            Ok(match letter {
                'd' => Choice::Deliver(i),
                'x' => Choice::Drop(i),
                'u' => Choice::Duplicate(i),
                'w' => Choice::Delay(i),
                'c' => Choice::Crash(i),
                'r' => Choice::Restart(i),
                _ => return Err(bad()),
            })
        };
        s.split_whitespace()
            .map(parse)
            .collect::<Result<_, _>>()
            .map(Schedule)
    }
}

/// The schedule in `TXLAB_STEP_SCHEDULE`, if set (tests run it instead of their generated ones).
pub fn schedule_from_env() -> Option<Result<Schedule, NetError>> {
    std::env::var("TXLAB_STEP_SCHEDULE").ok().map(|s| s.parse())
}

/// Where the choices come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// These choices, then the default (drain oldest first).
    Choices(Schedule),
    /// `steps` choices drawn from the driver's seeded RNG with these probabilities (the rest
    /// deliveries), then the default.
    Random {
        /// Steps drawn before draining.
        steps: u64,
        /// Probability of dropping the chosen message.
        drop: f64,
        /// Probability of duplicating it.
        duplicate: f64,
        /// Probability of delaying it.
        delay: f64,
        /// Probability of crashing a node (a crashed node restarts at the next crash draw).
        crash: f64,
    },
}

/// Step driver settings.
#[derive(Clone, Debug)]
pub struct StepConfig {
    /// Seeds node RNGs and [`Source::Random`].
    pub seed: u64,
    /// Steps after which a run that has not stopped is a liveness failure.
    pub max_steps: u64,
    /// How long a delay choice holds a message back.
    pub delay: Duration,
    /// Frame limit for the codec round trip.
    pub max_frame: usize,
}

impl Default for StepConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            max_steps: 100_000,
            delay: Duration::from_millis(10),
            max_frame: DEFAULT_MAX_FRAME,
        }
    }
}

/// A run that violated its invariant or did not finish, with the schedule that reproduces it.
#[derive(Debug)]
pub struct StepFailure {
    /// The step at which it failed.
    pub step: u64,
    /// The invariant's message, or the liveness failure.
    pub message: String,
    /// The choices executed up to the failure (replay with `TXLAB_STEP_SCHEDULE`).
    pub schedule: Schedule,
}

impl fmt::Display for StepFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step {}: {}\nreplay: TXLAB_STEP_SCHEDULE='{}'",
            self.step, self.message, self.schedule
        )
    }
}

impl std::error::Error for StepFailure {}

/// What a finished run did.
#[derive(Clone, Debug)]
pub struct StepReport {
    /// Steps taken (choices, clock advances, the initial start).
    pub steps: u64,
    /// Messages delivered (duplicates included).
    pub delivered: u64,
    /// The executed choices (indices reduced).
    pub schedule: Schedule,
    /// The virtual time at the end.
    pub now: Duration,
}

/// A pooled message.
#[derive(Debug)]
struct InFlight {
    from: NodeId,
    to: NodeId,
    frame: Vec<u8>,
}

/// The state the invariant callback sees.
#[derive(Debug)]
pub struct World<N: Node> {
    ids: Arc<[NodeId]>,
    hosts: Vec<Option<Host<N>>>,
    durable: Vec<Durable>,
    incarnation: Vec<u32>,
    pool: VecDeque<InFlight>,
    delayed: Vec<(Duration, u64, InFlight)>,
    now: Duration,
    delayed_seq: u64,
}

impl<N: Node> World<N> {
    /// The cluster's ids, sorted.
    pub fn ids(&self) -> &[NodeId] {
        &self.ids
    }

    /// Node `id`, or `None` while it is crashed (or not a member).
    pub fn node(&self, id: NodeId) -> Option<&N> {
        let i = self.ids.binary_search(&id).ok()?;
        self.hosts[i].as_ref().map(|h| &h.node)
    }

    /// Every running node.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &N)> {
        self.hosts.iter().flatten().map(|h| (h.id, &h.node))
    }

    /// Node `id`'s stable storage.
    pub fn durable(&self, id: NodeId) -> Option<&Durable> {
        Some(&self.durable[self.ids.binary_search(&id).ok()?])
    }

    /// The virtual clock.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Messages in flight (pooled and delayed).
    pub fn in_flight(&self) -> usize {
        self.pool.len() + self.delayed.len()
    }
}

type External<M> = Arc<Mutex<Vec<(NodeId, NodeId, M)>>>;

struct StepRoute<M> {
    ids: Arc<[NodeId]>,
    queue: External<M>,
}

impl<M: Message> Route<M> for StepRoute<M> {
    fn route(&self, from: NodeId, to: NodeId, msg: M) -> Result<(), NetError> {
        if self.ids.binary_search(&to).is_err() {
            return Err(NetError::unknown_node(to, &self.ids));
        }
        self.queue.lock().unwrap().push((from, to, msg));
        Ok(())
    }
}

/// The driver. `F` builds node `id` (at start and at every restart).
pub struct StepDriver<N: Node, F> {
    world: World<N>,
    factory: F,
    config: StepConfig,
    rng: rand_chacha::ChaCha8Rng,
    external: External<N::Msg>,
    executed: Vec<Choice>,
    steps: u64,
    delivered: u64,
    metrics: NetMetrics,
}

impl<N: Node, F> fmt::Debug for StepDriver<N, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepDriver")
            .field("ids", &self.world.ids)
            .field("now", &self.world.now)
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl<N: Node, F: FnMut(NodeId) -> N> StepDriver<N, F> {
    /// A cluster of `ids` (1 to [`crate::MAX_NODES`], distinct); nothing runs until
    /// [`StepDriver::run`].
    pub fn new(ids: &[NodeId], config: StepConfig, factory: F) -> Result<Self, NetError> {
        let ids = sorted_ids(ids)?;
        let n = ids.len();
        Ok(Self {
            world: World {
                hosts: (0..n).map(|_| None).collect(),
                durable: (0..n).map(|_| Durable::new()).collect(),
                incarnation: vec![0; n],
                ids,
                pool: VecDeque::new(),
                delayed: Vec::new(),
                now: Duration::ZERO,
                delayed_seq: 0,
            },
            factory,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(config.seed ^ 0x5EED),
            config,
            external: Arc::default(),
            executed: Vec::new(),
            steps: 0,
            delivered: 0,
            metrics: NetMetrics::default(),
        })
    }

    /// A handle for sending as `from` from outside a handler; its messages join the pool before
    /// the next step.
    pub fn transport(&self, from: NodeId) -> Result<Transport<N::Msg>, NetError> {
        if self.world.ids.binary_search(&from).is_err() {
            return Err(NetError::unknown_node(from, &self.world.ids));
        }
        Ok(Transport::new(
            from,
            Arc::new(StepRoute {
                ids: Arc::clone(&self.world.ids),
                queue: Arc::clone(&self.external),
            }),
        ))
    }

    /// The world (nodes, durable stores, clock).
    pub fn world(&self) -> &World<N> {
        &self.world
    }

    /// Counters so far (sends per link, drops, handler time).
    pub fn metrics(&self) -> NetMetrics {
        let mut m = self.metrics.clone();
        for h in self.world.hosts.iter().flatten() {
            h.report(&mut m);
        }
        m
    }

    /// Runs: starts every node (first call only), applies `source`'s choices, then drains until
    /// `stop` holds or nothing is left. `invariant` runs after every step; its error, or
    /// `max_steps` without stopping, fails the run with the schedule that reproduces it.
    pub fn run(
        &mut self,
        source: Source,
        mut invariant: impl FnMut(&World<N>) -> Result<(), String>,
        stop: impl Fn(&World<N>) -> bool,
    ) -> Result<StepReport, StepFailure> {
        if self.steps == 0 {
            for i in 0..self.world.ids.len() {
                self.start_node(i, false);
            }
            for i in 0..self.world.ids.len() {
                self.learn_peers(i);
            }
            self.check(&mut invariant)?;
        }
        match source {
            Source::Choices(s) => {
                for c in s.0 {
                    self.apply(c);
                    self.check(&mut invariant)?;
                }
            }
            Source::Random {
                steps,
                drop,
                duplicate,
                delay,
                crash,
            } => {
                for _ in 0..steps {
                    let c = self.draw(drop, duplicate, delay, crash);
                    self.apply(c);
                    self.check(&mut invariant)?;
                }
            }
        }
        for i in 0..self.world.ids.len() {
            if self.world.hosts[i].is_none() {
                self.apply(Choice::Restart(i as u16));
                self.check(&mut invariant)?;
            }
        }
        loop {
            if stop(&self.world) {
                break;
            }
            if !self.apply(Choice::Deliver(0)) {
                break;
            }
            self.check(&mut invariant)?;
        }
        Ok(StepReport {
            steps: self.steps,
            delivered: self.delivered,
            schedule: Schedule(self.executed.clone()),
            now: self.world.now,
        })
    }

    fn check(
        &mut self,
        invariant: &mut impl FnMut(&World<N>) -> Result<(), String>,
    ) -> Result<(), StepFailure> {
        self.steps += 1;
        let fail = |s: &Self, message: String| StepFailure {
            step: s.steps,
            message,
            schedule: Schedule(s.executed.clone()),
        };
        if let Err(m) = invariant(&self.world) {
            return Err(fail(self, m));
        }
        if self.steps > self.config.max_steps {
            return Err(fail(
                self,
                format!(
                    "no progress: the run did not finish within max_steps = {}",
                    self.config.max_steps
                ),
            ));
        }
        Ok(())
    }

    fn draw(&mut self, drop: f64, duplicate: f64, delay: f64, crash: f64) -> Choice {
        let n = self.world.ids.len() as u16;
        if self.rng.random_bool(crash.clamp(0.0, 1.0)) {
            let i = self.rng.random_range(0..n);
            return match self.world.hosts[i as usize] {
                Some(_) => Choice::Crash(i),
                None => Choice::Restart(i),
            };
        }
        let i = self.rng.random_range(0..u16::MAX);
        let x: f64 = self.rng.random();
        if x < drop {
            Choice::Drop(i)
        } else if x < drop + duplicate {
            Choice::Duplicate(i)
        } else if x < drop + duplicate + delay {
            Choice::Delay(i)
        } else {
            Choice::Deliver(i)
        }
    }

    /// Applies one choice; returns false when there was nothing to do (quiescent).
    fn apply(&mut self, c: Choice) -> bool {
        self.absorb_external();
        if c.is_message() && self.world.pool.is_empty() {
            // Recorded when it advanced the clock: a replay finds the pool empty at the same
            // choice and advances there too, so the choices after it keep their places.
            let advanced = self.advance();
            if advanced {
                self.executed.push(reduce_to_empty_pool(c));
            }
            return advanced;
        }
        let len = self.world.pool.len().max(1);
        let n = self.world.ids.len();
        let reduced = match c {
            Choice::Deliver(i) => Choice::Deliver((i as usize % len) as u16),
            Choice::Drop(i) => Choice::Drop((i as usize % len) as u16),
            Choice::Duplicate(i) => Choice::Duplicate((i as usize % len) as u16),
            Choice::Delay(i) => Choice::Delay((i as usize % len) as u16),
            Choice::Crash(i) => Choice::Crash((i as usize % n) as u16),
            Choice::Restart(i) => Choice::Restart((i as usize % n) as u16),
        };
        self.executed.push(reduced);
        match reduced {
            Choice::Deliver(i) => {
                let m = self.world.pool.remove(i as usize).expect("index reduced");
                self.deliver(m.from, m.to, &m.frame);
            }
            Choice::Drop(i) => {
                let m = self.world.pool.remove(i as usize).expect("index reduced");
                self.metrics.link(m.from, m.to).dropped += 1;
            }
            Choice::Duplicate(i) => {
                let m = &self.world.pool[i as usize];
                let (from, to, frame) = (m.from, m.to, m.frame.clone());
                self.deliver(from, to, &frame);
            }
            Choice::Delay(i) => {
                let m = self.world.pool.remove(i as usize).expect("index reduced");
                let at = self.world.now + self.config.delay;
                self.world.delayed_seq += 1;
                self.world.delayed.push((at, self.world.delayed_seq, m));
            }
            Choice::Crash(i) => self.crash(i as usize),
            Choice::Restart(i) => {
                if self.world.hosts[i as usize].is_none() {
                    self.start_node(i as usize, true);
                }
            }
        }
        true
    }

    fn absorb_external(&mut self) {
        let queued = std::mem::take(&mut *self.external.lock().unwrap());
        for (from, to, msg) in queued {
            match crate::wire::encode(&msg, self.config.max_frame) {
                Ok(frame) => {
                    let l = self.metrics.link(from, to);
                    l.messages += 1;
                    l.bytes += frame.len() as u64;
                    self.world.pool.push_back(InFlight { from, to, frame });
                }
                Err(_) => self.metrics.frame_too_large += 1,
            }
        }
    }

    /// Advances the clock to the next timer or delayed message; false if there is none.
    fn advance(&mut self) -> bool {
        let next_timer = self
            .world
            .hosts
            .iter()
            .flatten()
            .filter_map(|h| h.timers.next())
            .min();
        let next_delayed = self.world.delayed.iter().map(|d| d.0).min();
        let Some(at) = next_timer.into_iter().chain(next_delayed).min() else {
            return false;
        };
        self.world.now = self.world.now.max(at);
        let now = self.world.now;
        let mut released: Vec<_> = Vec::new();
        self.world.delayed.retain_mut(|d| {
            if d.0 <= now {
                released.push((d.0, d.1, std::mem::take(&mut d.2.frame), d.2.from, d.2.to));
                false
            } else {
                true
            }
        });
        released.sort_by_key(|r| (r.0, r.1));
        for (_, _, frame, from, to) in released {
            self.world.pool.push_back(InFlight { from, to, frame });
        }
        for i in 0..self.world.ids.len() {
            if let Some(h) = self.world.hosts[i].as_mut() {
                h.fire_due(now);
            }
            self.collect(i);
        }
        true
    }

    fn deliver(&mut self, from: NodeId, to: NodeId, frame: &[u8]) {
        let i = self
            .world
            .ids
            .binary_search(&to)
            .expect("pooled to a member");
        let now = self.world.now;
        let limit = self.config.max_frame;
        let Some(h) = self.world.hosts[i].as_mut() else {
            self.metrics.link(from, to).dropped += 1;
            return;
        };
        if h.handle_frame(now, from, frame, limit).is_err() {
            self.metrics.decode_errors += 1;
        }
        self.delivered += 1;
        self.collect(i);
    }

    /// Moves node `i`'s sends into the pool.
    fn collect(&mut self, i: usize) {
        let Some(h) = self.world.hosts[i].as_mut() else {
            return;
        };
        let from = h.id;
        let sends: Vec<_> = h.take_sends().collect();
        for (to, payload) in sends {
            let crate::ctx::Payload::Encoded(frame) = payload else {
                unreachable!("the step driver encodes every send")
            };
            let l = h.link(to);
            l.messages += 1;
            l.bytes += frame.len() as u64;
            self.world.pool.push_back(InFlight { from, to, frame });
        }
    }

    fn crash(&mut self, i: usize) {
        let Some(h) = self.world.hosts[i].take() else {
            return;
        };
        h.report(&mut self.metrics);
        let id = h.id;
        drop(h);
        self.peer_event(id, false);
    }

    fn start_node(&mut self, i: usize, restart: bool) {
        let id = self.world.ids[i];
        if restart {
            self.world.incarnation[i] += 1;
        }
        let node = (self.factory)(id);
        let mut h = Host::new(
            id,
            node,
            Arc::clone(&self.world.ids),
            self.config.seed,
            self.world.incarnation[i],
            self.world.durable[i].clone(),
            Some(self.config.max_frame),
        );
        let now = self.world.now;
        h.handle(now, Event::Start);
        self.world.hosts[i] = Some(h);
        self.collect(i);
        if restart {
            self.peer_event(id, true);
            self.learn_peers(i);
        }
    }

    /// Node `i` learns which peers are up.
    fn learn_peers(&mut self, i: usize) {
        let now = self.world.now;
        for j in 0..self.world.ids.len() {
            let peer = self.world.ids[j];
            if j != i
                && self.world.hosts[j].is_some()
                && let Some(h) = self.world.hosts[i].as_mut()
            {
                h.handle(now, Event::Peer(peer, true));
            }
        }
        self.collect(i);
    }

    /// Tells every other running node that `id` went up or down.
    fn peer_event(&mut self, id: NodeId, up: bool) {
        let now = self.world.now;
        for j in 0..self.world.ids.len() {
            if self.world.ids[j] == id {
                continue;
            }
            if let Some(h) = self.world.hosts[j].as_mut() {
                h.handle(now, Event::Peer(id, up));
            }
            self.collect(j);
        }
    }
}

/// Proptest strategies for choice lists (feature `proptest`).
#[cfg(feature = "proptest")]
pub mod strategy {
    use proptest::prelude::*;

    use super::{Choice, Schedule};

    /// Which faults a generated schedule may contain.
    #[derive(Clone, Copy, Debug)]
    pub struct Faults {
        /// Drop messages.
        pub drop: bool,
        /// Duplicate messages.
        pub duplicate: bool,
        /// Delay messages past timers.
        pub delay: bool,
        /// Crash and restart nodes.
        pub crash: bool,
    }

    impl Faults {
        /// Every fault.
        pub const ALL: Faults = Faults {
            drop: true,
            duplicate: true,
            delay: true,
            crash: true,
        };
        /// Reordering only (every message delivered once).
        pub const NONE: Faults = Faults {
            drop: false,
            duplicate: false,
            delay: false,
            crash: false,
        };
    }

    /// One choice; deliveries dominate, and shrinking turns faults into deliveries.
    pub fn choice(f: Faults) -> impl Strategy<Value = Choice> {
        let i = || 0u16..64;
        let w = |on: bool, weight: u32| if on { weight } else { 0 };
        prop_oneof![
            12 => i().prop_map(Choice::Deliver),
            w(f.drop, 2) => i().prop_map(Choice::Drop),
            w(f.duplicate, 2) => i().prop_map(Choice::Duplicate),
            w(f.delay, 2) => i().prop_map(Choice::Delay),
            w(f.crash, 1) => i().prop_map(Choice::Crash),
            w(f.crash, 1) => i().prop_map(Choice::Restart),
        ]
    }

    /// Up to `max_len` choices.
    pub fn choices(max_len: usize, f: Faults) -> impl Strategy<Value = Schedule> {
        proptest::collection::vec(choice(f), 0..=max_len).prop_map(Schedule)
    }
}
