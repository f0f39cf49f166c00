//! Worker placement: which logical CPU each worker thread is pinned to.
//!
//! The default is one worker per *physical* core: the logical CPUs this process may run on
//! (`core_affinity::get_core_ids`, i.e. the affinity mask) are grouped by
//! `(physical_package_id, core_id)` read from `/sys/devices/system/cpu/cpuN/topology/`, and the
//! lowest-numbered logical CPU of each group is used. Cores are handed out one socket after the
//! other, so a 4-thread run on a 2 × 8-core machine stays on socket 0.
//!
//! With hyperthreads enabled every logical CPU is used: first the first thread of each core of
//! socket 0, then the second threads of socket 0, then socket 1, and so on.
//!
//! Invariants:
//! - Asking for more threads than CPUs is allowed: CPUs are reused round-robin.
//! - A plan is marked `oversubscribed` whenever it has more workers than *physical cores*, with
//!   every placement: with hyperthreads, two workers on sibling hyperthreads share one core, so
//!   a 16-thread run on 8 cores is not a 16-core scaling point even though every worker has a
//!   logical CPU of its own. Every report carries the mark so such numbers are not mistaken for
//!   scaling results.
//! - A CPU whose topology files are missing (containers, exotic kernels) is treated as its own
//!   core on package 0. A machine where the affinity mask cannot be read runs unpinned, and its
//!   physical cores are counted over the online CPUs (`/sys/devices/system/cpu/online`) when
//!   sysfs is readable, else taken to be `std::thread::available_parallelism`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// One logical CPU and its place in the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogicalCpu {
    /// The OS's CPU number (`cpuN`).
    pub id: usize,
    /// `physical_package_id` (the socket).
    pub package: u32,
    /// `core_id` within the package.
    pub core: u32,
}

/// The logical CPUs available to this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    cpus: Vec<LogicalCpu>,
}

/// How workers are placed on CPUs.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// One worker per physical core (the default).
    #[default]
    PhysicalCores,
    /// Every logical CPU, hyperthread siblings included.
    Hyperthreads,
    /// No pinning at all (the OS schedules the threads).
    Unpinned,
}

/// The CPUs assigned to a run's workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuPlan {
    /// Worker `i` is pinned to `cpus[i]` (`None`: not pinned).
    pub cpus: Vec<Option<usize>>,
    /// More workers than physical cores (whatever the placement; see the module docs).
    pub oversubscribed: bool,
    /// How many distinct CPUs the placement offers (logical CPUs with hyperthreads).
    pub available: usize,
    /// How many physical cores the process may run on.
    pub physical_cores: usize,
}

fn read_u32(path: &Path) -> Option<u32> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl Topology {
    /// Builds the topology of `allowed` logical CPUs from a sysfs CPU directory such as
    /// `/sys/devices/system/cpu` (a fake tree in tests).
    pub fn from_sysfs(cpu_dir: &Path, allowed: &[usize]) -> Self {
        let mut cpus: Vec<LogicalCpu> = allowed
            .iter()
            .map(|&id| {
                let topo = cpu_dir.join(format!("cpu{id}")).join("topology");
                let package = read_u32(&topo.join("physical_package_id"));
                let core = read_u32(&topo.join("core_id"));
                match (package, core) {
                    (Some(package), Some(core)) => LogicalCpu { id, package, core },
                    // Unknown: its own core. Core ids above u32::MAX/2 never clash with real ones.
                    _ => LogicalCpu {
                        id,
                        package: 0,
                        core: u32::MAX / 2 + id as u32,
                    },
                }
            })
            .collect();
        cpus.sort_by_key(|c| c.id);
        cpus.dedup_by_key(|c| c.id);
        Self { cpus }
    }

    /// The topology of every online CPU of a sysfs CPU directory (read from its `online` list,
    /// e.g. `0-3,6`), whatever this process's affinity mask; `None` if the list is unreadable.
    pub fn online_from_sysfs(cpu_dir: &Path) -> Option<Self> {
        let list = fs::read_to_string(cpu_dir.join("online")).ok()?;
        let ids = parse_cpu_list(&list)?;
        (!ids.is_empty()).then(|| Self::from_sysfs(cpu_dir, &ids))
    }

    /// The topology of this machine as this process sees it, or `None` if the affinity mask
    /// cannot be read (then workers run unpinned).
    pub fn detect() -> Option<Self> {
        let ids = core_affinity::get_core_ids()?;
        let allowed: Vec<usize> = ids.iter().map(|c| c.id).collect();
        if allowed.is_empty() {
            return None;
        }
        Some(Self::from_sysfs(
            Path::new("/sys/devices/system/cpu"),
            &allowed,
        ))
    }

    /// The logical CPUs, by id.
    pub fn cpus(&self) -> &[LogicalCpu] {
        &self.cpus
    }

    /// Number of logical CPUs.
    pub fn logical_count(&self) -> usize {
        self.cpus.len()
    }

    /// Number of physical cores.
    pub fn physical_count(&self) -> usize {
        self.physical_cores().len()
    }

    /// Logical CPUs grouped by (package, core), each group in ascending CPU id.
    fn cores(&self) -> BTreeMap<(u32, u32), Vec<usize>> {
        let mut cores: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
        for c in &self.cpus {
            cores.entry((c.package, c.core)).or_default().push(c.id);
        }
        cores
    }

    /// The first logical CPU of each physical core, socket by socket.
    pub fn physical_cores(&self) -> Vec<usize> {
        let mut firsts: Vec<((u32, u32), usize)> = self
            .cores()
            .into_iter()
            .map(|(k, ids)| (k, ids[0]))
            .collect();
        // Within a package, order cores by their first CPU id (core ids may have gaps).
        firsts.sort_by_key(|&((package, _), id)| (package, id));
        firsts.into_iter().map(|(_, id)| id).collect()
    }

    /// Every logical CPU: per socket, the first thread of each core, then the second, ...
    pub fn hyperthreads(&self) -> Vec<usize> {
        let mut order: Vec<(u32, usize, usize)> = Vec::new(); // (package, sibling rank, cpu)
        for ((package, _), ids) in self.cores() {
            for (rank, &id) in ids.iter().enumerate() {
                order.push((package, rank, id));
            }
        }
        order.sort();
        order.into_iter().map(|(_, _, id)| id).collect()
    }

    /// Assigns CPUs to `threads` workers (see the module docs): round-robin over the
    /// placement's CPUs, oversubscribed beyond the physical cores whatever the placement.
    pub fn plan(&self, placement: Placement, threads: usize) -> CpuPlan {
        let physical_cores = self.physical_count();
        let pool = match placement {
            Placement::PhysicalCores => self.physical_cores(),
            Placement::Hyperthreads => self.hyperthreads(),
            Placement::Unpinned => Vec::new(),
        };
        let cpus = if pool.is_empty() {
            vec![None; threads]
        } else {
            (0..threads).map(|i| Some(pool[i % pool.len()])).collect()
        };
        CpuPlan {
            cpus,
            // An empty topology knows no cores: nothing to judge against.
            oversubscribed: physical_cores > 0 && threads > physical_cores,
            available: if placement == Placement::Unpinned {
                physical_cores
            } else {
                pool.len()
            },
            physical_cores,
        }
    }
}

/// Parses a kernel CPU list such as `0-3,6,8-9` (trailing newline allowed).
fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut ids = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                ids.extend(a..=b);
            }
            None => ids.push(part.parse().ok()?),
        }
    }
    Some(ids)
}

/// The plan when the affinity mask cannot be read: nothing is pinned, and oversubscription is
/// judged against the physical cores of `online` (the online CPUs' topology) if known, else
/// against `logical` CPUs.
fn unpinned_plan(online: Option<&Topology>, logical: usize, threads: usize) -> CpuPlan {
    let physical_cores = online.map_or(logical, Topology::physical_count).max(1);
    CpuPlan {
        cpus: vec![None; threads],
        oversubscribed: threads > physical_cores,
        available: physical_cores,
        physical_cores,
    }
}

/// The physical cores this process may run on: those of its affinity mask, else of the online
/// CPUs, else `std::thread::available_parallelism` (at least 1).
pub fn physical_cores_of_this_machine() -> usize {
    plan_for_this_machine(Placement::Unpinned, 1).physical_cores
}

/// Plans placement on this machine. Without a readable affinity mask, workers run unpinned and
/// oversubscription is judged against the physical cores of the online CPUs where sysfs tells
/// them, else against `std::thread::available_parallelism`.
pub fn plan_for_this_machine(placement: Placement, threads: usize) -> CpuPlan {
    match Topology::detect() {
        Some(t) => t.plan(placement, threads),
        None => unpinned_plan(
            Topology::online_from_sysfs(Path::new("/sys/devices/system/cpu")).as_ref(),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads,
        ),
    }
}

/// Pins the calling thread to `cpu`; returns whether the OS accepted it.
pub fn pin_current_thread(cpu: usize) -> bool {
    core_affinity::set_for_current(core_affinity::CoreId { id: cpu })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fake sysfs tree: 2 sockets × 2 cores × 2 threads, numbered like Linux does on most
    /// Intel machines (cpu0-3 are the first threads, cpu4-7 their siblings).
    fn fake_sysfs(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("txlab-topo-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for cpu in 0..8u32 {
            let dir = root.join(format!("cpu{cpu}/topology"));
            fs::create_dir_all(&dir).unwrap();
            let package = (cpu / 2) % 2; // cpu0,1 → socket 0; cpu2,3 → socket 1; siblings alike
            let core = cpu % 2;
            fs::write(dir.join("physical_package_id"), format!("{package}\n")).unwrap();
            fs::write(dir.join("core_id"), format!("{core}\n")).unwrap();
        }
        root
    }

    #[test]
    fn physical_cores_take_the_first_thread_of_each_core_socket_by_socket() {
        let root = fake_sysfs("phys");
        let t = Topology::from_sysfs(&root, &(0..8).collect::<Vec<_>>());
        assert_eq!(t.logical_count(), 8);
        assert_eq!(t.physical_count(), 4);
        assert_eq!(t.physical_cores(), vec![0, 1, 2, 3]);
        let p = t.plan(Placement::PhysicalCores, 2);
        assert_eq!(
            p.cpus,
            vec![Some(0), Some(1)],
            "two threads stay on socket 0"
        );
        assert!(!p.oversubscribed);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn hyperthreads_fill_a_socket_before_the_next() {
        let root = fake_sysfs("ht");
        let t = Topology::from_sysfs(&root, &(0..8).collect::<Vec<_>>());
        assert_eq!(t.hyperthreads(), vec![0, 1, 4, 5, 2, 3, 6, 7]);
        // Up to the physical cores, not oversubscribed. (Socket 0's siblings come first, so
        // these 4 workers share socket 0's 2 cores: that is what --hyperthreads asks for.)
        let p = t.plan(Placement::Hyperthreads, 4);
        assert_eq!(p.cpus, vec![Some(0), Some(1), Some(4), Some(5)]);
        assert!(!p.oversubscribed, "4 threads on 4 physical cores");
        // Every logical CPU used: 8 workers on 4 cores share them, so the result is marked.
        let p = t.plan(Placement::Hyperthreads, 8);
        assert_eq!(p.available, 8);
        assert_eq!(p.physical_cores, 4);
        assert_eq!(
            p.cpus,
            [0, 1, 4, 5, 2, 3, 6, 7].map(Some).to_vec(),
            "one worker per logical CPU"
        );
        assert!(p.oversubscribed, "8 threads on 4 physical cores");
        let p = t.plan(Placement::Hyperthreads, 5);
        assert!(p.oversubscribed, "5 threads on 4 physical cores");
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn without_an_affinity_mask_oversubscription_counts_the_online_physical_cores() {
        let root = fake_sysfs("online");
        fs::write(root.join("online"), "0-7\n").unwrap();
        let online = Topology::online_from_sysfs(&root).unwrap();
        assert_eq!(online.logical_count(), 8);
        // 8 logical CPUs but 4 physical cores: 5 workers are oversubscribed.
        let p = unpinned_plan(Some(&online), 8, 5);
        assert_eq!(p.cpus, vec![None; 5]);
        assert!(p.oversubscribed);
        assert_eq!(p.physical_cores, 4);
        assert!(!unpinned_plan(Some(&online), 8, 4).oversubscribed);
        // Unknown topology: the logical CPU count is all there is to judge by.
        assert!(!unpinned_plan(None, 8, 5).oversubscribed);
        assert!(unpinned_plan(None, 8, 9).oversubscribed);
        // A partial online list.
        fs::write(root.join("online"), "0,2-3\n").unwrap();
        let online = Topology::online_from_sysfs(&root).unwrap();
        assert_eq!(
            online.cpus().iter().map(|c| c.id).collect::<Vec<_>>(),
            [0, 2, 3]
        );
        assert_eq!(parse_cpu_list("0-1,x"), None);
        assert_eq!(parse_cpu_list("4-2"), None);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn more_threads_than_cores_round_robin_and_are_marked_oversubscribed() {
        let root = fake_sysfs("over");
        let t = Topology::from_sysfs(&root, &(0..8).collect::<Vec<_>>());
        let p = t.plan(Placement::PhysicalCores, 6);
        assert_eq!(
            p.cpus,
            vec![Some(0), Some(1), Some(2), Some(3), Some(0), Some(1)]
        );
        assert!(p.oversubscribed);
        assert_eq!(p.available, 4);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn the_affinity_mask_restricts_the_cpus_and_missing_files_mean_own_core() {
        let root = fake_sysfs("mask");
        // Only the siblings of socket 1 plus a CPU without topology files.
        let t = Topology::from_sysfs(&root, &[6, 7, 2, 42]);
        assert_eq!(t.physical_cores(), vec![42, 2, 7]);
        assert_eq!(
            t.physical_count(),
            3,
            "cpu6 is cpu2's sibling; cpu42 is its own core"
        );
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn unpinned_plans_pin_nothing() {
        let root = fake_sysfs("unpinned");
        let t = Topology::from_sysfs(&root, &(0..8).collect::<Vec<_>>());
        let p = t.plan(Placement::Unpinned, 5);
        assert_eq!(p.cpus, vec![None; 5]);
        assert!(p.oversubscribed, "5 threads on 4 physical cores");
        fs::remove_dir_all(root).unwrap();
    }
}
