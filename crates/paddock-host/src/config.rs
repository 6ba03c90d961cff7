//! The machine configuration: `config/default.toml` (built in) overlaid by the user's
//! `$XDG_CONFIG_HOME/paddock/config.toml`. Every error names the file and the key.
//! A project's own config is never read for settings: sandbox keys, approvals and connectors
//! are the machine's alone (a project file that tries to set them is reported, see
//! [`crate::project`]).

#[path = "config_connectors.rs"]
mod connectors;
#[path = "config_limits.rs"]
mod limits;

pub use connectors::WebFetchSettings;
pub use paddock_connectors::ConnectorConfig;

use std::path::{Path, PathBuf};

use model_client::{KeyStoreKind, Vendor};
use protocol::{ApprovalMode, NetworkProfileName, ProviderKind};
use sandbox_provider::local::proxy::ProxyLimits;
use sandbox_provider::local::resources::LimitSettings;
use serde::Deserialize;

/// The built-in defaults.
pub const DEFAULT_CONFIG: &str = include_str!("../../../config/default.toml");

/// A config file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: `{key}`: {problem}")]
pub struct ConfigError {
    /// The file, or `built-in defaults`.
    pub file: String,
    /// The dotted key, e.g. `sandbox.provider`.
    pub key: String,
    pub problem: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    sandbox: Option<RawSandbox>,
    sandbox_credentials: Option<Vec<RawCredential>>,
    openshell: Option<RawOpenshell>,
    models: Option<RawModels>,
    approvals: Option<RawApprovals>,
    audit: Option<RawAudit>,
    connectors: Option<Vec<ConnectorConfig>>,
    web_fetch: Option<connectors::RawWebFetch>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSandbox {
    provider: Option<String>,
    network_profile: Option<String>,
    extra_hosts: Option<Vec<String>>,
    tool_runner: Option<PathBuf>,
    limits: Option<limits::RawLimits>,
    secrets: Option<Vec<String>>,
    credentials: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCredential {
    name: String,
    source: String,
    hosts: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOpenshell {
    gateway: Option<String>,
    image: Option<String>,
    keep: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModels {
    provider: Option<String>,
    model: Option<String>,
    vendor: Option<String>,
    base_url: Option<String>,
    key_store: Option<String>,
    extra_ca_file: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApprovals {
    mode: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    durability: Option<String>,
}

/// How hard the audit trail pushes each commit to disk (`audit.durability`). Either way a
/// row is committed before the step it records goes on, so a killed Paddock loses none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditDurability {
    /// `"flushed"` (the default): the disk is flushed within [`AUDIT_FLUSH_WITHIN`] of a
    /// commit, one flush for every commit in between; power loss can lose at most that much.
    Flushed,
    /// `"full"`: every commit waits for the disk (an fsync each).
    Full,
}

/// How soon a commit reaches the disk with [`AuditDurability::Flushed`].
pub const AUDIT_FLUSH_WITHIN: std::time::Duration = std::time::Duration::from_millis(100);

impl AuditDurability {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditDurability::Flushed => "flushed",
            AuditDurability::Full => "full",
        }
    }

    /// The audit store's durability for this setting.
    pub fn store_durability(self) -> audit_store::Durability {
        match self {
            AuditDurability::Flushed => audit_store::Durability::Flushed {
                within: AUDIT_FLUSH_WITHIN,
            },
            AuditDurability::Full => audit_store::Durability::Full,
        }
    }
}

/// A custom credential-share entry: files from the user's home copied into a sandbox whose
/// session enables the entry by name, with the hosts its tools need. The config names the
/// files; it never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialEntry {
    pub name: String,
    /// A folder or file relative to the home folder (e.g. `.config/mytool`).
    pub source: String,
    pub hosts: Vec<String>,
}

impl CredentialEntry {
    /// The entry as the walls take it.
    pub fn to_policy(&self) -> Result<sandbox_policy::CredentialEntry, String> {
        let hosts: Vec<&str> = self.hosts.iter().map(String::as_str).collect();
        sandbox_policy::CredentialEntry::custom(&self.name, &self.source, &hosts)
            .map_err(|e| e.to_string())
    }
}

/// The model settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelsConfig {
    /// A preset name (`anthropic`, `ollama`…) or `custom`; also the key store account.
    pub provider: String,
    pub vendor: Vendor,
    pub model: String,
    pub base_url: String,
    pub key_store: KeyStoreKind,
    /// True when the user's file sets `models.key_store` (a front end's own default, such as
    /// the desktop's keychain, applies only when it does not).
    pub key_store_explicit: bool,
    /// PEM certificates trusted for the model API besides the system's (a corporate CA).
    pub extra_ca_file: Option<PathBuf>,
}

/// The machine configuration, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineConfig {
    pub provider: ProviderKind,
    /// True when `sandbox.provider` was set explicitly (not derived).
    pub provider_explicit: bool,
    pub network_profile: NetworkProfileName,
    pub extra_hosts: Vec<String>,
    pub tool_runner: Option<PathBuf>,
    /// Processes, memory, swap and CPU per local sandbox (`[sandbox.limits]`).
    pub limits: LimitSettings,
    /// Connections each local sandbox's proxy serves at once (`sandbox.limits.connections`).
    pub proxy_limits: ProxyLimits,
    /// The custom credential-share entries (`[[sandbox_credentials]]`).
    pub credentials: Vec<CredentialEntry>,
    /// Credential-share entries (built-in or custom, by name) enabled for every session on
    /// this machine (`sandbox.credentials`); a session may enable more. Empty by default.
    pub enabled_credentials: Vec<String>,
    /// Names of the secrets a session may be given (OpenShell providers: the sandbox sees a
    /// placeholder, the gateway injects the value). Values come from the key store, never
    /// from a config file.
    pub secrets: Vec<String>,
    pub openshell_gateway: Option<String>,
    /// The sandbox image OpenShell runs, pinned by digest.
    pub openshell_image: Option<String>,
    /// Leave OpenShell sandboxes running when their session closes or the process stops
    /// (`openshell.keep`): a later session with the same id and configuration reuses one,
    /// and reaping never deletes them. Off by default.
    pub openshell_keep: bool,
    pub models: ModelsConfig,
    pub approval_mode: ApprovalMode,
    /// How hard the audit trail pushes each commit to disk (`audit.durability`).
    pub audit_durability: AuditDurability,
    /// MCP servers on the host (`[[connectors]]`): the machine's file only.
    pub connectors: Vec<ConnectorConfig>,
    /// The built-in web fetch (`[web_fetch]`).
    pub web_fetch: WebFetchSettings,
    /// The user's file, when one was read.
    pub source: Option<PathBuf>,
}

/// Replaces every double-quoted part of a parser message (values) with `"…"`.
fn without_values(message: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in message.chars() {
        if c == '"' {
            if !quoted {
                out.push_str("\"…\"");
            }
            quoted = !quoted;
        } else if !quoted {
            out.push(c);
        }
    }
    out
}

fn parse_raw(text: &str, file: &str) -> Result<RawConfig, ConfigError> {
    toml::from_str(text).map_err(|e| {
        // Only the parser's message (values blanked) and the position: the offending line
        // itself may hold a secret someone pasted into the wrong file.
        let message = without_values(e.message().trim()).replace('\n', " ");
        let mut key = message
            .split('`')
            .nth(1)
            .map(str::to_owned)
            .unwrap_or_else(|| "(file)".into());
        let mut position = String::new();
        if let Some(span) = e.span() {
            let start = span.start.min(text.len());
            let before = &text[..start];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let line = before.matches('\n').count() + 1;
            let column = start - line_start + 1;
            position = format!(" (line {line}, column {column})");
            let line_text = text[line_start..].lines().next().unwrap_or("");
            if let Some((name, _)) = line_text.split_once('=') {
                let name = name.trim();
                if !name.is_empty() && !message.contains("unknown field") {
                    key = name.to_owned();
                }
            }
        }
        ConfigError {
            file: file.to_owned(),
            key,
            problem: format!("{message}{position}"),
        }
    })
}

/// Which file a merged value came from, for error messages.
struct Layered<T> {
    value: T,
    file: String,
}

fn pick<T>(user: Option<T>, default: Option<T>, user_file: &str) -> Option<Layered<T>> {
    match (user, default) {
        (Some(value), _) => Some(Layered {
            value,
            file: user_file.to_owned(),
        }),
        (None, Some(value)) => Some(Layered {
            value,
            file: BUILT_IN.to_owned(),
        }),
        (None, None) => None,
    }
}

const BUILT_IN: &str = "built-in defaults (config/default.toml)";

fn error(file: &str, key: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        file: file.to_owned(),
        key: key.to_owned(),
        problem: problem.into(),
    }
}

fn required<T>(value: Option<Layered<T>>, key: &str) -> Result<Layered<T>, ConfigError> {
    value.ok_or_else(|| error(BUILT_IN, key, "missing"))
}

/// The built-in credential-share entries' names (`ssh`, `gh`, …).
pub fn builtin_credential_names() -> Result<Vec<String>, String> {
    Ok(sandbox_policy::SandboxData::builtin()
        .map_err(|e| e.to_string())?
        .credential_names())
}

/// Checks a `host`, `host:port` or `*.host` entry (the agent's rule, shared by every front
/// end).
pub use agent::check_host;

/// Checks a secret's name: an environment variable name (`GITHUB_TOKEN`), which is how the
/// sandbox sees its placeholder.
pub fn check_secret_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_');
    if !first_ok
        || !chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        || name.len() > 64
    {
        return Err(format!(
            "`{name}` is not a secret name: use up to 64 of A-Z, 0-9 and `_`, not starting with \
             a digit (the variable the sandbox sees)"
        ));
    }
    Ok(())
}

pub(crate) fn provider_kind(text: &str) -> Option<ProviderKind> {
    match text {
        "local" => Some(ProviderKind::Local),
        "openshell" => Some(ProviderKind::Openshell),
        "direct" => Some(ProviderKind::Direct),
        _ => None,
    }
}

pub(crate) fn network_profile(text: &str) -> Option<NetworkProfileName> {
    match text {
        "strict" => Some(NetworkProfileName::Strict),
        "standard" => Some(NetworkProfileName::Standard),
        "open" => Some(NetworkProfileName::Open),
        _ => None,
    }
}

fn vendor(text: &str) -> Option<Vendor> {
    match text {
        "anthropic" => Some(Vendor::Anthropic),
        "openai_compatible" | "openai-compatible" => Some(Vendor::OpenAiCompatible),
        _ => None,
    }
}

impl MachineConfig {
    /// The built-in defaults overlaid with `user` (the text of the file at `user_path`).
    pub fn from_texts(user: Option<(&str, &Path)>) -> Result<Self, ConfigError> {
        let defaults = parse_raw(DEFAULT_CONFIG, BUILT_IN)?;
        let (user_raw, user_file, source) = match user {
            Some((text, path)) => {
                let file = path.display().to_string();
                (parse_raw(text, &file)?, file, Some(path.to_path_buf()))
            }
            None => (RawConfig::default(), String::new(), None),
        };
        let us = user_raw.sandbox.unwrap_or_default();
        let ds = defaults.sandbox.unwrap_or_default();
        let uo = user_raw.openshell.unwrap_or_default();
        let dopen = defaults.openshell.unwrap_or_default();
        let um = user_raw.models.unwrap_or_default();
        let dm = defaults.models.unwrap_or_default();
        let ua = user_raw.approvals.unwrap_or_default();
        let da = defaults.approvals.unwrap_or_default();
        let uaudit = user_raw.audit.unwrap_or_default();
        let daudit = defaults.audit.unwrap_or_default();

        let openshell_gateway = pick(uo.gateway, dopen.gateway, &user_file).map(|l| l.value);
        let openshell_image = pick(uo.image, dopen.image, &user_file).map(|l| l.value);
        let openshell_keep = pick(uo.keep, dopen.keep, &user_file).is_some_and(|l| l.value);
        let (provider, provider_explicit) = match pick(us.provider, ds.provider, &user_file) {
            Some(layer) => (
                provider_kind(&layer.value).ok_or_else(|| {
                    error(
                        &layer.file,
                        "sandbox.provider",
                        format!("`{}` is not one of: local, openshell, direct", layer.value),
                    )
                })?,
                true,
            ),
            None if openshell_gateway.is_some() => (ProviderKind::Openshell, false),
            None => (ProviderKind::Local, false),
        };
        if provider == ProviderKind::Openshell && openshell_gateway.is_none() {
            return Err(error(
                if user_file.is_empty() {
                    BUILT_IN
                } else {
                    &user_file
                },
                "openshell.gateway",
                "the openshell provider needs a gateway name",
            ));
        }

        let profile = required(
            pick(us.network_profile, ds.network_profile, &user_file),
            "sandbox.network_profile",
        )?;
        let network_profile = network_profile(&profile.value).ok_or_else(|| {
            error(
                &profile.file,
                "sandbox.network_profile",
                format!("`{}` is not one of: strict, standard, open", profile.value),
            )
        })?;

        let hosts = pick(us.extra_hosts, ds.extra_hosts, &user_file);
        let extra_hosts = match hosts {
            Some(layer) => {
                for host in &layer.value {
                    check_host(host).map_err(|p| error(&layer.file, "sandbox.extra_hosts", p))?;
                }
                layer.value
            }
            None => Vec::new(),
        };

        let secrets = match pick(us.secrets, ds.secrets, &user_file) {
            Some(layer) => {
                let data = sandbox_policy::SandboxData::builtin()
                    .map_err(|e| error(BUILT_IN, "sandbox.secrets", e.to_string()))?;
                for name in &layer.value {
                    check_secret_name(name)
                        .map_err(|p| error(&layer.file, "sandbox.secrets", p))?;
                    data.known_secret(name)
                        .map_err(|e| error(&layer.file, "sandbox.secrets", e.to_string()))?;
                }
                layer.value
            }
            None => Vec::new(),
        };

        let credentials_layer = pick(
            user_raw.sandbox_credentials,
            defaults.sandbox_credentials,
            &user_file,
        );
        let mut credentials = Vec::new();
        if let Some(layer) = credentials_layer {
            for (index, entry) in layer.value.into_iter().enumerate() {
                let key = format!("sandbox_credentials[{index}]");
                if entry.name.trim().is_empty() {
                    return Err(error(
                        &layer.file,
                        &format!("{key}.name"),
                        "must not be empty",
                    ));
                }
                if entry.hosts.is_empty() {
                    return Err(error(
                        &layer.file,
                        &format!("{key}.hosts"),
                        "list the hosts the credential is for",
                    ));
                }
                for host in &entry.hosts {
                    check_host(host).map_err(|p| error(&layer.file, &format!("{key}.hosts"), p))?;
                }
                if builtin_credential_names()
                    .map_err(|e| error(BUILT_IN, &key, e))?
                    .contains(&entry.name)
                {
                    return Err(error(
                        &layer.file,
                        &format!("{key}.name"),
                        format!(
                            "`{}` is a built-in entry's name; choose another for a custom entry",
                            entry.name
                        ),
                    ));
                }
                if credentials
                    .iter()
                    .any(|c: &CredentialEntry| c.name == entry.name)
                {
                    return Err(error(
                        &layer.file,
                        &format!("{key}.name"),
                        format!("`{}` is defined twice", entry.name),
                    ));
                }
                let checked = CredentialEntry {
                    name: entry.name,
                    source: entry.source,
                    hosts: entry.hosts,
                };
                checked
                    .to_policy()
                    .map_err(|p| error(&layer.file, &key, p))?;
                credentials.push(checked);
            }
        }

        let enabled_credentials = match pick(us.credentials, ds.credentials, &user_file) {
            Some(layer) => {
                let data = sandbox_policy::SandboxData::builtin()
                    .map_err(|e| error(BUILT_IN, "sandbox.credentials", e.to_string()))?;
                let mut offered = data.credential_names();
                offered.extend(credentials.iter().map(|c: &CredentialEntry| c.name.clone()));
                let mut enabled: Vec<String> = Vec::new();
                for name in layer.value {
                    if !offered.contains(&name) {
                        return Err(error(
                            &layer.file,
                            "sandbox.credentials",
                            format!(
                                "`{name}` is not a credential-share entry (known: {})",
                                offered.join(", ")
                            ),
                        ));
                    }
                    if !enabled.contains(&name) {
                        enabled.push(name);
                    }
                }
                enabled
            }
            None => Vec::new(),
        };

        let (limits, proxy_limits) = limits::limits(
            us.limits.unwrap_or_default(),
            ds.limits.unwrap_or_default(),
            &user_file,
        )?;

        let models = models_config(um, dm, &user_file)?;

        if defaults.connectors.is_some() {
            return Err(error(
                BUILT_IN,
                "connectors",
                "the built-in defaults define no connectors",
            ));
        }
        let connectors = connectors::connectors(user_raw.connectors, &user_file)?;
        let web_fetch = connectors::web_fetch(user_raw.web_fetch, defaults.web_fetch, &user_file)?;

        let mode = required(pick(ua.mode, da.mode, &user_file), "approvals.mode")?;
        let approval_mode = ApprovalMode::parse(&mode.value).ok_or_else(|| {
            error(
                &mode.file,
                "approvals.mode",
                format!(
                    "`{}` is not one of: ask, auto-edit, auto-in-sandbox, bypass",
                    mode.value
                ),
            )
        })?;

        let durability = required(
            pick(uaudit.durability, daudit.durability, &user_file),
            "audit.durability",
        )?;
        let audit_durability = match durability.value.as_str() {
            "flushed" => AuditDurability::Flushed,
            "full" => AuditDurability::Full,
            other => {
                return Err(error(
                    &durability.file,
                    "audit.durability",
                    format!("`{other}` is not one of: flushed, full"),
                ));
            }
        };

        Ok(Self {
            provider,
            provider_explicit,
            network_profile,
            extra_hosts,
            tool_runner: pick(us.tool_runner, ds.tool_runner, &user_file).map(|l| l.value),
            limits,
            proxy_limits,
            credentials,
            enabled_credentials,
            secrets,
            openshell_gateway,
            openshell_image,
            openshell_keep,
            models,
            approval_mode,
            audit_durability,
            connectors,
            web_fetch,
            source,
        })
    }

    /// Reads the user's file at `path` when it exists, over the built-in defaults.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::from_texts(Some((&text, path))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::from_texts(None),
            Err(e) => Err(error(
                &path.display().to_string(),
                "(file)",
                format!("cannot be read: {e}"),
            )),
        }
    }
}

fn models_config(
    user: RawModels,
    defaults: RawModels,
    user_file: &str,
) -> Result<ModelsConfig, ConfigError> {
    let provider = required(
        pick(user.provider, defaults.provider, user_file),
        "models.provider",
    )?;
    let model = required(pick(user.model, defaults.model, user_file), "models.model")?;
    if model.value.trim().is_empty() {
        return Err(error(&model.file, "models.model", "must not be empty"));
    }
    let preset = model_client::preset(&provider.value);
    if preset.is_none() && provider.value != "custom" {
        let names: Vec<&str> = model_client::PROVIDERS.iter().map(|p| p.name).collect();
        return Err(error(
            &provider.file,
            "models.provider",
            format!(
                "`{}` is not one of: {}, custom",
                provider.value,
                names.join(", ")
            ),
        ));
    }
    let vendor = match pick(user.vendor, defaults.vendor, user_file) {
        Some(layer) => vendor(&layer.value).ok_or_else(|| {
            error(
                &layer.file,
                "models.vendor",
                format!(
                    "`{}` is not one of: anthropic, openai_compatible",
                    layer.value
                ),
            )
        })?,
        None => match preset {
            Some(p) => p.vendor,
            None => {
                return Err(error(
                    &provider.file,
                    "models.vendor",
                    "a custom provider needs `vendor`",
                ));
            }
        },
    };
    let base_url = match pick(user.base_url, defaults.base_url, user_file) {
        Some(layer) => {
            if !(layer.value.starts_with("http://") || layer.value.starts_with("https://")) {
                return Err(error(
                    &layer.file,
                    "models.base_url",
                    format!("`{}` is not an http(s) URL", layer.value),
                ));
            }
            layer.value
        }
        None => match preset {
            Some(p) => p.base_url.to_owned(),
            None => {
                return Err(error(
                    &provider.file,
                    "models.base_url",
                    "a custom provider needs `base_url`",
                ));
            }
        },
    };
    let key_store_explicit = user.key_store.is_some();
    let store = required(
        pick(user.key_store, defaults.key_store, user_file),
        "models.key_store",
    )?;
    let key_store = store.value.parse::<KeyStoreKind>().map_err(|_| {
        error(
            &store.file,
            "models.key_store",
            format!("`{}` is not one of: keychain, file, env", store.value),
        )
    })?;
    let extra_ca_file = match pick(user.extra_ca_file, defaults.extra_ca_file, user_file) {
        Some(layer) if Path::new(&layer.value).is_absolute() => Some(PathBuf::from(layer.value)),
        Some(layer) => {
            return Err(error(
                &layer.file,
                "models.extra_ca_file",
                format!("`{}` is not an absolute path", layer.value),
            ));
        }
        None => None,
    };
    Ok(ModelsConfig {
        provider: provider.value,
        vendor,
        model: model.value,
        base_url,
        key_store,
        key_store_explicit,
        extra_ca_file,
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
