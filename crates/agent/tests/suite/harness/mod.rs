//! A session wired to real parts: the fake model server (real HTTP, Anthropic wire), the real
//! tool-runner through the `direct` provider, and a recording sink that stands in for the audit
//! store (it commits to memory and can be told to fail, to test the durability contract).

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the harness"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent::{
    AgentConfig, EventBus, EventSink, InMemorySessionStore, Session, SessionDeps, SessionStore,
    SinkError, ToolRegistry,
};
use async_trait::async_trait;
use model_client::{ApiKey, ClientConfig, Vendor};
use protocol::{
    ApprovalDecision, ApprovalMode, Event, EventMsg, FolderAccess, FolderGrant, NetworkProfileName,
    Op, SessionSettings,
};
use sandbox_provider::direct::DirectProvider;
use sandbox_provider::{ProviderError, Sandbox, SandboxProvider, SandboxRequest};
use test_support::model_server::FakeModelServer;
use tokio::sync::broadcast;

pub const WAIT: Duration = Duration::from_secs(30);

/// A hook run when the sink is asked to record an event; returning an error fails the record.
pub type RecordHook = Box<dyn Fn(&Event) -> Result<(), String> + Send + Sync>;

/// Commits durable events to memory, in order; a hook may inspect the world at the moment of
/// each commit, or refuse it.
#[derive(Default)]
pub struct RecordingSink {
    pub recorded: Mutex<Vec<Event>>,
    pub hook: Mutex<Option<RecordHook>>,
}

impl RecordingSink {
    pub fn events(&self) -> Vec<Event> {
        self.recorded.lock().unwrap().clone()
    }

    pub fn set_hook(&self, hook: RecordHook) {
        *self.hook.lock().unwrap() = Some(hook);
    }
}

#[async_trait]
impl EventSink for RecordingSink {
    async fn record(&self, event: &Event) -> Result<(), SinkError> {
        if let Some(hook) = self.hook.lock().unwrap().as_ref() {
            hook(event).map_err(|message| SinkError {
                seq: event.seq,
                kind: event.msg.name().to_owned(),
                message,
            })?;
        }
        self.recorded.lock().unwrap().push(event.clone());
        // Committing takes a moment in the real store; yield like it would.
        tokio::task::yield_now().await;
        Ok(())
    }

    async fn last_seq(&self, session_id: &str) -> Result<Option<u64>, SinkError> {
        Ok(self
            .recorded
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.session_id == session_id)
            .map(|e| e.seq)
            .max())
    }
}

/// Wraps a real provider and counts the sandboxes it starts.
pub struct CountingProvider {
    pub inner: Arc<dyn SandboxProvider>,
    pub starts: Mutex<usize>,
}

#[async_trait]
impl SandboxProvider for CountingProvider {
    fn kind(&self) -> protocol::ProviderKind {
        self.inner.kind()
    }

    async fn status(&self) -> protocol::MachineSandboxStatus {
        self.inner.status().await
    }

    async fn start(
        &self,
        request: &SandboxRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Arc<dyn Sandbox>, ProviderError> {
        *self.starts.lock().unwrap() += 1;
        self.inner.start(request, progress).await
    }
}

pub struct Harness {
    pub server: FakeModelServer,
    pub sink: Arc<RecordingSink>,
    pub provider: Arc<CountingProvider>,
    pub store: Arc<dyn SessionStore>,
    pub bus: EventBus,
    pub events: broadcast::Receiver<Event>,
    pub folder: tempfile::TempDir,
    /// Paddock's state outside the granted folder (the quarantine lives here).
    pub state: tempfile::TempDir,
    pub config: AgentConfig,
    pub runner: PathBuf,
    /// The wire format the model client speaks (Anthropic unless a test changes it).
    pub vendor: Vendor,
    /// The tools offered (the sandbox tools unless a test adds host tools).
    pub tools: ToolRegistry,
}

pub fn settings(folder: &Path, mode: ApprovalMode) -> SessionSettings {
    SessionSettings {
        folders: vec![FolderGrant {
            path: folder.display().to_string(),
            access: FolderAccess::ReadWrite,
        }],
        cwd: None,
        network_profile: NetworkProfileName::Strict,
        extra_hosts: vec![],
        credentials: vec![],
        secrets: vec![],
        model: None,
        approval_mode: mode,
    }
}

impl Harness {
    pub async fn new() -> Self {
        Self::with_runner(test_support::binaries::tool_runner()).await
    }

    /// With this tool-runner path (a missing one makes the wall unbuildable).
    pub async fn with_runner(runner: PathBuf) -> Self {
        let server = FakeModelServer::start().await.unwrap();
        let sink = Arc::new(RecordingSink::default());
        let bus = EventBus::new(sink.clone(), 4096);
        let events = bus.subscribe();
        let state = tempfile::tempdir().unwrap();
        let direct =
            DirectProvider::new(runner.clone()).with_quarantine(state.path().join("quarantine"));
        let provider = Arc::new(CountingProvider {
            inner: Arc::new(direct),
            starts: Mutex::new(0),
        });
        let folder = tempfile::tempdir().unwrap();
        let folder_path = folder.path().canonicalize().unwrap();
        drop(folder_path);
        Self {
            server,
            sink,
            provider,
            store: Arc::new(InMemorySessionStore::new()),
            bus,
            events,
            folder,
            state,
            config: AgentConfig::new("claude-test"),
            runner,
            vendor: Vendor::Anthropic,
            tools: ToolRegistry::sandbox_tools(),
        }
    }

    /// The granted folder (canonical, as the runner reports paths).
    pub fn folder(&self) -> PathBuf {
        self.folder.path().canonicalize().unwrap()
    }

    pub fn deps(&self) -> SessionDeps {
        let base_url = match self.vendor {
            Vendor::Anthropic => self.server.anthropic_base_url(),
            Vendor::OpenAiCompatible => self.server.openai_base_url(),
        };
        let config = ClientConfig::new(base_url, Some(ApiKey::new("test-key-not-secret").unwrap()));
        SessionDeps {
            model: model_client::connect(self.vendor, &config).unwrap(),
            provider: self.provider.clone(),
            store: self.store.clone(),
            bus: self.bus.clone(),
            tools: self.tools.clone(),
            config: self.config.clone(),
        }
    }

    pub async fn start(&self, mode: ApprovalMode) -> Session {
        Session::start(self.deps(), settings(&self.folder(), mode))
            .await
            .unwrap()
    }

    pub fn starts(&self) -> usize {
        *self.provider.starts.lock().unwrap()
    }

    /// The next event, failing the test after [`WAIT`].
    pub async fn next(&mut self) -> Event {
        match tokio::time::timeout(WAIT, self.events.recv()).await {
            Ok(Ok(event)) => event,
            Ok(Err(e)) => panic!("event stream: {e}"),
            Err(_) => panic!("no event within {WAIT:?}"),
        }
    }

    /// Events up to and including the first one `until` accepts.
    pub async fn until(&mut self, until: impl Fn(&EventMsg) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        loop {
            let event = self.next().await;
            let done = until(&event.msg);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    /// Events up to the end of the running turn.
    pub async fn turn(&mut self) -> Vec<Event> {
        self.until(|m| matches!(m, EventMsg::TurnFinished { .. }))
            .await
    }

    /// Sends a user message and collects the turn's events.
    pub async fn run_turn(&mut self, session: &Session, text: &str) -> Vec<Event> {
        session.submit(Op::UserTurn { text: text.into() }).unwrap();
        self.turn().await
    }
}

/// The wire names of events, in order.
/// Answers the approval prompt of `call_id`.
pub fn decide(session: &Session, call_id: &str, decision: ApprovalDecision) {
    session
        .submit(Op::Approval {
            call_id: call_id.to_owned(),
            decision,
        })
        .unwrap();
}

pub fn names(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.msg.name()).collect()
}

/// The turn's finish.
pub fn finished(events: &[Event]) -> (protocol::TurnStopReason, u32) {
    events
        .iter()
        .find_map(|e| match e.msg {
            EventMsg::TurnFinished { stop_reason, steps } => Some((stop_reason, steps)),
            _ => None,
        })
        .expect("the turn finished")
}

/// The `tool_result` blocks of a request body (Anthropic wire), as (id, content, is_error).
pub fn tool_results(body: &serde_json::Value) -> Vec<(String, String, bool)> {
    let mut results = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        let Some(content) = message["content"].as_array() else {
            continue;
        };
        for block in content {
            if block["type"] == "tool_result" {
                let text = match &block["content"] {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join(""),
                    other => other.to_string(),
                };
                results.push((
                    block["tool_use_id"].as_str().unwrap().to_owned(),
                    text,
                    block["is_error"].as_bool().unwrap_or(false),
                ));
            }
        }
    }
    results
}
