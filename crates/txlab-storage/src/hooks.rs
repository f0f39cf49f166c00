//! Test-only pause points inside the indexes (the `hooks` feature; never enable it outside tests).
//!
//! [`with_link_pause`] installs, for the calling thread only, a function that
//! [`OrderedIndex::get_or_insert`](crate::OrderedIndex::get_or_insert) calls when it has linked a
//! new key and has not yet bumped the key's phantom stripe. A test parks the thread there (on a
//! channel, not a sleep) while other threads run, to reach the one interleaving where a new key is
//! visible in the index and its stripe still has the version a scan read before the link.
//! Other threads, and this thread outside [`with_link_pause`], are unaffected.

use std::cell::RefCell;

/// A pause: called with the new key's stripe point ([`crate::StripeKey::stripe_point`]).
type Pause = Box<dyn FnMut(u64)>;

thread_local! {
    static LINK_PAUSE: RefCell<Option<Pause>> = const { RefCell::new(None) };
}

/// Runs `f` with `pause` called between every link of a new key by an ordered index on this
/// thread and that link's stripe bump; returns what `f` returns. The pause is removed when `f`
/// returns or panics; calls nested inside `pause` itself do not pause again.
pub fn with_link_pause<T>(pause: impl FnMut(u64) + 'static, f: impl FnOnce() -> T) -> T {
    struct Remove(Option<Pause>);
    impl Drop for Remove {
        fn drop(&mut self) {
            let previous = self.0.take();
            LINK_PAUSE.with(|p| *p.borrow_mut() = previous);
        }
    }
    let previous = LINK_PAUSE.with(|p| p.borrow_mut().replace(Box::new(pause)));
    let _restore = Remove(previous);
    f()
}

/// Called by the ordered index between linking a new key (stripe point `point`) and bumping its
/// stripe: runs this thread's pause, if one is installed.
pub(crate) fn linked(point: u64) {
    let Some(mut pause) = LINK_PAUSE.with(|p| p.borrow_mut().take()) else {
        return;
    };
    pause(point);
    LINK_PAUSE.with(|p| {
        let mut slot = p.borrow_mut();
        if slot.is_none() {
            *slot = Some(pause);
        }
    });
}
