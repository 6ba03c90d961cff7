//! # protocol
//!
//! The types that cross between Paddock's parts: ops in, events out. No logic lives here
//! beyond conversions; behaviour belongs to the crates that use these types.
//! Every type derives `ts_rs::TS` so the UI uses the same shapes (generated and checked in CI).

pub mod sandbox;

pub use sandbox::*;
