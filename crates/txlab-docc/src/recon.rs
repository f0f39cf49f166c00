//! Reconnaissance (Calvin's OLLP, Thomson et al., SIGMOD 2012, section 3.2.1): a dependent
//! program (`AccessSet::dependent`: keys it learns from values it reads) is run read-only
//! against the committed state before it is sequenced, and the keys and ranges it touched become
//! its predicted access set ([`Prediction`]). The prediction travels with the program in the
//! input log ([`Predicted`]), so replaying the log makes the same decisions.
//!
//! [`Recon`] reads committed values optimistically (the `InPlace` seqlock: each record is read
//! consistently, the set as a whole need not be), keeps the program's own writes in a private
//! buffer so it can read them back, installs nothing, and records every key with its access kind
//! and every scan with how far it went. A program that fails (an error, an abort) still leaves
//! the prediction of what it touched up to then. At execution a key outside the prediction
//! restarts the transaction (`crate::calvin`).

use crate::layout::{InPlace, InPlaceRecord, Layout};
use crossbeam_epoch::Guard;
use std::sync::Arc;
use txlab_core::protocol::history::ScanEvent;
use txlab_core::protocol::storage::Index;
use txlab_core::{Access, AccessSet, Error, Program, TableId, TxOps, TxResult};
use txlab_storage::Tables;

/// A program's predicted accesses: its declared keys plus what reconnaissance found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prediction {
    /// Point accesses.
    pub accesses: AccessSet,
    /// Ranges scanned (`hi` is where the scan stopped).
    pub scans: Vec<ScanEvent>,
}

impl Prediction {
    /// The declared accesses of `program` (no reconnaissance).
    pub fn declared<P: Program + ?Sized>(program: &P) -> Self {
        let mut accesses = AccessSet::default();
        program.declare(&mut accesses);
        Self {
            accesses,
            scans: Vec::new(),
        }
    }

    /// Adds the accesses and scans of `other`.
    pub fn merge(&mut self, other: &Prediction) {
        self.accesses
            .accesses
            .extend_from_slice(&other.accesses.accesses);
        self.scans.extend_from_slice(&other.scans);
    }
}

/// A program with the prediction it was sequenced with (in Calvin's input log). Runs, declares
/// and names itself as the program does.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicted<P> {
    /// The program.
    pub program: P,
    /// Its prediction, if it was made (dependent programs); `None` uses `Program::declare`.
    pub prediction: Option<Arc<Prediction>>,
    /// Restarts so far (a restarted program carries the keys its attempt discovered).
    pub restarts: u32,
    /// Whether it runs as a barrier: admitted once every earlier transaction finished, with
    /// reconnaissance on exactly the state it will see (`crate::calvin`). Logged, so a replay
    /// makes the same exact prediction.
    pub barrier: bool,
}

impl<P> Predicted<P> {
    /// A program not predicted yet.
    pub fn new(program: P) -> Self {
        Self {
            program,
            prediction: None,
            restarts: 0,
            barrier: false,
        }
    }
}

impl<P: Program> Program for Predicted<P> {
    type Output = P::Output;

    #[inline]
    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<P::Output> {
        self.program.run(tx)
    }

    fn declare(&self, out: &mut AccessSet) {
        self.program.declare(out)
    }

    fn kind(&self) -> &'static str {
        self.program.kind()
    }

    fn read_only(&self) -> bool {
        self.program.read_only()
    }
}

/// The reconnaissance `TxOps` (module docs).
pub struct Recon<'a> {
    tables: &'a Tables<InPlaceRecord>,
    guard: &'a Guard,
    buf: Vec<u8>,
    /// The program's own writes: `(table, key, value or None for a delete)`.
    writes: Vec<(TableId, u64, Option<Vec<u8>>)>,
    out: Prediction,
}

impl std::fmt::Debug for Recon<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recon")
            .field("out", &self.out)
            .finish_non_exhaustive()
    }
}

impl<'a> Recon<'a> {
    /// Runs `program` against the committed state of `tables` and returns what it touched
    /// (declared keys included).
    pub fn predict<P: Program + ?Sized>(
        tables: &'a Tables<InPlaceRecord>,
        program: &P,
        guard: &'a Guard,
    ) -> Prediction {
        let mut recon = Recon {
            tables,
            guard,
            buf: Vec::new(),
            writes: Vec::new(),
            out: Prediction::declared(program),
        };
        // Whatever it returns, what it touched up to then is the prediction.
        let _ = program.run(&mut recon);
        recon.out
    }

    fn own(&self, table: TableId, key: u64) -> Option<&Option<Vec<u8>>> {
        self.writes
            .iter()
            .rev()
            .find(|(t, k, _)| *t == table && *k == key)
            .map(|(_, _, v)| v)
    }

    /// Reads the committed value into `buf`; whether present.
    fn committed(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let vs = self.tables.value_size(table)?;
        self.buf.resize(vs, 0);
        let index = self.tables.get(table)?;
        Ok(match index.get(key, self.guard)? {
            Some(rec) => InPlace::read(rec, u64::MAX, &mut self.buf, self.guard).present,
            None => false,
        })
    }

    /// The value the program sees at `(table, key)`, copied into `buf`; whether present.
    fn current(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        match self.own(table, key) {
            Some(Some(v)) => {
                let v = v.clone();
                self.buf.clear();
                self.buf.extend_from_slice(&v);
                Ok(true)
            }
            Some(None) => Ok(false),
            None => self.committed(table, key),
        }
    }

    fn touch(&mut self, table: TableId, key: u64, access: Access) {
        self.out.accesses.push(table, key, access);
    }

    fn check_value(&self, table: TableId, value: &[u8]) -> TxResult<()> {
        let vs = self.tables.value_size(table)?;
        if value.len() != vs {
            return Err(Error::ValueSize {
                table: table.0,
                expected: vs,
                got: value.len(),
            }
            .into());
        }
        Ok(())
    }
}

impl TxOps for Recon<'_> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.touch(table, key, Access::Read);
        Ok(self.current(table, key)?.then_some(&self.buf[..]))
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.check_value(table, value)?;
        self.touch(table, key, Access::BlindWrite);
        self.writes.push((table, key, Some(value.to_vec())));
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.touch(table, key, Access::ReadWrite);
        if !self.current(table, key)? {
            return Ok(false);
        }
        let mut v = self.buf.clone();
        f(&mut v);
        self.writes.push((table, key, Some(v)));
        Ok(true)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.check_value(table, value)?;
        self.touch(table, key, Access::Insert);
        if self.current(table, key)? {
            return Ok(false);
        }
        self.writes.push((table, key, Some(value.to_vec())));
        Ok(true)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.touch(table, key, Access::Delete);
        if !self.current(table, key)? {
            return Ok(false);
        }
        self.writes.push((table, key, None));
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        // Committed keys in range merged with the program's own writes, in key order.
        let vs = self.tables.value_size(table)?;
        let mut rows: Vec<(u64, Option<Vec<u8>>)> = Vec::new();
        let mut buf = vec![0u8; vs];
        let guard = self.guard;
        self.tables.get(table)?.scan(lo, hi, guard, &mut |k, rec| {
            let present = InPlace::read(rec, u64::MAX, &mut buf, guard).present;
            rows.push((k, present.then(|| buf.clone())));
            true
        })?;
        for (t, k, v) in &self.writes {
            if *t == table && (lo..=hi).contains(k) {
                match rows.binary_search_by_key(k, |r| r.0) {
                    Ok(i) => rows[i].1 = v.clone(),
                    Err(i) => rows.insert(i, (*k, v.clone())),
                }
            }
        }
        let mut end = hi;
        for (k, v) in rows {
            if let Some(v) = v
                && !visit(k, &v)
            {
                end = k;
                break;
            }
        }
        self.out.scans.push(ScanEvent { table, lo, hi: end });
        Ok(())
    }
}
