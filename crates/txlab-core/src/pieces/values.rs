//! [`PieceValues`]: the outputs of pieces, shipped as inputs to later pieces.
//!
//! A small map from `u16` output slots (chosen by the workload, unique within a transaction) to
//! byte strings, stored as one byte buffer plus `(slot, start, len)` entries. Lookups are linear:
//! a transaction has a few dozen slots at most. [`clear`](PieceValues::clear) keeps both
//! buffers, so a reused value allocates nothing once warmed up. Overwriting a slot with a value
//! of another length leaves the old bytes unused until the next `clear`.

use crate::error::Error;

#[derive(Debug, Clone, Copy)]
struct Entry {
    slot: u16,
    start: u32,
    len: u32,
}

/// Outputs of pieces by slot (module docs). Equality compares contents, not insertion order.
/// Serialized as a list of `(slot, bytes)` pairs, so a decoded value is always well-formed.
#[derive(Debug, Clone, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "Vec<(u16, Vec<u8>)>", from = "Vec<(u16, Vec<u8>)>")
)]
pub struct PieceValues {
    entries: Vec<Entry>,
    bytes: Vec<u8>,
}

impl PieceValues {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the map, keeping its buffers.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes.clear();
    }

    /// Number of slots set.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no slot is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets `slot` to `value` (replacing an earlier value).
    pub fn put(&mut self, slot: u16, value: &[u8]) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.slot == slot) {
            if e.len as usize == value.len() {
                let start = e.start as usize;
                self.bytes[start..start + value.len()].copy_from_slice(value);
                return;
            }
            e.start = self.bytes.len() as u32;
            e.len = value.len() as u32;
        } else {
            self.entries.push(Entry {
                slot,
                start: self.bytes.len() as u32,
                len: value.len() as u32,
            });
        }
        self.bytes.extend_from_slice(value);
    }

    /// Sets `slot` to a little-endian `u64`.
    pub fn put_u64(&mut self, slot: u16, value: u64) {
        self.put(slot, &value.to_le_bytes());
    }

    /// The value of `slot`.
    pub fn get(&self, slot: u16) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|e| e.slot == slot)
            .map(|e| &self.bytes[e.start as usize..(e.start + e.len) as usize])
    }

    /// The value of `slot` as a little-endian `u64` (`None` if absent or not 8 bytes).
    pub fn get_u64(&self, slot: u16) -> Option<u64> {
        self.get(slot)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes)
    }

    /// The value of `slot`, or an [`Error::Internal`] naming the slot and the piece that needed
    /// it (a coordinator that dispatched `piece` before its inputs were in).
    pub fn require(&self, slot: u16, piece: &str) -> Result<&[u8], Error> {
        self.get(slot).ok_or_else(|| {
            Error::Internal(format!(
                "piece {piece} was run without its input slot {slot} (slots present: {:?})",
                self.entries.iter().map(|e| e.slot).collect::<Vec<_>>()
            ))
        })
    }

    /// [`require`](Self::require) as a little-endian `u64`.
    pub fn require_u64(&self, slot: u16, piece: &str) -> Result<u64, Error> {
        let bytes = self.require(slot, piece)?;
        <[u8; 8]>::try_from(bytes)
            .map(u64::from_le_bytes)
            .map_err(|_| {
                Error::Internal(format!(
                    "piece {piece}: input slot {slot} holds {} bytes, not a u64",
                    bytes.len()
                ))
            })
    }

    /// Copies every slot of `other` into `self` (replacing slots both have).
    pub fn extend_from(&mut self, other: &PieceValues) {
        for (slot, value) in other.iter() {
            self.put(slot, value);
        }
    }

    /// The slots and their values, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (u16, &[u8])> + '_ {
        self.entries.iter().map(|e| {
            (
                e.slot,
                &self.bytes[e.start as usize..(e.start + e.len) as usize],
            )
        })
    }
}

impl PartialEq for PieceValues {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(s, v)| other.get(s) == Some(v))
    }
}

impl Eq for PieceValues {}

impl From<PieceValues> for Vec<(u16, Vec<u8>)> {
    fn from(v: PieceValues) -> Self {
        v.iter().map(|(s, b)| (s, b.to_vec())).collect()
    }
}

impl From<Vec<(u16, Vec<u8>)>> for PieceValues {
    fn from(pairs: Vec<(u16, Vec<u8>)>) -> Self {
        let mut v = PieceValues::new();
        for (slot, bytes) in &pairs {
            v.put(*slot, bytes);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(all(feature = "serde", not(any(txlab_loom, txlab_shuttle))))]
    #[test]
    fn piece_values_survive_a_serde_round_trip_without_stale_bytes() {
        let mut v = PieceValues::new();
        v.put(2, b"first");
        v.put(2, b"second value");
        v.put_u64(7, u64::MAX);
        let text = serde_json::to_string(&v).unwrap();
        let back: PieceValues = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        assert_eq!(
            back.bytes.len(),
            12 + 8,
            "the replaced value is not shipped"
        );
    }

    #[test]
    fn cleared_piece_values_reuse_their_buffers() {
        let mut v = PieceValues::new();
        for slot in 0..16 {
            v.put(slot, &[slot as u8; 32]);
        }
        let (entries, bytes) = (v.entries.capacity(), v.bytes.capacity());
        v.clear();
        for slot in 0..16 {
            v.put(slot, &[1; 32]);
        }
        assert_eq!((v.entries.capacity(), v.bytes.capacity()), (entries, bytes));
    }
}
