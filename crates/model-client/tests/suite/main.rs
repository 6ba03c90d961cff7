//! model-client against `FakeModelServer` over real HTTP and HTTPS on 127.0.0.1 (directly
//! and through `TestConnectProxy`), and the key store against a real secret service. One
//! test binary for the crate.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test with a line number"
)]

mod anthropic;
mod child_process;
mod common;
mod https;
mod key_check;
mod keychain;
mod openai;
mod proxy;
mod resilience;
