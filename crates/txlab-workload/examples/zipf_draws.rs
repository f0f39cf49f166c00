//! Zipf draws in a loop, for counting instructions and simulated cache misses per key with
//! callgrind (stable on a noisy machine) and for a native time per draw:
//!
//! ```text
//! cargo build --release -p txlab-workload --example zipf_draws
//! valgrind --tool=callgrind --cache-sim=yes --toggle-collect='zipf_draws::measured*' \
//!     target/release/examples/zipf_draws txlab 100000 0.99 1000000
//! # per key: each event's total / 1000000
//! ```
//!
//! Arguments: method, items, theta, draws. Methods: `txlab` (`txlab_workload::Zipf`, the sampler
//! the workloads use), `rand-distr` (`rand_distr::Zipf`, rejection sampling), `gray`
//! (`txlab_workload::gray::GrayZipf`, the closed-form approximation CCBench and YCSB use; not
//! exact), `uniform` (`rand::distr::Uniform`, for reference). Every
//! method draws from the workloads' xoshiro256++ stream. The same number of draws runs first as a
//! warm-up; then `measured` runs them again.

use rand::distr::{Distribution, Uniform};
use std::hint::black_box;
use txlab_workload::Zipf;
use txlab_workload::gray::GrayZipf;
use txlab_workload::rng::{WorkloadRng, worker_rng};

enum Method {
    Txlab(Zipf),
    RandDistr(rand_distr::Zipf<f64>),
    Gray(GrayZipf),
    Uniform(Uniform<u64>),
}

#[inline(always)]
fn draw(method: &Method, rng: &mut WorkloadRng) -> u64 {
    match method {
        Method::Txlab(z) => z.sample(rng),
        Method::RandDistr(z) => z.sample(rng) as u64 - 1,
        Method::Gray(g) => g.sample(rng),
        Method::Uniform(u) => u.sample(rng),
    }
}

/// The draws callgrind counts (`--toggle-collect='zipf_draws::measured*'`).
#[inline(never)]
fn measured(method: &Method, rng: &mut WorkloadRng, draws: u64) -> u64 {
    let mut sum = 0u64;
    for _ in 0..draws {
        sum = sum.wrapping_add(draw(method, rng));
    }
    sum
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: zipf_draws METHOD(txlab|rand-distr|gray|uniform) ITEMS THETA DRAWS";
    let [_, method, n, theta, draws] = &args[..] else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let n: u64 = n.parse().expect("ITEMS is a number");
    let theta: f64 = theta.parse().expect("THETA is a number");
    let draws: u64 = draws.parse().expect("DRAWS is a number");
    let method = match method.as_str() {
        "txlab" => Method::Txlab(Zipf::new(n, theta).expect("valid parameters")),
        "rand-distr" => {
            Method::RandDistr(rand_distr::Zipf::new(n as f64, theta).expect("valid parameters"))
        }
        "gray" => Method::Gray(GrayZipf::new(n, theta).expect("valid parameters")),
        "uniform" => Method::Uniform(Uniform::new(0, n).expect("n > 0")),
        other => {
            eprintln!("method {other:?}\n{usage}");
            std::process::exit(2);
        }
    };
    let mut rng = worker_rng(42, 0);
    black_box(measured(&method, &mut rng, draws));
    let start = std::time::Instant::now();
    let sum = measured(&method, &mut rng, draws);
    let ns = start.elapsed().as_nanos() as f64 / draws as f64;
    println!("{draws} draws measured, {ns:.1} ns each (checksum {sum})");
}
