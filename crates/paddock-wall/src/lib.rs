//! # paddock-wall
//!
//! The launcher of Paddock's local wall, in the style of codex-rs's `linux-sandbox`: a small
//! binary with no async runtime that finishes the wall around the tool-runner and then execs it.
//!
//! The host starts `paddock-wall outer -- bwrap <namespaces and mounts> -- paddock-wall inner
//! --config <file> -- tool-runner serve …`. Bubblewrap builds the namespaces (user, pid, net,
//! ipc, uts, cgroup) and the mounts; `inner` applies `no_new_privs`, Landlock and seccomp,
//! starts the proxy bridge, and execs the runner. The host side (mounts, proxy, preflight,
//! attestation) lives in `sandbox-provider`'s `local` module, which renders this crate's
//! [`config::WallConfig`].

pub mod bridge;
pub mod config;
pub mod connect;
mod error;
pub mod landlock_rules;
pub mod launch;
pub mod pinned;
pub mod privileges;
pub mod probe;
pub mod seccomp_policy;

pub use error::WallError;
