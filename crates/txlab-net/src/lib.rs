//! txlab's distribution layer: protocol logic as sans-IO state machines ([`Node`]) behind one
//! small API ([`Ctx`], [`Transport`]), run unchanged by four drivers.
//!
//! | driver | clock | where | use it for |
//! | --- | --- | --- | --- |
//! | [`inproc`] | real | one process, one OS thread per node (or several nodes per thread) | benchmarks, threaded tests, LAN emulation ([`inproc::LinkModel`]) |
//! | [`step`] | virtual | one thread, one event per step | proptest: drops, duplicates, delays, crashes; shrinkable schedules |
//! | `sim` (feature `sim`) | virtual | turmoil hosts, one per node | partitions, crash/bounce, seeded latency over the real tarpc stack |
//! | `tcp` (feature `tcp`) | real | tarpc over tokio TCP | multi-process and multi-host runs |
//!
//! # The node rule
//!
//! A [`Node`] is a state machine. It reacts to four events (start, message, timer, peer up/down)
//! and acts only through its [`Ctx`]: [`Ctx::send`], [`Ctx::set_timer`]/[`Ctx::cancel_timer`],
//! [`Ctx::now`] (the driver's clock: real in `inproc`/`tcp`, virtual in `step`/`sim`),
//! [`Ctx::rng`] (seeded by the driver) and [`Ctx::durable`] (stable storage that survives a
//! crash). A node never spawns threads, reads a clock, sleeps or does I/O itself: every one of
//! those would make a `step` or `sim` run irreproducible. Components that are not pure state
//! machines (worker threads that execute transactions) send through a cloned [`Transport`] handle
//! instead, and receive through whatever channel their node hands them.
//!
//! # Delivery contract
//!
//! Every driver gives the same guarantees, and no more:
//!
//! - **At most once.** A message sent is delivered zero or one times. The `step` driver's
//!   duplicate choice models a retransmitting protocol's own duplicates (a node that sends twice),
//!   so handlers must still be idempotent.
//! - **No ordering**, neither between links nor within one link: two messages from `a` to `b` may
//!   arrive in either order (the `step` driver reorders on purpose; `tcp` serves requests
//!   concurrently).
//! - **Peer events.** [`Node::on_peer`]`(p, true)` when the link to `p` is (re-)established
//!   (`inproc`/`step`: right after [`Node::on_start`]; `tcp`/`sim`: after the handshake),
//!   `(p, false)` when it is lost (a crash in `step`/`sim`, a broken connection in `tcp`/`sim`).
//!   Messages in flight when a link breaks are lost; nothing is retransmitted across reconnects.
//!
//! Protocols retransmit and deduplicate what they need (sequence numbers, idempotent handlers on
//! transaction ids). `docs/distribution.md` describes the drivers, the cluster file and how to
//! replay a failing schedule.
//!
//! # Crate layout
//!
//! - [`node`]: [`NodeId`], [`TimerId`], [`Message`], [`Node`];
//! - [`ctx`]: [`Ctx`], the node's only window on the world;
//! - [`transport`]: [`Transport`], the cloneable send handle for threads outside a node;
//! - [`durable`]: [`Durable`], simulated stable storage;
//! - [`wire`]: the frame codec (bincode with a size limit) every encoding driver uses;
//! - [`metrics`]: per-link and per-node counters as `(name, value)` pairs;
//! - [`counter`]: the example protocol (a replicated counter) and its FIFO-assuming mutant;
//! - [`step`], [`inproc`], `tcp`, `sim`: the drivers; `cluster`: cluster files and the local
//!   launcher (feature `tcp`).

#![warn(missing_docs)]

#[cfg(feature = "tcp")]
pub mod cluster;
pub mod counter;
pub mod ctx;
pub mod durable;
pub mod error;
mod host;
pub mod inproc;
pub mod metrics;
pub mod node;
#[cfg(feature = "sim")]
pub mod sim;
pub mod step;
#[cfg(feature = "tcp")]
pub mod tcp;
mod timers;
pub mod transport;
pub mod wire;

pub use ctx::{Ctx, NodeRng};
pub use durable::Durable;
pub use error::NetError;
pub use node::{MAX_NODES, Message, Node, NodeId, TimerId};
pub use transport::Transport;
