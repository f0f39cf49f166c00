//! A warmed-up worker of every TicToc variant commits without allocating
//! (`txlab_testkit::no_alloc`).

use txlab_testkit::no_alloc::{Counting, warmed_up_commits_do_not_allocate};
use txlab_tictoc::{Nwr, NwrSingleWrite};
use txlab_tictoc::{TicToc, TicTocConfig};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_warmed_up_worker_commits_without_allocating() {
    warmed_up_commits_do_not_allocate(|s| {
        TicToc::builder().config(TicTocConfig::manual()).build(s)
    });
}

#[test]
fn a_warmed_up_nwr_worker_commits_without_allocating() {
    warmed_up_commits_do_not_allocate(|s| {
        TicToc::builder()
            .nwr(Nwr)
            .config(TicTocConfig::manual())
            .build(s)
    });
}

#[test]
fn a_warmed_up_nwr_single_worker_commits_without_allocating() {
    warmed_up_commits_do_not_allocate(|s| {
        TicToc::builder()
            .nwr(NwrSingleWrite)
            .config(TicTocConfig::manual())
            .build(s)
    });
}
