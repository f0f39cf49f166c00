//! `txlab rococo-check`: ROCOCO's offline SC-graph checker ([`txlab_rococo::sc`]) on a
//! workload's piece profiles, printed as text or JSON.
//!
//! Exit codes: 0 when no unreorderable SC-cycle exists; 1 when one does (the report, with the
//! proposed merges, is still printed); 2 for bad input (TPC-C without `--tpcc-scaled`: its pieces
//! are defined for ROCOCO's scaled variant only).

use crate::Failure;
use clap::{Args, ValueEnum};
use std::time::Instant;
use txlab_core::Error;
use txlab_core::pieces::{PieceKind, PieceProfiles};
use txlab_rococo::sc::{ScOptions, ScReport, examples, report};
use txlab_workload::{Tpcc, TpccConfig, Ycsb, YcsbConfig, YcsbPreset};

/// The workloads whose profiles can be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckedWorkload {
    /// TPC-C's pieces (ROCOCO's decomposition; needs --tpcc-scaled).
    Tpcc,
    /// YCSB: every operation a deferrable piece.
    Ycsb,
    /// The paper's Figure 2 fragment, p1 immediate and p2 deferrable.
    Figure2,
    /// Figure 2 with both pieces immediate (unreorderable).
    Figure2Immediate,
    /// The paper's Figure 4 (simplified NewOrder).
    Figure4,
}

/// `txlab rococo-check`.
#[derive(Debug, Clone, Args)]
pub struct RococoCheckArgs {
    /// Whose profiles to check.
    #[arg(long, value_enum, default_value = "tpcc")]
    pub workload: CheckedWorkload,
    /// TPC-C: ROCOCO's scaled variant (no W_YTD), the only one with pieces.
    #[arg(long)]
    pub tpcc_scaled: bool,
    /// Put read-only types into the SC-graph as ordinary ones (shows why ROCOCO runs them with
    /// its 2-round protocol).
    #[arg(long)]
    pub include_read_only: bool,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also time the analysis: run it this many times, 1..=100000, in this process (profiles
    /// built and analysed; start-up excluded) and print min, median and max on stderr.
    #[arg(long, value_parser = crate::ranged(1u32, 100_000), allow_negative_numbers = true)]
    pub time: Option<u32>,
}

/// The report for `args` and how long the analysis took.
pub fn check(args: &RococoCheckArgs) -> Result<(ScReport, std::time::Duration), Failure> {
    let workload: Box<dyn PieceProfiles> = match args.workload {
        CheckedWorkload::Tpcc if !args.tpcc_scaled => {
            return Err(Failure::Usage(Error::invalid(
                "--tpcc-scaled",
                false,
                "must be given: ROCOCO's TPC-C pieces are defined for its scaled variant (no W_YTD, \
                 WAREHOUSE replicated and never written)",
            )));
        }
        CheckedWorkload::Tpcc => {
            Box::new(Tpcc::new(TpccConfig::rococo_scaled()).map_err(Failure::Usage)?)
        }
        CheckedWorkload::Ycsb => {
            Box::new(Ycsb::new(YcsbConfig::preset(YcsbPreset::A)).map_err(Failure::Usage)?)
        }
        CheckedWorkload::Figure2 => Box::new(examples::figure2(
            PieceKind::Immediate,
            PieceKind::Deferrable,
        )),
        CheckedWorkload::Figure2Immediate => Box::new(examples::figure2(
            PieceKind::Immediate,
            PieceKind::Immediate,
        )),
        CheckedWorkload::Figure4 => Box::new(examples::figure4()),
    };
    let opts = ScOptions {
        include_read_only: args.include_read_only,
    };
    workload.check_pieced().map_err(Failure::Usage)?;
    let start = Instant::now();
    let r = report(workload.as_ref(), opts).map_err(|e| Failure::Usage(Error::from(e)))?;
    Ok((r, start.elapsed()))
}

/// Prints the report; an unreorderable workload is a failure (exit 1) after the report.
pub fn execute(args: &RococoCheckArgs) -> Result<(), Failure> {
    let (r, took) = check(args)?;
    if args.json {
        println!("{}", r.to_json());
    } else {
        print!("{r}");
    }
    eprintln!("analysed in {} us", took.as_micros());
    if let Some(n) = args.time {
        let (min, median, max) = timed(args, n)?;
        eprintln!("analysed {n} times: min {min} us, median {median} us, max {max} us");
    }
    if r.is_safe() {
        Ok(())
    } else {
        Err(Failure::Run(format!(
            "{} block(s) with an unreorderable SC-cycle: ROCOCO would refuse this workload \
             (merged pieces are not executed); see the proposed merges above",
            r.unreorderable.len()
        )))
    }
}

/// Runs the analysis `n` times: min, median and max in microseconds.
pub fn timed(args: &RococoCheckArgs, n: u32) -> Result<(u128, u128, u128), Failure> {
    let mut us = (0..n)
        .map(|_| check(args).map(|(_, t)| t.as_micros()))
        .collect::<Result<Vec<_>, _>>()?;
    us.sort_unstable();
    Ok((us[0], us[us.len() / 2], us[us.len() - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cli, Command};
    use clap::Parser;

    fn args(argv: &[&str]) -> RococoCheckArgs {
        let mut all = vec!["txlab", "rococo-check"];
        all.extend_from_slice(argv);
        match Cli::try_parse_from(all).unwrap().command {
            Command::RococoCheck(a) => a,
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn scaled_tpcc_is_safe_and_figure2_all_immediate_is_not() {
        let (r, _) = check(&args(&["--workload", "tpcc", "--tpcc-scaled"])).unwrap();
        assert!(r.is_safe(), "{r}");
        assert!(execute(&args(&["--tpcc-scaled", "--json"])).is_ok());
        let (r, _) = check(&args(&["--workload", "figure2-immediate"])).unwrap();
        assert!(!r.is_safe());
        assert!(
            r.to_string()
                .contains("proposed merge, new_order_fragment: p1 + p2")
        );
        let e = execute(&args(&["--workload", "figure2-immediate"])).unwrap_err();
        assert_eq!(e.exit_code(), crate::EXIT_FAILURE, "{e}");
        let (r, _) = check(&args(&["--tpcc-scaled", "--include-read-only"])).unwrap();
        assert!(!r.is_safe());
    }

    #[test]
    fn time_runs_the_analysis_n_times_and_orders_its_statistics() {
        let a = args(&["--tpcc-scaled", "--time", "5"]);
        assert_eq!(a.time, Some(5));
        let (min, median, max) = timed(&a, 5).unwrap();
        assert!(min <= median && median <= max);
        assert!(Cli::try_parse_from(["txlab", "rococo-check", "--time", "0"]).is_err());
    }

    #[test]
    fn tpcc_without_the_scaled_flag_is_a_usage_error_naming_it() {
        let e = check(&args(&["--workload", "tpcc"])).unwrap_err();
        assert_eq!(e.exit_code(), crate::EXIT_USAGE);
        assert!(e.to_string().contains("--tpcc-scaled"), "{e}");
    }
}
