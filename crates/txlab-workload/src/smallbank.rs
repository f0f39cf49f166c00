//! SmallBank: a banking workload with a realistic mix of read/write conflicts.
//!
//! Sources: the benchmark is defined by M. Alomari, M. Cahill, A. Fekete, U. Röhm, "The Cost of
//! Serializability on Platforms That Use Snapshot Isolation" (ICDE 2008, the section defining
//! the SmallBank benchmark) and M. J. Cahill's thesis "Serializable Isolation for Snapshot Databases" (Sydney,
//! 2009), whose transaction semantics are followed here. The `SendPayment` transaction, the
//! mix and the amounts are those of the H-Store / OLTP-Bench implementation (Difallah et al.,
//! "OLTP-Bench", PVLDB 7(4), 2013; `SmallBankConstants`). The OCC-batching paper (Ding, Kot,
//! Gehrke, PVLDB 12(2), 2018) runs it with 100K customers and Zipfian customer choice (§5.4), at
//! skew 0.9 for its high-contention experiment (§5.7).
//!
//! # Tables
//!
//! Dense tables `savings` and `checking`, one row per customer `0..customers`, each an 8-byte
//! little-endian `i64` balance in cents, all loaded with [`SmallBankConfig::initial_balance`].
//! (The benchmark's `accounts` name-to-id table is omitted: customers are addressed by id.)
//! With [`SmallBankConfig::audit`] a third dense table `ledger` of [`LEDGER_SLOTS`] `i64` rows,
//! loaded with 0, records money entering or leaving the bank.
//!
//! # Transactions (mix in parentheses)
//!
//! Customers are drawn from a [`Zipf`] with skew [`SmallBankConfig::theta`] (customer 0 hottest);
//! two-customer transactions use two distinct customers `a != b`.
//!
//! - `Amalgamate(a, b)` (15 %): reads `a`'s savings and checking, sets both to 0 and adds their
//!   sum to `b`'s checking.
//! - `Balance(a)` (15 %): reads `a`'s savings and checking (read only).
//! - `DepositChecking(a)` (15 %): adds 1.30 to `a`'s checking.
//! - `SendPayment(a, b)` (25 %): moves 5.00 from `a`'s checking to `b`'s checking; **user abort**
//!   ([`TxError::UserAbort`]) if `a`'s checking balance is below 5.00.
//! - `TransactSavings(a)` (15 %): deposits or withdraws 20.20 on `a`'s savings (sign drawn with
//!   equal probability); **user abort** if the savings balance would become negative.
//! - `WriteCheck(a)` (15 %): cashes a check of 5.00 against `a`'s checking; if `a`'s savings plus
//!   checking is below 5.00 a penalty of 0.01 (one cent: Cahill's "penalty of 1") is added. The
//!   checking balance may become negative (an overdraft), as in the benchmark.
//!
//! # Money conservation and `audit`
//!
//! Amalgamate and SendPayment only move money between accounts. DepositChecking,
//! TransactSavings and WriteCheck change the bank's total; with `audit = true` they also add
//! their net change to `ledger[thread % LEDGER_SLOTS]` in the same transaction. Each worker writes
//! its own slot (for up to [`LEDGER_SLOTS`] workers), so auditing adds one access to these three
//! transaction types but no contention. [`Workload::check`] then reads every row in one read-only
//! transaction and verifies
//!
//! ```text
//! sum(savings) + sum(checking) == 2 * customers * initial_balance + sum(ledger)
//! ```
//!
//! Without `audit` the total is not tracked and `check` only verifies that every account is
//! present and well-formed.
//!
//! # Defaults
//!
//! `customers = 100_000` (the paper's), `theta = 0` (uniform), `initial_balance = 10_000.00`
//! (1 000 000 cents), `audit = false` (the standard transaction footprint).

use crate::distinct::DistinctKeys;
use crate::rng::{WorkloadRng, worker_rng};
use crate::zipf::{MAX_ITEMS, Zipf, validate_theta};
use crate::{Generator, Workload};
use rand::RngExt;
use txlab_core::{
    Access, AccessSet, Engine, Error, FixedValue, Program, RetryPolicy, Schema, TableId, TableSpec,
    TxError, TxOps, TxResult, TypedOps, run,
};

/// Rows of the `ledger` table; worker `t` writes row `t % LEDGER_SLOTS`.
pub const LEDGER_SLOTS: u64 = 1024;

/// Largest accepted initial balance (10^12 cents), so sums over all accounts stay far from
/// overflow.
pub const MAX_INITIAL_BALANCE: i64 = 1_000_000_000_000;

/// `DepositChecking`'s amount in cents (OLTP-Bench: 1.3).
pub const DEPOSIT_CHECKING_AMOUNT: i64 = 130;
/// `SendPayment`'s amount in cents (OLTP-Bench: 5.0).
pub const SEND_PAYMENT_AMOUNT: i64 = 500;
/// `TransactSavings`' amount in cents (OLTP-Bench: 20.20), deposited or withdrawn.
pub const TRANSACT_SAVINGS_AMOUNT: i64 = 2020;
/// `WriteCheck`'s amount in cents (OLTP-Bench: 5.0).
pub const WRITE_CHECK_AMOUNT: i64 = 500;
/// `WriteCheck`'s overdraft penalty in cents.
pub const WRITE_CHECK_PENALTY: i64 = 1;

/// The transaction types with their mix weights in percent (OLTP-Bench's default mix).
pub const MIX: [(SmallBankKind, u32); 6] = [
    (SmallBankKind::Amalgamate, 15),
    (SmallBankKind::Balance, 15),
    (SmallBankKind::DepositChecking, 15),
    (SmallBankKind::SendPayment, 25),
    (SmallBankKind::TransactSavings, 15),
    (SmallBankKind::WriteCheck, 15),
];

/// SmallBank parameters (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmallBankConfig {
    /// Number of customers, `2..=2^40`.
    pub customers: u64,
    /// Zipf skew of customer choice, `0..=10`.
    pub theta: f64,
    /// Initial balance of every savings and checking account, in cents,
    /// `0..=MAX_INITIAL_BALANCE`.
    pub initial_balance: i64,
    /// Track money entering and leaving the bank in `ledger` so `check` can verify conservation.
    pub audit: bool,
}

impl Default for SmallBankConfig {
    fn default() -> Self {
        SmallBankConfig {
            customers: 100_000,
            theta: 0.0,
            initial_balance: 1_000_000,
            audit: false,
        }
    }
}

impl SmallBankConfig {
    /// Checks every field; the error names the field, its value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.customers < 2 || self.customers > MAX_ITEMS {
            return Err(Error::invalid(
                "customers",
                self.customers,
                format!(
                    "in 2..={MAX_ITEMS} (Amalgamate and SendPayment need two distinct customers)"
                ),
            ));
        }
        if !(0..=MAX_INITIAL_BALANCE).contains(&self.initial_balance) {
            return Err(Error::invalid(
                "initial_balance",
                self.initial_balance,
                format!("cents in 0..={MAX_INITIAL_BALANCE}"),
            ));
        }
        validate_theta("theta", self.theta)
    }
}

/// The SmallBank transaction types.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum SmallBankKind {
    /// Moves all of one customer's money to another's checking account.
    Amalgamate,
    /// Reads one customer's balances.
    Balance,
    /// Deposits into a checking account.
    DepositChecking,
    /// Moves money between two checking accounts.
    SendPayment,
    /// Deposits into or withdraws from a savings account.
    TransactSavings,
    /// Cashes a check against a checking account.
    WriteCheck,
}

impl SmallBankKind {
    /// A short, stable name (per-type statistics).
    pub fn name(self) -> &'static str {
        match self {
            SmallBankKind::Amalgamate => "amalgamate",
            SmallBankKind::Balance => "balance",
            SmallBankKind::DepositChecking => "deposit_checking",
            SmallBankKind::SendPayment => "send_payment",
            SmallBankKind::TransactSavings => "transact_savings",
            SmallBankKind::WriteCheck => "write_check",
        }
    }

    fn customers(self) -> usize {
        match self {
            SmallBankKind::Amalgamate | SmallBankKind::SendPayment => 2,
            _ => 1,
        }
    }
}

/// The table ids of a SmallBank database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SmallBankTables {
    /// `savings`.
    pub savings: TableId,
    /// `checking`.
    pub checking: TableId,
    /// `ledger`, present with `audit`.
    pub ledger: Option<TableId>,
}

/// The SmallBank workload (module docs).
#[derive(Debug, Clone)]
pub struct SmallBank {
    cfg: SmallBankConfig,
    schema: Schema,
    tables: SmallBankTables,
    zipf: Zipf,
}

impl SmallBank {
    /// Validates `cfg` (see [`SmallBankConfig::validate`]) and builds the workload.
    pub fn new(cfg: SmallBankConfig) -> Result<SmallBank, Error> {
        cfg.validate()?;
        let mut schema = Schema::new();
        let savings = schema.add(TableSpec::dense("savings", i64::SIZE, cfg.customers))?;
        let checking = schema.add(TableSpec::dense("checking", i64::SIZE, cfg.customers))?;
        let ledger = if cfg.audit {
            Some(schema.add(TableSpec::dense("ledger", i64::SIZE, LEDGER_SLOTS))?)
        } else {
            None
        };
        let zipf = Zipf::new(cfg.customers, cfg.theta)?;
        Ok(SmallBank {
            cfg,
            schema,
            tables: SmallBankTables {
                savings,
                checking,
                ledger,
            },
            zipf,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SmallBankConfig {
        &self.cfg
    }

    /// The table ids.
    pub fn tables(&self) -> SmallBankTables {
        self.tables
    }

    /// The bank partitioned by customer into `partitions` contiguous ranges: a customer's savings
    /// and checking rows are at the same partition. The `ledger` (with `audit`) is split by slot
    /// the same way, so an audited transaction whose worker's slot is elsewhere spans two
    /// partitions.
    pub fn partitioner(
        &self,
        partitions: u32,
    ) -> Result<txlab_core::partition::RangePartitioner, Error> {
        let mut spaces = vec![self.cfg.customers; 2];
        if self.tables.ledger.is_some() {
            spaces.push(LEDGER_SLOTS);
        }
        txlab_core::partition::RangePartitioner::new(partitions, spaces)
    }

    /// The bank's total at load time, in cents.
    pub fn initial_total(&self) -> i128 {
        2 * i128::from(self.cfg.customers) * i128::from(self.cfg.initial_balance)
    }
}

/// Reads a balance; an absent row is an [`Error::Invariant`] (and a row that is not 8 bytes an
/// [`Error::TypeSize`](txlab_core::Error::TypeSize)).
fn read_balance<T: TxOps + ?Sized>(
    tx: &mut T,
    table: TableId,
    key: u64,
    for_update: bool,
) -> TxResult<i64> {
    let balance = if for_update {
        tx.read_for_update_as::<i64>(table, key)?
    } else {
        tx.read_as::<i64>(table, key)?
    };
    balance.ok_or_else(|| {
        TxError::Error(Error::Invariant(format!(
            "smallbank: table {} key {key} is absent (was the workload loaded?)",
            table.0
        )))
    })
}

fn checked_add(a: i64, b: i64) -> TxResult<i64> {
    a.checked_add(b).ok_or_else(|| {
        TxError::Error(Error::Invariant(format!(
            "smallbank: balance {a} + {b} overflows i64"
        )))
    })
}

/// Sums of every table, read in one transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Totals {
    savings: i128,
    checking: i128,
    ledger: i128,
}

impl Workload for SmallBank {
    type Program = SmallBankTxn;
    type Generator = SmallBankGenerator;

    fn name(&self) -> String {
        "smallbank".to_string()
    }

    fn schema(&self) -> Schema {
        self.schema.clone()
    }

    fn load<E: Engine>(&self, engine: &E) -> Result<(), Error> {
        let balance = self.cfg.initial_balance;
        for key in 0..self.cfg.customers {
            engine.load_as(self.tables.savings, key, &balance)?;
            engine.load_as(self.tables.checking, key, &balance)?;
        }
        if let Some(ledger) = self.tables.ledger {
            for slot in 0..LEDGER_SLOTS {
                engine.load_as(ledger, slot, &0i64)?;
            }
        }
        Ok(())
    }

    fn generator(&self, thread: usize, seed: u64) -> SmallBankGenerator {
        SmallBankGenerator {
            rng: worker_rng(seed, thread),
            customers: DistinctKeys::new(self.zipf.clone()),
            txn: SmallBankTxn {
                kind: SmallBankKind::Balance,
                tables: self.tables,
                first: 0,
                second: 0,
                amount: 0,
                ledger_slot: thread as u64 % LEDGER_SLOTS,
            },
        }
    }

    fn check<E: Engine>(&self, engine: &E) -> Result<(), Error> {
        let mut worker = engine.worker()?;
        let tables = self.tables;
        let customers = self.cfg.customers;
        let committed = run(&mut worker, RetryPolicy::attempts(16)?, |tx| {
            let mut totals = Totals::default();
            for key in 0..customers {
                totals.savings += i128::from(read_balance(tx, tables.savings, key, false)?);
                totals.checking += i128::from(read_balance(tx, tables.checking, key, false)?);
            }
            if let Some(ledger) = tables.ledger {
                for slot in 0..LEDGER_SLOTS {
                    totals.ledger += i128::from(read_balance(tx, ledger, slot, false)?);
                }
            }
            Ok(totals)
        })
        .map_err(|e| match e {
            TxError::Error(e) => e,
            other => Error::Internal(format!(
                "smallbank check: the read-only audit transaction failed: {other}"
            )),
        })?;
        let totals = committed.value;
        if tables.ledger.is_none() {
            return Ok(());
        }
        let expected = self.initial_total() + totals.ledger;
        let actual = totals.savings + totals.checking;
        if actual != expected {
            return Err(Error::Invariant(format!(
                "smallbank: money not conserved: sum(savings) {} + sum(checking) {} = {actual} cents, but \
                 initial total {} + sum(ledger) {} = {expected} cents (difference {})",
                totals.savings,
                totals.checking,
                self.initial_total(),
                totals.ledger,
                actual - expected
            )));
        }
        Ok(())
    }

    fn parameters(&self) -> Vec<(&'static str, String)> {
        vec![
            ("customers", self.cfg.customers.to_string()),
            ("theta", self.cfg.theta.to_string()),
            ("initial_balance", self.cfg.initial_balance.to_string()),
            ("audit", self.cfg.audit.to_string()),
        ]
    }
}

/// A SmallBank transaction with its inputs (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SmallBankTxn {
    kind: SmallBankKind,
    tables: SmallBankTables,
    first: u64,
    second: u64,
    /// Signed for TransactSavings (deposit > 0, withdrawal < 0); positive otherwise.
    amount: i64,
    ledger_slot: u64,
}

impl SmallBankTxn {
    /// The transaction type.
    pub fn txn_kind(&self) -> SmallBankKind {
        self.kind
    }

    /// The customer(s): `(a, Some(b))` for Amalgamate and SendPayment, `(a, None)` otherwise.
    pub fn customers(&self) -> (u64, Option<u64>) {
        (
            self.first,
            (self.kind.customers() == 2).then_some(self.second),
        )
    }

    /// The amount in cents (signed for TransactSavings; 0 for Balance and Amalgamate).
    pub fn amount(&self) -> i64 {
        self.amount
    }

    /// Adds `delta` to this worker's ledger row when auditing.
    fn record<T: TxOps + ?Sized>(&self, tx: &mut T, delta: i64) -> TxResult<()> {
        if let Some(ledger) = self.tables.ledger {
            let current = read_balance(tx, ledger, self.ledger_slot, true)?;
            tx.write_as(ledger, self.ledger_slot, &checked_add(current, delta)?)?;
        }
        Ok(())
    }

    fn declare_ledger(&self, out: &mut AccessSet) {
        if let Some(ledger) = self.tables.ledger {
            out.push(ledger, self.ledger_slot, Access::ReadWrite);
        }
    }
}

impl Program for SmallBankTxn {
    type Output = ();

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<()> {
        let SmallBankTables {
            savings, checking, ..
        } = self.tables;
        let (a, b) = (self.first, self.second);
        match self.kind {
            SmallBankKind::Amalgamate => {
                let total = checked_add(
                    read_balance(tx, savings, a, true)?,
                    read_balance(tx, checking, a, true)?,
                )?;
                tx.write_as(savings, a, &0i64)?;
                tx.write_as(checking, a, &0i64)?;
                let to = read_balance(tx, checking, b, true)?;
                tx.write_as(checking, b, &checked_add(to, total)?)
            }
            SmallBankKind::Balance => {
                let s = read_balance(tx, savings, a, false)?;
                let c = read_balance(tx, checking, a, false)?;
                checked_add(s, c).map(|_| ())
            }
            SmallBankKind::DepositChecking => {
                let c = read_balance(tx, checking, a, true)?;
                tx.write_as(checking, a, &checked_add(c, self.amount)?)?;
                self.record(tx, self.amount)
            }
            SmallBankKind::SendPayment => {
                let from = read_balance(tx, checking, a, true)?;
                if from < self.amount {
                    return Err(TxError::user_abort(
                        "send_payment: insufficient checking balance",
                    ));
                }
                let to = read_balance(tx, checking, b, true)?;
                tx.write_as(checking, a, &(from - self.amount))?;
                tx.write_as(checking, b, &checked_add(to, self.amount)?)
            }
            SmallBankKind::TransactSavings => {
                let s = checked_add(read_balance(tx, savings, a, true)?, self.amount)?;
                if s < 0 {
                    return Err(TxError::user_abort(
                        "transact_savings: savings balance would become negative",
                    ));
                }
                tx.write_as(savings, a, &s)?;
                self.record(tx, self.amount)
            }
            SmallBankKind::WriteCheck => {
                let s = read_balance(tx, savings, a, false)?;
                let c = read_balance(tx, checking, a, true)?;
                let debit = if checked_add(s, c)? < self.amount {
                    self.amount + WRITE_CHECK_PENALTY
                } else {
                    self.amount
                };
                tx.write_as(checking, a, &checked_add(c, -debit)?)?;
                self.record(tx, -debit)
            }
        }
    }

    fn declare(&self, out: &mut AccessSet) {
        let SmallBankTables {
            savings, checking, ..
        } = self.tables;
        let (a, b) = (self.first, self.second);
        match self.kind {
            SmallBankKind::Amalgamate => {
                out.push(savings, a, Access::ReadWrite);
                out.push(checking, a, Access::ReadWrite);
                out.push(checking, b, Access::ReadWrite);
            }
            SmallBankKind::Balance => {
                out.push(savings, a, Access::Read);
                out.push(checking, a, Access::Read);
            }
            SmallBankKind::DepositChecking => {
                out.push(checking, a, Access::ReadWrite);
                self.declare_ledger(out);
            }
            SmallBankKind::SendPayment => {
                out.push(checking, a, Access::ReadWrite);
                out.push(checking, b, Access::ReadWrite);
            }
            SmallBankKind::TransactSavings => {
                out.push(savings, a, Access::ReadWrite);
                self.declare_ledger(out);
            }
            SmallBankKind::WriteCheck => {
                out.push(savings, a, Access::Read);
                out.push(checking, a, Access::ReadWrite);
                self.declare_ledger(out);
            }
        }
    }

    fn kind(&self) -> &'static str {
        self.kind.name()
    }

    fn read_only(&self) -> bool {
        self.kind == SmallBankKind::Balance
    }
}

/// Generates SmallBank transactions for one worker, reusing one [`SmallBankTxn`].
#[derive(Debug)]
pub struct SmallBankGenerator {
    rng: WorkloadRng,
    customers: DistinctKeys,
    txn: SmallBankTxn,
}

impl Generator for SmallBankGenerator {
    type Program = SmallBankTxn;

    fn next(&mut self) -> &SmallBankTxn {
        let mut roll = self.rng.random_range(0..100u32);
        let mut kind = SmallBankKind::Balance;
        for (k, weight) in MIX {
            if roll < weight {
                kind = k;
                break;
            }
            roll -= weight;
        }
        self.customers.clear();
        let first = self.customers.pick(&mut self.rng);
        let second = if kind.customers() == 2 {
            self.customers.pick(&mut self.rng)
        } else {
            first
        };
        let amount = match kind {
            SmallBankKind::Amalgamate | SmallBankKind::Balance => 0,
            SmallBankKind::DepositChecking => DEPOSIT_CHECKING_AMOUNT,
            SmallBankKind::SendPayment => SEND_PAYMENT_AMOUNT,
            SmallBankKind::TransactSavings => {
                if self.rng.random_bool(0.5) {
                    TRANSACT_SAVINGS_AMOUNT
                } else {
                    -TRANSACT_SAVINGS_AMOUNT
                }
            }
            SmallBankKind::WriteCheck => WRITE_CHECK_AMOUNT,
        };
        self.txn.kind = kind;
        self.txn.first = first;
        self.txn.second = second;
        self.txn.amount = amount;
        &self.txn
    }
}
