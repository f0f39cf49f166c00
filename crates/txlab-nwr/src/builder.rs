//! One way to build every NWR-extendable engine (Silo, TicToc, MVTO and their NWR variants):
//!
//! ```ignore
//! let engine = Silo::builder()
//!     .nwr(Nwr)                         // or NwrSingleWrite; NoNwr (the baseline) by default
//!     .epoch(EpochConfig::every(Duration::from_millis(10))?)
//!     .ack(AckMode::AtCommit)
//!     .recorder(Arc::clone(&recorder))  // txlab_core::protocol::history::NoRecorder by default
//!     .build(&schema)?;
//! ```
//!
//! The write-omission policy and the recorder are type parameters of the engine (their paths are
//! compiled in or out), so [`Builder::nwr`] and [`Builder::recorder`] change the builder's type.
//! Where the protocol is known only at run time, [`Builder::build_named`] takes a protocol name
//! (`silo`, `silo-nwr`, `silo-nwr-single`) or [`Builder::build_mode`] an [`NwrMode`], and hands
//! the engine to an [`EngineVisitor`]. Every way fails with an [`Error`] naming the bad value and
//! what is accepted: an unknown name, an NWR mode whose pivot objects need a lock-free 128-bit
//! compare-and-swap this CPU lacks, a configuration field out of range, tables that do not match
//! the schema.

use crate::omission::{NoNwr, Nwr, NwrMode, NwrSingleWrite, WriteOmission};
use std::fmt;
use std::marker::PhantomData;
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::protocol::history::{NoRecorder, Recorder};
use txlab_core::protocol::storage::Record;
use txlab_core::protocol::sync::Arc;
use txlab_core::{AckMode, Engine, EngineVisitor, Error, Schema};
use txlab_occ::{OccConfig, Settings};
use txlab_storage::Tables;

/// An engine family built by [`Builder`]: one baseline protocol whose engine type is generic over
/// the recorder and the write-omission policy. Implemented by `txlab_silo::Silo`,
/// `txlab_tictoc::TicToc` and `txlab_mvto::Mvto`.
pub trait Family: 'static {
    /// The baseline's protocol name (`silo`); the variants append [`NwrMode::suffix`].
    const NAME: &'static str;
    /// The per-key record of every variant.
    type Record: Record + fmt::Debug;
    /// The test-only mutations (`txlab_occ::NoMutation` without the `mutation` feature).
    type Mutation: Copy + PartialEq + fmt::Debug + Send + Sync + 'static;
    /// The protocol's own settings.
    type Settings: Settings;
    /// The engine recording with `Rec` under write-omission policy `W`.
    type Engine<Rec: Recorder, W: WriteOmission>: Engine;

    /// The engine over `tables`, which it checks against `schema` (what [`Builder::build`] calls).
    fn assemble<Rec: Recorder, W: WriteOmission>(
        schema: &Schema,
        tables: Tables<Self::Record>,
        config: OccConfig<Self::Mutation, Self::Settings>,
        recorder: Arc<Rec>,
    ) -> Result<Self::Engine<Rec, W>, Error>;
}

/// The configuration of an engine of family `F` (module docs): recorder `Rec`, write-omission
/// policy `W`, the toolkit's [`OccConfig`] and, optionally, tables built by the caller.
#[must_use = "a builder does nothing until `build`"]
pub struct Builder<F: Family, Rec: Recorder = NoRecorder, W: WriteOmission = NoNwr> {
    config: OccConfig<F::Mutation, F::Settings>,
    recorder: Arc<Rec>,
    tables: Option<Tables<F::Record>>,
    omission: PhantomData<W>,
}

impl<F: Family, Rec: Recorder, W: WriteOmission> fmt::Debug for Builder<F, Rec, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("protocol", &F::NAME)
            .field("nwr", &W::MODE)
            .field("config", &self.config)
            .field("recorder", &Rec::ENABLED)
            .field("custom_tables", &self.tables.is_some())
            .finish()
    }
}

impl<F: Family> Default for Builder<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Family> Builder<F> {
    /// The baseline protocol, not recording, with the default configuration (epochs every
    /// 40 ms, group commit) and one built-in index per table.
    pub fn new() -> Self {
        Builder {
            config: OccConfig::default(),
            recorder: Arc::new(NoRecorder),
            tables: None,
            omission: PhantomData,
        }
    }
}

impl<F: Family, Rec: Recorder, W: WriteOmission> Builder<F, Rec, W> {
    /// Replaces the whole configuration.
    pub fn config(mut self, config: OccConfig<F::Mutation, F::Settings>) -> Self {
        self.config = config;
        self
    }

    /// How the global epoch advances.
    pub fn epoch(mut self, epoch: EpochConfig) -> Self {
        self.config.epoch = epoch;
        self
    }

    /// When commits are acknowledged.
    pub fn ack(mut self, ack: AckMode) -> Self {
        self.config.ack = ack;
        self
    }

    /// The protocol's own settings.
    pub fn settings(mut self, settings: F::Settings) -> Self {
        self.config.protocol = settings;
        self
    }

    /// The write-omission policy: [`NoNwr`] (the baseline), [`Nwr`] or [`NwrSingleWrite`].
    pub fn nwr<W2: WriteOmission>(self, _policy: W2) -> Builder<F, Rec, W2> {
        Builder {
            config: self.config,
            recorder: self.recorder,
            tables: self.tables,
            omission: PhantomData,
        }
    }

    /// Records every transaction's history with `recorder` (e.g. `txlab_check::MemoryRecorder`).
    pub fn recorder<R2: Recorder>(self, recorder: Arc<R2>) -> Builder<F, R2, W> {
        Builder {
            config: self.config,
            recorder,
            tables: self.tables,
            omission: PhantomData,
        }
    }

    /// Tables built by the caller (e.g. with a custom index for some tables via
    /// [`Tables::with_custom`]) instead of one built-in index per table.
    pub fn tables(mut self, tables: Tables<F::Record>) -> Self {
        self.tables = Some(tables);
        self
    }

    /// The engine for `schema`. Fails if the configuration is out of range, the tables do not
    /// match `schema`, or (with [`Nwr`]) the 128-bit compare-and-swap is not lock-free.
    pub fn build(self, schema: &Schema) -> Result<F::Engine<Rec, W>, Error> {
        let tables = match self.tables {
            Some(tables) => tables,
            None => Tables::new(schema)?,
        };
        F::assemble(schema, tables, self.config, self.recorder)
    }

    /// The engine of write-omission mode `mode` for `schema`, handed to `visitor` (the policy
    /// chosen at run time; this builder's own policy is replaced).
    pub fn build_mode<V: EngineVisitor>(
        self,
        schema: &Schema,
        mode: NwrMode,
        visitor: V,
    ) -> Result<V::Output, Error> {
        Ok(match mode {
            NwrMode::Off => visitor.visit(self.nwr(NoNwr).build(schema)?),
            NwrMode::Full => visitor.visit(self.nwr(Nwr).build(schema)?),
            NwrMode::SingleWrite => visitor.visit(self.nwr(NwrSingleWrite).build(schema)?),
        })
    }

    /// The engine of protocol `name` (`silo`, `silo-nwr` or `silo-nwr-single` for Silo) for
    /// `schema`, handed to `visitor`. An unknown name is an error listing the accepted ones.
    pub fn build_named<V: EngineVisitor>(
        self,
        schema: &Schema,
        name: &str,
        visitor: V,
    ) -> Result<V::Output, Error> {
        let mode = NwrMode::of_protocol(F::NAME, name)
            .ok_or_else(|| Error::invalid("protocol", name, format!("one of {}", names::<F>())))?;
        self.build_mode(schema, mode, visitor)
    }
}

/// The protocol names of family `F`, comma-separated (`silo, silo-nwr, silo-nwr-single`).
pub fn names<F: Family>() -> String {
    NwrMode::ALL
        .iter()
        .map(|m| format!("{}{}", F::NAME, m.suffix()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Declares engine type `$engine` (generic over `Rec: Recorder` and `W: WriteOmission`, holding
/// its [`NwrParts`](crate::NwrParts) in a field `nwr`, built by its own
/// `with_tables_and_omission(schema, tables, config, recorder)`) an NWR-extendable family: the
/// builder alias `$builder`, `$engine::builder()`, the [`Family`] impl and the `pivot_word`
/// accessor tests use. All statically dispatched: what it generates is what each engine wrote
/// by hand.
///
/// ```text
/// txlab_nwr::family!(Silo, SiloBuilder, "silo", SiloRecord, Mutation, NoSettings);
/// ```
#[macro_export]
macro_rules! family {
    ($engine:ident, $builder:ident, $name:literal, $record:ty, $mutation:ty, $settings:ty) => {
        #[doc = concat!(
            "The builder of ", $name, " engines ([`", stringify!($engine), "::builder`], ",
            "`txlab_nwr::builder`): recorder `Rec`, write-omission policy `W`."
        )]
        pub type $builder<
            Rec = $crate::__private::NoRecorder,
            W = $crate::NoNwr,
        > = $crate::Builder<$engine, Rec, W>;

        impl $engine {
            #[doc = concat!(
                "The one way to build a ", $name, " engine: plain ", $name, " by default; ",
                "`.nwr(Nwr)` or `.nwr(NwrSingleWrite)` for the NWR variants, `.recorder(..)` to ",
                "record histories, `.epoch(..)`, `.ack(..)` or `.config(..)` for the ",
                "configuration, `.tables(..)` for tables built by the caller, then ",
                "`.build(&schema)`; `.build_named(&schema, \"", $name, "-nwr\", visitor)` where ",
                "the variant is chosen at run time."
            )]
            pub fn builder() -> $builder {
                $builder::new()
            }
        }

        impl $crate::Family for $engine {
            const NAME: &'static str = $name;
            type Record = $record;
            type Mutation = $mutation;
            type Settings = $settings;
            type Engine<Rec: $crate::__private::Recorder, W: $crate::WriteOmission> =
                $engine<Rec, W>;

            fn assemble<Rec: $crate::__private::Recorder, W: $crate::WriteOmission>(
                schema: &$crate::__private::Schema,
                tables: $crate::__private::Tables<$record>,
                config: $crate::__private::OccConfig<$mutation, $settings>,
                recorder: $crate::__private::Arc<Rec>,
            ) -> Result<$engine<Rec, W>, $crate::__private::Error> {
                $engine::with_tables_and_omission(schema, tables, config, recorder)
            }
        }

        impl<Rec: $crate::__private::Recorder, W: $crate::WriteOmission> $engine<Rec, W> {
            /// The pivot object of `(table, key)` as it stands (the `Nwr` variant only; `None`
            /// for the others, which keep none, and for a key outside a dense table's
            /// capacity). Tests use it to see which key's object an omission updated. For a
            /// keyed table the lookup publishes an empty object if the key had none, as an
            /// omitter's would.
            #[doc(hidden)]
            pub fn pivot_word(
                &self,
                table: $crate::__private::TableId,
                key: u64,
            ) -> Option<$crate::PivotWord> {
                self.nwr.pivot_word(table, key)
            }
        }
    };
}
