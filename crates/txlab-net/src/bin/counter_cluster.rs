//! The replicated counter across processes, and the launcher tests' child process:
//!
//! ```text
//! txlab-net-counter cluster --local N [--distinct-hosts] -- run --protocol net-counter [--increments K]
//! txlab-net-counter node --cluster FILE --id K
//! ```
//!
//! The same subcommands as `txlab node` / `txlab cluster` (`txlab_net::cluster::cli`), with only
//! the counter registered.

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    txlab_net::cluster::cli::main(
        &args,
        &[&txlab_net::counter::NetCounter],
        env!("CARGO_PKG_VERSION"),
    )
}
