//! The Hermitage anomaly schedules (M. Kleppmann, "Hermitage: Testing the 'I' in ACID", 2014),
//! adapted to txlab's operations.
//!
//! Every schedule starts from the rows `x = 1 -> 10`, `y = 2 -> 20` of one ordered table and begins
//! all its transactions up front. Transactions are 0-based in code (`T0`, `T1`, `T2`); Hermitage
//! calls them T1, T2, T3. Predicate reads become range scans over `0..=100`.
//!
//! | test | anomaly it probes | schedule (Hermitage numbering) |
//! |---|---|---|
//! | G0 | write cycles | T1 w x; T2 w x; T1 w y; T1 c; T2 w y; T2 c |
//! | G1a | aborted read | T1 w x=101; T2 r x; T1 abort; T2 r x; T2 c |
//! | G1b | intermediate read | T1 w x=101; T2 r x; T1 w x=11; T1 c; T2 r x; T2 c |
//! | G1c | circular information flow | T1 w x; T2 w y; T1 r y; T2 r x; T1 c; T2 c |
//! | OTV | observed transaction vanishes | T1 w x, y; T2 w x; T1 c; T2 w y; T3 r x; T2 c; T3 r y; T3 c |
//! | PMP | predicate-many-preceders | T1 scan; T2 insert z; T2 c; T1 scan; T1 c |
//! | PMP-write | ... with a predicate write | T1 scan-update +10; T2 scan; T2 delete y; T1 c; T2 c |
//! | P4 | lost update | T1 r x; T2 r x; T1 w x; T2 w x; T1 c; T2 c |
//! | G-single | read skew | T1 r x; T2 r x, y; T2 w x, y; T2 c; T1 r y; T1 c |
//! | G2-item | write skew | T1 r x, y; T2 r x, y; T1 w x; T2 w y; T1 c; T2 c |
//! | G2 | anti-dependency cycle over predicates | T1 scan; T2 scan; T1 insert; T2 insert; T1 c; T2 c |
//!
//! Each protocol states what it does on each schedule ([`Expect`]); [`run`] asserts that, that no
//! read returned a dirty or intermediate value, and that the recorded history passes the checker.

use crate::Protocol;
use crate::replay::{Op, Schedule, Step, replay};

/// The Hermitage schedules.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hermitage {
    /// Write cycles.
    G0,
    /// Aborted read.
    G1a,
    /// Intermediate read.
    G1b,
    /// Circular information flow.
    G1c,
    /// Observed transaction vanishes.
    Otv,
    /// Predicate-many-preceders.
    Pmp,
    /// Predicate-many-preceders with a predicate write.
    PmpWrite,
    /// Lost update.
    P4,
    /// Read skew.
    GSingle,
    /// Write skew.
    G2Item,
    /// Anti-dependency cycle over predicates.
    G2,
}

impl Hermitage {
    /// Every schedule.
    pub const ALL: [Hermitage; 11] = [
        Hermitage::G0,
        Hermitage::G1a,
        Hermitage::G1b,
        Hermitage::G1c,
        Hermitage::Otv,
        Hermitage::Pmp,
        Hermitage::PmpWrite,
        Hermitage::P4,
        Hermitage::GSingle,
        Hermitage::G2Item,
        Hermitage::G2,
    ];

    /// The schedule.
    pub fn schedule(self) -> Schedule {
        use Op::*;
        let s = Step::new;
        let f = |txn, op, forbid| Step {
            txn,
            op,
            forbid: Some(forbid),
        };
        let (txns, steps) = match self {
            Hermitage::G0 => (
                2,
                vec![
                    s(0, Write(1, 11)),
                    s(1, Write(1, 12)),
                    s(0, Write(2, 21)),
                    s(0, Commit),
                    s(1, Write(2, 22)),
                    s(1, Commit),
                ],
            ),
            Hermitage::G1a => (
                2,
                vec![
                    s(0, Write(1, 101)),
                    f(1, Read(1), 101),
                    s(0, Abort),
                    f(1, Read(1), 101),
                    s(1, Commit),
                ],
            ),
            Hermitage::G1b => (
                2,
                vec![
                    s(0, Write(1, 101)),
                    f(1, Read(1), 101),
                    s(0, Write(1, 11)),
                    s(0, Commit),
                    f(1, Read(1), 101),
                    s(1, Commit),
                ],
            ),
            Hermitage::G1c => (
                2,
                vec![
                    s(0, Write(1, 11)),
                    s(1, Write(2, 22)),
                    f(0, Read(2), 22),
                    f(1, Read(1), 11),
                    s(0, Commit),
                    s(1, Commit),
                ],
            ),
            Hermitage::Otv => (
                3,
                vec![
                    s(0, Write(1, 11)),
                    s(0, Write(2, 19)),
                    s(1, Write(1, 12)),
                    s(0, Commit),
                    s(1, Write(2, 18)),
                    s(2, Read(1)),
                    s(1, Commit),
                    s(2, Read(2)),
                    s(2, Commit),
                ],
            ),
            Hermitage::Pmp => (
                2,
                vec![
                    s(0, Scan(0, 100)),
                    s(1, Insert(3, 30)),
                    s(1, Commit),
                    s(0, Scan(0, 100)),
                    s(0, Commit),
                ],
            ),
            Hermitage::PmpWrite => (
                2,
                vec![
                    s(0, ScanUpdate(0, 100, 10)),
                    s(1, Scan(0, 100)),
                    s(1, Delete(2)),
                    s(0, Commit),
                    s(1, Commit),
                ],
            ),
            Hermitage::P4 => (
                2,
                vec![
                    s(0, Read(1)),
                    s(1, Read(1)),
                    s(0, Write(1, 11)),
                    s(1, Write(1, 11)),
                    s(0, Commit),
                    s(1, Commit),
                ],
            ),
            Hermitage::GSingle => (
                2,
                vec![
                    s(0, Read(1)),
                    s(1, Read(1)),
                    s(1, Read(2)),
                    s(1, Write(1, 12)),
                    s(1, Write(2, 18)),
                    s(1, Commit),
                    s(0, Read(2)),
                    s(0, Commit),
                ],
            ),
            Hermitage::G2Item => (
                2,
                vec![
                    s(0, Read(1)),
                    s(0, Read(2)),
                    s(1, Read(1)),
                    s(1, Read(2)),
                    s(0, Write(1, 11)),
                    s(1, Write(2, 21)),
                    s(0, Commit),
                    s(1, Commit),
                ],
            ),
            Hermitage::G2 => (
                2,
                vec![
                    s(0, Scan(0, 100)),
                    s(1, Scan(0, 100)),
                    s(0, Insert(3, 30)),
                    s(1, Insert(4, 42)),
                    s(0, Commit),
                    s(1, Commit),
                ],
            ),
        };
        Schedule {
            txns,
            initial: vec![(1, 10), (2, 20)],
            steps,
            begin_all_first: true,
        }
    }
}

/// What a protocol does on a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// No transaction is aborted by the protocol.
    NoConflicts,
    /// Exactly these transactions (0-based) are aborted by the protocol; the others commit or
    /// roll back as scheduled.
    Aborts(&'static [usize]),
    /// Anything, as long as the history is serializable and no forbidden value is read.
    Serializable,
}

/// Replays one Hermitage schedule on protocol `P` and asserts its expectation.
pub fn run<P: Protocol>(test: Hermitage) {
    let r = replay::<P>(&test.schedule())
        .unwrap_or_else(|e| panic!("{} {test:?}: replay failed: {e}", P::NAME));
    assert!(
        r.violations.is_empty(),
        "{} {test:?}: {:?}",
        P::NAME,
        r.violations
    );
    assert!(
        r.report.is_serializable(),
        "{} {test:?}: history not serializable:\n{}",
        P::NAME,
        r.report
    );
    match P::expect(test) {
        Expect::NoConflicts => {
            assert!(
                r.conflicted().is_empty(),
                "{} {test:?}: expected no aborts, got {:?}",
                P::NAME,
                r.states
            )
        }
        Expect::Aborts(which) => {
            assert_eq!(
                r.conflicted(),
                which,
                "{} {test:?}: aborted transactions (states {:?})",
                P::NAME,
                r.states
            )
        }
        Expect::Serializable => {}
    }
}
