//! The composition root: the machine's provider, model client and stores, built from the
//! machine configuration.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use model_client::{ApiKey, ClientConfig, KeyNeed, KeyStore, ModelClient};
use protocol::ProviderKind;
use sandbox_policy::{CredentialEntry, SandboxData};
use sandbox_provider::SandboxProvider;
use sandbox_provider::direct::DirectProvider;
use sandbox_provider::local::{AllowListSource, LocalConfig, LocalProvider};
use sandbox_provider::openshell::{OpenShellConfig, OpenShellProvider};

use crate::config::MachineConfig;
use crate::paths::Paths;

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
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| "paddock-unknown-machine".to_owned())
}

/// The sandbox provider of `kind` for this machine.
pub fn provider(
    kind: ProviderKind,
    config: &MachineConfig,
    paths: &Paths,
    helpers: &Helpers,
) -> anyhow::Result<Arc<dyn SandboxProvider>> {
    let runner = helpers.tool_runner.clone();
    Ok(match kind {
        ProviderKind::Direct => Arc::new(DirectProvider::new(runner)),
        ProviderKind::Local => {
            let policy = AllowListSource::builtin()
                .map_err(|e| anyhow::anyhow!("the built-in network profiles: {e}"))?;
            let credentials = credential_entries(&policy.data, config)?;
            let mut local = LocalConfig::new(
                runner,
                helpers.paddock_wall.clone(),
                paths.state_dir.join("walls"),
                home(),
                Arc::new(policy),
            );
            local.credentials = credentials;
            local.limits = config.limits;
            local.proxy_limits = config.proxy_limits;
            Arc::new(LocalProvider::new(local))
        }
        ProviderKind::Openshell => Arc::new(openshell_provider(config, paths, helpers)?),
    })
}

/// The credential-share entries this machine offers a sandbox (each off unless a session
/// enables it by name): the built-ins of `data` (`ssh`, `gh`, `aws`, `kube`) and the machine
/// config's custom `[[sandbox_credentials]]`. Every wall gets the same list.
pub fn credential_entries(
    data: &SandboxData,
    config: &MachineConfig,
) -> anyhow::Result<Vec<CredentialEntry>> {
    let mut credentials = Vec::new();
    for name in data.credential_names() {
        credentials.push(
            data.credential(&name)
                .map_err(|e| anyhow::anyhow!("built-in credential entry `{name}`: {e}"))?,
        );
    }
    for entry in &config.credentials {
        credentials.push(
            entry
                .to_policy()
                .map_err(|e| anyhow::anyhow!("sandbox_credentials `{}`: {e}", entry.name))?,
        );
    }
    Ok(credentials)
}

/// The OpenShell provider for this machine, offering the same credential entries as the
/// local wall. Building it contacts no gateway.
pub fn openshell_provider(
    config: &MachineConfig,
    paths: &Paths,
    helpers: &Helpers,
) -> anyhow::Result<OpenShellProvider> {
    let Some(image) = config.openshell_image.clone() else {
        bail!(
            "the openshell provider needs `openshell.image` in {}",
            paths.config_file().display()
        );
    };
    let runner_dir = helpers
        .tool_runner
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut openshell = OpenShellConfig::new(
        machine_id(),
        image,
        runner_dir,
        paths.state_dir.join("openshell"),
        home(),
    )
    .context("configuring the openshell provider")?;
    if let Some(gateway) = &config.openshell_gateway {
        let mut vars: Vec<(String, String)> = std::env::vars().collect();
        vars.retain(|(name, _)| name != "OPENSHELL_GATEWAY");
        vars.push(("OPENSHELL_GATEWAY".into(), gateway.clone()));
        openshell.environment = sandbox_provider::openshell::HostEnvironment::from_vars(vars);
    }
    let credentials = credential_entries(&openshell.data, config)?;
    Ok(OpenShellProvider::new(openshell).with_credentials(credentials))
}

/// The model client of the machine's `[models]` settings, and its key (to redact it from the
/// audit trail).
pub async fn model_client(
    config: &MachineConfig,
) -> anyhow::Result<(Arc<dyn ModelClient>, Option<ApiKey>)> {
    let models = config.models.clone();
    let need = model_client::preset(&models.provider).map_or(KeyNeed::Optional, |p| p.key);
    let key = if need == KeyNeed::None {
        None
    } else {
        let provider = models.provider.clone();
        let kind = models.key_store;
        let found = tokio::task::spawn_blocking(move || {
            let store = KeyStore::open(kind)?;
            let key = store.get(&provider)?;
            Ok::<_, model_client::KeyStoreError>((key, store.describe()))
        })
        .await
        .context("reading the API key")?;
        let (key, described) =
            found.with_context(|| format!("reading the `{}` API key", models.provider))?;
        if key.is_none() && need == KeyNeed::Required {
            bail!(
                "no API key for `{}` in the {} key store ({described}); for the env store set {}",
                models.provider,
                models.key_store,
                model_client::keys::env_variable(&models.provider)
            );
        }
        key
    };
    let mut client_config = ClientConfig::new(models.base_url.clone(), key.clone());
    client_config.extra_ca_file = models.extra_ca_file.clone();
    let client = model_client::connect(models.vendor, &client_config)
        .with_context(|| format!("connecting to the `{}` model API", models.provider))?;
    Ok((client, key))
}
