//! Pure rules for a Paddock session's sandbox: no I/O, no async, no network.
//!
//! - [`render`] turns a [`SessionSpec`] into the OpenShell [`SandboxPolicy`] (proto and
//!   canonical YAML), the providers for its secrets, the `CreateSandboxRequest` and a one-
//!   paragraph summary.
//! - [`NetworkAllowList`] is the resolved allow-list; the local wall's proxy asks it
//!   [`NetworkAllowList::check_host`] and [`NetworkAllowList::check_ip`].
//! - [`SandboxData`] is Paddock's data (`config/sandbox.toml`): network profiles, companion
//!   hosts, known secrets, credential-share entries, baseline paths.
//! - [`ProtectedList`] is the protected list (`config/protected.toml`): files the host runs
//!   later, why, and what a repository created during a session may keep.
//! - [`validate_policy`] and the other `check_*` functions mirror the gateway's rules.
//!
//! ```
//! use sandbox_policy::{HostRule, NetworkAllowList, SandboxData};
//!
//! let data = SandboxData::builtin()?;
//! let extra = [HostRule::parse("intranet.example.com:8443")?];
//! let allow =
//!     NetworkAllowList::resolve(data.profile_named("strict")?, &extra, &[], &[], &data.companions)?;
//! assert!(allow.check_host("PyPI.org.", 443).is_allowed());
//! assert!(!allow.check_host("pypi.org.evil.example", 443).is_allowed());
//! assert!(!allow.check_ip("pypi.org", 443, "169.254.169.254".parse()?).is_allowed());
//! assert!(allow.check_ip("intranet.example.com", 8443, "10.1.2.3".parse()?).is_allowed());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`SandboxPolicy`]: openshell_proto::sandbox::SandboxPolicy

mod allow_list;
mod credentials;
mod data;
mod error;
mod git_config;
mod host;
mod ip_class;
mod protected;
mod render;
mod secrets;
mod validate;

pub use allow_list::{AllowRule, Decision, Endpoint, NetworkAllowList, OPEN_RULE, RuleOrigin};
pub use credentials::{CredentialEntry, HOME_PLACEHOLDER, KubeServers, kubeconfig_servers};
pub use data::{Baseline, Companions, NetworkProfile, OpenAddresses, SandboxData};
pub use error::PolicyError;
pub use git_config::{ConfigJudgement, KeyPattern, setting_values};
pub use host::{Cidr, DEFAULT_PORT, HostPattern, HostRule, NormalHost, Transport, normalize_host};
pub use ip_class::{AddressClass, classify, unmap};
pub use protected::{
    NewRepositoryRules, ProtectedEntry, ProtectedList, ScanLimits, ends_in_git_dir,
};
pub use render::{
    ANY_BINARY, FolderSpec, LANDLOCK_MODE, MountDriver, Owner, ProtectedMountSpec, RUNNER_SOCKET,
    RUNNER_SOCKET_DIR, RenderedSandbox, SessionSpec, any_binary, create_request_json, policy_yaml,
    render, run_as_owner, runner_command, sandbox_name,
};
pub use secrets::{PROVIDER_TYPE, ProviderRequest, SecretSpec, SecretValue};
pub use validate::{
    MAX_ENV_ENTRIES, MAX_PATH_BYTES, MAX_POLICY_PATHS, MAX_SANDBOX_NAME, check_absolute_path,
    check_allowed_ip, check_dns_label, check_environment, check_label, check_rule_key,
    validate_policy,
};
