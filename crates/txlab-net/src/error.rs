//! The distribution layer's error type.

use crate::node::NodeId;

/// Everything that can go wrong in the distribution layer. Each message names the offending
/// value and what is accepted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// A send named a node that is not in the cluster.
    #[error("unknown node {node}: this cluster has nodes {known}")]
    UnknownNode {
        /// The id that was named.
        node: NodeId,
        /// The cluster's ids, listed.
        known: String,
    },
    /// The destination is down and the driver cannot take the message.
    #[error("peer {node} is down")]
    PeerDown {
        /// The unreachable node.
        node: NodeId,
    },
    /// An encoded message exceeds the frame limit (refused by sender and receiver).
    #[error("frame of {size} bytes exceeds the limit of {max} bytes")]
    FrameTooLarge {
        /// The frame's size in bytes.
        size: usize,
        /// The configured maximum.
        max: usize,
    },
    /// A message could not be serialized.
    #[error("cannot encode message: {0}")]
    Encode(String),
    /// Bytes that are not a valid frame of the protocol's message type.
    #[error("cannot decode frame: {0}")]
    Decode(String),
    /// A peer was built or configured differently; both values are named.
    #[error("handshake refused: {field} differs (ours {ours:?}, theirs {theirs:?})")]
    Handshake {
        /// Which field differs (protocol, wire version, git revision, cluster digest, node id).
        field: String,
        /// Our value.
        ours: String,
        /// The peer's value.
        theirs: String,
    },
    /// An operating-system I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done (e.g. "bind 127.0.0.1:7000").
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A configuration value out of range (cluster file, driver or simulation config).
    #[error("{0}")]
    Config(String),
    /// The driver has stopped, or a node thread panicked.
    #[error("driver stopped: {0}")]
    Stopped(String),
    /// A wait ran past its deadline.
    #[error("timed out after {0:?}: {1}")]
    Timeout(std::time::Duration, String),
}

impl NetError {
    /// An [`NetError::Io`] with its context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }

    /// An [`NetError::UnknownNode`] listing the known ids.
    pub fn unknown_node(node: NodeId, known: &[NodeId]) -> Self {
        let known = known
            .iter()
            .map(|k| k.0.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        Self::UnknownNode {
            node,
            known: format!("[{known}]"),
        }
    }
}
