//! What every engine builder ([`txlab_nwr::Builder`]) must do with each protocol name of its
//! family and with bad input: build the named variant, and refuse an unknown name, a zero-sized
//! value, tables that do not match the schema, a configuration out of range and (where the
//! 128-bit compare-and-swap is not lock-free) the NWR variant with pivot objects, each with an
//! error naming the value, never a panic.

use txlab_core::protocol::sync::atomic_u128_is_lock_free;
use txlab_core::{Engine, EngineVisitor, Error, Schema, TableSpec};
use txlab_nwr::{Builder, Family, NwrMode};
use txlab_occ::OccConfig;
use txlab_storage::Tables;

/// Hands back the built engine's name.
struct Name;

impl EngineVisitor for Name {
    type Output = &'static str;

    fn visit<E: Engine>(self, engine: E) -> &'static str {
        engine.name()
    }
}

fn schema(value_size: usize) -> Schema {
    let mut s = Schema::new();
    s.add(TableSpec::hash("t", value_size))
        .expect("a valid table");
    s
}

fn error_text<T>(built: Result<T, Error>, what: &str) -> String {
    match built {
        Ok(_) => panic!("{what} was accepted"),
        Err(e) => e.to_string(),
    }
}

/// Each of the family's protocol names builds the engine of that name.
pub fn builds_every_named_variant<F: Family>() {
    let s = schema(8);
    for mode in NwrMode::ALL {
        let name = format!("{}{}", F::NAME, mode.suffix());
        match Builder::<F>::new().build_named(&s, &name, Name) {
            Ok(built) => assert_eq!(built, name),
            Err(e) => {
                assert!(
                    mode.needs_lock_free_pivot() && !atomic_u128_is_lock_free(),
                    "{name}: {e}"
                );
                let text = e.to_string();
                assert!(text.contains("cmpxchg16b"), "{name}: unclear error {text}");
            }
        }
    }
}

/// Bad input fails with an error naming it (module docs).
pub fn refuses_bad_input<F: Family>() {
    let s = schema(8);
    for name in ["", "nope", "nwr", "silo-tictoc", "mvto-nwr-double"] {
        let name = if name.is_empty() || name == "nwr" {
            name.to_owned()
        } else {
            format!("{}-{name}", F::NAME)
        };
        let text = error_text(Builder::<F>::new().build_named(&s, &name, Name), &name);
        assert!(text.contains(&format!("protocol = {name}:")), "{text}");
        assert!(text.contains(&txlab_nwr::builder::names::<F>()), "{text}");
    }
    let other = if F::NAME == "silo" { "tictoc" } else { "silo" };
    let text = error_text(
        Builder::<F>::new().build_named(&s, other, Name),
        "another family's name",
    );
    assert!(text.contains(other), "{text}");

    let text = error_text(
        Schema::new().add(TableSpec::hash("zero", 0)),
        "a zero-sized value",
    );
    assert!(text.contains("value_size") && text.contains('0'), "{text}");

    let tables = Tables::<F::Record>::new(&schema(16)).expect("tables");
    let text = error_text(
        Builder::<F>::new().tables(tables).build(&s),
        "tables of another schema",
    );
    assert!(text.contains("value size"), "{text}");

    let config = OccConfig::<F::Mutation, F::Settings>::default().with_read_wait_rounds(0);
    let text = error_text(
        Builder::<F>::new().config(config).build(&s),
        "read_wait_rounds = 0",
    );
    assert!(text.contains("read_wait_rounds"), "{text}");

    let full = Builder::<F>::new().build_mode(&s, NwrMode::Full, Name);
    if atomic_u128_is_lock_free() {
        assert!(full.is_ok(), "{:?}", full.err());
    } else {
        let text = error_text(full, "NWR without a lock-free 128-bit CAS");
        assert!(text.contains("cmpxchg16b"), "{text}");
    }
}
