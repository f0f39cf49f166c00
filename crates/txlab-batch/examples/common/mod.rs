//! Helpers shared by the measurement examples: argument parsing and the load average printed
//! next to every table (the measurements run on a small shared machine).

#![allow(dead_code)] // each example uses a subset

use std::time::Duration;
use txlab_core::Error;

/// The `index`-th command-line argument parsed as seconds per point (default `default`),
/// between 0.05 and 600.
pub fn seconds_arg(index: usize, default: f64) -> Result<Duration, Error> {
    let seconds = match std::env::args().nth(index) {
        None => default,
        Some(s) => s
            .parse::<f64>()
            .map_err(|_| Error::invalid("seconds per point", &s, "a number of seconds"))?,
    };
    if !(0.05..=600.0).contains(&seconds) {
        return Err(Error::invalid(
            "seconds per point",
            seconds,
            "between 0.05 and 600",
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// The `index`-th argument, or `default`.
pub fn word_arg(index: usize, default: &str) -> String {
    std::env::args()
        .nth(index)
        .unwrap_or_else(|| default.to_string())
}

/// Prints the 1-, 5- and 15-minute load averages (from `/proc/loadavg`, if readable).
pub fn print_load(label: &str) {
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unavailable".into());
    println!("\n_load average (1/5/15 min) {label}: {load}_\n");
}

/// The `index`-th argument as a repeat count in `1..=20` (default `default`).
pub fn repeats_arg(index: usize, default: usize) -> Result<usize, Error> {
    let Some(s) = std::env::args().nth(index) else {
        return Ok(default);
    };
    match s.parse::<usize>() {
        Ok(n) if (1..=20).contains(&n) => Ok(n),
        _ => Err(Error::invalid("repeats", s, "an integer in 1..=20")),
    }
}

/// The median of `values` (the mean of the two middle ones for an even count); 0 if empty.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}
