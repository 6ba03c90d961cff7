//! The built `paddock` binary, driven as a user drives it: `run`, `up`, sessions, keys, audit.
//!
//! One test binary for the crate (each former `tests/*.rs` is a module here): one link of the
//! crate's dependency graph instead of one per file, which is most of the test build's disk
//! and link time. nextest still runs every test in its own process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test with its cause"
)]

mod audit;
mod cli_support;
mod connectors;
mod end_to_end;
mod host_run_files;
mod keys;
mod machine_cli;
mod resume_grants;
mod sandbox_check;
mod sessions;
mod up;
mod up_direct;
mod up_inbox;
mod up_reaping;
mod up_shutdown;
mod up_start;
mod up_support;
