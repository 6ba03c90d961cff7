//! # tool-runner
//!
//! Serves an agent's shell and file tools over `tool-protocol`, inside a sandbox (or, in direct
//! mode, on the host). std only: it ships as one static executable.

pub mod build_id;
pub mod call;
pub mod client;
pub mod confine;
pub mod error;
pub mod fuzzing;
pub mod path_guard;
pub mod search;
pub mod server;
pub mod sys;
pub mod tools;
