//! # paddock-host
//!
//! The composition root every Paddock front end calls: the CLI (`paddock run`, …), the HTTP
//! server (`paddock up`) and the desktop shell. No front end holds logic; each renders what
//! [`Host`] returns and forwards what the user decides.
//!
//! [`Host`] owns the machine config and paths, builds the sandbox providers and the model
//! client, and runs sessions: create (with folder grants), list, get, resume after a restart,
//! close; route every `Submission`; the approvals inbox across sessions (first answer wins);
//! live folder grants; network denials, drafted rules, hosts allowed for a session or the
//! machine; settings read and written back keeping comments; audit query, export and verify;
//! model keys and secrets; the machine's sandbox status and check (a throwaway wall built,
//! attested and torn down); reaping what dead processes left;
//! what Settings ▸ Sandbox offers (profiles and their hosts, credential rows with an editor
//! for custom ones, secrets, folder checks, the key store's status).
//!
//! Every durable event passes the [`journal`]: the audit trail, the durable per-session event
//! log (replayed to clients that reconnect) and the approvals inbox, before the session goes
//! on. Errors are [`HostError`]s, each with a stable [`HostError::code`].

mod approvals;
pub mod audit_sink;
mod audit_view;
pub mod catalog;
pub mod config;
pub mod connectors;
mod connectors_api;
pub mod credentials;
pub mod error;
mod host;
pub mod inbox;
pub mod journal;
mod keys;
pub mod lease;
pub mod machine;
pub mod paths;
pub mod probes;
pub mod project;
mod sandbox_check;
pub mod service;
pub mod sessions;
pub mod settings;
pub mod setup;
pub mod wiring;

pub use audit_view::AuditEntry;
pub use catalog::{
    CompanionHosts, FolderCheck, KeyStoreStatus, ProfileInfo, SandboxCatalog, SecretOffer,
};
pub use connectors_api::{ConnectorInfo, ConnectorTestReport, ConnectorToolInfo, SentName};
pub use credentials::{CredentialRow, CustomCredential};
pub use error::HostError;
pub use host::{DEFAULT_LIVE_CAPACITY, Host, HostOptions};
pub use inbox::PendingApproval;
pub use journal::EventStream;
pub use keys::{KeyCheck, KeySaved, KeyStatus, ProviderKey};
pub use machine::{DeniedConnection, ExportFormat, ModelCheck, ModelProvider, ReapReport};
pub use probes::{CommandOutput, MachineProbes, SystemMachine};
pub use sandbox_check::{CheckCall, SandboxCheck};
pub use service::{ServiceChange, ServiceStatus};
pub use sessions::{
    NewSession, SessionInfo, SessionState, new_settings, parse_folder_spec, submission,
};
pub use settings::{SettingValue, SettingsView};
pub use setup::{
    AppliedStep, FailedStep, SetupAction, SetupOutcome, SetupPlan, SetupRequest, SetupStep,
};
