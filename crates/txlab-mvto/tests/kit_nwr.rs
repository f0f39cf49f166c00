//! MVTO+NWR in the correctness kit (`txlab_testkit::nwr_kit!`): Hermitage schedules, random
//! schedules, threaded stress across epochs, the NWR mutants the kit must catch (and MVTO+NWR's
//! own, the old-version-reader check), and the NWR schedules every NWR engine runs.
//!
//! Engines run with manual epochs and `AckMode::EpochStable` (NWR is only attempted under
//! epoch-based group commit). Histories are held to serializability: the kit's real-time edges
//! use the instant `commit` returned, not the acknowledgement, and MVTO's timestamp order (like
//! an omitted write's place at the start of its epoch) need not follow commit-return order.
//! Strictness with acknowledgement times is checked in `tests/nwr.rs`
//! (`strict_serializable_with_group_commit_acknowledgements`).

mod common;

use common::MvtoHooks;
use txlab_mvto::{Mutation, MvtoConfig, Nwr};
use txlab_testkit::family::{Configure, Kit};

txlab_testkit::nwr_kit!(MvtoHooks);

/// The mutant without MVTO+NWR's old-version-reader check (`txlab_mvto::nwr`).
struct SkipOldReaderCheck;

impl Configure<MvtoHooks> for SkipOldReaderCheck {
    fn configure(config: MvtoConfig) -> Result<MvtoConfig, txlab_core::Error> {
        Ok(config.with_mutation(Mutation::NwrSkipOldReaderCheck))
    }
}

#[test]
fn kit_catches_skipped_old_reader_check() {
    txlab_testkit::mutation::assert_caught::<Kit<MvtoHooks, Nwr, SkipOldReaderCheck>>();
}
