//! Programs cross process boundaries (a sequencer or coordinator ships them): every workload's
//! programs survive a serde round trip unchanged, and the copy declares and runs the same.

use crate::{
    Generator, Micro, MicroConfig, SmallBank, SmallBankConfig, Tpcc, TpccConfig, Workload, Ycsb,
    YcsbConfig, YcsbPreset,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use txlab_core::{AccessSet, Program};

fn round_trips<W>(workload: &W, count: usize)
where
    W: Workload,
    W::Program: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let mut generator = workload.generator(1, 77);
    for _ in 0..count {
        let p = generator.next();
        let text = serde_json::to_string(p).unwrap();
        let copy: W::Program = serde_json::from_str(&text).unwrap();
        assert_eq!(&copy, p);
        let (mut a, mut b) = (AccessSet::default(), AccessSet::default());
        p.declare(&mut a);
        copy.declare(&mut b);
        assert_eq!(a, b);
        assert_eq!((copy.kind(), copy.read_only()), (p.kind(), p.read_only()));
    }
}

#[test]
fn every_workloads_programs_survive_a_round_trip() {
    round_trips(
        &Ycsb::new(YcsbConfig {
            records: 1000,
            ..YcsbConfig::preset(YcsbPreset::A)
        })
        .unwrap(),
        200,
    );
    round_trips(
        &SmallBank::new(SmallBankConfig {
            customers: 100,
            audit: true,
            ..SmallBankConfig::default()
        })
        .unwrap(),
        200,
    );
    round_trips(&Tpcc::new(TpccConfig::tiny(2)).unwrap(), 200);
    round_trips(
        &Micro::new(MicroConfig {
            keys: 1000,
            ..MicroConfig::default()
        })
        .unwrap(),
        50,
    );
}
