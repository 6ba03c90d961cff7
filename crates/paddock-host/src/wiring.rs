//! Building the machine's parts from its configuration: the sandbox provider of each wall, the
//! credential entries it offers, the model client and its key, and secret values for
//! OpenShell sessions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use model_client::{ApiKey, ClientConfig, KeyNeed, KeyStore, KeyStoreKind, ModelClient};
use protocol::ProviderKind;
use sandbox_policy::{CredentialEntry, SandboxData};
use sandbox_provider::SandboxProvider;
use sandbox_provider::direct::DirectProvider;
use sandbox_provider::local::{AllowListSource, LocalConfig, LocalProvider};
use sandbox_provider::openshell::{HostEnvironment, OpenShellConfig, OpenShellProvider};

use crate::config::MachineConfig;
use crate::error::HostError;
use crate::paths::Paths;
use crate::probes::MachineProbes;

/// A helper executable: the environment variable, else the config, else beside `paddock`.
fn helper(variable: &str, configured: Option<&Path>, name: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(variable).filter(|v| !v.is_empty()) {
        return PathBuf::from(path);
    }
    if let Some(path) = configured {
        return path.to_path_buf();
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .unwrap_or_else(|| PathBuf::from(name))
}

/// The helper executables the walls start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Helpers {
    /// The tool-runner: `$PADDOCK_TOOL_RUNNER`, else `sandbox.tool_runner`, else beside
    /// `paddock`.
    pub tool_runner: PathBuf,
    /// The local wall's launcher: `$PADDOCK_WALL`, else beside `paddock`.
    pub paddock_wall: PathBuf,
}

impl Helpers {
    pub fn resolve(config: &MachineConfig) -> Self {
        Self {
            tool_runner: helper(
                "PADDOCK_TOOL_RUNNER",
                config.tool_runner.as_deref(),
                "tool-runner",
            ),
            paddock_wall: helper("PADDOCK_WALL", None, "paddock-wall"),
        }
    }
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn machine_id() -> String {
    std::fs::read_to_string("/etc/machine-id")
        .map(|id| id.trim().to_owned())
        .ok()
        .filter(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The value of the `paddock.machine` label on this state folder's OpenShell sandboxes:
/// the machine's id and the state folder's own (`instance-id`, made once). Reaping deletes
/// only sandboxes with this label whose session no process of this state folder holds, so
/// two users (or two state folders) of one machine sharing a gateway never reap each
/// other's live sandboxes: a machine id alone would let one take the other's for orphans.
pub fn sandbox_owner_label(paths: &Paths) -> Result<String, HostError> {
    let file = paths.state_dir.join("instance-id");
    let instance = match std::fs::read_to_string(&file) {
        Ok(text) => text.trim().to_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(&paths.state_dir)
                .map_err(|e| HostError::io(format!("creating {}", paths.state_dir.display()), e))?;
            let made = uuid::Uuid::new_v4().simple().to_string();
            let made = made.get(..16).unwrap_or(&made).to_owned();
            // Another process may make it at the same moment: the first one written wins.
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&file)
            {
                Ok(mut out) => {
                    use std::io::Write;
                    out.write_all(format!("{made}\n").as_bytes())
                        .map_err(|e| HostError::io(format!("writing {}", file.display()), e))?;
                    made
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    std::fs::read_to_string(&file)
                        .map_err(|e| HostError::io(format!("reading {}", file.display()), e))?
                        .trim()
                        .to_owned()
                }
                Err(e) => return Err(HostError::io(format!("creating {}", file.display()), e)),
            }
        }
        Err(e) => return Err(HostError::io(format!("reading {}", file.display()), e)),
    };
    if instance.is_empty()
        || instance.len() > 16
        || !instance.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(HostError::invalid(
            "instance id",
            format!(
                "{} must hold up to 16 letters or digits (delete it to make a new one)",
                file.display()
            ),
        ));
    }
    // A Kubernetes label value: at most 63 characters.
    let machine = machine_id();
    let machine = machine.get(..32).unwrap_or(&machine);
    Ok(format!("{machine}-{instance}"))
}

fn built_in(what: &str, problem: impl std::fmt::Display) -> HostError {
    HostError::Internal(format!("{what}: {problem}"))
}

/// The sandbox provider of `kind` for this machine.
pub fn provider(
    kind: ProviderKind,
    config: &MachineConfig,
    paths: &Paths,
    helpers: &Helpers,
    probes: &dyn MachineProbes,
) -> Result<Arc<dyn SandboxProvider>, HostError> {
    let runner = helpers.tool_runner.clone();
    Ok(match kind {
        ProviderKind::Direct => {
            Arc::new(DirectProvider::new(runner).with_quarantine(paths.quarantine_dir()))
        }
        ProviderKind::Local => {
            let policy = AllowListSource::builtin()
                .map_err(|e| built_in("the built-in network profiles", e))?;
            let credentials = credential_entries(&policy.data, config)?;
            let mut local = LocalConfig::new(
                runner,
                helpers.paddock_wall.clone(),
                paths.state_dir.join("walls"),
                home(),
                Arc::new(policy),
            );
            local.credentials = credentials;
            local.probes = probes.local();
            local.limits = config.limits;
            local.proxy_limits = config.proxy_limits;
            local.quarantine_dir = paths.quarantine_dir();
            Arc::new(LocalProvider::new(local))
        }
        ProviderKind::Openshell => Arc::new(openshell_provider_in(
            config,
            paths,
            helpers,
            &SecretValues::default(),
            probes.environment(),
        )?),
    })
}

/// The credential-share entries this machine offers a sandbox (each off unless a session
/// enables it by name): the built-ins of `data` (`ssh`, `gh`, `aws`, `kube`) and the machine
/// config's custom `[[sandbox_credentials]]`. Every wall gets the same list.
pub fn credential_entries(
    data: &SandboxData,
    config: &MachineConfig,
) -> Result<Vec<CredentialEntry>, HostError> {
    let mut credentials = Vec::new();
    for name in data.credential_names() {
        credentials.push(
            data.credential(&name)
                .map_err(|e| built_in(&format!("built-in credential entry `{name}`"), e))?,
        );
    }
    for entry in &config.credentials {
        credentials.push(entry.to_policy().map_err(|e| HostError::InvalidSetting {
            key: format!("sandbox_credentials `{}`", entry.name),
            problem: e,
        })?);
    }
    Ok(credentials)
}

/// Secret values for one OpenShell session, by name (`GITHUB_TOKEN` → its value from the key
/// store). They reach the gateway as provider credentials; the sandbox sees placeholders.
#[derive(Default)]
pub struct SecretValues(BTreeMap<String, ApiKey>);

impl std::fmt::Debug for SecretValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

impl SecretValues {
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }

    /// The values, to register with the audit trail's redactor.
    pub fn values(&self) -> impl Iterator<Item = &ApiKey> {
        self.0.values()
    }
}

/// The key-store account of a secret (`GITHUB_TOKEN` → `secret-github_token`).
pub fn secret_account(name: &str) -> String {
    format!("secret-{}", name.to_ascii_lowercase())
}

/// Reads the values of the secrets `names` from the machine's key store: the `env` store
/// reads each from the variable of its own name, the keychain and file stores from the
/// account [`secret_account`]. A missing one is refused with the way to add it.
pub async fn secret_values(
    config: &MachineConfig,
    names: &[String],
) -> Result<SecretValues, HostError> {
    let kind = config.models.key_store;
    let names = names.to_vec();
    let found = tokio::task::spawn_blocking(move || {
        let store = KeyStore::open(kind)?;
        let mut values = BTreeMap::new();
        for name in names {
            let value = match kind {
                KeyStoreKind::Env => std::env::var(&name)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .map(ApiKey::new)
                    .transpose()
                    .map_err(|reason| model_client::KeyStoreError::InvalidStoredKey {
                        provider: name.clone(),
                        reason,
                    })?,
                _ => store.get(&secret_account(&name))?,
            };
            values.insert(name, value);
        }
        Ok::<_, model_client::KeyStoreError>(values)
    })
    .await
    .map_err(|e| HostError::Internal(format!("reading secrets: {e}")))??;
    let mut values = BTreeMap::new();
    for (name, value) in found {
        let Some(value) = value else {
            let how = match kind {
                KeyStoreKind::Env => format!("set {name} in the environment that starts Paddock"),
                other => format!(
                    "store it in the {other} key store (PUT /v1/secrets/{name}, or `paddock` \
                     settings)"
                ),
            };
            return Err(HostError::SecretRefused {
                name,
                reason: format!("no value in the key store; {how}"),
            });
        };
        values.insert(name, value);
    }
    Ok(SecretValues(values))
}

/// The OpenShell provider for this machine, offering the same credential entries as the
/// local wall, and `secrets` to every session it starts (one provider per session that has
/// secrets). Building it contacts no gateway.
pub fn openshell_provider(
    config: &MachineConfig,
    paths: &Paths,
    helpers: &Helpers,
    secrets: &SecretValues,
) -> Result<OpenShellProvider, HostError> {
    openshell_provider_in(
        config,
        paths,
        helpers,
        secrets,
        HostEnvironment::from_process(),
    )
}

/// [`openshell_provider`] finding the gateway (and reading secret values) through
/// `environment` instead of this process's.
pub fn openshell_provider_in(
    config: &MachineConfig,
    paths: &Paths,
    helpers: &Helpers,
    secrets: &SecretValues,
    environment: HostEnvironment,
) -> Result<OpenShellProvider, HostError> {
    let Some(image) = config.openshell_image.clone() else {
        return Err(HostError::InvalidSetting {
            key: "openshell.image".into(),
            problem: format!(
                "the openshell provider needs a sandbox image pinned by digest in {}",
                paths.config_file().display()
            ),
        });
    };
    let runner_dir = helpers
        .tool_runner
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut openshell = OpenShellConfig::new(
        sandbox_owner_label(paths)?,
        image,
        runner_dir,
        paths.state_dir.join("openshell"),
        home(),
    )
    .map_err(HostError::Sandbox)?;
    openshell.quarantine_dir = paths.quarantine_dir();
    openshell.keep = config.openshell_keep;
    let mut environment = environment;
    if let Some(gateway) = &config.openshell_gateway {
        environment = environment.with_var("OPENSHELL_GATEWAY", gateway.clone());
    }
    // The provider reads secret values from its environment: the key store's values win.
    for (name, value) in &secrets.0 {
        environment = environment.with_var(name.clone(), value.expose_secret().to_owned());
        let spec = openshell
            .data
            .known_secret(name)
            .map_err(|e| HostError::SecretRefused {
                name: name.clone(),
                reason: e.to_string(),
            })?;
        openshell.secrets.push(spec);
    }
    openshell.environment = environment;
    let credentials = credential_entries(&openshell.data, config)?;
    Ok(OpenShellProvider::new(openshell).with_credentials(credentials))
}

/// The model client of the machine's `[models]` settings, and its key (to redact it from the
/// audit trail). No key where the provider needs one is [`HostError::ModelKeyMissing`],
/// saying how to add one.
pub async fn model_client(
    config: &MachineConfig,
) -> Result<(Arc<dyn ModelClient>, Option<ApiKey>), HostError> {
    let models = config.models.clone();
    let need = model_client::preset(&models.provider).map_or(KeyNeed::Optional, |p| p.key);
    let key = if need == KeyNeed::None {
        None
    } else {
        let provider = models.provider.clone();
        let kind = models.key_store;
        let (key, described) = tokio::task::spawn_blocking(move || {
            let store = KeyStore::open(kind)?;
            let key = store.get(&provider)?;
            Ok::<_, model_client::KeyStoreError>((key, store.describe()))
        })
        .await
        .map_err(|e| HostError::Internal(format!("reading the API key: {e}")))??;
        if key.is_none() && need == KeyNeed::Required {
            return Err(HostError::ModelKeyMissing {
                provider: models.provider.clone(),
                how: how_to_add_key(&models.provider, models.key_store, &described),
            });
        }
        key
    };
    let mut client_config = ClientConfig::new(models.base_url.clone(), key.clone());
    client_config.extra_ca_file = models.extra_ca_file.clone();
    let client =
        model_client::connect(models.vendor, &client_config).map_err(|e| HostError::Model {
            provider: models.provider.clone(),
            message: e.to_string(),
        })?;
    Ok((client, key))
}

/// How to give Paddock a key for `provider`, for the key store in use.
pub fn how_to_add_key(provider: &str, store: KeyStoreKind, described: &str) -> String {
    match store {
        KeyStoreKind::Env => format!(
            "set {} in the environment that starts Paddock (the key store is `env`), or choose \
             key_store = \"file\" or \"keychain\" and store the key with `paddock keys set \
             {provider}` (or PUT /v1/models/keys/{provider})",
            model_client::keys::env_variable(provider)
        ),
        other => format!(
            "store it in the {other} key store ({described}) with `paddock keys set {provider}` \
             (or PUT /v1/models/keys/{provider})"
        ),
    }
}
