//! # paddock-connectors
//!
//! Connectors give the agent capabilities that need credentials or the wider network without
//! putting a key inside a sandbox. They run on the host: MCP servers as host child processes
//! (stdio) or remote endpoints (streamable HTTP), through the official Rust SDK `rmcp`, and
//! the built-in `web_fetch`.
//!
//! - [`config`]: `[[connectors]]` entries and their validation (`{secret}` placeholders).
//! - [`supervisor`] / [`set`]: start on demand, tool list refresh on
//!   `notifications/tools/list_changed`, restart with backoff, stop with the host.
//! - [`naming`]: `mcp__<connector>__<tool>` names the model APIs accept, reversibly.
//! - [`risk`]: annotations only make a tool stricter; the user's machine config decides.
//! - [`web_fetch`]: allow-list per hop, address checks after DNS, size and time limits.
//!
//! Approvals and the audit trail are the host's: this crate knows nothing of sessions.

pub mod config;
pub mod error;
pub mod mcp;
pub mod naming;
pub mod risk;
pub mod secret;
pub mod set;
pub mod supervisor;
mod tls;
pub mod web_fetch;

pub use config::{ConfigError, ConnectorConfig, TransportKind};
pub use error::ConnectorError;
pub use risk::Risk;
pub use secret::Secret;
pub use set::{ConnectorSet, DirectClient, TestReport};
pub use supervisor::{Connector, ConnectorTool, Status, SupervisorOptions, TokenSource};
pub use web_fetch::{Resolver, SystemResolver, WebFetch, WebFetchError, WebFetchOptions};
