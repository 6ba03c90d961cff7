//! The `CreateSandboxRequest`: name, labels, workspace, image, bind mounts, the runner as the
//! main process, environment and providers; and the providers for the session's secrets.

use std::collections::BTreeMap;

use openshell_proto::prost_types::{ListValue, Struct, Value, value::Kind};
use openshell_proto::sandbox::SandboxPolicy;
use openshell_proto::v1::{
    CreateSandboxRequest, SandboxRestartPolicy, SandboxSpec, SandboxTemplate,
};
use protocol::FolderAccess;
use serde_json::json;

use super::folders::Layout;
use super::{FolderSpec, SessionSpec};
use crate::allow_list::rule_key;
use crate::error::PolicyError;
use crate::secrets::{ProviderRequest, SecretValue};
use crate::validate::{MAX_SANDBOX_NAME, check_dns_label, check_environment, check_label};

/// Where the runner listens inside the sandbox (`tool-runner attach` connects there).
pub const RUNNER_SOCKET: &str = "/run/paddock/runner.sock";
/// The socket's folder: a small tmpfs mount the runner binds its socket in; its commands
/// cannot change it (see [`runner_command`]).
pub const RUNNER_SOCKET_DIR: &str = "/run/paddock";
/// OpenShell's working folder, writable in every sandbox (the policy's `include_workdir`).
pub const WORKDIR: &str = "/sandbox";
/// The tmpfs size for the socket folder.
const SOCKET_DIR_BYTES: u32 = 1024 * 1024;

/// Label keys on every sandbox Paddock creates.
pub const SESSION_LABEL: &str = "paddock.session";
pub const MACHINE_LABEL: &str = "paddock.machine";

/// The runner's `serve` invocation: `<runner-dir>/tool-runner serve --socket … --root P:rw|ro
/// … --cwd … --writable W …`, where `writable` are the policy's read-write paths (and the
/// workdir, which `include_workdir` makes writable): the runner's commands may change entries
/// beneath those alone, never in the socket's folder (left out here), so no command can
/// replace the socket the host attaches to. Kept as one small function so the flags follow
/// the runner.
pub fn runner_command(
    runner_dir: &str,
    folders: &[FolderSpec],
    cwd: &str,
    writable: &[String],
) -> Vec<String> {
    let mut command = vec![
        format!("{}/tool-runner", runner_dir.trim_end_matches('/')),
        "serve".to_owned(),
        "--socket".to_owned(),
        RUNNER_SOCKET.to_owned(),
    ];
    for folder in folders {
        let access = match folder.access {
            FolderAccess::ReadWrite => "rw",
            FolderAccess::ReadOnly => "ro",
        };
        command.push("--root".to_owned());
        command.push(format!("{}:{access}", folder.path));
    }
    command.push("--cwd".to_owned());
    command.push(cwd.to_owned());
    let workdir = [WORKDIR.to_owned()];
    for path in writable
        .iter()
        .chain(&workdir)
        .filter(|p| *p != RUNNER_SOCKET_DIR)
    {
        command.push("--writable".to_owned());
        command.push(path.clone());
    }
    command
}

/// One provider per secret, named `<sandbox>-<variable>` (a DNS-1123 label).
pub(crate) fn providers(
    sandbox: &str,
    spec: &SessionSpec,
    values: &BTreeMap<String, SecretValue>,
) -> Result<Vec<ProviderRequest>, PolicyError> {
    let mut providers: Vec<ProviderRequest> = Vec::new();
    for secret in &spec.secrets {
        if providers.iter().any(|p| p.variable == secret.name) {
            return Err(PolicyError::InvalidSecret {
                name: secret.name.clone(),
                reason: "is listed twice".into(),
            });
        }
        let value = values
            .get(&secret.name)
            .ok_or_else(|| PolicyError::SecretMissing {
                name: secret.name.clone(),
            })?;
        if value.expose().is_empty() {
            return Err(PolicyError::InvalidSecret {
                name: secret.name.clone(),
                reason: "is set but empty".into(),
            });
        }
        let variable: String = secret
            .name
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let mut name = format!("{sandbox}-{}", variable.trim_matches('-'));
        name.truncate(63);
        let name = name.trim_end_matches('-').to_owned();
        check_dns_label("provider name", &name, 63)?;
        providers.push(ProviderRequest::new(
            name,
            secret.name.clone(),
            rule_key("secret", &secret.name),
            session_labels(spec)?,
            value.clone(),
        ));
    }
    Ok(providers)
}

fn session_labels(spec: &SessionSpec) -> Result<BTreeMap<String, String>, PolicyError> {
    check_label(SESSION_LABEL, &spec.session_id)?;
    check_label(MACHINE_LABEL, &spec.machine_id)?;
    Ok(BTreeMap::from([
        (SESSION_LABEL.to_owned(), spec.session_id.clone()),
        (MACHINE_LABEL.to_owned(), spec.machine_id.clone()),
    ]))
}

/// The sandbox environment: the session's entries, then the enabled credential entries'
/// (`HOME` and the variables pointing tools at the private home). Secrets never: their
/// variables hold placeholders the gateway sets; a value that leaked into the environment is
/// refused by name.
pub(crate) fn environment(
    spec: &SessionSpec,
    layout: &Layout,
    providers: &[ProviderRequest],
) -> Result<BTreeMap<String, String>, PolicyError> {
    let mut env = spec.environment.clone();
    if let Some(home) = &layout.private_home {
        env.insert("HOME".to_owned(), home.clone());
        for entry in &spec.credentials {
            env.extend(entry.environment(home));
        }
    }
    check_environment(&env)?;
    for provider in providers {
        if env.contains_key(&provider.variable) {
            return Err(PolicyError::InvalidEnvironment {
                key: provider.variable.clone(),
                reason: "is a secret: the gateway sets its placeholder; do not set it".into(),
            });
        }
        let secret = provider.value().expose();
        if let Some((key, _)) = env.iter().find(|(_, value)| value.contains(secret)) {
            return Err(PolicyError::InvalidEnvironment {
                key: key.clone(),
                reason: format!(
                    "the value contains secret {}'s value; secrets never enter the sandbox",
                    provider.variable
                ),
            });
        }
    }
    Ok(env)
}

/// `{"<driver>": {"mounts": [...]}}`: every folder at its own path (read-only unless granted
/// read-write), the protected paths inside the read-write ones (read-only; git directories
/// bound onto themselves), the runner's folder read-only, the private home read-write, and a
/// tmpfs for the runner's socket.
pub(crate) fn driver_config(spec: &SessionSpec, layout: &Layout) -> serde_json::Value {
    let bind = |path: &str, read_only: bool| json!({"type": "bind", "source": path, "target": path, "read_only": read_only});
    let mut mounts: Vec<serde_json::Value> = layout
        .folders
        .iter()
        .map(|(path, access)| bind(path, *access == FolderAccess::ReadOnly))
        .collect();
    // Files the host runs later, inside the read-write folders (after them: docker mounts
    // parents first).
    mounts.extend(
        layout
            .protected
            .iter()
            .map(|(path, read_only)| bind(path, *read_only)),
    );
    mounts.push(bind(&layout.runner_dir, true));
    if let Some(home) = &layout.private_home {
        mounts.push(bind(home, false));
    }
    mounts.push(
        json!({"type": "tmpfs", "target": RUNNER_SOCKET_DIR, "size_bytes": SOCKET_DIR_BYTES}),
    );
    json!({ spec.driver.as_str(): { "mounts": mounts } })
}

/// JSON into a protobuf `Struct` (objects only at the top).
pub(crate) fn to_struct(value: serde_json::Value) -> Struct {
    match to_value(value).kind {
        Some(Kind::StructValue(object)) => object,
        _ => Struct::default(),
    }
}

fn to_value(value: serde_json::Value) -> Value {
    let kind = match value {
        serde_json::Value::Null => Kind::NullValue(0),
        serde_json::Value::Bool(b) => Kind::BoolValue(b),
        serde_json::Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        serde_json::Value::String(s) => Kind::StringValue(s),
        serde_json::Value::Array(items) => Kind::ListValue(ListValue {
            values: items.into_iter().map(to_value).collect(),
        }),
        serde_json::Value::Object(fields) => Kind::StructValue(Struct {
            fields: fields.into_iter().map(|(k, v)| (k, to_value(v))).collect(),
        }),
    };
    Value { kind: Some(kind) }
}

/// Pinned by digest: `…@sha256:` and 64 lower-case hex digits.
fn check_image(image: &str) -> Result<(), PolicyError> {
    let pinned = image.split_once("@sha256:").is_some_and(|(name, digest)| {
        !name.is_empty()
            && !name.contains(char::is_whitespace)
            && digest.len() == 64
            && digest
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    if pinned {
        Ok(())
    } else {
        let shown = image.split('@').next().unwrap_or(image);
        Err(PolicyError::ImageNotPinned {
            image: shown.to_owned(),
        })
    }
}

pub(crate) fn build(
    name: &str,
    spec: &SessionSpec,
    layout: &Layout,
    policy: SandboxPolicy,
    environment: BTreeMap<String, String>,
    providers: &[ProviderRequest],
) -> Result<CreateSandboxRequest, PolicyError> {
    check_dns_label("sandbox name", name, MAX_SANDBOX_NAME)?;
    check_image(&spec.image)?;
    let folders: Vec<FolderSpec> = layout
        .folders
        .iter()
        .map(|(path, access)| FolderSpec {
            path: path.clone(),
            access: *access,
            owner: layout.owner,
        })
        .collect();
    Ok(CreateSandboxRequest {
        name: name.to_owned(),
        labels: session_labels(spec)?,
        workspace_scope: Some(openshell_proto::default_workspace()),
        spec: Some(SandboxSpec {
            environment,
            template: Some(SandboxTemplate {
                image: spec.image.clone(),
                driver_config: Some(to_struct(driver_config(spec, layout))),
                ..SandboxTemplate::default()
            }),
            policy: Some(policy),
            providers: providers.iter().map(|p| p.name.clone()).collect(),
            command: runner_command(
                &layout.runner_dir,
                &folders,
                &layout.cwd,
                &layout.read_write,
            ),
            tty: false,
            restart_policy: SandboxRestartPolicy::Never.into(),
            ..SandboxSpec::default()
        }),
        ..CreateSandboxRequest::default()
    })
}
