//! Scripted conversations over the fake model server with the real runner.
//!
//! One test binary for the crate (each former `tests/*.rs` is a module here): one link of the
//! crate's dependency graph instead of one per file, which is most of the test build's disk
//! and link time. nextest still runs every test in its own process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test with its cause"
)]

mod approval_paths;
mod downloads;
mod durability;
mod harness;
mod host_tools;
mod interrupts;
mod model_input;
mod protected;
mod sandbox;
mod standing_approvals;
mod turns;
