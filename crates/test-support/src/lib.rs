//! # test-support
//!
//! Test doubles that speak real wire protocols over real sockets, for the places where the
//! real thing cannot run in a test (a model API, an OpenShell gateway). Dev-dependency only:
//! no production code path may depend on this crate.

pub mod binaries;
pub mod gateway_double;
pub mod hostile;
pub mod mcp_server;
pub mod model_server;
pub mod pki;
