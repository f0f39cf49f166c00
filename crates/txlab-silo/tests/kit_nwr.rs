//! Silo+NWR in the correctness kit (`txlab_testkit::nwr_kit!`): Hermitage schedules, random
//! schedules, threaded stress across epochs, the NWR mutants the kit must catch, and the NWR
//! schedules every NWR engine runs.
//!
//! Engines run with manual epochs and `AckMode::EpochStable` (NWR is only attempted under
//! epoch-based group commit, whose acknowledgements make every transaction of an epoch
//! concurrent). Histories are checked for serializability here: the kit's real-time edges use the
//! instant `commit` returned, not the acknowledgement, and an omitted write is legitimately ordered
//! before a same-epoch commit that returned earlier. Strictness with acknowledgement times is
//! checked in `tests/nwr.rs` (`strict_serializable_with_group_commit_acknowledgements`).

mod common;

// Check (4)'s read marks (the read-epoch word) are written once per record and epoch.
txlab_testkit::nwr_kit!(
    common::SiloHooks,
    read_marks_are_written_once_per_record_and_epoch
);
