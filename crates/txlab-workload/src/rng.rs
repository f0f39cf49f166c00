//! Per-worker random number generators, deterministic given `(seed, thread)`.
//!
//! Every generator of this crate draws from a [`ChaCha8Rng`] seeded with
//! [`SeedableRng::seed_from_u64`]`(seed)` and switched to stream `thread` with
//! [`ChaCha8Rng::set_stream`]. ChaCha's output is specified bit for bit (it does not depend on the
//! platform, pointer width or endianness), and distinct streams of one key are independent
//! keystreams, so workers never share a sequence and a run is reproducible on any machine from
//! `(seed, thread)` alone.
//!
//! Invariant: the same `(seed, thread)` always yields the same sequence of draws; changing either
//! yields a different one.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The random number generator every workload generator uses.
pub type WorkloadRng = ChaCha8Rng;

/// The generator for worker `thread` of a run seeded with `seed` (see the module docs).
pub fn worker_rng(seed: u64, thread: usize) -> WorkloadRng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(thread as u64);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn first_words(seed: u64, thread: usize) -> Vec<u64> {
        let mut rng = worker_rng(seed, thread);
        (0..8).map(|_| rng.next_u64()).collect()
    }

    #[test]
    fn same_seed_and_thread_repeat_and_others_differ() {
        assert_eq!(first_words(7, 3), first_words(7, 3));
        assert_ne!(first_words(7, 3), first_words(7, 4));
        assert_ne!(first_words(7, 3), first_words(8, 3));
    }
}
