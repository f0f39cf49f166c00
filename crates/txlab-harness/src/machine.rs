//! A description of the machine and build a result came from, for `results.json`.
//!
//! Every field degrades to `"unknown"` (or 0) instead of failing: a report from a machine without
//! `/proc` or without git is still a report.

use crate::topology::Topology;
use serde::Serialize;
use std::ffi::CStr;

/// Where and with what a run was measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MachineInfo {
    /// `model name` from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Logical CPUs this process may use.
    pub logical_cpus: usize,
    /// Physical cores among them.
    pub physical_cores: usize,
    /// Kernel name and release from `uname` (e.g. `Linux 6.8.0`).
    pub kernel: String,
    /// `git rev-parse HEAD` of the source checkout the binary was built from (recorded at build
    /// time, so it stays true wherever the binary runs), or `unknown` when built outside git.
    pub git_revision: String,
    /// The txlab-harness crate version.
    pub crate_version: String,
    /// Whether this was an optimized build (numbers from debug builds are meaningless).
    pub release_build: bool,
    /// How the engines' records are laid out: `packed` (the default) or, with the
    /// `line-aligned-records` feature, which engines pad each record to a 64-byte cache line.
    pub record_layout: String,
}

impl MachineInfo {
    /// Describes this machine and build.
    pub fn detect() -> Self {
        let (logical_cpus, physical_cores) = match Topology::detect() {
            Some(t) => (t.logical_count(), t.physical_count()),
            None => {
                let n = std::thread::available_parallelism().map_or(0, |n| n.get());
                (n, n)
            }
        };
        Self {
            cpu_model: cpu_model(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default()),
            logical_cpus,
            physical_cores,
            kernel: kernel(),
            git_revision: git_revision(),
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            release_build: !cfg!(debug_assertions),
            record_layout: record_layout(),
        }
    }
}

/// `packed`, or `line-aligned (64 B): ` and the engines whose records are padded to a line.
pub fn record_layout() -> String {
    let padded: Vec<&str> = [
        ("silo", txlab_silo::LINE_ALIGNED_RECORDS),
        ("tictoc", txlab_tictoc::LINE_ALIGNED_RECORDS),
        ("mvto", txlab_mvto::LINE_ALIGNED_RECORDS),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    if padded.is_empty() {
        "packed".into()
    } else {
        format!("line-aligned (64 B): {}", padded.join(", "))
    }
}

/// The first `model name` line of a `/proc/cpuinfo` text.
pub fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn kernel() -> String {
    let mut u = std::mem::MaybeUninit::<libc::utsname>::zeroed();
    // SAFETY: `u` is writable memory the size of a `utsname`; uname only writes into it.
    if unsafe { libc::uname(u.as_mut_ptr()) } != 0 {
        return "unknown".into();
    }
    // SAFETY: uname succeeded, so every field is a NUL-terminated string within its array (and the
    // struct was zeroed first, so even a truncated field is terminated).
    let u = unsafe { u.assume_init() };
    // SAFETY: as above, `sysname` and `release` are NUL-terminated within their arrays.
    let (sys, rel) = unsafe {
        (
            CStr::from_ptr(u.sysname.as_ptr()),
            CStr::from_ptr(u.release.as_ptr()),
        )
    };
    format!("{} {}", sys.to_string_lossy(), rel.to_string_lossy())
}

/// The revision of the checkout this binary was built from, baked in by `build.rs`.
fn git_revision() -> String {
    env!("TXLAB_GIT_REVISION").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_is_taken_from_the_first_model_name_line() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Fancy CPU @ 3GHz\n\
                    processor\t: 1\nmodel name\t: Other\n";
        assert_eq!(cpu_model(text), "Fancy CPU @ 3GHz");
        assert_eq!(cpu_model("processor : 0\n"), "unknown");
    }

    #[test]
    fn detect_fills_every_field() {
        let m = MachineInfo::detect();
        assert!(m.logical_cpus >= 1 && m.physical_cores >= 1 && m.physical_cores <= m.logical_cpus);
        assert!(m.kernel.starts_with("Linux"), "{}", m.kernel);
        assert!(!m.git_revision.is_empty());
        let line_aligned = cfg!(feature = "line-aligned-records");
        assert_eq!(
            m.record_layout == "packed",
            !line_aligned,
            "{}",
            m.record_layout
        );
        if line_aligned {
            assert_eq!(m.record_layout, "line-aligned (64 B): silo, tictoc, mvto");
        }
    }

    #[test]
    fn revision_is_the_checkout_the_binary_was_built_from() {
        // The build script records HEAD of this crate's checkout; the test binary is rebuilt
        // whenever HEAD moves, so the two agree. It is a compile-time constant: the directory a
        // carried binary runs in cannot change it.
        let source = std::process::Command::new("git")
            .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        let baked = git_revision();
        match source {
            Some(rev) => assert_eq!(baked, rev),
            None => assert_eq!(baked, "unknown"),
        }
    }
}
