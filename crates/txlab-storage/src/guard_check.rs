//! Checking that a caller's epoch guard belongs to the collector an index reclaims through.
//!
//! The hash index hands unlinked records to [`Guard::defer_unchecked`], and the ordered index's
//! skip list reclaims its nodes through its own `Collector`. Both are built on crossbeam-epoch's
//! process-wide default collector, which is the one [`crossbeam_epoch::pin`] uses, so a guard
//! from `pin()` protects every reference the indexes hand out. A guard pinned on some *other*
//! collector would not hold back reclamation here, so it is rejected with [`Error::Misuse`]
//! (`crossbeam_skiplist` would otherwise panic on it). The unprotected guard
//! (`crossbeam_epoch::unprotected`, itself `unsafe` to obtain) has no collector and is let through:
//! its caller already promised there is no concurrency.

use crossbeam_epoch::Guard;
use txlab_core::Error;

/// Returns [`Error::Misuse`] if `guard` is pinned on a collector other than crossbeam-epoch's
/// default one.
#[inline]
pub(crate) fn check_default_collector(guard: &Guard) -> Result<(), Error> {
    match guard.collector() {
        Some(c) if c != crossbeam_epoch::default_collector() => Err(Error::Misuse(
            "the epoch guard was pinned on a collector other than crossbeam_epoch's default one; \
             pin guards with crossbeam_epoch::pin()",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbeam_epoch::Collector;

    #[test]
    fn default_guards_pass_and_foreign_guards_are_rejected() {
        assert!(check_default_collector(&crossbeam_epoch::pin()).is_ok());
        let other = Collector::new();
        let handle = other.register();
        let foreign = handle.pin();
        let e = check_default_collector(&foreign).unwrap_err();
        assert!(
            matches!(e, Error::Misuse(m) if m.contains("crossbeam_epoch::pin")),
            "{e}"
        );
    }
}
