//! The HTTP/WebSocket API over real TCP: sessions, auth attacks, events, settings, TLS, the UI.
//!
//! One test binary for the crate (each former `tests/*.rs` is a module here): one link of the
//! crate's dependency graph instead of one per file, which is most of the test build's disk
//! and link time. nextest still runs every test in its own process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test with its cause"
)]

mod audit_filters;
mod auth;
mod close_checks;
mod common;
mod connectors;
mod events;
mod keys;
mod machine_check;
mod network_openshell;
mod reaping_openshell;
mod resources;
mod secrets_openshell;
mod sessions;
mod settings;
mod setup;
mod tls;
mod ui;
