//! [`Progress`]: what a node tells a measuring driver about its clients' transactions as they
//! go ([`PartitionNode::report_to`](super::PartitionNode::report_to)), so a harness on another
//! thread can time and count them without sharing the node.
//!
//! A transaction's reports, in the order a receiver of one channel sees them (each follows from
//! the one before through the node's own thread or a message between nodes, so a single
//! channel delivers them in order):
//!
//! ```text
//! Submitted { seq }                   its sequencer sealed it (the node its clients are on)
//! Ran { seq, Restarted }              it touched a partition outside its participants
//! Resequenced { from: seq, to }       its leader sealed it again, at `to`
//! Ran { seq: to, Committed | .. }     it ran to its end (at its partition, or at its leader)
//! ```
//!
//! Every time it seals a batch a node also reports its [`NodeStats`] so far, so a driver can
//! sample them at the ends of a measured interval (to within one epoch).
//!
//! Nothing is reported unless a driver asked for it; a failed send (the receiver gone) is
//! ignored.

/// How one attempt of a transaction ended where it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    /// It committed.
    Committed,
    /// Its program rolled it back.
    UserAborted,
    /// It ended with a real error.
    Failed,
    /// It will run again under a later `Seq` ([`Progress::Resequenced`]).
    Restarted,
}

use super::node::NodeStats;

/// One report (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Node `node`'s counters so far.
    Stats {
        /// The node.
        node: u16,
        /// Its counters.
        stats: NodeStats,
    },
    /// A client's new transaction was sealed at `seq` (`Seq::raw`).
    Submitted {
        /// Its position.
        seq: u64,
    },
    /// The restarted transaction at `from` was sealed again at `to`.
    Resequenced {
        /// The restarted attempt.
        from: u64,
        /// The new one.
        to: u64,
    },
    /// The attempt at `seq`, a transaction of type `kind`, ended as `ran`.
    Ran {
        /// Its position.
        seq: u64,
        /// `Program::kind`.
        kind: &'static str,
        /// How it ended.
        ran: Ran,
    },
}
