//! [`Seq`]: a transaction's position in the global order, which is also the version it installs.
//!
//! Bit layout (most significant first), so that comparing the raw words compares positions:
//!
//! ```text
//! | epoch: 32 | sequencer: 8 | index in the sequencer's batch: 24 |
//! ```
//!
//! The global order is epoch by epoch; within an epoch, the batches of the sequencers in
//! sequencer-id order; within a batch, submission order (the paper's section 2.1: every node
//! merges the sequencers' batches of one epoch in one agreed order). `Seq(0)` is the initial
//! version, the state loaded before any transaction ran, so epoch 0 is never handed out.
//!
//! Why the order is the version (the paper's section 3.6): a committed write installs version
//! `Seq`, so "the newest version visible to `T_N`" is "the newest version below `N`", and no
//! timestamp needs to be chosen or agreed on. History records use `version == order == Seq`.
//!
//! Records keep three flag bits beside the version (`crate::layout`), so an epoch must stay
//! below [`Seq::MAX_EPOCH`] + 1 = 2^29 (at the default 5 ms epochs, 31 days of continuous
//! sequencing).

use std::fmt;
use txlab_core::Error;

/// A position in the global order (module docs).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Seq(u64);

impl Seq {
    /// The initial version (the loaded state).
    pub const ZERO: Seq = Seq(0);
    /// Number of sequencers an epoch may merge (8 bits).
    pub const MAX_SEQUENCERS: u32 = 1 << 8;
    /// Number of transactions one sequencer's batch may hold (24 bits).
    pub const MAX_BATCH: u32 = 1 << 24;
    /// Largest epoch: records keep three flag bits below the version (module docs).
    pub const MAX_EPOCH: u32 = (1 << 29) - 1;

    /// The position of transaction `index` of `sequencer`'s batch in `epoch`.
    ///
    /// Errors: an epoch of 0 or above [`Seq::MAX_EPOCH`], a sequencer id of 256 or more, an
    /// index of 2^24 or more, each named with its accepted range.
    pub fn new(epoch: u32, sequencer: u32, index: u32) -> Result<Seq, Error> {
        if epoch == 0 || epoch > Self::MAX_EPOCH {
            return Err(Error::invalid(
                "epoch",
                epoch,
                format!("1..={} (epoch 0 is the loaded state)", Self::MAX_EPOCH),
            ));
        }
        if sequencer >= Self::MAX_SEQUENCERS {
            return Err(Error::invalid(
                "sequencer",
                sequencer,
                format!(
                    "0..{} (8 bits of the sequence number)",
                    Self::MAX_SEQUENCERS
                ),
            ));
        }
        if index >= Self::MAX_BATCH {
            return Err(Error::invalid(
                "batch index",
                index,
                format!(
                    "0..{} (at most 2^24 transactions in one batch)",
                    Self::MAX_BATCH
                ),
            ));
        }
        Ok(Seq((u64::from(epoch) << 32)
            | (u64::from(sequencer) << 24)
            | u64::from(index)))
    }

    /// The raw word (what records and histories store).
    #[inline]
    pub fn raw(self) -> u64 {
        self.0
    }

    /// A sequence number from its raw word.
    #[inline]
    pub fn from_raw(raw: u64) -> Seq {
        Seq(raw)
    }

    /// The epoch.
    #[inline]
    pub fn epoch(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The sequencer id.
    #[inline]
    pub fn sequencer(self) -> u32 {
        ((self.0 >> 24) & 0xFF) as u32
    }

    /// The index in the sequencer's batch.
    #[inline]
    pub fn index(self) -> u32 {
        (self.0 & 0xFF_FFFF) as u32
    }
}

impl fmt::Debug for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Seq({}.{}.{})",
            self.epoch(),
            self.sequencer(),
            self.index()
        )
    }
}

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_raw_order_is_position_order() {
        let a = Seq::new(7, 3, 0xAB_CDEF).unwrap();
        assert_eq!((a.epoch(), a.sequencer(), a.index()), (7, 3, 0xAB_CDEF));
        assert_eq!(Seq::from_raw(a.raw()), a);
        let later_index = Seq::new(7, 3, 0xAB_CDF0).unwrap();
        let later_sequencer = Seq::new(7, 4, 0).unwrap();
        let later_epoch = Seq::new(8, 0, 0).unwrap();
        assert!(a < later_index && later_index < later_sequencer);
        assert!(later_sequencer < later_epoch);
        assert!(Seq::ZERO < Seq::new(1, 0, 0).unwrap());
        assert_eq!(format!("{a}"), "Seq(7.3.11259375)");
    }

    #[test]
    fn out_of_range_fields_are_named_errors() {
        let e = Seq::new(0, 0, 0).unwrap_err();
        assert!(e.to_string().contains("epoch = 0"), "{e}");
        let e = Seq::new(Seq::MAX_EPOCH + 1, 0, 0).unwrap_err();
        assert!(e.to_string().contains("epoch = 536870912"), "{e}");
        let e = Seq::new(1, 256, 0).unwrap_err();
        assert!(e.to_string().contains("sequencer = 256"), "{e}");
        let e = Seq::new(1, 0, 1 << 24).unwrap_err();
        assert!(e.to_string().contains("2^24"), "{e}");
        assert!(Seq::new(Seq::MAX_EPOCH, 255, (1 << 24) - 1).is_ok());
    }
}
