//! The provider and sandbox traits, and what a session asks of a sandbox.

use std::sync::Arc;

use async_trait::async_trait;
use protocol::{
    Attestation, CanaryResult, DraftedRule, EnforcementLevel, FolderGrant, MachineSandboxStatus,
    NetworkDenial, NetworkProfileName, ProviderKind,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tool_protocol::{ToolRequest, ToolResult};

use crate::error::ProviderError;
use crate::protected::ProtectedFiles;
use crate::runner_client::{CallError, OutputChunk};

/// What one session asks of its sandbox. Machine-level settings (image, gateway, credential
/// entry definitions, the runner's location) belong to the provider, not to the request.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxRequest {
    /// The session's id; names and labels of the sandbox derive from it.
    pub session_id: String,
    /// The granted folders, at the same absolute paths inside.
    pub folders: Vec<FolderGrant>,
    /// The working folder (one of the granted folders or inside one).
    pub cwd: String,
    pub network_profile: NetworkProfileName,
    /// Hosts allowed beyond the profile, as `host` or `host:port`.
    pub extra_hosts: Vec<String>,
    /// Names of the credential-share entries enabled for this session (all off by default).
    pub credentials: Vec<String>,
}

/// A tool call's outcome: the runner's answer, the network denials its command hit, and what
/// the wall did about the sandbox meanwhile, in words for the model (e.g. processes stopped at
/// the sandbox's process limit).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallOutcome {
    pub result: Result<ToolResult, CallError>,
    pub denials: Vec<NetworkDenial>,
    pub notes: Vec<String>,
}

/// What closing a sandbox found: the checks the host ran on what the sandbox left behind
/// (the set-id sweep of the read-write folders), for the audit trail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClosedSandbox {
    pub checks: Vec<CanaryResult>,
}

/// Builds walls of one kind. One instance per machine configuration.
#[async_trait]
pub trait SandboxProvider: Send + Sync {
    fn kind(&self) -> ProviderKind;

    /// The enforcement level of every call this provider runs.
    fn enforcement(&self) -> EnforcementLevel {
        self.kind().enforcement()
    }

    /// Checks whether this machine can build the wall, without building one.
    async fn status(&self) -> MachineSandboxStatus;

    /// Builds the wall for a session, starts the tool-runner in it and attests the wall from
    /// inside. Fails closed: any missing piece refuses the session.
    async fn start(
        &self,
        request: &SandboxRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Arc<dyn Sandbox>, ProviderError>;

    /// Removes sandboxes that Paddock processes of this machine left behind and no live
    /// process owns; returns their names. `owners` says which sessions a live Paddock process
    /// still runs: their sandboxes are never touched.
    async fn reap_orphans(&self, owners: &dyn SessionOwners) -> Result<Vec<String>, ProviderError> {
        let _ = owners;
        Ok(Vec::new())
    }
}

/// Which sessions a live Paddock process runs (the host keeps a lock per live session).
pub trait SessionOwners: Send + Sync {
    /// True while a live process (this one or another) runs the session.
    fn is_live(&self, session_id: &str) -> bool;
}

/// No session is live: every sandbox this machine left is an orphan (a machine with no
/// Paddock process running, and tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLiveSessions;

impl SessionOwners for NoLiveSessions {
    fn is_live(&self, _session_id: &str) -> bool {
        false
    }
}

/// One session's running sandbox.
#[async_trait]
pub trait Sandbox: Send + Sync {
    /// A name for logs and the audit trail (the OpenShell sandbox name, a local wall id…).
    fn id(&self) -> &str;

    /// The attestation run from inside right after start.
    fn attestation(&self) -> &Attestation;

    /// The enforcement level of every call through this sandbox: its attestation's.
    fn enforcement(&self) -> EnforcementLevel {
        self.attestation().enforcement
    }

    /// Runs one tool call through the sandbox's runner.
    async fn call(
        &self,
        request: ToolRequest,
        output: Option<mpsc::UnboundedSender<OutputChunk>>,
        cancel: &CancellationToken,
    ) -> ToolCallOutcome;

    /// Tears the sandbox down (deleting copies of credential entries with it) and checks what
    /// it left in the read-write folders. A second close finds nothing to do and checks
    /// nothing.
    async fn close(&self) -> Result<ClosedSandbox, ProviderError>;

    /// Adds `host` (`name`, `name:port`, `*.name`) to the running wall's network policy without
    /// a rebuild. `Ok(false)` when this wall fixes its policy at start (the caller rebuilds it
    /// with the host in the request's `extra_hosts`).
    async fn allow_host_live(&self, host: &str) -> Result<bool, ProviderError> {
        let _ = host;
        Ok(false)
    }

    /// Network rules the wall drafted from denied connections, pending a decision. Walls
    /// without a policy advisor refuse with [`ProviderError::Unsupported`].
    async fn drafted_rules(&self) -> Result<Vec<DraftedRule>, ProviderError> {
        Err(ProviderError::Unsupported(
            "this wall drafts no network rules (only OpenShell's policy advisor does); allow a \
             host for the session instead"
                .into(),
        ))
    }

    /// Approves (`reason: None`) or rejects a drafted rule by id; returns the rule decided.
    async fn decide_drafted_rule(
        &self,
        rule_id: &str,
        approve: bool,
        reason: Option<&str>,
    ) -> Result<DraftedRule, ProviderError> {
        let _ = (rule_id, approve, reason);
        Err(ProviderError::Unsupported(
            "this wall drafts no network rules (only OpenShell's policy advisor does)".into(),
        ))
    }

    /// The session's protected files (what the wall mounts read-only, the sweeps that catch
    /// what was created since, approved writes made on the host). `None` for a sandbox that
    /// protects nothing (a test's).
    fn protected(&self) -> Option<&Arc<ProtectedFiles>> {
        None
    }
}
