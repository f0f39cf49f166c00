//! Silo+NWR semantics, step by step from one thread with several workers
//! (`txlab_testkit::nwr_semantics!`): which blind writes the non-visible write rule omits (the
//! NWR paper, Figure 1 (b)–(d)), which it never omits, that an omitted write is never read, that
//! a failed validation hands over to Silo, which alone aborts, strict serializability with
//! group-commit acknowledgements across epoch boundaries, and the two NWR mutants caught by
//! targeted schedules.

mod common;

txlab_testkit::nwr_semantics!(
    common::SiloHooks,
    fig1_b_d_a_later_blind_write_in_the_epoch_is_omitted,
    a_failed_validation_hands_over_to_the_baseline_which_alone_aborts,
);

/// Every Silo variant has the same record: the TID word plus the value (Silo+NWR keeps its pivot
/// objects beside the records, `txlab_storage::Companions`; single-write omitters use a TID status
/// bit). With the `line-aligned-records` feature it rounds up to one 64-byte line.
#[test]
fn every_silo_variant_has_plain_silos_record() {
    use std::mem::{align_of, size_of};
    use txlab_core::protocol::value::AtomicValue;
    use txlab_silo::{LINE_ALIGNED_RECORDS, SiloRecord};
    let line = |packed| txlab_testkit::nwr::record_size_in_layout(packed, LINE_ALIGNED_RECORDS);
    assert_eq!(size_of::<SiloRecord>(), line(8 + size_of::<AtomicValue>()));
    assert_eq!(align_of::<SiloRecord>() == 64, LINE_ALIGNED_RECORDS);
}
