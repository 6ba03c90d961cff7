//! Integration tests: they start the real `tool-runner` binary and speak the protocol to it.

// Helpers outside `#[test]` functions fail loudly on purpose: a broken fixture is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers panic with the cause, which is the failure report"
)]

mod suite;
