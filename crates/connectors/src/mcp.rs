//! One connection to an MCP server through `rmcp`: a child process over stdio, or a
//! streamable HTTP endpoint. The token reaches only that child's environment or those
//! requests' headers; the child gets no other part of the host's environment.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ContentBlock, Implementation,
    ProtocolVersion,
};
use rmcp::service::{
    NotificationContext, QuitReason, RunningService, RunningServiceCancellationToken,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio::sync::Notify;

use crate::config::{ConnectorConfig, SECRET_PLACEHOLDER, TransportKind};
use crate::error::ConnectorError;
use crate::risk::Hints;
use crate::secret::Secret;

/// The host environment variables a stdio server gets (when set); nothing else of the host's
/// environment (model keys among it) reaches the child.
pub const SAFE_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
];

/// Lines of a stdio server's stderr kept to explain a failure.
const STDERR_LINES: usize = 20;

/// What the client tells the server, and what it hears back about changes.
pub(crate) struct Handler {
    pub(crate) tools_changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The initialize handshake (2025-11-25): sessions, so servers can announce changes.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("paddock", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }
}

/// The last lines a stdio server wrote to stderr, with the token replaced.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    pub(crate) fn text(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// A running client session with one server.
pub(crate) struct Connection {
    pub(crate) peer: Peer<RoleClient>,
    /// Ends the session (and, for stdio, the child).
    pub(crate) cancel: Option<RunningServiceCancellationToken>,
    /// Completes when the session's loop has ended (the server exited, the stream closed).
    pub(crate) done: tokio::task::JoinHandle<Result<QuitReason, tokio::task::JoinError>>,
    /// The child's process id (stdio).
    pub(crate) pid: Option<u32>,
    pub(crate) stderr: StderrTail,
}

impl Connection {
    fn new(
        service: RunningService<RoleClient, Handler>,
        pid: Option<u32>,
        stderr: StderrTail,
    ) -> Self {
        let peer = service.peer().clone();
        let cancel = Some(service.cancellation_token());
        let done = tokio::spawn(service.waiting());
        Self {
            peer,
            cancel,
            done,
            pid,
            stderr,
        }
    }

    /// Ends the session and waits (a few seconds at most) for it to close.
    pub(crate) async fn close(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), &mut self.done).await;
    }
}

fn fill(value: &str, secret: Option<&Secret>) -> Result<String, ConnectorError> {
    if !value.contains(SECRET_PLACEHOLDER) {
        return Ok(value.to_owned());
    }
    let secret = secret.ok_or(ConnectorError::TokenMissing)?;
    Ok(value.replace(SECRET_PLACEHOLDER, secret.expose()))
}

/// Starts the server (stdio) or opens the session (HTTP) and completes the MCP handshake
/// within `timeout`.
pub(crate) async fn connect(
    config: &ConnectorConfig,
    secret: Option<&Secret>,
    tools_changed: Arc<Notify>,
    timeout: Duration,
) -> Result<Connection, ConnectorError> {
    let handler = Handler { tools_changed };
    let stderr = StderrTail::default();
    let (serving, pid) = match config.transport {
        TransportKind::Stdio => {
            let process = spawn(config, secret, &stderr)?;
            let pid = process.id();
            (
                tokio::time::timeout(timeout, handler.serve(process)).await,
                pid,
            )
        }
        TransportKind::StreamableHttp => {
            let transport = http_transport(config, secret)?;
            (
                tokio::time::timeout(timeout, handler.serve(transport)).await,
                None,
            )
        }
    };
    let service = match serving {
        Err(_) => {
            return Err(ConnectorError::StartFailed(format!(
                "the server did not complete the MCP handshake within {}s{}",
                timeout.as_secs(),
                stderr_note(&stderr)
            )));
        }
        Ok(Err(e)) => {
            let text = secret.map_or_else(|| e.to_string(), |s| s.redact(&e.to_string()));
            return Err(ConnectorError::StartFailed(format!(
                "{text}{}",
                stderr_note(&stderr)
            )));
        }
        Ok(Ok(service)) => service,
    };
    Ok(Connection::new(service, pid, stderr))
}

pub(crate) fn stderr_note(stderr: &StderrTail) -> String {
    let text = stderr.text();
    if text.is_empty() {
        String::new()
    } else {
        format!("; the server's last stderr lines:\n{text}")
    }
}

fn spawn(
    config: &ConnectorConfig,
    secret: Option<&Secret>,
    tail: &StderrTail,
) -> Result<TokioChildProcess, ConnectorError> {
    let program = config.command.clone().unwrap_or_default();
    let mut command = tokio::process::Command::new(&program);
    command.args(&config.args).env_clear();
    for name in SAFE_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    for (name, value) in &config.env {
        command.env(name, fill(value, secret)?);
    }
    command.kill_on_drop(true);
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no memory of ours; it
    // makes the kernel stop the server when the host process dies, even by SIGKILL.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (process, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            ConnectorError::StartFailed(format!("`{program}` could not be started: {e}"))
        })?;
    if let Some(stderr) = stderr {
        let tail = tail.clone();
        let secret = secret.cloned();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line = secret.as_ref().map_or(line.clone(), |s| s.redact(&line));
                tracing::debug!(target: "paddock_connectors::stderr", "{line}");
                tail.push(line);
            }
        });
    }
    Ok(process)
}

fn http_transport(
    config: &ConnectorConfig,
    secret: Option<&Secret>,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, ConnectorError> {
    let url = config.url.clone().unwrap_or_default();
    let mut headers = HashMap::new();
    for (name, value) in &config.headers {
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ConnectorError::StartFailed(format!("header `{name}` is not valid")))?;
        let mut value = http::HeaderValue::from_str(&fill(value, secret)?).map_err(|_| {
            ConnectorError::StartFailed(format!(
                "header `{name}` is not a valid header value with the token in it"
            ))
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    let client = crate::tls::http_client(true)?;
    let transport_config =
        StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
    Ok(StreamableHttpClientTransport::with_client(
        client,
        transport_config,
    ))
}

/// A server's tool as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub hints: Hints,
}

pub(crate) async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<ListedTool>, ConnectorError> {
    let tools = peer
        .list_all_tools()
        .await
        .map_err(|e| ConnectorError::Protocol(format!("listing tools: {e}")))?;
    Ok(tools
        .into_iter()
        .map(|tool| ListedTool {
            name: tool.name.to_string(),
            description: tool
                .description
                .as_deref()
                .or(tool.title.as_deref())
                .unwrap_or_default()
                .to_owned(),
            input_schema: Value::Object((*tool.input_schema).clone()),
            hints: tool.annotations.map_or_else(Hints::default, |a| Hints {
                read_only: a.read_only_hint,
                destructive: a.destructive_hint,
            }),
        })
        .collect())
}

/// What a tool call returned, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    pub text: String,
    pub is_error: bool,
}

pub(crate) async fn call_tool(
    peer: &Peer<RoleClient>,
    tool: &str,
    arguments: &Value,
) -> Result<CallOutcome, ConnectorError> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(map) = arguments {
        params = params.with_arguments(map.clone());
    }
    let result = peer.call_tool(params).await.map_err(|e| match e {
        rmcp::ServiceError::McpError(data) => ConnectorError::ServerError {
            code: data.code.0,
            message: data.message.to_string(),
        },
        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => {
            ConnectorError::Stopped
        }
        other => ConnectorError::Protocol(other.to_string()),
    })?;
    let mut parts: Vec<String> = result.content.iter().map(render_block).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    Ok(CallOutcome {
        text: parts.join("\n"),
        is_error: result.is_error == Some(true),
    })
}

fn render_block(block: &ContentBlock) -> String {
    if let Some(text) = block.as_text() {
        return text.text.clone();
    }
    // Non-text content is named, not inlined: the model gets text.
    let kind = serde_json::to_value(block)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "content".to_owned());
    format!("[{kind} content not shown]")
}

/// The env names and header names a config sends (for listings: values never leave).
pub fn sent_names(config: &ConnectorConfig) -> BTreeMap<String, bool> {
    config
        .env
        .iter()
        .chain(config.headers.iter())
        .map(|(name, value)| (name.clone(), value.contains(SECRET_PLACEHOLDER)))
        .collect()
}
