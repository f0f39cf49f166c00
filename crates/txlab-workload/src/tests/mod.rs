//! Tests of the workloads, driven by a serial reference engine.

mod support;

mod micro;
mod smallbank;
mod ycsb;
