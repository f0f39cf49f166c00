//! Fuzz target bodies, kept in a library so the committed seed corpora replay as ordinary tests
//! on the stable toolchain (`cargo test --manifest-path fuzz/Cargo.toml`), while
//! `cargo +nightly fuzz run <target>` fuzzes them with libFuzzer. See `fuzz/README.md`.

use arbitrary::{Arbitrary, Unstructured};
use std::sync::Arc;
use txlab_check::{CheckOptions, History, MemoryRecorder, check, serializable_by_enumeration};
use txlab_core::protocol::history::{
    Outcome, ReadEvent, ScanEvent, TxnRecord, WriteEvent, WriteKind,
};
use txlab_core::{ConflictCause, Error, Schema, TableId};
use txlab_silo::{Nwr, NwrSingleWrite};
use txlab_testkit::{Op, Protocol, Schedule, Step};

/// Decodes a small arbitrary history: up to 6 transactions over 3 keys, versions 0..4.
fn history(u: &mut Unstructured<'_>) -> arbitrary::Result<History> {
    let n = u.int_in_range(1..=6)?;
    let mut h = History::new();
    let mut next_version = [1u64; 3];
    for t in 0..n {
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        let mut scans = Vec::new();
        for _ in 0..u.int_in_range(0..=4)? {
            let key = u.int_in_range(0..=2u64)?;
            match u.int_in_range(0..=3)? {
                0 | 1 => reads.push(ReadEvent {
                    table: TableId(0),
                    key,
                    version: u.int_in_range(0..=4)?,
                    present: bool::arbitrary(u)?,
                }),
                2 => {
                    let v = next_version[key as usize];
                    next_version[key as usize] += 1;
                    let order = if bool::arbitrary(u)? {
                        v
                    } else {
                        u.int_in_range(1..=8)?
                    };
                    let kind = if bool::arbitrary(u)? {
                        WriteKind::Put
                    } else {
                        WriteKind::Delete
                    };
                    writes.push(WriteEvent {
                        table: TableId(0),
                        key,
                        version: v,
                        order,
                        kind,
                        visible: bool::arbitrary(u)?,
                    });
                }
                _ => {
                    let lo = u.int_in_range(0..=2u64)?;
                    scans.push(ScanEvent {
                        table: TableId(0),
                        lo,
                        hi: u.int_in_range(lo..=2)?,
                    });
                }
            }
        }
        let outcome = if u.ratio(4, 5)? {
            Outcome::Committed
        } else {
            Outcome::Aborted(ConflictCause::ReadValidation)
        };
        let begin = u.int_in_range(0..=100u64)?;
        let end = begin + u.int_in_range(0..=100u64)?;
        h.push(TxnRecord {
            id: t as u64 + 1,
            reads,
            writes,
            scans,
            outcome,
            begin_ns: begin,
            end_ns: end,
        });
    }
    Ok(h)
}

/// The checker never panics on any history, and on small, read-anomaly-free, scan-free ones it
/// agrees with the brute-force oracle.
pub fn checker(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(h) = history(&mut u) else { return };
    let report = check(&h, CheckOptions::serializable());
    let _ = check(&h, CheckOptions::strict());
    let _ = report.to_string();
    let plain = report.anomalies.iter().all(|a| a.kind.is_cycle());
    let no_scans = h.records().iter().all(|r| r.scans.is_empty());
    if plain
        && no_scans
        && let Ok(oracle) = serializable_by_enumeration(&h)
    {
        assert_eq!(
            report.is_serializable(),
            oracle,
            "checker and oracle disagree:\n{report}\n{h:?}"
        );
    }
}

/// Workload configurations built from arbitrary values are accepted or rejected with an error,
/// never a panic; accepted ones generate transactions.
pub fn workload_config(data: &[u8]) {
    use txlab_workload::{
        Generator, Micro, MicroConfig, SmallBank, SmallBankConfig, Workload, Ycsb, YcsbConfig,
    };
    let mut u = Unstructured::new(data);
    let f = |u: &mut Unstructured<'_>| -> arbitrary::Result<f64> {
        Ok(match u.int_in_range(0..=5)? {
            0 => f64::NAN,
            1 => -1.0,
            2 => f64::INFINITY,
            _ => f64::from(u.int_in_range(0..=1200u32)?) / 100.0,
        })
    };
    let Ok(which) = u.int_in_range(0..=2) else {
        return;
    };
    match which {
        0 => {
            let Ok(cfg) = (|| -> arbitrary::Result<YcsbConfig> {
                Ok(YcsbConfig {
                    records: u.int_in_range(0..=2000)?,
                    ops_per_txn: u.int_in_range(0..=40)?,
                    read_ratio: f(&mut u)?,
                    rmw_ratio: f(&mut u)?,
                    payload_bytes: u.int_in_range(0..=300)?,
                    theta: f(&mut u)?,
                })
            })() else {
                return;
            };
            if let Ok(w) = Ycsb::new(cfg) {
                let mut g = w.generator(0, 1);
                for _ in 0..4 {
                    g.next();
                }
                let _ = w.schema();
            }
        }
        1 => {
            let Ok(cfg) = (|| -> arbitrary::Result<MicroConfig> {
                // Fields are evaluated in this order, which the committed seeds rely on.
                Ok(MicroConfig {
                    keys: u.int_in_range(0..=2000)?,
                    reads: u.int_in_range(0..=20)?,
                    writes: u.int_in_range(0..=20)?,
                    theta: f(&mut u)?,
                    ..MicroConfig::default()
                })
            })() else {
                return;
            };
            if let Ok(w) = Micro::new(cfg) {
                let mut g = w.generator(0, 1);
                g.next();
            }
        }
        _ => {
            let Ok(cfg) = (|| -> arbitrary::Result<SmallBankConfig> {
                Ok(SmallBankConfig {
                    customers: u.int_in_range(0..=2000)?,
                    theta: f(&mut u)?,
                    audit: bool::arbitrary(&mut u)?,
                    ..SmallBankConfig::default()
                })
            })() else {
                return;
            };
            if let Ok(w) = SmallBank::new(cfg) {
                let mut g = w.generator(0, 1);
                g.next();
            }
        }
    }
}

/// The `txlab` command line on arbitrary arguments: parsing and validation return errors (clap's,
/// or the sweep's own checks), never panic. Nothing is run.
pub fn cli_args(data: &[u8]) {
    use clap::Parser;
    use txlab_cli::{Cli, Command};
    const WORDS: &[&str] = &[
        "run",
        "list",
        "compare",
        "plot",
        "--protocol",
        "--workload",
        "--threads",
        "--theta",
        "--duration",
        "--warmup",
        "--repeat",
        "--records",
        "--ops-per-txn",
        "--payload",
        "--customers",
        "--reads",
        "--writes",
        "--warehouses",
        "--districts",
        "--items",
        "--district-customers",
        "--epoch-ms",
        "--ack",
        "--seed",
        "--check",
        "silo,tictoc",
        "mvto",
        "silo-nwr",
        "silo-nwr-single",
        "tictoc-nwr",
        "tictoc-nwr-single",
        "mvto-nwr,tictoc",
        "mvto-nwr-single",
        "batch-base",
        "batch-batch",
        "batch-sr",
        "batch-vc",
        "batch-srvc,silo-ta",
        "silo-ta",
        "ycsb-a",
        "smallbank,tpcc",
        "tpcc-np",
        "micro",
        "0",
        "1",
        "2,1",
        "0.99",
        "-1",
        "NaN",
        "1e300",
        "5s",
        "500ms",
        "2m",
        "0s",
        "99999999999999999999",
        "epoch",
        "commit",
        "",
    ];
    let mut args = vec!["txlab".to_string()];
    for chunk in data.chunks(2) {
        match chunk {
            [0, b] => args.push(WORDS[*b as usize % WORDS.len()].to_string()),
            [a, b] => args.push(String::from_utf8_lossy(&[*a, *b]).into_owned()),
            [a] => args.push(WORDS[*a as usize % WORDS.len()].to_string()),
            _ => {}
        }
        if args.len() > 24 {
            break;
        }
    }
    if let Ok(Cli {
        command: Command::Run(run),
    }) = Cli::try_parse_from(&args)
    {
        let _ = run.spec().validate();
    }
}

/// Decodes a schedule of up to 5 transactions over 4 keys.
fn schedule_of(u: &mut Unstructured<'_>) -> arbitrary::Result<Schedule> {
    let txns = u.int_in_range(1..=5)?;
    let mut steps = Vec::new();
    let mut value = 1000;
    for _ in 0..u.int_in_range(1..=24)? {
        let txn = u.int_in_range(0..=txns - 1)?;
        let key = u.int_in_range(0..=3u64)?;
        value += 1;
        let op = match u.int_in_range(0..=8)? {
            0 | 1 => Op::Read(key),
            2 => Op::Write(key, value),
            3 => Op::Update(key, 1),
            4 => Op::Insert(key, value),
            5 => Op::Delete(key),
            6 => Op::Scan(key.min(2), key.max(2)),
            7 => Op::Abort,
            _ => Op::Commit,
        };
        steps.push(Step::new(txn, op));
    }
    for t in 0..txns {
        steps.push(Step::new(t, Op::Commit));
    }
    let present = u.int_in_range(0..=4u64)?;
    Ok(Schedule {
        txns,
        initial: (0..present).map(|k| (k, k * 10 + 10)).collect(),
        steps,
        begin_all_first: bool::arbitrary(u)?,
    })
}

/// Any schedule replayed on protocol `P` leaves a history the checker accepts.
pub fn schedule<P: Protocol>(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(s) = schedule_of(&mut u) else { return };
    let r = txlab_testkit::replay::replay::<P>(&s).expect("replay");
    assert!(
        r.is_clean(),
        "{}: {:?}\n{}\n{s:#?}",
        P::NAME,
        r.violations,
        r.report
    );
}

/// Silo, for the schedule target.
pub struct SiloTarget;

impl Protocol for SiloTarget {
    type Engine = txlab_silo::Silo<MemoryRecorder>;
    const NAME: &'static str = "silo";
    const STRICT: bool = true;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        txlab_silo::Silo::builder()
            .config(txlab_silo::SiloConfig::manual())
            .recorder(recorder)
            .build(schema)
    }
}

/// Silo+NWR (group commit, manual epochs: the kit's configuration), for the schedule target.
pub struct SiloNwrTarget;

impl Protocol for SiloNwrTarget {
    type Engine = txlab_silo::SiloNwr<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = txlab_silo::SiloConfig::manual().with_ack(txlab_core::AckMode::EpochStable);
        txlab_silo::Silo::builder()
            .nwr(Nwr)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

/// Silo+NWR with single-write omitters (the kit's configuration), for the schedule target.
pub struct SiloNwrSingleTarget;

impl Protocol for SiloNwrSingleTarget {
    type Engine = txlab_silo::SiloNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-single";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = txlab_silo::SiloConfig::manual().with_ack(txlab_core::AckMode::EpochStable);
        txlab_silo::Silo::builder()
            .nwr(NwrSingleWrite)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

/// MVTO, for the schedule target.
pub struct MvtoTarget;

impl Protocol for MvtoTarget {
    type Engine = txlab_mvto::Mvto<MemoryRecorder>;
    const NAME: &'static str = "mvto";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        txlab_mvto::Mvto::builder()
            .config(txlab_mvto::MvtoConfig::manual())
            .recorder(recorder)
            .build(schema)
    }
}

/// TicToc, for the schedule target.
pub struct TicTocTarget;

impl Protocol for TicTocTarget {
    type Engine = txlab_tictoc::TicToc<MemoryRecorder>;
    const NAME: &'static str = "tictoc";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        txlab_tictoc::TicToc::builder()
            .config(txlab_tictoc::TicTocConfig::manual())
            .recorder(recorder)
            .build(schema)
    }
}

/// TicToc+NWR (group commit, manual epochs: the kit's configuration), for the schedule target.
pub struct TicTocNwrTarget;

impl Protocol for TicTocNwrTarget {
    type Engine = txlab_tictoc::TicTocNwr<MemoryRecorder>;
    const NAME: &'static str = "tictoc-nwr";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = txlab_tictoc::TicTocConfig::manual().with_ack(txlab_core::AckMode::EpochStable);
        txlab_tictoc::TicToc::builder()
            .nwr(Nwr)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

/// TicToc+NWR with single-write omitters (the kit's configuration), for the schedule target.
pub struct TicTocNwrSingleTarget;

impl Protocol for TicTocNwrSingleTarget {
    type Engine = txlab_tictoc::TicTocNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "tictoc-nwr-single";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = txlab_tictoc::TicTocConfig::manual().with_ack(txlab_core::AckMode::EpochStable);
        txlab_tictoc::TicToc::builder()
            .nwr(NwrSingleWrite)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

/// MVTO+NWR (group commit, manual epochs: the kit's configuration), for the schedule target.
pub struct MvtoNwrTarget;

impl Protocol for MvtoNwrTarget {
    type Engine = txlab_mvto::MvtoNwr<MemoryRecorder>;
    const NAME: &'static str = "mvto-nwr";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = txlab_mvto::MvtoConfig::manual().with_ack(txlab_core::AckMode::EpochStable);
        txlab_mvto::Mvto::builder()
            .nwr(Nwr)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

/// MVTO+NWR with single-write omitters (`mvto-nwr-single`), manual epochs, group commit.
pub struct MvtoNwrSingleTarget;

impl Protocol for MvtoNwrSingleTarget {
    type Engine = txlab_mvto::MvtoNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "mvto-nwr-single";
    const STRICT: bool = false;
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = txlab_mvto::MvtoConfig::manual().with_ack(txlab_core::AckMode::EpochStable);
        txlab_mvto::Mvto::builder()
            .nwr(NwrSingleWrite)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

/// A message shape with every kind of field the frame decoder must handle.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum NetProbe {
    /// Integers of every width, a bool and a char.
    Scalars(u8, u16, u32, u64, i64, bool, char),
    /// Variable-length fields.
    Sized {
        /// A string.
        text: String,
        /// A list.
        list: Vec<u32>,
        /// An optional nested message.
        nested: Option<Box<NetProbe>>,
    },
    /// A map.
    Map(std::collections::BTreeMap<u16, Vec<u8>>),
}

/// Arbitrary bytes fed to the distribution layer's frame decoder (as the counter's messages, as
/// a richer message shape, as a `deliver` batch and as a handshake) under a small frame limit:
/// every input decodes or is refused with an error, never a panic or an unbounded allocation;
/// whatever decodes re-encodes to the same bytes.
pub fn net_frame(data: &[u8]) {
    use txlab_net::wire::{Frame, decode, encode};
    const LIMIT: usize = 64 << 10;
    fn round_trip<T>(data: &[u8])
    where
        T: serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug + PartialEq,
    {
        if let Ok(v) = decode::<T>(data, LIMIT) {
            let again = encode(&v, LIMIT).expect("a decoded value re-encodes within the limit");
            assert_eq!(decode::<T>(&again, LIMIT).expect("re-decodes"), v);
        }
    }
    round_trip::<txlab_net::counter::CounterMsg>(data);
    round_trip::<NetProbe>(data);
    round_trip::<txlab_net::tcp::Hello>(data);
    if let Ok(batch) = decode::<Vec<Frame>>(data, LIMIT) {
        for f in batch {
            round_trip::<txlab_net::counter::CounterMsg>(&f.0);
        }
    }
}
