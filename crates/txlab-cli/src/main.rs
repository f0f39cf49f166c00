//! The `txlab` command line (the `txlab_cli` library does everything).

// mimalloc only here, in the binary: library crates never pick the allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    txlab_cli::main()
}
