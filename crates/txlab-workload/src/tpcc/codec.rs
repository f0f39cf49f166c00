//! The fixed-size row codec: every TPC-C row is a struct of fixed-size fields packed back to back,
//! little-endian, with no padding and no per-row serde.
//!
//! Each field is a [`FixedValue`](txlab_core::FixedValue) (integers little-endian, CHAR columns
//! `[u8; n]`). [`tpcc_row!`](crate::tpcc::codec) declares a row struct and generates, from its
//! field list,
//!
//! - `SIZE`: the row's byte length (the sum of its fields' sizes; the table's value size);
//! - `FIELDS`: each field's name and size in encoding order (ROCOCO's column groups map byte
//!   spans of a row to groups with it, [`spans`]);
//! - `encode(&self, out)`: writes the row into a `SIZE`-byte slice;
//! - `decode(bytes)`: reads it back, rejecting a slice of the wrong length with an
//!   [`Error::Invariant`] naming the row type and both lengths;
//! - a [`FixedValue`](txlab_core::FixedValue) implementation, so a program may read a row with
//!   `tx.read_as::<DistrictRow>(table, key)`.
//!
//! Invariant: `decode(encode(r)) == r` for every row `r` (tested per table in `schema`).
//! CHAR(n)/VARCHAR(n) columns are `[u8; n]` arrays, NUL-padded on the right (see [`text`]).

use txlab_core::Error;

/// A CHAR(N) value from `s`, truncated to `N` bytes and NUL-padded.
pub fn text<const N: usize>(s: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    let n = s.len().min(N);
    a[..n].copy_from_slice(&s[..n]);
    a
}

/// The meaningful prefix of a NUL-padded CHAR value.
pub fn trimmed(s: &[u8]) -> &[u8] {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    &s[..end]
}

/// The byte spans (`start..end`) of the fields of `fields` (a row's `FIELDS`) named in `names`,
/// or, with `invert`, of all the others.
pub fn spans(fields: &[(&str, usize)], names: &[&str], invert: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    for &(name, size) in fields {
        if names.contains(&name) != invert {
            out.push((pos, pos + size));
        }
        pos += size;
    }
    out
}

/// The error for a value of the wrong length.
pub fn wrong_size(row: &'static str, expected: usize, got: usize) -> Error {
    Error::Invariant(format!(
        "tpcc: a {row} value has {got} bytes, but {row} rows are {expected} bytes"
    ))
}

/// Declares a row struct with its codec (module docs).
macro_rules! tpcc_row {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            $(
                #[doc = concat!("Column `", stringify!($field), "`.")]
                $(#[$fmeta])*
                pub $field: $ty
            ),*
        }

        impl $name {
            /// Encoded size in bytes (the table's value size).
            pub const SIZE: usize = 0 $( + <$ty as txlab_core::FixedValue>::SIZE )*;

            /// `(name, encoded size)` of every field, in encoding order (column groups are
            /// laid out from it).
            pub const FIELDS: &'static [(&'static str, usize)] =
                &[$( (stringify!($field), <$ty as txlab_core::FixedValue>::SIZE) ),*];

            /// Writes the row into `out`, which must be exactly [`Self::SIZE`] bytes.
            pub fn encode(&self, out: &mut [u8]) {
                debug_assert_eq!(out.len(), Self::SIZE);
                let mut pos = 0usize;
                $(
                    let end = pos + <$ty as txlab_core::FixedValue>::SIZE;
                    out[pos..end].copy_from_slice(
                        txlab_core::FixedValue::to_bytes(&self.$field).as_ref(),
                    );
                    pos = end;
                )*
                let _ = pos;
            }

            /// Reads a row; a slice of the wrong length is an `Error::Invariant`.
            pub fn decode(bytes: &[u8]) -> Result<Self, txlab_core::Error> {
                if bytes.len() != Self::SIZE {
                    return Err($crate::tpcc::codec::wrong_size(
                        stringify!($name),
                        Self::SIZE,
                        bytes.len(),
                    ));
                }
                let mut pos = 0usize;
                $(
                    let end = pos + <$ty as txlab_core::FixedValue>::SIZE;
                    let $field = <$ty as txlab_core::FixedValue>::from_bytes(&bytes[pos..end])
                        .expect("the slice is the field's size");
                    pos = end;
                )*
                let _ = pos;
                Ok(Self { $($field),* })
            }
        }

        impl txlab_core::FixedValue for $name {
            const SIZE: usize = <$name>::SIZE;
            type Bytes = [u8; <$name>::SIZE];

            fn to_bytes(&self) -> Self::Bytes {
                let mut out = [0u8; <$name>::SIZE];
                self.encode(&mut out);
                out
            }

            fn from_bytes(bytes: &[u8]) -> Option<Self> {
                <$name>::decode(bytes).ok()
            }
        }
    };
}
pub(crate) use tpcc_row;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_pads_truncates_and_trims() {
        let a: [u8; 5] = text(b"ab");
        assert_eq!(&a, b"ab\0\0\0");
        assert_eq!(trimmed(&a), b"ab");
        let b: [u8; 2] = text(b"abcd");
        assert_eq!(&b, b"ab");
        assert_eq!(trimmed(&b), b"ab");
    }

    #[test]
    fn field_spans_add_up_to_the_row() {
        use crate::tpcc::schema::DistrictRow;
        let ytd = spans(DistrictRow::FIELDS, &["d_ytd"], false);
        let rest = spans(DistrictRow::FIELDS, &["d_ytd"], true);
        let size = |s: &[(usize, usize)]| s.iter().map(|(a, b)| b - a).sum::<usize>();
        assert_eq!(ytd.len(), 1);
        assert_eq!(size(&ytd), 8);
        assert_eq!(size(&ytd) + size(&rest), DistrictRow::SIZE);
        let mut row = DistrictRow::decode(&[0u8; DistrictRow::SIZE]).unwrap();
        row.d_ytd = -1;
        let mut buf = [0u8; DistrictRow::SIZE];
        row.encode(&mut buf);
        let (s, e) = ytd[0];
        assert!(
            buf[s..e].iter().all(|&b| b == 0xff),
            "the span is where d_ytd is encoded"
        );
        assert_eq!(buf.iter().filter(|&&b| b != 0).count(), 8);
        use txlab_core::FixedValue;
        assert_eq!(row.to_bytes(), buf, "the FixedValue encoding is the row's");
        assert_eq!(DistrictRow::from_bytes(&buf), Some(row));
        assert_eq!(DistrictRow::from_bytes(&buf[1..]), None);
    }
}
