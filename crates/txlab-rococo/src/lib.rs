//! # txlab-rococo: ROCOCO
//!
//! S. Mu, Y. Cui, Y. Zhang, W. Lloyd, J. Li, *Extracting More Concurrency from Distributed
//! Transactions*, OSDI 2014. Transactions are sets of pieces
//! ([`txlab_core::pieces`]); servers track dependencies between pieces in a first round and
//! deterministically reorder deferrable pieces in a second instead of aborting. An offline check
//! of the transaction profiles guarantees a serializable reordering always exists.
//!
//! - [`sc`]: the offline SC-graph checker (§3.1): immediacy propagation, the exact
//!   unreorderable-cycle test and the proposed merges, with text and JSON reports.
//!
//! See `docs/protocols/rococo.md`.

pub mod sc;
