//! Process resource usage: CPU time and peak resident set size, from `getrusage(RUSAGE_SELF)`.
//!
//! CPU time is summed over every thread of the process (workers, the epoch advancer, the
//! coordinator), so `cpu_time / elapsed` shows how many cores a run kept busy. Peak RSS is the
//! kernel's high-water mark for the whole process lifetime (Linux reports `ru_maxrss` in KiB); it
//! never decreases, so in a sweep it is the maximum over this and every earlier run.

use std::time::Duration;
use txlab_core::Error;

/// A snapshot of the process's resource usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResourceUsage {
    /// CPU time spent in user mode.
    pub user: Duration,
    /// CPU time spent in the kernel.
    pub system: Duration,
    /// Peak resident set size in bytes.
    pub max_rss_bytes: u64,
}

impl ResourceUsage {
    /// Total CPU time.
    pub fn cpu(&self) -> Duration {
        self.user + self.system
    }
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
}

/// The usage of this process so far.
pub fn process_usage() -> Result<ResourceUsage, Error> {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` points to writable memory the size of a `rusage`; getrusage only writes it.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if rc != 0 {
        return Err(Error::Internal(format!(
            "getrusage failed: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: getrusage returned 0, so it filled the struct (and it was zeroed before anyway,
    // and every field of `rusage` is a plain integer, valid for any bit pattern).
    let ru = unsafe { ru.assume_init() };
    Ok(ResourceUsage {
        user: timeval(ru.ru_utime),
        system: timeval(ru.ru_stime),
        max_rss_bytes: (ru.ru_maxrss.max(0) as u64) * 1024,
    })
}

/// The memory this process may still use, in bytes: the smaller of the kernel's `MemAvailable`
/// (`/proc/meminfo`) and what the address-space limit (`RLIMIT_AS`) leaves beside the address
/// space in use (`VmSize`); `None` if neither is known.
pub fn memory_limit() -> Option<u64> {
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| meminfo_field(&m, "MemAvailable:"));
    match (available, address_space_left()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What the address-space limit (`RLIMIT_AS`) leaves beside the address space in use
/// (`VmSize`), in bytes; `None` without a limit.
pub fn address_space_left() -> Option<u64> {
    let in_use = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|m| meminfo_field(&m, "VmSize:"))
        .unwrap_or(0);
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is a valid, writable `rlimit`; getrlimit only writes it.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) };
    (rc == 0 && rl.rlim_cur != libc::RLIM_INFINITY).then(|| rl.rlim_cur.saturating_sub(in_use))
}

/// The `name: N kB` field of a `/proc/meminfo` or `/proc/self/status` text, in bytes.
fn meminfo_field(meminfo: &str, name: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `bytes` as `1.5 GiB`, `300 MiB`, `12 KiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_while_spinning_and_rss_is_nonzero() {
        let before = process_usage().unwrap();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let after = process_usage().unwrap();
        assert!(after.cpu() > before.cpu(), "{before:?} -> {after:?}");
        assert!(after.max_rss_bytes > 0);
    }

    #[test]
    fn memory_facts_parse() {
        let m = "MemTotal:       24000000 kB\nMemAvailable:   2000 kB\n";
        assert_eq!(meminfo_field(m, "MemAvailable:"), Some(2_048_000));
        assert_eq!(meminfo_field("MemTotal: 1 kB", "MemAvailable:"), None);
        assert!(memory_limit().is_some_and(|b| b > 0));
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
