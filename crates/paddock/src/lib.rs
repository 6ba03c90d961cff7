//! # paddock
//!
//! The composition root behind the `paddock` CLI: the machine configuration, Paddock's paths,
//! the provider and model client built from them, and the audit sink that commits the agent's
//! events. The command-line interface itself lives in the binary (`src/main.rs`).

pub mod audit_sink;
pub mod config;
pub mod host;
pub mod paths;
