//! Plugging your own index into txlab's storage trait and running Silo on it.
//!
//! `LazyArrayIndex` maps keys `0..capacity` to records created on first use: a `Vec` of
//! `OnceLock`s, allocated once and never resized, so a record never moves (the trait's
//! stable-reference invariant) and `OnceLock::get_or_init` gives insert-if-absent for free. New
//! keys bump the phantom stripes so range scans stay serializable. It never unlinks (records live
//! as long as the index), which the trait allows.
//!
//! ```text
//! cargo run --example custom_index
//! ```

use std::sync::OnceLock;
use txlab::core::protocol::storage::{Entry, Guard, Index, PhantomStripes, Record, StripeBump};
use txlab::core::{Engine, Error, IndexKind, RetryPolicy, Schema, TableId, TableSpec, run};
use txlab::silo::{Silo, SiloRecord};
use txlab::storage::Tables;

/// A lazily populated array index (see the module docs).
#[derive(Debug)]
struct LazyArrayIndex<R> {
    table: TableId,
    value_size: usize,
    slots: Vec<OnceLock<R>>,
    stripes: PhantomStripes,
}

impl<R: Record> LazyArrayIndex<R> {
    fn new(table: TableId, value_size: usize, capacity: usize) -> Self {
        Self {
            table,
            value_size,
            slots: (0..capacity).map(|_| OnceLock::new()).collect(),
            stripes: PhantomStripes::new(4),
        }
    }

    fn slot(&self, key: u64) -> Result<&OnceLock<R>, Error> {
        self.slots.get(key as usize).ok_or(Error::KeyOutOfRange {
            table: self.table.0,
            key,
            capacity: self.slots.len() as u64,
        })
    }
}

impl<R: Record> Index<R> for LazyArrayIndex<R> {
    fn kind(&self) -> IndexKind {
        IndexKind::Ordered
    }

    fn get<'g>(&'g self, key: u64, _guard: &'g Guard) -> Result<Option<&'g R>, Error> {
        Ok(self.slot(key)?.get())
    }

    fn get_or_insert<'g>(&'g self, key: u64, _guard: &'g Guard) -> Result<Entry<'g, R>, Error> {
        let mut created = false;
        let record = self.slot(key)?.get_or_init(|| {
            created = true;
            R::absent(self.value_size)
        });
        // Bump after the record is visible (storage invariant 4).
        let bumped = created.then(|| self.stripes.bump(key));
        Ok(Entry {
            record,
            created,
            bumped,
        })
    }

    fn unlink(&self, _key: u64, _record: &R, _guard: &Guard) -> Result<Option<StripeBump>, Error> {
        Ok(None)
    }

    fn scan<'g>(
        &'g self,
        lo: u64,
        hi: u64,
        _guard: &'g Guard,
        visit: &mut dyn FnMut(u64, &'g R) -> bool,
    ) -> Result<(), Error> {
        let end = hi.min(self.slots.len() as u64 - 1);
        for key in lo..=end {
            if let Some(r) = self.slots[key as usize].get()
                && !visit(key, r)
            {
                break;
            }
        }
        Ok(())
    }

    fn phantom_stripes(&self) -> Option<&PhantomStripes> {
        Some(&self.stripes)
    }

    fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.get().is_some()).count()
    }

    fn table(&self) -> TableId {
        self.table
    }

    fn value_size(&self) -> usize {
        self.value_size
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut schema = Schema::new();
    let events = schema.add(TableSpec::ordered("events", 16))?;
    let custom: Box<dyn Index<SiloRecord>> = Box::new(LazyArrayIndex::new(events, 16, 10_000));
    let tables = Tables::with_custom(&schema, vec![(events, custom)])?;
    let db = Silo::builder().tables(tables).build(&schema)?;

    let mut w = db.worker()?;
    for day in 0..30u64 {
        run(&mut w, RetryPolicy::default(), |tx| {
            let mut v = [0u8; 16];
            v[..8].copy_from_slice(&day.to_le_bytes());
            v[8..].copy_from_slice(&(day * day).to_le_bytes());
            tx.insert(events, day * 10, &v)?;
            Ok(())
        })?;
    }
    let sum = run(&mut w, RetryPolicy::default(), |tx| {
        let mut sum = 0u64;
        tx.scan(events, 100, 199, &mut |_, v| {
            sum += u64::from_le_bytes(v[8..].try_into().unwrap());
            true
        })?;
        Ok(sum)
    })?
    .value;
    println!("sum of squares of days 10..=19 through a custom index: {sum}");
    assert_eq!(sum, (10..20u64).map(|d| d * d).sum::<u64>());
    let e = db.load(events, 20_000, &[0; 16]).unwrap_err();
    println!("bad key rejected: {e}");
    Ok(())
}
