//! One engine family of the OCC toolkit (Silo, TicToc, MVTO; `txlab_nwr::Family`) as the kit's
//! [`Protocol`]s: the family's engine in each write-omission mode (`NoNwr`, `Nwr`,
//! `NwrSingleWrite`), each configuration a test needs, written once for every family.
//!
//! What differs per family is its [`Hooks`]: the engine names, whether the baseline's histories
//! are strict, the Hermitage outcomes per mode, how the family wraps the NWR mutations, and the
//! engines' inherent test accessors (they are inherent methods, so a test crate implements the
//! hooks for a type of its own with [`family_hooks!`](crate::family_hooks), which calls them).
//!
//! A protocol is [`Kit<H, W, C>`]: family `H`, omission policy `W`, configuration `C` (a
//! [`Configure`]). Every configuration starts from `OccConfig::manual()` (epochs advanced by hand,
//! so replays are deterministic), acknowledged once the epoch is stable (group commit) for the NWR
//! modes, which only attempt omission then, and at commit for the baseline.

use crate::Protocol;
use crate::hermitage::{Expect, Hermitage};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;
use txlab_check::MemoryRecorder;
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::{AckMode, Error, Schema, TableId};
use txlab_nwr::Builder;
use txlab_occ::OccConfig;

pub use txlab_nwr::{
    Family, NoNwr, Nwr, NwrMode, NwrMutation, NwrSingleWrite, PivotWord, WriteOmission,
};

/// The engine of family `H` in omission mode `W`, recording into a [`MemoryRecorder`].
pub type EngineOf<H, W> = <<H as Hooks>::Family as Family>::Engine<MemoryRecorder, W>;

/// A worker of [`EngineOf<H, W>`].
pub type WorkerOf<'e, H, W> = <EngineOf<H, W> as txlab_core::Engine>::Worker<'e>;

/// The configuration of family `H`'s engines.
pub type ConfigOf<H> = OccConfig<
    <<H as Hooks>::Family as Family>::Mutation,
    <<H as Hooks>::Family as Family>::Settings,
>;

/// What the kit needs of an engine family beyond `txlab_nwr::Family` (module docs).
pub trait Hooks: Sized + 'static {
    /// The family (`txlab_silo::Silo`, ...).
    type Family: Family;

    /// The engine names `Engine::name` reports, in `NwrMode::ALL`'s order (baseline, `-nwr`,
    /// `-nwr-single`).
    const NAMES: [&'static str; 3];

    /// Whether the baseline's histories are strictly serializable (the NWR modes' are held to
    /// serializability by the kit: an omitted write is ordered before a same-epoch commit that
    /// returned earlier; strictness with acknowledgement times has tests of its own).
    const STRICT: bool;

    /// Whether the NWR epoch schedule (`crate::nwr_semantics::epoch_schedule`) runs its second
    /// transaction in the next epoch (MVTO: a reader in the same epoch may read below the
    /// writer's timestamp instead of after it).
    const EPOCH_SCHEDULE_ADVANCES: bool = false;

    /// What the baseline does on a Hermitage schedule (the NWR modes' outcomes follow from it:
    /// [`Kit`]'s `expect`).
    fn expect(test: Hermitage) -> Expect;

    /// The family's mutation that injects the NWR rule's mutation `m`.
    fn nwr_mutation(m: NwrMutation) -> <Self::Family as Family>::Mutation;

    /// Advances the global epoch by hand; whether it moved.
    fn advance<W: WriteOmission>(db: &EngineOf<Self, W>) -> bool;

    /// The pivot object of `(table, key)` as it stands (`None` where the engine keeps none).
    fn pivot_word<W: WriteOmission>(
        db: &EngineOf<Self, W>,
        table: TableId,
        key: u64,
    ) -> Option<PivotWord>;

    /// Whether `table`'s index still maps `key`.
    fn is_mapped<W: WriteOmission>(db: &EngineOf<Self, W>, table: TableId, key: u64) -> bool;

    /// How many keys `table`'s index maps (a dense index reports its capacity).
    fn mapped_keys<W: WriteOmission>(db: &EngineOf<Self, W>, table: TableId) -> usize;

    /// The worker's queued deletes.
    fn retire_backlog<W: WriteOmission>(w: &WorkerOf<'_, Self, W>) -> usize;

    /// How many tombstones the worker has unlinked.
    fn retired_count<W: WriteOmission>(w: &WorkerOf<'_, Self, W>) -> u64;

    /// The configuration of the NWR retirement test ([`Retiring`]): unchanged by default.
    fn retiring(config: ConfigOf<Self>) -> ConfigOf<Self> {
        config
    }
}

/// A configuration of a [`Kit`]: how it changes the manual one (module docs).
pub trait Configure<H: Hooks> {
    /// The configuration, from the manual one for the mode.
    fn configure(config: ConfigOf<H>) -> Result<ConfigOf<H>, Error>;
}

/// The manual configuration, unchanged.
#[derive(Debug)]
pub struct Manual;

impl<H: Hooks> Configure<H> for Manual {
    fn configure(config: ConfigOf<H>) -> Result<ConfigOf<H>, Error> {
        Ok(config)
    }
}

/// A background epoch every millisecond, so stress runs cross many epoch boundaries.
#[derive(Debug)]
pub struct EveryMs;

impl<H: Hooks> Configure<H> for EveryMs {
    fn configure(config: ConfigOf<H>) -> Result<ConfigOf<H>, Error> {
        Ok(config.with_epoch(EpochConfig::every(Duration::from_millis(1))?))
    }
}

/// The NWR mutant that omits without the epoch check (`NwrMutation::SkipEpochCheck`).
#[derive(Debug)]
pub struct SkipEpochCheck;

impl<H: Hooks> Configure<H> for SkipEpochCheck {
    fn configure(config: ConfigOf<H>) -> Result<ConfigOf<H>, Error> {
        Ok(config.with_mutation(H::nwr_mutation(NwrMutation::SkipEpochCheck)))
    }
}

/// The NWR mutant that omits without the merged-read check (`NwrMutation::SkipMergedReadCheck`).
#[derive(Debug)]
pub struct SkipMergedReadCheck;

impl<H: Hooks> Configure<H> for SkipMergedReadCheck {
    fn configure(config: ConfigOf<H>) -> Result<ConfigOf<H>, Error> {
        Ok(config.with_mutation(H::nwr_mutation(NwrMutation::SkipMergedReadCheck)))
    }
}

/// The single-write NWR mutant that validates the omitter's reads before observing the pivot
/// (`NwrMutation::ValidateReadsBeforePivot`).
#[derive(Debug)]
pub struct ValidateReadsBeforePivot;

impl<H: Hooks> Configure<H> for ValidateReadsBeforePivot {
    fn configure(config: ConfigOf<H>) -> Result<ConfigOf<H>, Error> {
        Ok(config.with_mutation(H::nwr_mutation(NwrMutation::ValidateReadsBeforePivot)))
    }
}

/// The configuration of the NWR retirement test ([`Hooks::retiring`]).
#[derive(Debug)]
pub struct Retiring;

impl<H: Hooks> Configure<H> for Retiring {
    fn configure(config: ConfigOf<H>) -> Result<ConfigOf<H>, Error> {
        Ok(H::retiring(config))
    }
}

/// Family `H`'s engine in omission mode `W` with configuration `C`, as a kit [`Protocol`].
#[derive(Debug)]
pub struct Kit<H, W = NoNwr, C = Manual>(PhantomData<(H, W, C)>);

/// The manual configuration of mode `W`: acknowledged at commit for the baseline, once the epoch
/// is stable for the NWR modes.
pub fn manual<H: Hooks, W: WriteOmission>() -> ConfigOf<H> {
    let config = ConfigOf::<H>::manual();
    if W::ENABLED {
        config.with_ack(AckMode::EpochStable)
    } else {
        config
    }
}

/// Builds family `H`'s engine in mode `W` over `schema` with `config`, recording into `recorder`.
pub fn build<H: Hooks, W: WriteOmission>(
    schema: &Schema,
    config: ConfigOf<H>,
    recorder: Arc<MemoryRecorder>,
) -> Result<EngineOf<H, W>, Error> {
    Builder::<H::Family>::new()
        .nwr(W::default())
        .config(config)
        .recorder(recorder)
        .build(schema)
}

impl<H: Hooks, W: WriteOmission, C: Configure<H>> Protocol for Kit<H, W, C> {
    type Engine = EngineOf<H, W>;

    const NAME: &'static str = match W::MODE {
        NwrMode::Off => H::NAMES[0],
        NwrMode::Full => H::NAMES[1],
        NwrMode::SingleWrite => H::NAMES[2],
    };

    const STRICT: bool = H::STRICT && !W::ENABLED;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        build::<H, W>(schema, C::configure(manual::<H, W>())?, recorder)
    }

    /// The baseline's outcomes, except OTV under `Nwr`: T0 installs x=11, y=19 (the epoch's first
    /// versions); T1's blind writes x=12, y=18 are then *omitted* (ordered before T0's), so T2,
    /// which read x=11 before T1 committed, still reads y=19 and commits: nobody aborts. Every
    /// other schedule's aborted transaction is a read-modify-write, an insert, a scanner, or the
    /// first blind write of a key in the epoch (never omitted), and the single-write rule never
    /// omits OTV's two-item writer.
    fn expect(test: Hermitage) -> Expect {
        match (W::MODE, test) {
            (NwrMode::Full, Hermitage::Otv) => Expect::NoConflicts,
            _ => H::expect(test),
        }
    }
}

/// Implements [`Hooks`] for `$hooks` (a type of the test crate) over engine family `$family`,
/// whose engines and workers have the toolkit's inherent accessors (`epochs`, `is_mapped`,
/// `mapped_keys`, `pivot_word`; `retire_backlog`, `retired_count`):
/// its engine names, whether the baseline is strict, the baseline's Hermitage outcomes (a
/// function of the test crate), the family's wrapper of the NWR mutations, then any further items
/// of the impl in braces.
///
/// ```text
/// txlab_testkit::family_hooks!(
///     SiloHooks: Silo,
///     names = ["silo", "silo-nwr", "silo-nwr-single"],
///     strict = true,
///     expect = silo,
///     nwr_mutation = Mutation::Nwr,
/// );
/// ```
#[macro_export]
macro_rules! family_hooks {
    (
        $hooks:ident : $family:ty,
        names = $names:expr,
        strict = $strict:expr,
        expect = $expect:path,
        nwr_mutation = $mutation:path
        $(, { $($items:tt)* })? $(,)?
    ) => {
        /// The kit's hooks into this engine family (`txlab_testkit::family`).
        #[derive(Debug)]
        pub struct $hooks;

        impl $crate::family::Hooks for $hooks {
            type Family = $family;

            const NAMES: [&'static str; 3] = $names;

            const STRICT: bool = $strict;

            $($($items)*)?

            fn expect(test: $crate::Hermitage) -> $crate::Expect {
                $expect(test)
            }

            fn nwr_mutation(
                m: $crate::family::NwrMutation,
            ) -> <$family as $crate::family::Family>::Mutation {
                $mutation(m)
            }

            fn advance<W: $crate::family::WriteOmission>(
                db: &$crate::family::EngineOf<Self, W>,
            ) -> bool {
                db.epochs().advance()
            }

            fn pivot_word<W: $crate::family::WriteOmission>(
                db: &$crate::family::EngineOf<Self, W>,
                table: ::txlab_core::TableId,
                key: u64,
            ) -> Option<$crate::family::PivotWord> {
                db.pivot_word(table, key)
            }

            fn is_mapped<W: $crate::family::WriteOmission>(
                db: &$crate::family::EngineOf<Self, W>,
                table: ::txlab_core::TableId,
                key: u64,
            ) -> bool {
                db.is_mapped(table, key).expect("a known table")
            }

            fn mapped_keys<W: $crate::family::WriteOmission>(
                db: &$crate::family::EngineOf<Self, W>,
                table: ::txlab_core::TableId,
            ) -> usize {
                db.mapped_keys(table).expect("a known table")
            }

            fn retire_backlog<W: $crate::family::WriteOmission>(
                w: &$crate::family::WorkerOf<'_, Self, W>,
            ) -> usize {
                w.retire_backlog()
            }

            fn retired_count<W: $crate::family::WriteOmission>(
                w: &$crate::family::WorkerOf<'_, Self, W>,
            ) -> u64 {
                w.retired_count()
            }
        }
    };
}

/// A mutant configuration `$name` of family `$hooks` (a [`Configure`] that sets `$mutation`) and,
/// given a mode and a test name, a `#[test]` `$test` asserting the kit's random schedules catch
/// it (`crate::mutation::assert_caught`).
#[macro_export]
macro_rules! family_mutant {
    ($hooks:ty, $name:ident, $mutation:expr) => {
        /// A mutant configuration (`txlab_testkit::family_mutant!`).
        #[derive(Debug)]
        struct $name;

        impl $crate::family::Configure<$hooks> for $name {
            fn configure(
                config: $crate::family::ConfigOf<$hooks>,
            ) -> Result<$crate::family::ConfigOf<$hooks>, ::txlab_core::Error> {
                Ok(config.with_mutation($mutation))
            }
        }
    };
    ($hooks:ty, $mode:ty, $name:ident, $test:ident, $mutation:expr) => {
        $crate::family_mutant!($hooks, $name, $mutation);

        #[test]
        fn $test() {
            $crate::mutation::assert_caught::<$crate::family::Kit<$hooks, $mode, $name>>();
        }
    };
}
