//! A connector's configuration (`[[connectors]]` in the machine's `config.toml`) and its
//! validation. Secret values never live here: an `env` or `headers` value that needs the
//! connector's token says `{secret}`, and the token comes from the key store when the
//! connector starts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::risk::Risk;

/// The placeholder an `env` or `headers` value uses for the connector's token.
pub const SECRET_PLACEHOLDER: &str = "{secret}";

/// Most characters of a connector's name (so `mcp__<name>__<tool>` leaves room for the tool).
pub const MAX_NAME_CHARS: usize = 20;

/// How the host talks to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[cfg_attr(
    feature = "wire-schemas",
    ts(rename = "ConnectorTransport"),
    schema(as = ConnectorTransport)
)]
pub enum TransportKind {
    /// A child process of the host; MCP over its stdin and stdout.
    Stdio,
    /// An HTTP endpoint speaking MCP's streamable HTTP transport.
    StreamableHttp,
}

impl TransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::StreamableHttp => "streamable-http",
        }
    }
}

fn yes() -> bool {
    true
}

/// One `[[connectors]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ConnectorConfig {
    /// Lower-case letters, digits and `-`, starting with a letter, at most
    /// [`MAX_NAME_CHARS`]. Names the key store account of its token (`connector-<name>`).
    pub name: String,
    pub transport: TransportKind,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// `stdio`: the program to start (an absolute path, or a name found on `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// `stdio`: the child's environment besides a short safe list (`PATH`, `HOME`, `LANG`, …);
    /// nothing else of the host's environment reaches it. `{secret}` in a value is the token.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// `streamable-http`: the endpoint (`http` or `https`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `streamable-http`: headers sent with every request; `{secret}` in a value is the token.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The user's risk for a tool, by the server's tool name (`*` for every tool). Only the
    /// machine config is read for this: a project's files never lower a risk.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub risk: BTreeMap<String, Risk>,
}

/// A configuration that cannot be used: `field` names what is wrong (`connectors[2].url`
/// style paths are the caller's), `problem` says why. Never carries a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}` {problem}")]
pub struct ConfigError {
    pub field: String,
    pub problem: String,
}

fn problem(field: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.to_owned(),
        problem: problem.into(),
    }
}

/// Checks a connector's name.
pub fn check_name(name: &str) -> Result<(), ConfigError> {
    let mut chars = name.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !starts_with_letter || !rest_ok || name.chars().count() > MAX_NAME_CHARS {
        return Err(problem(
            "name",
            format!(
                "must be 1 to {MAX_NAME_CHARS} characters of a-z, 0-9 and `-`, starting with a \
                 letter"
            ),
        ));
    }
    if name.ends_with('-') || name.contains("--") {
        return Err(problem("name", "may not end with `-` or contain `--`"));
    }
    Ok(())
}

/// Words in an environment variable or header name that mean it carries a credential: its
/// value must come from the key store (`{secret}`), never the config file.
const SECRET_WORDS: &[&str] = &[
    "authorization",
    "token",
    "secret",
    "password",
    "passwd",
    "api-key",
    "api_key",
    "apikey",
    "cookie",
    "credential",
    "private",
];

fn names_a_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| lower.contains(w)) || lower.ends_with("_key") || lower == "key"
}

fn check_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl ConnectorConfig {
    /// Validates the entry; the error names the field (relative to the entry) and never a
    /// value.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_name(&self.name)?;
        match self.transport {
            TransportKind::Stdio => {
                match self.command.as_deref() {
                    None => return Err(problem("command", "is required for a stdio connector")),
                    Some(c) if c.trim().is_empty() => {
                        return Err(problem("command", "may not be empty"));
                    }
                    Some(_) => {}
                }
                if self.url.is_some() {
                    return Err(problem("url", "belongs to a streamable-http connector"));
                }
                if !self.headers.is_empty() {
                    return Err(problem("headers", "belong to a streamable-http connector"));
                }
                for (name, value) in &self.env {
                    let field = format!("env.{name}");
                    if !check_env_name(name) {
                        return Err(problem(&field, "is not a valid environment variable name"));
                    }
                    self.check_value(&field, name, value)?;
                }
            }
            TransportKind::StreamableHttp => {
                let Some(url) = self.url.as_deref() else {
                    return Err(problem(
                        "url",
                        "is required for a streamable-http connector",
                    ));
                };
                let parsed = reqwest::Url::parse(url)
                    .map_err(|e| problem("url", format!("is not a URL: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(problem("url", "must be an http or https URL"));
                }
                if !parsed.username().is_empty() || parsed.password().is_some() {
                    return Err(problem(
                        "url",
                        "may not carry credentials: put the token in the key store and use \
                         `headers = { Authorization = \"Bearer {secret}\" }`",
                    ));
                }
                if self.command.is_some() || !self.args.is_empty() || !self.env.is_empty() {
                    return Err(problem(
                        "command",
                        "command, args and env belong to a stdio connector",
                    ));
                }
                for (name, value) in &self.headers {
                    let field = format!("headers.{name}");
                    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                        return Err(problem(&field, "is not a valid header name"));
                    }
                    // Checked with a stand-in token: the real one is checked when it is used.
                    let sample = value.replace(SECRET_PLACEHOLDER, "token");
                    if http::HeaderValue::from_str(&sample).is_err() {
                        return Err(problem(&field, "is not a valid header value"));
                    }
                    self.check_value(&field, name, value)?;
                }
            }
        }
        for tool in self.risk.keys() {
            if tool.is_empty() {
                return Err(problem("risk", "names an empty tool"));
            }
        }
        Ok(())
    }

    fn check_value(&self, field: &str, name: &str, value: &str) -> Result<(), ConfigError> {
        if names_a_secret(name) && !value.contains(SECRET_PLACEHOLDER) {
            return Err(problem(
                field,
                format!(
                    "looks like a credential, so its value must come from the key store: write \
                     `{SECRET_PLACEHOLDER}` where the token goes and store the token with \
                     `paddock connectors add {} --token-stdin` (or the API)",
                    self.name
                ),
            ));
        }
        Ok(())
    }

    /// Whether the connector needs its token from the key store.
    pub fn uses_secret(&self) -> bool {
        self.env.values().any(|v| v.contains(SECRET_PLACEHOLDER))
            || self
                .headers
                .values()
                .any(|v| v.contains(SECRET_PLACEHOLDER))
    }

    /// Where this connector's endpoint is, for people (command or URL; no secret).
    pub fn target(&self) -> String {
        match self.transport {
            TransportKind::Stdio => {
                let mut words = vec![self.command.clone().unwrap_or_default()];
                words.extend(self.args.iter().cloned());
                words.join(" ")
            }
            TransportKind::StreamableHttp => self.url.clone().unwrap_or_default(),
        }
    }
}

/// Checks a list of connectors: each entry, and names used once.
pub fn validate_all(connectors: &[ConnectorConfig]) -> Result<(), ConfigError> {
    for (i, connector) in connectors.iter().enumerate() {
        connector.validate().map_err(|e| ConfigError {
            field: format!("connectors[{i}].{}", e.field),
            problem: e.problem,
        })?;
        if connectors[..i].iter().any(|c| c.name == connector.name) {
            return Err(problem(
                &format!("connectors[{i}].name"),
                format!("`{}` is used by an earlier connector", connector.name),
            ));
        }
    }
    Ok(())
}

/// The key store account of a connector's token.
pub fn secret_account(connector: &str) -> String {
    format!("connector-{connector}")
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
