//! The machine's connectors for front ends (`paddock connectors …`, `/v1/connectors`): list
//! with status, the tools a server exposes with their risk, a test, enable/disable, add or
//! edit (written back to the machine config with `toml_edit`, keeping its comments), the
//! token stored in the key store. No answer carries a token.

use model_client::{ApiKey, KeyStore, KeyStoreKind};
use paddock_connectors::config::{ConnectorConfig, secret_account, validate_all};
use paddock_connectors::mcp::sent_names;
use paddock_connectors::{ConnectorTool, Status};
use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, MachineConfig};
use crate::error::HostError;
use crate::host::Host;

/// One connector as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ConnectorInfo {
    pub name: String,
    /// `stdio` or `streamable-http`.
    pub transport: String,
    /// The command line or URL (no token: tokens never live in the config).
    pub target: String,
    pub enabled: bool,
    /// `stopped`, `starting`, `running`, `restarting`, `failed` or `disabled`.
    pub status: String,
    /// Why it is failed or restarting.
    pub reason: Option<String>,
    /// Restarts after it stopped on its own.
    pub restarts: u32,
    /// Tools as last listed (0 before its first start).
    pub tools: usize,
    /// The environment variables or headers it sends, and whether each carries the token.
    pub sends: Vec<SentName>,
    /// The `[[connectors]]` entry as the machine's config holds it, for front ends to edit:
    /// `{secret}` stands where the token goes; the token itself is only in the key store.
    pub config: ConnectorConfig,
}

/// An environment variable or header a connector sends (with the token in it, its value never
/// leaves the host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SentName {
    pub name: String,
    pub carries_token: bool,
}

/// One tool a server exposes, as Paddock offers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ConnectorToolInfo {
    /// The server's name for it.
    pub name: String,
    /// The name the model sees (`mcp__<connector>__<tool>`), when it is offered.
    pub model_name: Option<String>,
    /// Why it is not offered.
    pub not_offered: Option<String>,
    pub description: String,
    /// What the server's annotations claim: `read`, `write` or `destructive`.
    pub claimed_risk: String,
    /// The risk in force.
    pub risk: String,
}

/// What a connector test found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ConnectorTestReport {
    pub ok: bool,
    pub detail: String,
    pub tools: Vec<ConnectorToolInfo>,
}

fn tool_info(tool: &ConnectorTool) -> ConnectorToolInfo {
    ConnectorToolInfo {
        name: tool.tool.name.clone(),
        model_name: tool.model_name.clone().ok(),
        not_offered: tool.model_name.clone().err(),
        description: tool.tool.description.clone(),
        claimed_risk: tool.claimed.as_str().to_owned(),
        risk: tool.risk.as_str().to_owned(),
    }
}

fn not_found(name: &str) -> HostError {
    HostError::ConnectorNotFound {
        name: name.to_owned(),
    }
}

/// `text` (the machine config file) with the entry `config` in place of the entry of the same
/// name, or appended; `None` removes the entry named `name`.
fn with_entry(
    text: &str,
    name: &str,
    config: Option<&ConnectorConfig>,
) -> Result<String, HostError> {
    let mut document: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| HostError::InvalidSetting {
                key: "(file)".into(),
                problem: format!("the config file is not valid TOML: {}", e.message()),
            })?;
    let entry = match config {
        Some(config) => {
            let serialized = toml::to_string(config)
                .map_err(|e| HostError::Internal(format!("writing the connector: {e}")))?;
            let parsed: toml_edit::DocumentMut = serialized
                .parse()
                .map_err(|e| HostError::Internal(format!("writing the connector: {e}")))?;
            Some(parsed.as_table().clone())
        }
        None => None,
    };
    let item = document
        .entry("connectors")
        .or_insert(toml_edit::Item::ArrayOfTables(
            toml_edit::ArrayOfTables::new(),
        ));
    let Some(array) = item.as_array_of_tables_mut() else {
        return Err(HostError::InvalidSetting {
            key: "connectors".into(),
            problem: "must be written as [[connectors]] tables".into(),
        });
    };
    let position = array
        .iter()
        .position(|t| t.get("name").and_then(|n| n.as_str()) == Some(name));
    match (position, entry) {
        (Some(i), Some(entry)) => {
            if let Some(slot) = array.get_mut(i) {
                *slot = entry;
            }
        }
        (None, Some(entry)) => array.push(entry),
        (Some(i), None) => {
            array.remove(i);
        }
        (None, None) => return Err(not_found(name)),
    }
    Ok(document.to_string())
}

impl Host {
    /// Every configured connector with its state.
    pub fn connectors(&self) -> Vec<ConnectorInfo> {
        let config = self.config();
        config
            .connectors
            .iter()
            .map(|entry| {
                let live = self.connector_set().get(&entry.name).ok();
                let status = live.as_ref().map_or(Status::Stopped, |c| c.status());
                ConnectorInfo {
                    name: entry.name.clone(),
                    transport: entry.transport.as_str().to_owned(),
                    target: entry.target(),
                    enabled: entry.enabled,
                    status: status.as_str().to_owned(),
                    reason: status.reason().map(|r| self.inner.redactions.redact(r)),
                    restarts: live.as_ref().map_or(0, |c| c.restarts()),
                    tools: live.as_ref().map_or(0, |c| c.tools().len()),
                    sends: sent_names(entry)
                        .into_iter()
                        .map(|(name, carries_token)| SentName {
                            name,
                            carries_token,
                        })
                        .collect(),
                    config: entry.clone(),
                }
            })
            .collect()
    }

    pub fn connector(&self, name: &str) -> Result<ConnectorInfo, HostError> {
        self.connectors()
            .into_iter()
            .find(|c| c.name == name)
            .ok_or_else(|| not_found(name))
    }

    /// The tools a connector's server exposes (started when it is not running).
    pub async fn connector_tools(&self, name: &str) -> Result<Vec<ConnectorToolInfo>, HostError> {
        let connector = self
            .connector_set()
            .get(name)
            .map_err(|_| not_found(name))?;
        connector
            .ensure_started()
            .await
            .map_err(|e| HostError::ConnectorFailed {
                name: name.to_owned(),
                reason: self.inner.redactions.redact(&e.to_string()),
            })?;
        Ok(connector.tools().iter().map(tool_info).collect())
    }

    /// Starts the connector apart from the running one, lists its tools, stops it.
    pub async fn test_connector(&self, name: &str) -> Result<ConnectorTestReport, HostError> {
        let config = self
            .config()
            .connectors
            .into_iter()
            .find(|c| c.name == name)
            .ok_or_else(|| not_found(name))?;
        let report = self.connector_set().test(&config).await;
        Ok(ConnectorTestReport {
            ok: report.ok,
            detail: self.inner.redactions.redact(&report.detail),
            tools: report.tools.iter().map(tool_info).collect(),
        })
    }

    /// Turns a connector on or off (written to the machine config).
    pub async fn set_connector_enabled(
        &self,
        name: &str,
        enabled: bool,
    ) -> Result<ConnectorInfo, HostError> {
        let mut config = self
            .config()
            .connectors
            .into_iter()
            .find(|c| c.name == name)
            .ok_or_else(|| not_found(name))?;
        config.enabled = enabled;
        self.put_connector(config, None).await
    }

    /// Removes a connector: its `[[connectors]]` entry leaves the machine config (the file's
    /// other entries and comments stay), its server is stopped, and its token is deleted from
    /// the key store (the `env` store holds none). Returns whether a token was deleted.
    pub async fn remove_connector(&self, name: &str) -> Result<bool, HostError> {
        let edit = self.edit_entry(name, None)?;
        let kind = edit.machine.models.key_store;
        self.commit_entry(edit).await?;
        if kind == KeyStoreKind::Env {
            return Ok(false);
        }
        let account = secret_account(name);
        let deleted = tokio::task::spawn_blocking(move || KeyStore::open(kind)?.delete(&account))
            .await
            .map_err(|e| HostError::Internal(format!("deleting the token: {e}")))??;
        Ok(deleted)
    }

    /// Adds a connector, or replaces the one of the same name; `token` (when given) is stored
    /// in the key store as the connector's. Validated with the whole config before anything
    /// is written.
    pub async fn put_connector(
        &self,
        config: ConnectorConfig,
        token: Option<String>,
    ) -> Result<ConnectorInfo, HostError> {
        config.validate().map_err(|e| HostError::InvalidSetting {
            key: format!("connectors.{}", e.field),
            problem: e.problem,
        })?;
        let edit = self.edit_entry(&config.name, Some(&config))?;
        validate_all(&edit.machine.connectors).map_err(|e| HostError::InvalidSetting {
            key: e.field,
            problem: e.problem,
        })?;
        if let Some(token) = token {
            let key = ApiKey::new(token).map_err(|e| HostError::InvalidSetting {
                key: "token".into(),
                problem: e.to_string(),
            })?;
            self.register_secret(key.clone()).await?;
            let kind = edit.machine.models.key_store;
            let account = secret_account(&config.name);
            tokio::task::spawn_blocking(move || KeyStore::open(kind)?.set(&account, &key))
                .await
                .map_err(|e| HostError::Internal(format!("storing the token: {e}")))??;
        }
        self.commit_entry(edit).await?;
        self.connector(&config.name)
    }

    /// The machine config file with connector `name`'s entry replaced by `config` (added when
    /// new, removed when `None`), and the config it makes; nothing written yet.
    fn edit_entry(
        &self,
        name: &str,
        config: Option<&ConnectorConfig>,
    ) -> Result<EntryEdit, HostError> {
        let path = self.paths().config_file();
        let current = crate::settings::read_user_file(&path)?;
        let text = with_entry(&current, name, config)?;
        let machine = MachineConfig::from_texts(Some((&text, &path))).map_err(
            |ConfigError { key, problem, .. }| HostError::InvalidSetting { key, problem },
        )?;
        Ok(EntryEdit {
            path,
            text,
            machine,
        })
    }

    /// Writes the edited file, puts its config in force and brings the running connectors in
    /// line with it.
    async fn commit_entry(&self, edit: EntryEdit) -> Result<(), HostError> {
        crate::settings::write_atomically(&edit.path, &edit.text)?;
        self.replace_config(edit.machine.clone());
        self.connector_set().sync(&edit.machine.connectors).await;
        Ok(())
    }
}

/// A connector entry changed in the machine config's text, not yet written.
struct EntryEdit {
    path: std::path::PathBuf,
    text: String,
    machine: MachineConfig,
}
