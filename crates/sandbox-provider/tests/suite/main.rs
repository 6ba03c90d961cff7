//! The three walls through the real runner: the local wall's escape, exhaustion and positive suites, protected files, and the OpenShell provider against the gateway double.
//!
//! One test binary for the crate (each former `tests/*.rs` is a module here): one link of the
//! crate's dependency graph instead of one per file, which is most of the test build's disk
//! and link time. nextest still runs every test in its own process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test with its cause"
)]

mod local_credentials;
mod local_escape_fs;
mod local_escape_grants;
mod local_escape_net;
mod local_escape_protected;
mod local_escape_runner;
mod local_escape_wall;
mod local_flood;
mod local_limits;
mod local_positive;
mod local_preflight;
mod local_protected;
mod local_wall;
mod openshell_credentials;
mod openshell_grants;
mod openshell_lifecycle;
mod openshell_network;
mod openshell_protected;
mod openshell_refusals;
mod openshell_runner;
mod openshell_support;
mod proxy_accept;
mod runner_connection;
mod support;
