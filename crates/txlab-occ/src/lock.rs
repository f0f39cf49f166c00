//! Locking a write set whose records carry a lock bit in their version word (Silo's Phase 1,
//! TicToc's Step 1): in record-address order, so that two committers never wait for each other
//! in a cycle; each lock replaces an unlocked word, which the write entry's scratch keeps (the
//! version the write overwrites, and the word to restore on abort).
//!
//! A record unlinked from its index after the transaction located it (`txlab_core::protocol::retire_queue`)
//! is never written: its word says so ([`LockWord::is_retired`]), the locks taken so far are
//! released and the transaction aborts with `ConflictCause::RecordRetired` (a retry finds the
//! key's fresh record).
//!
//! Orderings: the lock is a `SeqCst` compare-and-swap (each record's own `try_lock`): the loads of
//! validation that follow cannot move before it, and with `SeqCst` validation loads two
//! committers that each validate what the other locks cannot both miss the other's lock (the
//! argument is in each protocol's commit docs); releasing without installing is a `Release` store
//! of the replaced word.

use crate::protocol::Protocol;
use crate::sets::{Sets, WriteEntry};
use txlab_core::{Conflict, ConflictCause};

/// A record whose version word has a lock bit (Silo's TID word, TicToc's timestamp word).
pub trait LockWord {
    /// Tries to set the lock bit; the unlocked word it replaced (`SeqCst`: commit protocols
    /// order their validation loads after it without a fence, `txlab_silo`'s commit docs).
    fn try_lock(&self) -> Option<u64>;
    /// Releases the lock, restoring `word`, the word [`LockWord::try_lock`] replaced
    /// (`Release`).
    fn unlock(&self, word: u64);
    /// The current word without the lock bit (`Acquire`; only the test-only mutant that skips
    /// locking uses it).
    fn unlocked_word(&self) -> u64;
    /// Whether `word`, a word of this record, says it was unlinked from its index.
    fn retired(word: u64) -> bool;
    /// Whether the record is being, or was, unlinked from its index (`Acquire`).
    fn is_retired(&self) -> bool;
}

/// Locks `st`'s write set (module docs); `lock == false` is the test-only mutant that only loads
/// the words. On `Err` no lock is held.
pub fn lock_writes<P>(st: &mut Sets<P>, lock: bool) -> Result<(), Conflict>
where
    P: Protocol<Scratch = u64>,
    P::Record: LockWord,
{
    st.writes.sort_unstable_by_key(|w| w.rec as usize);
    for i in 0..st.writes.len() {
        // SAFETY: write-set pointers were obtained under the committing transaction's guard,
        // pinned for the whole commit (`crate::sets`).
        let r = unsafe { &*st.writes[i].rec };
        let locked = if lock {
            lock_one(r)
        } else {
            Some(r.unlocked_word())
        };
        let w = &mut st.writes[i];
        match locked {
            Some(word) if !P::Record::retired(word) => w.scratch = word,
            held => {
                let c = Conflict::at(ConflictCause::RecordRetired, w.table, w.key);
                if let Some(word) = held.filter(|_| lock) {
                    r.unlock(word);
                }
                unlock_writes(&st.writes[..i], lock);
                return Err(c);
            }
        }
    }
    Ok(())
}

/// Spins (with backoff that yields) until `r`'s lock is ours, or `None` if `r` is retired.
#[inline]
fn lock_one<R: LockWord>(r: &R) -> Option<u64> {
    let mut backoff = txlab_core::protocol::sync::SpinWait::new();
    loop {
        if let Some(word) = r.try_lock() {
            return Some(word);
        }
        if r.is_retired() {
            return None;
        }
        backoff.snooze();
    }
}

/// Releases the locks [`lock_writes`] took on `writes`, installing nothing.
pub fn unlock_writes<R: LockWord>(writes: &[WriteEntry<R, u64>], lock: bool) {
    if lock {
        for w in writes {
            // SAFETY: as in `lock_writes`.
            unsafe { &*w.rec }.unlock(w.scratch);
        }
    }
}
