//! Typed values: reading and writing a table's fixed-size values as Rust types.
//!
//! Storage holds every value as `value_size` bytes ([`TableSpec`](crate::TableSpec)); nothing
//! here changes that layout. [`FixedValue`] is a type's encoding to and from exactly
//! [`FixedValue::SIZE`] bytes, and [`TypedOps`] adds `read_as`/`write_as`/... to every
//! [`TxOps`], so a program reads `tx.read_as::<i64>(accounts, key)?` instead of slicing and
//! calling `from_le_bytes` itself. The encoding is what such hand-written code does:
//!
//! - integers and floats: little-endian, `size_of::<T>()` bytes;
//! - `[u8; N]`: the bytes themselves.
//!
//! Invariant: `T::from_bytes(t.to_bytes().as_ref()) == Some(t)` and
//! `t.to_bytes().as_ref().len() == T::SIZE`. Encoding writes into an array on the stack
//! ([`FixedValue::Bytes`]) and decoding copies `SIZE` bytes out of the transaction's private copy:
//! no allocation and no work beyond the byte copy and one length check.
//!
//! A value of the wrong size is an error, not a panic: reading a `T` from a table whose values are
//! not `T::SIZE` bytes is [`Error::TypeSize`]; writing one is the engine's [`Error::ValueSize`].

use crate::error::{Error, TxResult};
use crate::table::TableId;
use crate::txn::TxOps;

/// A type stored as exactly [`SIZE`](Self::SIZE) bytes (module docs).
pub trait FixedValue: Sized {
    /// The encoded size in bytes (the value size of a table holding this type).
    const SIZE: usize;

    /// The encoded bytes: an array of [`SIZE`](Self::SIZE) bytes.
    type Bytes: AsRef<[u8]>;

    /// Encodes the value.
    fn to_bytes(&self) -> Self::Bytes;

    /// Decodes a value; `None` if `bytes` is not [`SIZE`](Self::SIZE) bytes long.
    fn from_bytes(bytes: &[u8]) -> Option<Self>;
}

macro_rules! little_endian {
    ($($t:ty),*) => {$(
        impl FixedValue for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            type Bytes = [u8; std::mem::size_of::<$t>()];

            #[inline]
            fn to_bytes(&self) -> Self::Bytes {
                self.to_le_bytes()
            }

            #[inline]
            fn from_bytes(bytes: &[u8]) -> Option<Self> {
                bytes.try_into().ok().map(<$t>::from_le_bytes)
            }
        }
    )*};
}
little_endian!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128, f32, f64);

impl<const N: usize> FixedValue for [u8; N] {
    const SIZE: usize = N;
    type Bytes = [u8; N];

    #[inline]
    fn to_bytes(&self) -> Self::Bytes {
        *self
    }

    #[inline]
    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok()
    }
}

/// The error for a stored value that is not `T::SIZE` bytes.
fn type_size<T: FixedValue>(table: TableId, value_size: usize) -> Error {
    Error::TypeSize {
        table: table.0,
        type_name: std::any::type_name::<T>(),
        type_size: T::SIZE,
        value_size,
    }
}

fn decode<T: FixedValue>(table: TableId, bytes: Option<&[u8]>) -> TxResult<Option<T>> {
    bytes
        .map(|b| T::from_bytes(b).ok_or_else(|| type_size::<T>(table, b.len()).into()))
        .transpose()
}

/// [`TxOps`] with typed values: every method is the [`TxOps`] method of the same name without
/// `_as`, encoding and decoding with [`FixedValue`]. Implemented for every `TxOps`, including
/// `dyn TxOps`.
pub trait TypedOps: TxOps {
    /// [`TxOps::read`], decoded. A value that is not `T::SIZE` bytes is [`Error::TypeSize`].
    fn read_as<T: FixedValue>(&mut self, table: TableId, key: u64) -> TxResult<Option<T>> {
        let bytes = self.read(table, key)?;
        decode(table, bytes)
    }

    /// [`TxOps::read_for_update`], decoded.
    fn read_for_update_as<T: FixedValue>(
        &mut self,
        table: TableId,
        key: u64,
    ) -> TxResult<Option<T>> {
        let bytes = self.read_for_update(table, key)?;
        decode(table, bytes)
    }

    /// [`TxOps::write`] of an encoded value.
    fn write_as<T: FixedValue>(&mut self, table: TableId, key: u64, value: &T) -> TxResult<()> {
        self.write(table, key, value.to_bytes().as_ref())
    }

    /// [`TxOps::insert`] of an encoded value.
    fn insert_as<T: FixedValue>(&mut self, table: TableId, key: u64, value: &T) -> TxResult<bool> {
        self.insert(table, key, value.to_bytes().as_ref())
    }

    /// [`TxOps::update`] through `f` on the decoded value: `Ok(false)` if the key is absent.
    /// A stored value that is not `T::SIZE` bytes is left as it was and the call returns
    /// [`Error::TypeSize`].
    fn update_as<T: FixedValue>(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(T) -> T,
    ) -> TxResult<bool> {
        let mut f = Some(f);
        let mut wrong_size = None;
        let present = self.update(table, key, &mut |bytes| match T::from_bytes(bytes) {
            Some(value) => {
                if let Some(f) = f.take() {
                    bytes.copy_from_slice(f(value).to_bytes().as_ref());
                }
            }
            None => wrong_size = Some(bytes.len()),
        })?;
        match wrong_size {
            Some(size) => Err(type_size::<T>(table, size).into()),
            None => Ok(present),
        }
    }
}

impl<X: TxOps + ?Sized> TypedOps for X {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TxError;
    use crate::test_support::Map;
    use proptest::prelude::*;

    fn round_trips<T: FixedValue + PartialEq + std::fmt::Debug>(v: T) {
        let bytes = v.to_bytes();
        assert_eq!(bytes.as_ref().len(), T::SIZE);
        assert_eq!(T::from_bytes(bytes.as_ref()), Some(v));
    }

    proptest! {
        #[test]
        fn integers_and_arrays_round_trip(a: i64, b: u32, c: u128, d: i8, e: [u8; 5], f: f64) {
            round_trips(a);
            round_trips(b);
            round_trips(c);
            round_trips(d);
            round_trips(e);
            prop_assert_eq!(f64::from_bytes(&f.to_bytes()).map(f64::to_bits), Some(f.to_bits()));
        }
    }

    #[test]
    fn the_encoding_is_little_endian_and_sized_by_the_type() {
        assert_eq!(0x0102_0304u32.to_bytes(), [4, 3, 2, 1]);
        assert_eq!((-1i16).to_bytes(), [0xff, 0xff]);
        assert_eq!(<[u8; 3]>::SIZE, 3);
        assert_eq!(i64::from_bytes(&[0; 7]), None);
        assert_eq!(<[u8; 2]>::from_bytes(&[1, 2, 3]), None);
    }

    #[test]
    fn typed_ops_read_write_insert_and_update_through_any_tx_ops() {
        let t = TableId(0);
        let mut db = Map::default();
        let tx: &mut dyn TxOps = &mut db;
        assert_eq!(tx.read_as::<i64>(t, 1).unwrap(), None);
        assert!(tx.insert_as(t, 1, &-7i64).unwrap());
        assert!(!tx.insert_as(t, 1, &9i64).unwrap(), "already present");
        assert_eq!(tx.read_as::<i64>(t, 1).unwrap(), Some(-7));
        tx.write_as(t, 2, &[1u8, 2, 3]).unwrap();
        assert_eq!(
            tx.read_for_update_as::<[u8; 3]>(t, 2).unwrap(),
            Some([1, 2, 3])
        );
        assert!(tx.update_as(t, 1, |v: i64| v * 3).unwrap());
        assert_eq!(tx.read_as::<i64>(t, 1).unwrap(), Some(-21));
        assert!(!tx.update_as(t, 9, |v: i64| v + 1).unwrap(), "absent");
        assert_eq!(db.0[&(0, 1)], (-21i64).to_le_bytes());
    }

    #[test]
    fn a_type_of_the_wrong_size_is_an_error_naming_both_sizes() {
        let t = TableId(3);
        let mut db = Map::default();
        db.write_as(t, 1, &5u64).unwrap();
        let expected = Error::TypeSize {
            table: 3,
            type_name: "u32",
            type_size: 4,
            value_size: 8,
        };
        assert_eq!(
            db.read_as::<u32>(t, 1),
            Err(TxError::Error(expected.clone()))
        );
        assert_eq!(
            db.update_as(t, 1, |v: u32| v + 1),
            Err(TxError::Error(expected.clone()))
        );
        assert_eq!(db.read_as::<u64>(t, 1).unwrap(), Some(5), "left as it was");
        assert_eq!(
            expected.to_string(),
            "table 3 holds 8-byte values, but type u32 is 4 bytes"
        );
    }
}
