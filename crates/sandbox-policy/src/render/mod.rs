//! Rendering a session into what OpenShell needs: the policy, the providers for its secrets,
//! the `CreateSandboxRequest`, and a human summary.

mod folders;
mod policy;
mod request;
mod summary;
mod views;

use std::collections::BTreeMap;

use openshell_proto::sandbox::SandboxPolicy;
use openshell_proto::v1::CreateSandboxRequest;
use protocol::{FolderAccess, NetworkProfileName};
use sha2::{Digest, Sha256};

use crate::allow_list::NetworkAllowList;
use crate::credentials::CredentialEntry;
use crate::data::SandboxData;
use crate::error::PolicyError;
use crate::host::HostRule;
use crate::secrets::{ProviderRequest, SecretSpec, SecretValue};

pub use folders::run_as_owner;
pub use policy::{ANY_BINARY, LANDLOCK_MODE, any_binary};
pub use request::{RUNNER_SOCKET, RUNNER_SOCKET_DIR, runner_command};
pub use views::{create_request_json, policy_yaml};

/// The user and group that own a folder on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
}

/// A folder the session was granted, with its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderSpec {
    /// Absolute path, the same on the host and inside the sandbox.
    pub path: String,
    pub access: FolderAccess,
    pub owner: Owner,
}

/// Which compute driver the gateway uses: the bind mounts' shape depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountDriver {
    Docker,
    Podman,
}

impl MountDriver {
    pub fn as_str(self) -> &'static str {
        match self {
            MountDriver::Docker => "docker",
            MountDriver::Podman => "podman",
        }
    }
}

/// Everything that decides a session's sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSpec {
    /// The session's id: the sandbox's name and labels derive from it.
    pub session_id: String,
    /// The machine's id, recorded as a label (a valid Kubernetes label value).
    pub machine_id: String,
    pub folders: Vec<FolderSpec>,
    /// The tools' working folder: a granted folder or inside one.
    pub cwd: String,
    pub network: NetworkProfileName,
    pub extra_hosts: Vec<HostRule>,
    /// Enabled credential-share entries (all off by default).
    pub credentials: Vec<CredentialEntry>,
    /// The host folder holding the copies of the enabled entries (prepared by the provider,
    /// owner-only). Required when `credentials` is not empty; mounted at the same path.
    pub private_home: Option<String>,
    /// The host folder holding the `tool-runner` binary, mounted read-only at the same path.
    pub runner_dir: String,
    /// The sandbox image, pinned by digest (`name@sha256:<64 hex>`).
    pub image: String,
    pub driver: MountDriver,
    /// Secrets usable (never readable) inside, as OpenShell providers.
    pub secrets: Vec<SecretSpec>,
    /// Extra sandbox environment. Never secrets: those go in `secrets`.
    pub environment: BTreeMap<String, String>,
    /// Mounts over the read-write folders for files the host runs later (found on the host by
    /// the provider): protected paths read-only, git directories bound onto themselves.
    pub protected: Vec<ProtectedMountSpec>,
}

/// A mount inside a read-write folder, at the same path on the host and inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedMountSpec {
    pub path: String,
    /// `false`: the folder bound onto itself, still writable (so it cannot be renamed away).
    pub read_only: bool,
}

/// What [`render`] produced.
#[derive(Debug, Clone)]
pub struct RenderedSandbox {
    /// The sandbox's name (also `request.name`).
    pub name: String,
    pub policy: SandboxPolicy,
    /// The policy as canonical YAML (OpenShell's policy schema), for humans and the audit trail.
    pub policy_yaml: String,
    /// Providers to create before the sandbox (one per secret) and delete after it.
    pub providers: Vec<ProviderRequest>,
    pub request: CreateSandboxRequest,
    /// The allow-list the policy's network rules came from.
    pub allow_list: NetworkAllowList,
    /// One paragraph: what the sandbox can read, write and reach.
    pub summary: String,
}

impl RenderedSandbox {
    /// The request as JSON (policy in its YAML-schema form), for the audit trail. Holds no
    /// secret values: those travel only in the providers' requests.
    pub fn request_json(&self) -> serde_json::Value {
        create_request_json(&self.request)
    }
}

/// The sandbox's name for a session: `pd-` and 16 hex digits of the SHA-256 of the session id.
/// A DNS-1123 label of exactly 19 characters, OpenShell's limit; the same id gives the same name.
pub fn sandbox_name(session_id: &str) -> String {
    let digest = Sha256::digest(session_id.as_bytes());
    format!("pd-{}", &hex::encode(digest)[..16])
}

/// Renders a session. `secret_values` holds the values found on the host for the session's
/// secrets; a secret without a value is an error naming the variable.
pub fn render(
    data: &SandboxData,
    spec: &SessionSpec,
    secret_values: &BTreeMap<String, SecretValue>,
) -> Result<RenderedSandbox, PolicyError> {
    if spec.session_id.is_empty() {
        return Err(PolicyError::name("session_id", "", "must not be empty"));
    }
    let name = sandbox_name(&spec.session_id);
    let layout = folders::layout(data, spec)?;
    let profile = data.profile(spec.network)?;
    let allow_list = NetworkAllowList::resolve(
        profile,
        &spec.extra_hosts,
        &spec.credentials,
        &spec.secrets,
        &data.companions,
    )?;
    let providers = request::providers(&name, spec, secret_values)?;
    let policy = policy::build(&layout, &allow_list, &providers)?;
    let environment = request::environment(spec, &layout, &providers)?;
    let request = request::build(
        &name,
        spec,
        &layout,
        policy.clone(),
        environment,
        &providers,
    )?;
    let summary = summary::write(spec, &layout, &allow_list, &providers);
    Ok(RenderedSandbox {
        name,
        policy_yaml: policy_yaml(&policy)?,
        policy,
        providers,
        request,
        allow_list,
        summary,
    })
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
