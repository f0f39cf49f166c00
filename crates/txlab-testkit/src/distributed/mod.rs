//! The distributed correctness kit (`distributed` feature): what the protocols of
//! `txlab-rococo` (`rococo`, `2pl-2pc`, `occ-2pc`) run through.
//!
//! - [`profiles`]: random transaction profiles as a runnable workload, and the checker's
//!   specification by enumeration.

pub mod profiles;
