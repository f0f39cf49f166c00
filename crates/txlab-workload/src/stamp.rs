//! Writer stamps: values that tell apart the writes of different transactions.
//!
//! A history checker identifies versions by protocol-assigned tags, but values that differ between
//! writers still make histories readable and catch engines that install the wrong buffer. Every
//! value a workload writes therefore starts with a stamp of the writing worker's `thread` and a
//! per-worker transaction sequence number `seq`:
//!
//! - values of 16 bytes or more: bytes `0..8` hold `thread` and bytes `8..16` hold `seq`, both
//!   little-endian (unique for every `(thread, seq)`);
//! - shorter values: the little-endian word `thread << 48 | seq mod 2^48`, truncated to the value's
//!   length (unique while `thread < 2^16`, `seq < 2^48` and the value has 8 bytes; values under 8
//!   bytes keep only the low bytes and may repeat).
//!
//! Loaded (initial) values use `thread = u64::MAX >> 16` so they differ from every worker's writes.

/// The `thread` used to stamp initially loaded values.
pub const LOAD_THREAD: u64 = u64::MAX >> 16;

/// Writes the stamp of `(thread, seq)` at the start of `value` (see the module docs); the rest of
/// `value` is left as it is.
pub fn write_stamp(value: &mut [u8], thread: u64, seq: u64) {
    if value.len() >= 16 {
        value[..8].copy_from_slice(&thread.to_le_bytes());
        value[8..16].copy_from_slice(&seq.to_le_bytes());
    } else {
        let word = (thread << 48) | (seq & ((1 << 48) - 1));
        let bytes = word.to_le_bytes();
        let n = value.len().min(8);
        value[..n].copy_from_slice(&bytes[..n]);
    }
}

/// Reads back `(thread, seq)` from a value of at least 8 bytes; `None` for shorter values.
pub fn read_stamp(value: &[u8]) -> Option<(u64, u64)> {
    if value.len() >= 16 {
        let thread = u64::from_le_bytes(value[..8].try_into().ok()?);
        let seq = u64::from_le_bytes(value[8..16].try_into().ok()?);
        Some((thread, seq))
    } else if value.len() >= 8 {
        let word = u64::from_le_bytes(value[..8].try_into().ok()?);
        Some((word >> 48, word & ((1 << 48) - 1)))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_round_trip_for_long_and_word_sized_values() {
        for len in [8usize, 9, 15, 16, 100] {
            let mut v = vec![0xEE; len];
            write_stamp(&mut v, 3, 41);
            assert_eq!(read_stamp(&v), Some((3, 41)), "len {len}");
            let mut w = vec![0xEE; len];
            write_stamp(&mut w, 4, 41);
            assert_ne!(
                v, w,
                "different threads must give different values (len {len})"
            );
        }
        let mut long = vec![0xEE; 20];
        write_stamp(&mut long, 1, 2);
        assert_eq!(
            &long[16..],
            &[0xEE; 4],
            "bytes after the stamp are untouched"
        );
        let mut short = [0u8; 3];
        write_stamp(&mut short, 1, 0x0002_0304);
        assert_eq!(short, [0x04, 0x03, 0x02]);
        assert_eq!(read_stamp(&short), None);
    }
}
