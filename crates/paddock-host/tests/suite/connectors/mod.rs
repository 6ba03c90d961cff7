//! Connectors through the host, as a session uses them: the machine config's `[[connectors]]`
//! (real MCP servers written for the tests: one over stdio, a child of the host; one over
//! streamable HTTP), the fake model server (real HTTP, Anthropic wire) calling their tools,
//! the approvals inbox answering, the real audit trail and event log recording.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

mod attacks;
mod calls;
mod web_fetch;

use std::path::{Path, PathBuf};
use std::time::Duration;

use audit_store::{AuditRecord, Query, StoredEvent, ToolCallRecord};
use model_client::{ApiKey, KeyStore, KeyStoreKind};
use paddock_connectors::SupervisorOptions;
use paddock_host::paths::Paths;
use paddock_host::{EventStream, Host, HostOptions, NewSession};
use protocol::{ApprovalDecision, ApprovalMode, Event, EventMsg, FolderAccess, FolderGrant};
use serde_json::Value;
use test_support::mcp_server::HttpMcpServer;
use test_support::model_server::{FakeModelServer, Reply};

/// The model key and the connectors' token of every test machine (planted: they must show
/// nowhere but where they belong).
pub const MODEL_KEY: &str = "sk-ant-PLANTED-model-key-0123456789abcdef";
pub const TOKEN: &str = "tok-PLANTED-connector-secret-9f8e7d6c5b4a";

pub const WAIT: Duration = Duration::from_secs(60);

pub struct Machine {
    /// Holds the machine's folders until the test ends.
    _root: tempfile::TempDir,
    pub paths: Paths,
    pub host: Host,
    pub model: FakeModelServer,
    pub work: PathBuf,
    pub http: Option<HttpMcpServer>,
}

/// A temporary folder under cargo's target `tmp`.
pub fn temp_dir() -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("paddock-host-connectors");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::Builder::new()
        .prefix("t")
        .tempdir_in(base)
        .unwrap()
}

/// The `[[connectors]]` entry of the stdio test server, named `tracker`, its token in
/// `MCP_TEST_TOKEN`.
pub fn stdio_entry() -> String {
    format!(
        "[[connectors]]\nname = \"tracker\"\ntransport = \"stdio\"\ncommand = \"{}\"\nenv = {{ MCP_TEST_TOKEN = \"{{secret}}\" }}\n",
        test_support::binaries::mcp_test_server().display()
    )
}

pub fn http_entry(url: &str) -> String {
    format!(
        "[[connectors]]\nname = \"docs\"\ntransport = \"streamable-http\"\nurl = \"{url}\"\nheaders = {{ Authorization = \"Bearer {{secret}}\" }}\n"
    )
}

impl Machine {
    /// A machine whose config is the models' section plus `connectors` (with `{http}`
    /// replaced by the HTTP test server's URL, which is started when it is named).
    pub async fn start(connectors: &str) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let root = temp_dir();
        // The file key store lives apart from the state folder, so a scan of that folder
        // for the token proves something.
        let keys = root.path().join("keys");
        std::fs::create_dir_all(&keys).unwrap();
        // SAFETY: set first in the test (nextest runs each test in its own process).
        unsafe { std::env::set_var("XDG_STATE_HOME", &keys) };
        let store = KeyStore::open(KeyStoreKind::File).unwrap();
        store
            .set("anthropic", &ApiKey::new(MODEL_KEY).unwrap())
            .unwrap();
        for name in ["tracker", "docs"] {
            store
                .set(&format!("connector-{name}"), &ApiKey::new(TOKEN).unwrap())
                .unwrap();
        }
        let http = if connectors.contains("{http}") {
            Some(HttpMcpServer::start().await.unwrap())
        } else {
            None
        };
        let connectors = match &http {
            Some(server) => connectors.replace("{http}", &server.url()),
            None => connectors.to_owned(),
        };
        let model = FakeModelServer::start().await.unwrap();
        let paths = Paths::under(root.path());
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::write(
            paths.config_file(),
            format!(
                "[models]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nkey_store = \"file\"\n\n{connectors}",
                model.anthropic_base_url()
            ),
        )
        .unwrap();
        let work = root.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let mut options = HostOptions::new(paths.clone());
        options.connector_options = SupervisorOptions {
            backoff_base: Duration::from_millis(50),
            backoff_max: Duration::from_millis(200),
            ..SupervisorOptions::default()
        };
        let host = Host::open(options).await.unwrap();
        Self {
            _root: root,
            paths,
            host,
            model,
            work,
            http,
        }
    }

    pub async fn session(&self, mode: ApprovalMode) -> String {
        let request = NewSession {
            folders: vec![FolderGrant {
                path: self.work.display().to_string(),
                access: FolderAccess::ReadWrite,
            }],
            approval_mode: Some(mode),
            ..NewSession::default()
        };
        self.host.create_session(request).await.unwrap().id
    }

    /// Scripts the model: each call as its own step, then a closing text.
    pub fn script(&self, calls: &[(&str, &str, Value)]) {
        for (id, name, input) in calls {
            self.model.push(Reply::tool_call(*id, *name, input.clone()));
        }
        self.model.push(Reply::final_text("Done."));
    }

    /// Every tool_call row of the audit trail.
    pub async fn tool_rows(&self) -> Vec<ToolCallRecord> {
        self.rows()
            .await
            .into_iter()
            .filter_map(|e| match e.record {
                AuditRecord::ToolCall(call) => Some(call),
                _ => None,
            })
            .collect()
    }

    pub async fn rows(&self) -> Vec<StoredEvent> {
        let page = self
            .host
            .audit_query(Query {
                limit: 1000,
                ..Query::default()
            })
            .await
            .unwrap();
        let mut events = page.events;
        // Oldest first.
        events.sort_by_key(|e| e.seq);
        events
    }

    /// The tool names the model was offered in request `index`.
    pub fn offered(&self, index: usize) -> Vec<String> {
        let requests = self.model.requests();
        requests[index].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The tool results the model was sent, all requests together.
    pub fn tool_results(&self) -> Vec<Value> {
        let mut results = Vec::new();
        for request in self.model.requests() {
            for message in request.body["messages"].as_array().into_iter().flatten() {
                for block in message["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_result" && !results.contains(block) {
                        results.push(block.clone());
                    }
                }
            }
        }
        results
    }
}

/// Drives one turn: answers each approval with `answer(tool, lasting_allowed)`; returns
/// every event of the turn.
pub async fn run_turn(
    machine: &Machine,
    session: &str,
    text: &str,
    mut answer: impl FnMut(&str, bool) -> ApprovalDecision,
) -> Vec<Event> {
    let after = machine.host.last_event_seq(session).await.unwrap();
    let mut events: EventStream = machine.host.events(session, after);
    machine.host.send_turn(session, text).await.unwrap();
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(WAIT, events.next())
            .await
            .expect("the turn went quiet")
            .unwrap()
            .unwrap();
        seen.push(event.clone());
        match &event.msg {
            EventMsg::ToolCallAwaitingApproval {
                call_id,
                tool,
                lasting_allowed,
                ..
            } => {
                let decision = answer(tool, *lasting_allowed);
                machine
                    .host
                    .decide_approval(session, call_id, decision)
                    .await
                    .unwrap();
            }
            EventMsg::TurnFinished { .. } => return seen,
            _ => {}
        }
    }
}

pub fn approve_once(_tool: &str, _lasting: bool) -> ApprovalDecision {
    ApprovalDecision::Approve {
        scope: protocol::ApprovalScope::Once,
    }
}

/// Every file under `dir`, as bytes (for scans of what was written).
pub fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, bytes));
        }
    }
    out
}

pub fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

pub fn notices(events: &[Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Notice { source, message } => Some((source.clone(), message.clone())),
            _ => None,
        })
        .collect()
}

/// Every event of a session so far (from the durable log).
pub async fn all_events(host: &Host, session: &str) -> Vec<Event> {
    let last = host.last_event_seq(session).await.unwrap();
    let mut stream = host.events(session, 0);
    let mut events: Vec<Event> = Vec::new();
    while events.last().is_none_or(|e| e.seq < last) {
        let event = tokio::time::timeout(WAIT, stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        events.push(event);
    }
    events
}

pub fn json_text(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap()
}

/// A tool result's text (the content is a string or text blocks).
pub fn text(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}
