//! A TicToc record: the timestamp word ([`crate::word`]), the value as atomic words, and the
//! history tag of the current version.
//!
//! Invariants:
//!
//! - The value and `tag` change only while the word's lock bit is held by the writer, and are
//!   published by a `Release` store of the new word (the seqlock of `txlab_core::protocol::value`).
//! - `tag` is the `wts` the current version was installed with (0 for the loaded or never-written
//!   version). It equals the word's `wts` except after a delta-overflow shift (§3.6) moved `wts`
//!   forward; histories must name versions by something that does not change after installation,
//!   so readers record `tag`, not the word's `wts`. Tags of one record strictly increase (the
//!   `wts` of successive versions do, `crate::word` "Monotonicity"), so they are unique per key
//!   and their order is the version order. The field costs 8 bytes per record and one relaxed
//!   store per install; it is loaded when a recorder is enabled, in TicToc+NWR, which also uses
//!   it to tell the epoch a version was installed in (`crate::word`, delta overflow across an
//!   epoch), and at commit for locked records whose word is absent: tag 0 there means the record
//!   was never written, and its first write must be announced to scanners (`crate::stripe_clock`).
//! - Bit 63 of `tag` ([`TAG_PIVOT_READ`]) is a mark, not part of the timestamp. Only TicToc+NWR
//!   with single-write omitters (`tictoc-nwr-single`) sets it: the writer of a record's first
//!   version of an epoch sets it when it read the record (or replaced an absent version), and every
//!   later writer of the same epoch copies it (`crate::commit`). Every reader of `tag` as a
//!   timestamp masks it off ([`Self::stable_tag`], [`Self::read_stable`]); timestamps use 47 bits,
//!   so the mask never changes one.
//! - Every variant has this record (40 bytes). TicToc+NWR keeps its 128-bit pivot version objects
//!   beside the records (`TicToc::pivots`, a `txlab_storage::Companions`), since only a would-be
//!   omitter reads one; check (4)'s read mark is the value's sidecar word (`txlab_nwr::read_mark`).

use crate::word::{ABSENT, LOCK, is_locked, is_retired};
use txlab_core::protocol::storage::Record;
use txlab_core::protocol::sync::{AtomicU64, Ordering, fence};
use txlab_core::protocol::value::AtomicValue;
use txlab_occ::LockWord;

/// The mark bit of the history tag (module docs): the writer of the epoch's first version of this
/// record read it, so no write may be omitted before that version (`tictoc-nwr-single` only).
pub(crate) const TAG_PIVOT_READ: u64 = 1 << 63;

/// Whether this build pads every record to its own 64-byte cache line (cargo feature
/// `line-aligned-records`, CCBench's layout) instead of packing records (the default).
pub const LINE_ALIGNED_RECORDS: bool = cfg!(feature = "line-aligned-records");

/// One record: timestamp word, value and history tag (module docs).
#[cfg_attr(feature = "line-aligned-records", repr(align(64)))]
#[derive(Debug)]
pub struct TicTocRecord {
    pub(crate) word: AtomicU64,
    pub(crate) tag: AtomicU64,
    pub(crate) value: AtomicValue,
}

impl Record for TicTocRecord {
    fn absent(value_size: usize) -> Self {
        Self {
            word: AtomicU64::new(ABSENT),
            tag: AtomicU64::new(0),
            value: AtomicValue::zeroed(value_size),
        }
    }
}

impl LockWord for TicTocRecord {
    #[inline]
    fn try_lock(&self) -> Option<u64> {
        let cur = self.word.load(Ordering::Relaxed);
        if is_locked(cur) {
            return None;
        }
        self.word
            .compare_exchange_weak(cur, cur | LOCK, Ordering::SeqCst, Ordering::Relaxed)
            .ok()
    }

    /// Releases the lock without changing the version (`locked_word` is the word replaced when
    /// locking; `rts` cannot have changed while locked, since extensions need an unlocked word).
    #[inline]
    fn unlock(&self, locked_word: u64) {
        self.word.store(locked_word & !LOCK, Ordering::Release);
    }

    #[inline]
    fn unlocked_word(&self) -> u64 {
        self.word.load(Ordering::Acquire) & !LOCK
    }

    #[inline]
    fn retired(word: u64) -> bool {
        is_retired(word)
    }

    /// The one final, locked word of an unlinked record (`crate::word::RETIRED`).
    #[inline]
    fn is_retired(&self) -> bool {
        is_retired(self.word.load(Ordering::Acquire))
    }
}

/// Outcome of a bounded attempt to read a record consistently.
pub(crate) enum StableRead {
    /// The word (unlocked) and history tag under which `out` holds a consistent copy.
    Ok { word: u64, tag: u64 },
    /// A writer held the lock through every attempt.
    Busy,
    /// The record was unlinked from its index (`crate::retire`): it holds no version any more.
    Retired,
}

impl TicTocRecord {
    /// The current version's word (unlocked) and history tag (the timestamp, without the mark),
    /// read consistently (the seqlock pattern of [`Self::read_stable`] without the value); `None`
    /// if the record is locked or changed during the read.
    #[inline]
    pub(crate) fn stable_tag(&self) -> Option<(u64, u64)> {
        self.stable_marked_tag()
            .map(|(word, tag)| (word, tag & !TAG_PIVOT_READ))
    }

    /// [`Self::stable_tag`] with the tag's [`TAG_PIVOT_READ`] mark kept.
    #[inline]
    pub(crate) fn stable_marked_tag(&self) -> Option<(u64, u64)> {
        let w1 = self.word.load(Ordering::Acquire);
        if is_locked(w1) {
            return None;
        }
        let tag = self.tag.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let w2 = self.word.load(Ordering::Relaxed);
        (w1 == w2).then_some((w1, tag))
    }

    /// Copies the value into `out` consistently with the returned word (Algorithm 1's loop:
    /// `Acquire` load, relaxed copies, `Acquire` fence, relaxed re-load, retry unless equal and
    /// unlocked). Waits with backoff while the record is locked, up to `max_waits` rounds. The tag
    /// is read inside the same window when `with_tag` is set or the version is absent (otherwise
    /// the returned tag is 0).
    #[inline(always)]
    pub(crate) fn read_stable(&self, out: &mut [u8], max_waits: u32, with_tag: bool) -> StableRead {
        match self.try_read(out, with_tag) {
            Ok(read) => read,
            Err(w1) => self.read_stable_waiting(w1, out, max_waits, with_tag),
        }
    }

    /// One attempt of [`read_stable`](Self::read_stable): the read if the word was unlocked and
    /// unchanged across the copy, otherwise `Err` with the word first loaded.
    #[inline(always)]
    fn try_read(&self, out: &mut [u8], with_tag: bool) -> Result<StableRead, u64> {
        let w1 = self.word.load(Ordering::Acquire);
        if is_locked(w1) {
            return Err(w1);
        }
        if w1 & ABSENT == 0 {
            self.value.load_into(out);
        }
        // An absent version's tag is always read (inside the window, so consistent with the
        // word): tag 0 there means never written, which `crate::retire`'s floor needs.
        let tag = if with_tag || w1 & ABSENT != 0 {
            self.tag.load(Ordering::Relaxed) & !TAG_PIVOT_READ
        } else {
            0
        };
        fence(Ordering::Acquire);
        let w2 = self.word.load(Ordering::Relaxed);
        if w1 == w2 {
            Ok(StableRead::Ok { word: w1, tag })
        } else {
            Err(w1)
        }
    }

    /// [`read_stable`](Self::read_stable) after a first attempt that loaded `w1` failed: waits
    /// with backoff while the record is locked, up to `max_waits` rounds, out of the reading path.
    #[cold]
    #[inline(never)]
    fn read_stable_waiting(
        &self,
        mut w1: u64,
        out: &mut [u8],
        max_waits: u32,
        with_tag: bool,
    ) -> StableRead {
        let mut waits = 0u32;
        let mut backoff = txlab_core::protocol::sync::SpinWait::new();
        loop {
            if is_retired(w1) {
                return StableRead::Retired;
            }
            waits += 1;
            if waits > max_waits {
                return StableRead::Busy;
            }
            backoff.snooze();
            match self.try_read(out, with_tag) {
                Ok(read) => return read,
                Err(w) => w1 = w,
            }
        }
    }

    /// Installs `value` (if any) with history tag `tag` (a timestamp, plus [`TAG_PIVOT_READ`] when
    /// marked) and publishes `word` (unlocked), releasing
    /// the lock. The caller holds the lock and has issued a `Release` fence since locking.
    #[inline]
    pub(crate) fn install(&self, value: Option<&[u8]>, tag: u64, word: u64) {
        debug_assert_eq!(word & LOCK, 0);
        if let Some(v) = value {
            self.value.store(v);
        }
        self.tag.store(tag, Ordering::Relaxed);
        self.word.store(word, Ordering::Release);
    }

    /// Non-transactional load: present, `wts = rts = 0`, tag 0.
    pub(crate) fn load_initial(&self, value: &[u8]) {
        self.value.store(value);
        self.tag.store(0, Ordering::Relaxed);
        self.word.store(0, Ordering::Release);
    }
}
