//! What a session's sandbox is and what it enforced.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which wall enforced a tool call. Recorded on every tool-call event and audit row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EnforcementLevel {
    /// An NVIDIA OpenShell sandbox.
    Openshell,
    /// Paddock's local wall (bubblewrap + Landlock + seccomp + allow-list proxy).
    Local,
    /// No wall: the `direct` provider, chosen explicitly.
    None,
    /// Not in a sandbox by design: a connector that runs in the host process.
    Host,
}

impl EnforcementLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            EnforcementLevel::Openshell => "openshell",
            EnforcementLevel::Local => "local",
            EnforcementLevel::None => "none",
            EnforcementLevel::Host => "host",
        }
    }

    /// True when a wall (OpenShell's or Paddock's own) confines the call.
    pub fn is_walled(self) -> bool {
        matches!(self, EnforcementLevel::Openshell | EnforcementLevel::Local)
    }
}

/// Which provider a machine is set to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    Openshell,
    Local,
    Direct,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openshell => "openshell",
            ProviderKind::Local => "local",
            ProviderKind::Direct => "direct",
        }
    }

    /// The enforcement level of every call this provider runs.
    pub fn enforcement(self) -> EnforcementLevel {
        match self {
            ProviderKind::Openshell => EnforcementLevel::Openshell,
            ProviderKind::Local => EnforcementLevel::Local,
            ProviderKind::Direct => EnforcementLevel::None,
        }
    }
}

/// A connection the sandbox's network policy refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NetworkDenial {
    pub host: String,
    pub port: u16,
    /// The program that tried (its executable's path), when the wall knows it: on the local
    /// wall from its own bridge only, on OpenShell from the OCSF record's process.
    pub binary: Option<String>,
    /// Why, in the wall's words (e.g. "no matching policy", "resolves to always-blocked address").
    pub reason: String,
    /// The rule or engine that decided (e.g. `policy:-`, `engine:ssrf`, `profile:strict`).
    pub rule: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub time_ms: i64,
}

impl NetworkDenial {
    /// The rule of a connection refused because the sandbox (or the host) had too many open,
    /// whatever its destination.
    pub const CONNECTION_LIMIT_RULE: &'static str = "engine:connection-limit";

    /// The program that tried, for people and the model: its path, or `an unknown program`
    /// when the wall could not tell (or would not believe who claimed it).
    pub fn program(&self) -> &str {
        self.binary.as_deref().unwrap_or("an unknown program")
    }

    /// The sentence a tool result carries for the model when a command hit this denial.
    pub fn model_notice(&self) -> String {
        if self.rule.as_deref() == Some(Self::CONNECTION_LIMIT_RULE) {
            format!(
                "[refused by the sandbox's network proxy: {} tried {}:{}, but {}. This is not the network policy: close connections the sandbox no longer needs and retry.]",
                self.program(),
                self.host,
                self.port,
                self.reason
            )
        } else {
            format!(
                "[blocked by the sandbox's network policy: {} tried {}:{}. This is not a network fault; ask the user to allow it.]",
                self.program(),
                self.host,
                self.port
            )
        }
    }
}

/// A network rule the sandbox drafted from connections its policy denied, waiting for the
/// user to approve or reject it (OpenShell's policy advisor).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DraftedRule {
    /// The rule's id (approve or reject it by this id).
    pub id: String,
    pub rule_name: String,
    /// `host:port` of each endpoint the rule would open.
    pub hosts: Vec<String>,
    /// The program whose connections were denied.
    pub binary: String,
    /// Why the wall drafted it, in its words.
    pub rationale: String,
    /// How many denied connections the rule would have allowed.
    pub hit_count: i64,
}

/// One check of the wall attestation, run from inside the sandbox before the first tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CanaryResult {
    /// Stable name, e.g. `home_absent`, `outside_read_refused`, `no_new_privs`.
    pub name: String,
    pub passed: bool,
    /// What was observed, in plain words.
    pub detail: String,
}

/// The wall attestation of one sandbox: the canaries' results and a hash of the rendered wall
/// configuration. Stored as the session's first audit record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attestation {
    pub enforcement: EnforcementLevel,
    /// `sha256:<hex>` of the rendered wall configuration (policy, mounts, rules).
    pub config_hash: String,
    pub canaries: Vec<CanaryResult>,
    #[ts(type = "number")]
    pub time_ms: i64,
    /// The resource limits in force for the sandbox, when the wall sets its own (the local
    /// wall does; absent from OpenShell's and from records written before limits existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub limits: Option<ResourceLimits>,
}

/// How a sandbox's resource limits are enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LimitMechanism {
    /// A cgroup of the sandbox under a cgroup v2 subtree delegated to Paddock.
    CgroupV2,
    /// A cgroup of the sandbox in each cgroup v1 hierarchy (Paddock running as root).
    CgroupV1,
    /// Per-process resource limits (`setrlimit`): the machine offers no cgroup.
    Rlimit,
    /// Nothing limits the sandbox.
    None,
}

impl LimitMechanism {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitMechanism::CgroupV2 => "cgroup_v2",
            LimitMechanism::CgroupV1 => "cgroup_v1",
            LimitMechanism::Rlimit => "rlimit",
            LimitMechanism::None => "none",
        }
    }
}

/// The resource limits in force for one sandbox, as its wall read them back after setting
/// them. A limit left empty (`None`, `null`) means nothing limits it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResourceLimits {
    pub mechanism: LimitMechanism,
    /// Processes and threads of the sandbox together.
    pub processes: Option<u64>,
    /// Memory in bytes: of the whole sandbox (cgroups) or of each process (`rlimit`).
    pub memory_bytes: Option<u64>,
    /// Swap in bytes the sandbox may use beyond its memory.
    pub swap_bytes: Option<u64>,
    /// CPU time per unit of real time, in thousandths of a CPU (1500: one and a half CPUs).
    pub cpu_millis: Option<u64>,
    /// Why this mechanism, and what it does not cover, in plain words.
    pub detail: String,
}

impl Attestation {
    pub fn passed(&self) -> bool {
        self.canaries.iter().all(|c| c.passed)
    }

    /// The canaries that failed.
    pub fn failures(&self) -> impl Iterator<Item = &CanaryResult> {
        self.canaries.iter().filter(|c| !c.passed)
    }
}

/// Whether a granted folder may be changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FolderAccess {
    ReadWrite,
    ReadOnly,
}

/// A folder a session was granted, at the same absolute path inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FolderGrant {
    /// Absolute path on the host, and inside the sandbox.
    pub path: String,
    pub access: FolderAccess,
}

/// The named network profiles; what each allows is data in `config/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NetworkProfileName {
    /// Code hosts and package registries, port 443 (the default).
    Strict,
    /// Strict plus web-search APIs.
    Standard,
    /// Public addresses on ports 80 and 443; files stay confined.
    Open,
}

impl NetworkProfileName {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkProfileName::Strict => "strict",
            NetworkProfileName::Standard => "standard",
            NetworkProfileName::Open => "open",
        }
    }
}

/// One check of `paddock machine sandbox status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatusCheck {
    pub name: String,
    pub ok: bool,
    /// What was found, in plain words.
    pub detail: String,
    /// The exact command or setting that fixes a failed check.
    pub fix: Option<String>,
}

/// Whether this machine can build its configured wall, and why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MachineSandboxStatus {
    pub provider: ProviderKind,
    pub enforcement: EnforcementLevel,
    pub checks: Vec<StatusCheck>,
    /// What every wall of this machine protects inside read-write folders (the protected
    /// list, for the sandbox settings).
    #[serde(default)]
    pub protected_paths: Vec<ProtectedPath>,
}

/// Where a protected path is looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProtectedScope {
    /// Inside any folder of a read-write grant (down to a depth the list sets).
    Folder,
    /// Inside every git directory found in a read-write grant (`.git`, bare repositories,
    /// submodules' and linked worktrees' git directories).
    GitDir,
    /// The folder a repository's `core.hooksPath` names.
    HooksPath,
}

/// What a protected path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProtectedKind {
    File,
    /// A folder and everything inside it.
    Folder,
    Any,
}

/// One entry of the protected list: a file the host runs later (read-only inside the wall,
/// caught when created during a session, written only with the user's approval).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProtectedPath {
    pub scope: ProtectedScope,
    /// Relative to its scope (`.bashrc`, `hooks`); empty for `hooks_path`.
    pub path: String,
    pub kind: ProtectedKind,
    /// `git`, `shell`, `editor`, `agent`: how a settings screen groups entries.
    pub group: String,
    /// What runs it, in plain words.
    pub reason: String,
}

/// What Paddock did about a protected path a session created or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProtectedAction {
    /// Moved out of the folder into Paddock's quarantine (see `quarantined_to`).
    Quarantined,
    /// A new repository's configuration: the settings that name programs were removed, the
    /// original moved to quarantine.
    Sanitized,
    /// Put back as it was at the session's start (a replaced symbolic link).
    Restored,
    /// Left in place and reported: it could not be moved (see the detail).
    Reported,
}

impl MachineSandboxStatus {
    /// True when every check passed: sessions may start.
    pub fn ready(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }

    /// One line per failed check with its fix, for refusals.
    pub fn failure_summary(&self) -> String {
        self.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| match &c.fix {
                Some(fix) => format!("{}: {} (fix: {fix})", c.name, c.detail),
                None => format!("{}: {}", c.name, c.detail),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}
