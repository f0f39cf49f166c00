//! Bakes the git revision of the source checkout into the binary as `TXLAB_GIT_REVISION`, so a
//! binary copied to another host (or run from another directory) still reports the revision it was
//! built from. Without git, or outside a checkout, the variable is `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let dir = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_string())
}

fn main() {
    let revision = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TXLAB_GIT_REVISION={revision}");
    // Rebuild when HEAD moves: HEAD itself (branch switches, detached checkouts), the branch's ref
    // file and packed-refs (commits, resets). Paths come from git, so worktrees resolve correctly.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", &name]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
