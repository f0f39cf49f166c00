//! A warmed-up worker of every Silo variant commits without allocating
//! (`txlab_testkit::no_alloc`).

use txlab_silo::{Nwr, NwrSingleWrite};
use txlab_silo::{Silo, SiloConfig};
use txlab_testkit::no_alloc::{Counting, warmed_up_commits_do_not_allocate};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_warmed_up_worker_commits_without_allocating() {
    warmed_up_commits_do_not_allocate(|s| Silo::builder().config(SiloConfig::manual()).build(s));
}

#[test]
fn a_warmed_up_nwr_worker_commits_without_allocating() {
    warmed_up_commits_do_not_allocate(|s| {
        Silo::builder()
            .nwr(Nwr)
            .config(SiloConfig::manual())
            .build(s)
    });
}

#[test]
fn a_warmed_up_nwr_single_worker_commits_without_allocating() {
    warmed_up_commits_do_not_allocate(|s| {
        Silo::builder()
            .nwr(NwrSingleWrite)
            .config(SiloConfig::manual())
            .build(s)
    });
}
