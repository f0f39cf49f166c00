//! [`StripeKey`]: how an ordered index's key is placed on the `u64` line of phantom stripes.
//!
//! [`PhantomStripes`](txlab_core::protocol::storage::PhantomStripes) group `u64` keys into buckets. An
//! ordered index over another key type needs a *monotone* map onto `u64`:
//! `a <= b` implies `a.stripe_point() <= b.stripe_point()`. Then every key in `lo..=hi` maps into
//! `lo.stripe_point()..=hi.stripe_point()`, so the stripes a scanner reads for that `u64` range
//! cover every key that could appear in or vanish from its key range. Distinct keys sharing a
//! point (e.g. byte strings with a common 8-byte prefix) only cause false conflicts, never missed
//! phantoms.

/// A key type with a monotone projection onto `u64` (see the module docs).
pub trait StripeKey {
    /// The point of this key on the stripe line; must be monotone in the key's `Ord`.
    fn stripe_point(&self) -> u64;
}

impl StripeKey for u64 {
    #[inline]
    fn stripe_point(&self) -> u64 {
        *self
    }
}

impl StripeKey for u32 {
    #[inline]
    fn stripe_point(&self) -> u64 {
        u64::from(*self)
    }
}

/// Byte strings map to their first 8 bytes read big-endian, zero-padded: lexicographic order on
/// bytes agrees with numeric order on that prefix, and a shorter string (a prefix of a longer
/// one, hence smaller) pads with zeros, so the projection is monotone.
impl StripeKey for [u8] {
    #[inline]
    fn stripe_point(&self) -> u64 {
        let mut prefix = [0u8; 8];
        let n = self.len().min(8);
        prefix[..n].copy_from_slice(&self[..n]);
        u64::from_be_bytes(prefix)
    }
}

impl StripeKey for Box<[u8]> {
    #[inline]
    fn stripe_point(&self) -> u64 {
        (**self).stripe_point()
    }
}

impl StripeKey for Vec<u8> {
    #[inline]
    fn stripe_point(&self) -> u64 {
        self.as_slice().stripe_point()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn byte_string_points_are_monotone(
            a in proptest::collection::vec(any::<u8>(), 0..12),
            b in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(lo.stripe_point() <= hi.stripe_point(), "{lo:?} {hi:?}");
        }
    }

    #[test]
    fn integer_points_are_the_integers() {
        assert_eq!(7u64.stripe_point(), 7);
        assert_eq!(u32::MAX.stripe_point(), u64::from(u32::MAX));
        assert_eq!(b"\x01".as_slice().stripe_point(), 1 << 56);
    }
}
