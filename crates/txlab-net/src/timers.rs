//! A node's pending timers, ordered by deadline on the driver's clock.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use crate::node::TimerId;

/// Deadlines by timer id. Re-arming an id replaces its deadline; ties fire in arming order.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    by_id: HashMap<TimerId, (Duration, u64)>,
    order: BTreeSet<(Duration, u64, TimerId)>,
    armed: u64,
}

impl Timers {
    pub(crate) fn set(&mut self, id: TimerId, deadline: Duration) {
        self.cancel(id);
        self.armed += 1;
        self.by_id.insert(id, (deadline, self.armed));
        self.order.insert((deadline, self.armed, id));
    }

    pub(crate) fn cancel(&mut self, id: TimerId) {
        if let Some((at, seq)) = self.by_id.remove(&id) {
            self.order.remove(&(at, seq, id));
        }
    }

    /// The earliest deadline, if any timer is pending.
    pub(crate) fn next(&self) -> Option<Duration> {
        self.order.first().map(|&(at, _, _)| at)
    }

    /// Removes and returns the earliest timer whose deadline is at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Duration) -> Option<TimerId> {
        let &(at, seq, id) = self.order.first()?;
        if at > now {
            return None;
        }
        self.order.remove(&(at, seq, id));
        self.by_id.remove(&id);
        Some(id)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_id.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rearming_replaces_and_ties_fire_in_arming_order() {
        let mut t = Timers::default();
        let ms = Duration::from_millis;
        t.set(TimerId(1), ms(5));
        t.set(TimerId(2), ms(3));
        t.set(TimerId(3), ms(3));
        t.set(TimerId(1), ms(1));
        t.cancel(TimerId(3));
        assert_eq!(t.next(), Some(ms(1)));
        assert_eq!(t.pop_due(ms(0)), None);
        assert_eq!(t.pop_due(ms(10)), Some(TimerId(1)));
        assert_eq!(t.pop_due(ms(10)), Some(TimerId(2)));
        assert_eq!(t.pop_due(ms(10)), None);
        assert_eq!(t.len(), 0);
    }
}
