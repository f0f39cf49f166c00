//! The builder of engines whose only choice besides their configuration is the history recorder
//! (the batching pipeline, DOCC and Calvin): the same shape as the interactive engines' builder
//! (`txlab_nwr::Builder`), without the write-omission policy.
//!
//! ```ignore
//! let engine = Pipeline::builder()
//!     .config(PipelineConfig::default())
//!     .recorder(Arc::clone(&recorder)) // NoRecorder by default
//!     .build(&schema)?;
//! ```

use crate::protocol::history::{NoRecorder, Recorder};
use crate::protocol::sync::Arc;
use crate::{Error, Schema};
use std::fmt;

/// An engine built by [`Builder`]: implemented by the engine type with the default recorder
/// (`Pipeline`, `Docc<L>`, `Calvin`).
pub trait Assemble: 'static {
    /// The engine's configuration (its `Default` is what [`Builder::new`] starts from).
    type Config: fmt::Debug + Default;
    /// Tables the caller may build ([`std::convert::Infallible`] where the engine builds its own).
    type Tables;
    /// The engine recording with `Rec`.
    type Engine<Rec: Recorder>;

    /// The engine for `schema` (what [`Builder::build`] calls): over `tables` if given, else
    /// one built-in index per table. Fails with an error naming the bad value.
    fn assemble<Rec: Recorder>(
        schema: &Schema,
        tables: Option<Self::Tables>,
        config: Self::Config,
        recorder: Arc<Rec>,
    ) -> Result<Self::Engine<Rec>, Error>;
}

/// The configuration of an engine of type `F` with recorder `Rec` (module docs).
#[must_use = "a builder does nothing until `build`"]
pub struct Builder<F: Assemble, Rec: Recorder = NoRecorder> {
    config: F::Config,
    recorder: Arc<Rec>,
    tables: Option<F::Tables>,
}

impl<F: Assemble, Rec: Recorder> fmt::Debug for Builder<F, Rec> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("config", &self.config)
            .field("recorder", &Rec::ENABLED)
            .field("custom_tables", &self.tables.is_some())
            .finish()
    }
}

impl<F: Assemble> Default for Builder<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Assemble> Builder<F> {
    /// The default configuration, not recording, one built-in index per table.
    pub fn new() -> Self {
        Builder {
            config: F::Config::default(),
            recorder: Arc::new(NoRecorder),
            tables: None,
        }
    }
}

impl<F: Assemble, Rec: Recorder> Builder<F, Rec> {
    /// Replaces the configuration.
    pub fn config(mut self, config: F::Config) -> Self {
        self.config = config;
        self
    }

    /// Records every transaction's history with `recorder`.
    pub fn recorder<R2: Recorder>(self, recorder: Arc<R2>) -> Builder<F, R2> {
        Builder {
            config: self.config,
            recorder,
            tables: self.tables,
        }
    }

    /// Tables built by the caller instead of one built-in index per table.
    pub fn tables(mut self, tables: F::Tables) -> Self {
        self.tables = Some(tables);
        self
    }

    /// The engine for `schema`; an invalid configuration or tables that do not fit `schema` are
    /// errors naming the value.
    pub fn build(self, schema: &Schema) -> Result<F::Engine<Rec>, Error> {
        F::assemble(schema, self.tables, self.config, self.recorder)
    }
}
