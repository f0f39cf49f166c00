//! The wire codec: one protocol message per frame, bincode-encoded (fixed-width integers, little
//! endian, no trailing bytes), with a size limit enforced when encoding and when decoding.
//!
//! The decoder never allocates beyond the limit (bincode's byte limit bounds every claimed
//! length) and never panics on arbitrary input (fuzz target `net_frame`).

use bincode::Options;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de::DeserializeOwned};

use crate::error::NetError;

/// Bumped whenever the framing or the handshake changes; peers with another version refuse to
/// talk (the `hello` handshake names both).
pub const WIRE_VERSION: u32 = 1;

/// The default frame limit: 16 MiB.
pub const DEFAULT_MAX_FRAME: usize = 16 << 20;

/// One encoded protocol message.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Frame(pub Vec<u8>);

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Frame({} bytes)", self.0.len())
    }
}

impl Serialize for Frame {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_bytes::serialize(&self.0, s)
    }
}

impl<'de> Deserialize<'de> for Frame {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_bytes::deserialize(d).map(Frame)
    }
}

fn options(limit: usize) -> impl Options {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_little_endian()
        .reject_trailing_bytes()
        .with_limit(limit as u64)
}

/// Encodes `msg`; a result longer than `max` bytes is refused.
pub fn encode<T: Serialize + ?Sized>(msg: &T, max: usize) -> Result<Vec<u8>, NetError> {
    let bytes = options(usize::MAX)
        .serialize(msg)
        .map_err(|e| NetError::Encode(e.to_string()))?;
    if bytes.len() > max {
        return Err(NetError::FrameTooLarge {
            size: bytes.len(),
            max,
        });
    }
    Ok(bytes)
}

/// Decodes one message; a frame longer than `max` bytes is refused before decoding.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], max: usize) -> Result<T, NetError> {
    if bytes.len() > max {
        return Err(NetError::FrameTooLarge {
            size: bytes.len(),
            max,
        });
    }
    options(max)
        .deserialize(bytes)
        .map_err(|e| NetError::Decode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Msg {
        A(u64),
        B { s: String, v: Vec<u32> },
    }

    #[test]
    fn round_trips_and_refuses_oversize_frames_on_both_sides() {
        let m = Msg::B {
            s: "hi".into(),
            v: vec![1, 2, 3],
        };
        let b = encode(&m, 1024).unwrap();
        assert_eq!(decode::<Msg>(&b, 1024).unwrap(), m);
        let err = encode(&m, 8).unwrap_err();
        assert!(
            matches!(err, NetError::FrameTooLarge { size, max: 8 } if size == b.len()),
            "{err}"
        );
        let err = decode::<Msg>(&b, 8).unwrap_err();
        assert!(
            matches!(err, NetError::FrameTooLarge { max: 8, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("limit of 8 bytes"));
    }

    #[test]
    fn malformed_bytes_are_decode_errors() {
        assert!(matches!(
            decode::<Msg>(&[9, 0, 0, 0], 64),
            Err(NetError::Decode(_))
        ));
        let mut b = encode(&Msg::A(5), 64).unwrap();
        b.push(0);
        assert!(matches!(decode::<Msg>(&b, 64), Err(NetError::Decode(_))));
        // A claimed length far beyond the limit fails without allocating it.
        let mut huge = vec![1, 0, 0, 0];
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode::<Msg>(&huge, 1 << 20).is_err());
    }
}
