//! The one tarpc service every node serves, and the handshake it starts with.

use serde::{Deserialize, Serialize};

use crate::error::NetError;
use crate::node::NodeId;
use crate::wire::Frame;

/// What a node says about itself when it connects. Every field but `node` must match the
/// listener's own, or the connection is refused with both values named.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The connecting node.
    pub node: NodeId,
    /// The protocol run by the cluster (`protocol` in `cluster.toml`).
    pub protocol: String,
    /// [`crate::wire::WIRE_VERSION`] of the build.
    pub wire_version: u32,
    /// The git revision the binary was built from.
    pub git_revision: String,
    /// Digest of the cluster file (the same file on every host).
    pub cluster_digest: String,
}

/// A refused handshake, as it crosses the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandshakeError {
    /// The field that differs.
    pub field: String,
    /// The refusing side's value.
    pub ours: String,
    /// The connecting side's value.
    pub theirs: String,
}

impl From<HandshakeError> for NetError {
    fn from(e: HandshakeError) -> Self {
        NetError::Handshake {
            field: e.field,
            ours: e.ours,
            theirs: e.theirs,
        }
    }
}

impl Hello {
    /// The first field in which `theirs` differs from `self` (node ids excepted).
    pub fn mismatch(&self, theirs: &Hello) -> Option<HandshakeError> {
        let fields = [
            ("protocol", &self.protocol, &theirs.protocol),
            ("git revision", &self.git_revision, &theirs.git_revision),
            (
                "cluster digest",
                &self.cluster_digest,
                &theirs.cluster_digest,
            ),
        ];
        if self.wire_version != theirs.wire_version {
            return Some(HandshakeError {
                field: "wire version".into(),
                ours: self.wire_version.to_string(),
                theirs: theirs.wire_version.to_string(),
            });
        }
        fields
            .into_iter()
            .find(|(_, a, b)| a != b)
            .map(|(f, a, b)| HandshakeError {
                field: f.into(),
                ours: a.clone(),
                theirs: b.clone(),
            })
    }
}

/// The service: a handshake, then batches of encoded protocol messages.
#[tarpc::service]
pub trait Peer {
    /// Offers the caller's [`Hello`]; the answer is the listener's, or why it refuses.
    async fn hello(h: Hello) -> Result<Hello, HandshakeError>;
    /// Delivers `frames` (each one encoded protocol message) from node `from`.
    async fn deliver(from: NodeId, frames: Vec<Frame>);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_but_the_node_is_compared_and_both_values_named() {
        let ours = Hello {
            node: NodeId(0),
            protocol: "p".into(),
            wire_version: 1,
            git_revision: "r".into(),
            cluster_digest: "d".into(),
        };
        let mut theirs = ours.clone();
        theirs.node = NodeId(5);
        assert_eq!(ours.mismatch(&theirs), None);
        theirs.wire_version = 2;
        let e: NetError = ours.mismatch(&theirs).unwrap().into();
        assert_eq!(
            e.to_string(),
            "handshake refused: wire version differs (ours \"1\", theirs \"2\")"
        );
    }
}
