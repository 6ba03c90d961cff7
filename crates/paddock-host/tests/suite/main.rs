//! The host: setup on simulated machines, the user service, wiring, connectors through sessions,
//! every op through `submit`.
//!
//! One test binary for the crate (each former `tests/*.rs` is a module here): one link of the
//! crate's dependency graph instead of one per file, which is most of the test build's disk
//! and link time. nextest still runs every test in its own process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test with its cause"
)]

mod connectors;
mod service;
mod setup;
mod submit;
mod wiring;
