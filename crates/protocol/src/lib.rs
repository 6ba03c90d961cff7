//! # protocol
//!
//! The types that cross between Paddock's parts: ops in, events out. No logic lives here
//! beyond conversions and the canonical JSON form ([`canonical`]); behaviour belongs to the
//! crates that use these types.
//! Every type derives `ts_rs::TS` so the UI uses the same shapes; the TypeScript files are
//! checked in under `bindings/` and a test fails when they drift.
//!
//! Wire conventions: snake_case for every field and tag; unions are internally tagged with
//! `type`; times are milliseconds since the Unix epoch in `*_ms` fields.

pub mod canonical;
pub mod events;
pub mod ops;
pub mod sandbox;
pub mod session;

pub use events::*;
pub use ops::*;
pub use sandbox::*;
pub use session::*;
