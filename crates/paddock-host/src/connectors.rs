//! Connectors wired into the host: the machine's [`ConnectorSet`] (tokens from the key store,
//! each registered with the audit trail's redactor before use), and for each session a
//! [`HostToolSource`] offering the running connectors' tools and the built-in `web_fetch` as
//! host-placed tools. Their calls pass the agent's approval gate (enforcement `host`: every
//! mode but bypass asks) and its audit trail like any tool call.

use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use agent::{
    EventScrubber, HostTool, HostToolEntry, HostToolError, HostToolOutput, HostToolSource,
    ToolEffect,
};
use async_trait::async_trait;
use audit_store::AuditStore;
use model_client::{ApiKey, KeyStore, ToolSpec};
use paddock_connectors::config::secret_account;
use paddock_connectors::supervisor::{
    Connector, ConnectorTool, Status, SupervisorOptions, TokenSource,
};
use paddock_connectors::web_fetch::{self, WebFetch, WebFetchOptions};
use paddock_connectors::{ConnectorError, ConnectorSet, Risk, Secret, SystemResolver, naming};
use protocol::{EventMsg, SessionSettings};
use sandbox_policy::{HostRule, NetworkAllowList, SandboxData};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::MachineConfig;

/// Every secret the host has used (connector tokens, model keys, secret values): tool
/// results and errors are cleaned of them before the model sees them, and every event before
/// it is logged or sent to a client ([`EventScrubber`]; the audit trail has its own
/// redactor, which knows the same secrets).
#[derive(Clone, Default)]
pub(crate) struct Redactions(Arc<Mutex<Vec<Secret>>>);

impl Redactions {
    pub(crate) fn add(&self, secret: &Secret) {
        let mut secrets = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !secrets.contains(secret) {
            secrets.push(secret.clone());
        }
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        let secrets = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        secrets
            .iter()
            .fold(text.to_owned(), |text, secret| secret.redact(&text))
    }
}

impl EventScrubber for Redactions {
    /// Most events hold no secret: they are checked in their JSON form, and only one that
    /// holds one is rebuilt with every string (and key) cleaned.
    fn scrub(&self, msg: EventMsg) -> EventMsg {
        let secrets = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if secrets.is_empty() {
            return msg;
        }
        let Ok(text) = serde_json::to_string(&msg) else {
            return msg;
        };
        let held = secrets.iter().any(|secret| {
            text.contains(secret.expose())
                || serde_json::to_string(secret.expose())
                    .is_ok_and(|quoted| text.contains(quoted.trim_matches('"')))
        });
        if !held {
            return msg;
        }
        let Ok(mut value) = serde_json::to_value(&msg) else {
            return msg;
        };
        clean(&mut value, &secrets);
        match serde_json::from_value(value) {
            Ok(cleaned) => cleaned,
            Err(e) => {
                // Only strings changed; an event that no longer parses is replaced rather
                // than passed on with the secret in it.
                tracing::error!("cleaning a secret from a `{}` event: {e}", msg.name());
                EventMsg::Notice {
                    source: "paddock".into(),
                    message: format!(
                        "a `{}` event held a secret and could not be cleaned, so it is withheld",
                        msg.name()
                    ),
                }
            }
        }
    }
}

/// Replaces every secret in every string and object key of `value`.
fn clean(value: &mut Value, secrets: &[Secret]) {
    let redact = |text: &str| {
        secrets
            .iter()
            .fold(text.to_owned(), |text, secret| secret.redact(&text))
    };
    match value {
        Value::String(text) => *text = redact(text),
        Value::Array(items) => items.iter_mut().for_each(|item| clean(item, secrets)),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut item) in entries {
                clean(&mut item, secrets);
                map.insert(redact(&key), item);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Reads a connector's token from the machine's key store (the one configured when the
/// server starts): the account `connector-<name>` (the `env` store: the variable
/// `CONNECTOR_<NAME>_API_KEY`).
pub(crate) fn token_source(config: Arc<RwLock<MachineConfig>>) -> TokenSource {
    Arc::new(move |name: &str| {
        let kind = config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .models
            .key_store;
        let store = KeyStore::open(kind).map_err(|e| e.to_string())?;
        let key = store
            .get(&secret_account(name))
            .map_err(|e| e.to_string())?;
        Ok(key.and_then(|k| Secret::new(k.expose_secret())))
    })
}

/// The machine's connectors. `audit` and `secrets` learn each token before it is used.
pub(crate) fn connector_set(
    tokens: TokenSource,
    audit: Arc<Mutex<AuditStore>>,
    secrets: Arc<Mutex<Vec<ApiKey>>>,
    redactions: Redactions,
    options: SupervisorOptions,
) -> ConnectorSet {
    let on_token = Arc::new(move |secret: &Secret| {
        redactions.add(secret);
        let registered = audit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .register_secret(secret.expose());
        if let Err(e) = registered {
            tracing::error!("registering a connector token with the audit redactor: {e}");
        }
        if let Ok(key) = ApiKey::new(secret.expose()) {
            let mut known = secrets.lock().unwrap_or_else(PoisonError::into_inner);
            if !known
                .iter()
                .any(|k| k.expose_secret() == key.expose_secret())
            {
                known.push(key);
            }
        }
    });
    ConnectorSet::new(tokens, on_token, options)
}

/// What one session is offered from the host: the connectors' tools, `web_fetch`.
pub(crate) struct SessionConnectors {
    set: Arc<ConnectorSet>,
    /// Rebuilt when the session's settings change (a host allowed for it).
    web_fetch: RwLock<Option<Arc<WebFetchTool>>>,
    /// The machine's config, for rebuilding `web_fetch`.
    config: Arc<RwLock<MachineConfig>>,
    redactions: Redactions,
}

impl SessionConnectors {
    pub(crate) fn new(
        set: Arc<ConnectorSet>,
        web_fetch: Option<WebFetch>,
        config: Arc<RwLock<MachineConfig>>,
        redactions: Redactions,
    ) -> Self {
        Self {
            set,
            web_fetch: RwLock::new(web_fetch.map(|fetch| Arc::new(WebFetchTool { fetch }))),
            config,
            redactions,
        }
    }
}

fn effect(risk: Risk) -> ToolEffect {
    match risk {
        Risk::Read => ToolEffect::Read,
        Risk::Write => ToolEffect::Write,
        Risk::Destructive => ToolEffect::Command,
    }
}

impl SessionConnectors {
    fn web_fetch_entry(&self) -> Option<HostToolEntry> {
        let tool = self
            .web_fetch
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        let (name, description, schema) = web_fetch::tool_spec();
        Some(HostToolEntry {
            spec: ToolSpec {
                name: name.to_owned(),
                description: description.to_owned(),
                input_schema: schema,
            },
            effect: ToolEffect::Read,
            tool: tool as Arc<dyn HostTool>,
        })
    }

    /// The entry of a listed tool the model can be offered (`None` when its name is not
    /// one a model API accepts).
    fn mcp_entry(
        &self,
        connector: &Arc<Connector>,
        listed: ConnectorTool,
    ) -> Option<HostToolEntry> {
        let model_name = listed.model_name.ok()?;
        let description = format!(
            "[connector `{}`, runs on the host outside the sandbox; risk: {}] {}",
            connector.name(),
            listed.risk.as_str(),
            listed.tool.description
        );
        Some(HostToolEntry {
            spec: ToolSpec {
                name: model_name,
                description,
                input_schema: listed.tool.input_schema,
            },
            effect: effect(listed.risk),
            tool: Arc::new(McpTool {
                connector: Arc::clone(connector),
                tool: listed.tool.name,
                risk: listed.risk,
                redactions: self.redactions.clone(),
            }),
        })
    }
}

impl HostToolSource for SessionConnectors {
    fn tools(&self) -> Vec<HostToolEntry> {
        let mut entries: Vec<HostToolEntry> = self.web_fetch_entry().into_iter().collect();
        for connector in self.set.all() {
            if !connector.config().enabled {
                continue;
            }
            for listed in connector.tools() {
                entries.extend(self.mcp_entry(&connector, listed));
            }
        }
        entries
    }

    fn tool(&self, name: &str) -> Option<HostToolEntry> {
        if name == naming::WEB_FETCH {
            return self.web_fetch_entry();
        }
        let (connector, _) = naming::split(name)?;
        let connector = self.set.get(connector).ok()?;
        if !connector.config().enabled {
            return None;
        }
        let listed = connector.tool_by_model_name(name)?;
        self.mcp_entry(&connector, listed)
    }

    /// `web_fetch` follows the session's network allowances: a host allowed for the session
    /// (or on the machine) is one it may fetch from the next call on. Settings it cannot use
    /// leave the one it has.
    fn settings_changed(&self, settings: &SessionSettings) {
        let config = self
            .config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match session_web_fetch(settings, &config) {
            Ok(fetch) => {
                *self
                    .web_fetch
                    .write()
                    .unwrap_or_else(PoisonError::into_inner) =
                    fetch.map(|fetch| Arc::new(WebFetchTool { fetch }));
            }
            Err(e) => tracing::warn!("web_fetch keeps its allow-list: {e}"),
        }
    }

    fn notices(&self) -> Vec<String> {
        self.set
            .all()
            .into_iter()
            .filter_map(|connector| match connector.status() {
                Status::Failed { reason } => Some(format!(
                    "The connector `{}` is unavailable, so its tools are not offered: {}",
                    connector.name(),
                    self.redactions.redact(&reason)
                )),
                _ => None,
            })
            .collect()
    }
}

/// One MCP server tool as a host tool.
struct McpTool {
    connector: Arc<Connector>,
    tool: String,
    risk: Risk,
    redactions: Redactions,
}

#[async_trait]
impl HostTool for McpTool {
    async fn call(
        &self,
        input: &Value,
        cancel: &CancellationToken,
    ) -> Result<HostToolOutput, HostToolError> {
        match self.connector.call(&self.tool, input, cancel).await {
            Ok(outcome) => Ok(HostToolOutput {
                text: self.redactions.redact(&outcome.text),
                is_error: outcome.is_error,
            }),
            Err(ConnectorError::Cancelled) => Err(HostToolError::Cancelled),
            Err(e) => Err(HostToolError::Failed(
                self.redactions
                    .redact(&format!("connector `{}`: {e}", self.connector.name())),
            )),
        }
    }

    fn lasting_approvals(&self) -> bool {
        self.risk != Risk::Destructive
    }
}

/// The built-in web fetch as a host tool.
struct WebFetchTool {
    fetch: WebFetch,
}

#[async_trait]
impl HostTool for WebFetchTool {
    async fn call(
        &self,
        input: &Value,
        cancel: &CancellationToken,
    ) -> Result<HostToolOutput, HostToolError> {
        let Some(url) = input.get("url").and_then(Value::as_str) else {
            return Err(HostToolError::Failed(
                "web_fetch needs `url`, an http or https URL as a string".into(),
            ));
        };
        match self.fetch.fetch(url, cancel).await {
            Ok(fetched) => Ok(HostToolOutput {
                text: web_fetch::render(&fetched),
                is_error: false,
            }),
            Err(web_fetch::WebFetchError::Cancelled) => Err(HostToolError::Cancelled),
            Err(e) => Err(HostToolError::Failed(format!("web_fetch: {e}"))),
        }
    }
}

/// The session's web fetch: its network profile and extra hosts plus `[web_fetch]
/// extra_hosts`, with the machine's limits. `None` when `[web_fetch]` is off.
pub(crate) fn session_web_fetch(
    settings: &SessionSettings,
    config: &MachineConfig,
) -> Result<Option<WebFetch>, String> {
    let settings_of = &config.web_fetch;
    if !settings_of.enabled {
        return Ok(None);
    }
    let data = SandboxData::builtin().map_err(|e| e.to_string())?;
    let profile = data
        .profile(settings.network_profile)
        .map_err(|e| e.to_string())?;
    let extra = settings
        .extra_hosts
        .iter()
        .chain(&settings_of.extra_hosts)
        .map(|h| HostRule::parse_in("web_fetch extra host", h))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let list = NetworkAllowList::resolve(profile, &extra, &[], &[], &data.companions)
        .map_err(|e| e.to_string())?;
    Ok(Some(WebFetch::new(
        list,
        Arc::new(SystemResolver),
        WebFetchOptions {
            max_bytes: settings_of.max_bytes,
            timeout: Duration::from_secs(settings_of.timeout_secs),
            local_ports: settings_of.local_ports.clone(),
            ..WebFetchOptions::default()
        },
    )))
}

/// The model name's connector, for the audit trail (`None` for sandbox tools).
pub fn connector_of(tool: &str) -> Option<&str> {
    naming::connector_of(tool)
}
