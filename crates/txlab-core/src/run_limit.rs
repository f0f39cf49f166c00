//! [`RunLimit`]: when a driver stops submitting transactions.
//!
//! Every driver that runs a workload by itself (the validator pipeline, the thread-aware wrapper,
//! the deterministic sequencer, distributed coordinators) takes one, so they share the meaning and
//! the accepted ranges.

use crate::error::Error;
use std::time::Duration;

/// When a run stops submitting transactions. Transactions already submitted still finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunLimit {
    /// After this many transactions have been submitted (at least 1).
    Transactions(u64),
    /// After this much time (between [`RunLimit::MIN_DURATION`] and [`RunLimit::MAX_DURATION`]).
    Duration(Duration),
}

impl RunLimit {
    /// The shortest accepted duration.
    pub const MIN_DURATION: Duration = Duration::from_millis(1);
    /// The longest accepted duration.
    pub const MAX_DURATION: Duration = Duration::from_secs(3600);

    /// Checks the limit: an error naming the value and the accepted range.
    pub fn validate(self) -> Result<Self, Error> {
        match self {
            RunLimit::Transactions(0) => Err(Error::invalid("transactions", 0, "at least 1")),
            RunLimit::Duration(d) if !(Self::MIN_DURATION..=Self::MAX_DURATION).contains(&d) => {
                Err(Error::invalid(
                    "duration",
                    format!("{d:?}"),
                    "between 1ms and 1h",
                ))
            }
            _ => Ok(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_outside_their_range_are_refused_with_the_value_named() {
        let e = RunLimit::Transactions(0).validate().unwrap_err();
        assert!(e.to_string().contains("transactions = 0"), "{e}");
        let e = RunLimit::Duration(Duration::from_micros(10))
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("duration = 10µs"), "{e}");
        let e = RunLimit::Duration(Duration::from_secs(7200))
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("between 1ms and 1h"), "{e}");
        assert!(RunLimit::Transactions(1).validate().is_ok());
        assert!(
            RunLimit::Duration(Duration::from_millis(1))
                .validate()
                .is_ok()
        );
    }
}
