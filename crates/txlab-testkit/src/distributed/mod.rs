//! The distributed correctness kit (`distributed` feature): what the protocols of
//! `txlab-rococo` (`rococo`, `2pl-2pc`, `occ-2pc`) run through.
//!
//! - [`kit`]: one test body for every protocol: a case ([`kit::Case`]: workload, protocol,
//!   servers, client slots, quota), its runs on the `step` driver (proptest schedules with drops,
//!   duplicates and delays, shrunk, replayable from `TXLAB_STEP_CASE` / `TXLAB_STEP_SCHEDULE`
//!   and `TXLAB_SEED`) and on the `sim` driver (turmoil: partitions, a coordinator crash,
//!   `TXLAB_SIM_SEED`), and [`kit::verify`], the checks every run must pass.
//! - [`profiles`]: random transaction profiles as a runnable workload, and the checker's
//!   specification by enumeration.

pub mod kit;
pub mod profiles;
