//! What a session is set up with, and the approvals in force for it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::sandbox::{FolderGrant, NetworkProfileName};

/// How much the user is asked before a tool call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Ask before every call that changes files or runs a command (reads run freely).
    #[default]
    Ask,
    /// File edits inside granted folders run freely; commands are asked.
    AutoEdit,
    /// Everything the wall confines runs freely; calls the wall cannot confine are asked.
    AutoInSandbox,
    /// Nothing is asked. Safety checks still refuse what is never allowed.
    Bypass,
}

impl ApprovalMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Ask => "ask",
            ApprovalMode::AutoEdit => "auto_edit",
            ApprovalMode::AutoInSandbox => "auto_in_sandbox",
            ApprovalMode::Bypass => "bypass",
        }
    }

    /// Parses the wire/config spelling (`ask`, `auto_edit`, `auto-edit`, …).
    pub fn parse(text: &str) -> Option<Self> {
        match text.replace('-', "_").as_str() {
            "ask" => Some(ApprovalMode::Ask),
            "auto_edit" => Some(ApprovalMode::AutoEdit),
            "auto_in_sandbox" => Some(ApprovalMode::AutoInSandbox),
            "bypass" => Some(ApprovalMode::Bypass),
            _ => None,
        }
    }
}

/// Everything a session is started with. Machine-level settings (which provider, model keys)
/// are not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionSettings {
    /// The granted folders, at the same absolute paths inside the sandbox.
    pub folders: Vec<FolderGrant>,
    /// The working folder; default: the first granted folder.
    pub cwd: Option<String>,
    pub network_profile: NetworkProfileName,
    /// Hosts allowed beyond the profile, as `host` or `host:port`.
    pub extra_hosts: Vec<String>,
    /// Names of the machine's credential-share entries enabled for this session.
    pub credentials: Vec<String>,
    /// Names of the machine's secrets given to this session (OpenShell only: the sandbox sees
    /// placeholders; the values stay in the key store and the gateway).
    #[serde(default)]
    pub secrets: Vec<String>,
    /// The model id; default: the machine's configured model.
    pub model: Option<String>,
    pub approval_mode: ApprovalMode,
}

/// How long an approval given by the user stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    /// This call only.
    Once,
    /// Calls with the same canonical arguments, for the rest of this session.
    Session,
    /// Calls with the same canonical arguments, in every session on this machine.
    Always,
}

/// The user's answer to an "awaiting approval" event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalDecision {
    Approve {
        scope: ApprovalScope,
    },
    /// Refuse the call; the reason (if any) is given to the model.
    Deny {
        reason: Option<String>,
    },
}

/// An approval that outlives one call, as front ends list it. What it covers exactly (a command
/// prefix, a tool on one path, one exact call) is decided and stored by the `approvals` crate;
/// this is its display form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StandingApproval {
    /// Stable id (the same approval given twice has one id).
    pub id: String,
    /// `session` or `always` (never `once`).
    pub scope: ApprovalScope,
    /// What it lets through, in one line (e.g. "commands starting with `cargo test`").
    pub description: String,
}
