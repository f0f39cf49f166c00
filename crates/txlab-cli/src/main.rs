//! The `txlab` command line: `txlab node` and `txlab cluster` (multi-process runs of distributed
//! protocols, `txlab_net::cluster::cli`); everything else lives in the `txlab_cli` library.

// mimalloc only here, in the binary: library crates never pick the allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if matches!(args.first().map(String::as_str), Some("node" | "cluster")) {
        let git_revision = txlab_harness::machine::MachineInfo::detect().git_revision;
        let protocols: [&dyn txlab_net::cluster::cli::ClusterProtocol; 1] =
            [&txlab_net::counter::NetCounter];
        return txlab_net::cluster::cli::main(&args, &protocols, &git_revision);
    }
    txlab_cli::main()
}
