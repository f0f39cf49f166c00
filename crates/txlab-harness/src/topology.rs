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
//! - Asking for more threads than CPUs is allowed: CPUs are reused round-robin and the plan is
//!   marked `oversubscribed`, which every report carries so such numbers are not mistaken for
//!   scaling results.
//! - A CPU whose topology files are missing (containers, exotic kernels) is treated as its own
//!   core on package 0; a machine where the affinity mask cannot be read runs unpinned.

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
    /// More workers than distinct CPUs (or cores) of the chosen placement.
    pub oversubscribed: bool,
    /// How many distinct CPUs the placement offers.
    pub available: usize,
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

    /// Assigns CPUs to `threads` workers (see the module docs).
    pub fn plan(&self, placement: Placement, threads: usize) -> CpuPlan {
        let pool = match placement {
            Placement::PhysicalCores => self.physical_cores(),
            Placement::Hyperthreads => self.hyperthreads(),
            Placement::Unpinned => {
                let available = self.physical_count();
                return CpuPlan {
                    cpus: vec![None; threads],
                    oversubscribed: threads > available,
                    available,
                };
            }
        };
        plan_from_pool(&pool, threads)
    }
}

fn plan_from_pool(pool: &[usize], threads: usize) -> CpuPlan {
    if pool.is_empty() {
        return CpuPlan {
            cpus: vec![None; threads],
            oversubscribed: false,
            available: 0,
        };
    }
    CpuPlan {
        cpus: (0..threads).map(|i| Some(pool[i % pool.len()])).collect(),
        oversubscribed: threads > pool.len(),
        available: pool.len(),
    }
}

/// Plans placement on this machine; without a readable affinity mask, workers run unpinned and
/// oversubscription is judged against `std::thread::available_parallelism`.
pub fn plan_for_this_machine(placement: Placement, threads: usize) -> CpuPlan {
    match Topology::detect() {
        Some(t) => t.plan(placement, threads),
        None => {
            let available = std::thread::available_parallelism().map_or(1, |n| n.get());
            CpuPlan {
                cpus: vec![None; threads],
                oversubscribed: threads > available,
                available,
            }
        }
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
        let p = t.plan(Placement::Hyperthreads, 8);
        assert_eq!(p.available, 8);
        assert!(!p.oversubscribed);
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
