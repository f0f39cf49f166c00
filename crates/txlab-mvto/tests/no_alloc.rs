//! A warmed-up worker of every Mvto variant commits without allocating
//! (`txlab_testkit::no_alloc`).

use txlab_mvto::{Mvto, MvtoConfig};
use txlab_mvto::{Nwr, NwrSingleWrite};
use txlab_testkit::no_alloc::{Counting, warmed_up_commits_do_not_allocate};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_warmed_up_worker_commits_without_allocating() {
    warmed_up_commits_do_not_allocate(|s| Mvto::builder().config(MvtoConfig::manual()).build(s));
}

#[test]
fn a_warmed_up_nwr_worker_commits_without_allocating() {
    warmed_up_commits_do_not_allocate(|s| {
        Mvto::builder()
            .nwr(Nwr)
            .config(MvtoConfig::manual())
            .build(s)
    });
}

#[test]
fn a_warmed_up_nwr_single_worker_commits_without_allocating() {
    warmed_up_commits_do_not_allocate(|s| {
        Mvto::builder()
            .nwr(NwrSingleWrite)
            .config(MvtoConfig::manual())
            .build(s)
    });
}
