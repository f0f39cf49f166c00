//! Tests of the workloads, driven by a serial reference engine.

mod support;

mod micro;
mod partition;
mod read_only;
mod serde;
mod smallbank;
mod ycsb;
