//! The MCP client against the MCP test server, and `web_fetch`'s attacks.
//!
//! One test binary for the crate (each former `tests/*.rs` is a module here): one link of the
//! crate's dependency graph instead of one per file, which is most of the test build's disk
//! and link time. nextest still runs every test in its own process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test with its cause"
)]

mod mcp;
mod web_fetch;
