//! A real `paddock up` for API tests: the server bound on 127.0.0.1 over real TCP, the host
//! with the local wall (the real tool-runner inside the real wall), and the fake model server
//! (real HTTP, Anthropic wire) in place of the model API. Clients speak HTTP (reqwest) and
//! WebSocket (tokio-tungstenite) to it like any other client would.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test; each test binary uses part of the harness"
)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use paddock_host::paths::Paths;
use paddock_host::wiring::Helpers;
use paddock_host::{Host, HostOptions};
use paddock_server::state::EventSocketStats;
use paddock_server::{Server, ServerConfig};
use protocol::{Event, EventMsg};
use serde_json::Value;
use test_support::model_server::FakeModelServer;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::Message;

/// The model key of every test machine (planted: it must never show anywhere).
pub const MODEL_KEY: &str = "sk-ant-PLANTED-model-key-0123456789abcdef";

pub const WAIT: Duration = Duration::from_secs(60);

/// Sets the model key for this test process (nextest runs each test in its own process).
pub fn set_model_key() {
    // SAFETY: called first in each test, before it starts threads that read the environment.
    unsafe { std::env::set_var("ANTHROPIC_API_KEY", MODEL_KEY) };
    // The workspace builds reqwest without a default TLS provider (model-client picks one).
    let _ = rustls::crypto::ring::default_provider().install_default();
}

pub fn helpers() -> Helpers {
    Helpers {
        tool_runner: test_support::binaries::tool_runner(),
        paddock_wall: test_support::binaries::paddock_wall(),
    }
}

/// The machine config pointing the models at the fake model server.
pub fn model_config(model: &FakeModelServer) -> String {
    format!(
        "# Test machine.\n[models]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nkey_store = \"env\"\n",
        model.anthropic_base_url()
    )
}

/// A temporary folder under cargo's target `tmp` (not the system `/tmp`).
pub fn temp_dir() -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("paddock-server-tests");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::Builder::new()
        .prefix("t")
        .tempdir_in(base)
        .unwrap()
}

pub struct TestServer {
    pub root: tempfile::TempDir,
    pub paths: Paths,
    pub host: Host,
    pub base: String,
    pub addr: SocketAddr,
    pub token: String,
    pub model: FakeModelServer,
    pub client: reqwest::Client,
    /// The server's event-socket counters.
    pub sockets: Arc<EventSocketStats>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with_config("").await
    }

    /// With `extra` appended to the machine config.
    pub async fn start_with_config(extra: &str) -> Self {
        Self::start_serving(extra, ServerConfig::loopback(0)).await
    }

    /// With `extra` appended to the machine config, served as `config` says.
    pub async fn start_serving(extra: &str, config: ServerConfig) -> Self {
        set_model_key();
        let model = FakeModelServer::start().await.unwrap();
        let root = temp_dir();
        let paths = Paths::under(root.path());
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::write(
            paths.config_file(),
            format!("{}{extra}", model_config(&model)),
        )
        .unwrap();
        Self::open_serving(root, paths, model, config).await
    }

    /// A server on an existing machine folder (a restart).
    pub async fn open(root: tempfile::TempDir, paths: Paths, model: FakeModelServer) -> Self {
        Self::open_serving(root, paths, model, ServerConfig::loopback(0)).await
    }

    async fn open_serving(
        root: tempfile::TempDir,
        paths: Paths,
        model: FakeModelServer,
        config: ServerConfig,
    ) -> Self {
        let mut options = HostOptions::new(paths.clone());
        options.helpers = Some(helpers());
        let host = Host::open(options).await.unwrap();
        let server = Server::bind(host.clone(), config).await.unwrap();
        let addr = server.local_addr().unwrap();
        let token = server.token().to_owned();
        let base = server.url().to_owned();
        let sockets = server.event_sockets();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Self {
            root,
            paths,
            host,
            base,
            addr,
            token,
            model,
            client: reqwest::Client::new(),
            sockets,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(self.url(path)).bearer_auth(&self.token)
    }

    pub fn post(&self, path: &str, body: &Value) -> reqwest::RequestBuilder {
        self.client
            .post(self.url(path))
            .bearer_auth(&self.token)
            .json(body)
    }

    /// A JSON call that must answer `status`; returns the body.
    pub async fn call(&self, request: reqwest::RequestBuilder, status: u16) -> Value {
        let response = request.send().await.unwrap();
        let got = response.status().as_u16();
        let text = response.text().await.unwrap();
        assert_eq!(got, status, "{text}");
        if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        }
    }

    /// Creates a session with these folders (`(path, "read_write" | "read_only")`) and
    /// approval mode; returns its id.
    pub async fn create_session(&self, folders: &[(&Path, &str)], mode: &str) -> String {
        let folders: Vec<Value> = folders
            .iter()
            .map(|(path, access)| serde_json::json!({"path": path, "access": access}))
            .collect();
        let body = serde_json::json!({"folders": folders, "approval_mode": mode});
        let info = self.call(self.post("/v1/sessions", &body), 201).await;
        info["id"].as_str().unwrap().to_owned()
    }

    pub async fn send_turn(&self, session: &str, text: &str) {
        self.call(
            self.post(
                &format!("/v1/sessions/{session}/turns"),
                &serde_json::json!({"text": text}),
            ),
            202,
        )
        .await;
    }

    /// Opens the session's event socket with a ticket (as a browser would).
    pub async fn events(&self, session: &str, after: u64) -> Events {
        let ticket = self
            .call(
                self.post(
                    &format!("/v1/sessions/{session}/events/ticket"),
                    &Value::Null,
                ),
                200,
            )
            .await;
        let url = format!(
            "ws://{}/v1/sessions/{session}/events?after={after}&ticket={}",
            self.addr,
            ticket["ticket"].as_str().unwrap()
        );
        let request = url.into_client_request().unwrap();
        let (socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        Events { socket }
    }

    /// Stops the server (gracefully) and returns what a restart needs.
    pub async fn stop(mut self) -> (tempfile::TempDir, Paths, FakeModelServer) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
        }
        (self.root, self.paths, self.model)
    }
}

/// A client's event socket.
pub struct Events {
    pub socket: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
}

impl Events {
    /// The next event; `None` when the server closed the socket.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            let message = tokio::time::timeout(WAIT, self.socket.next())
                .await
                .expect("an event in time")?;
            match message.unwrap() {
                Message::Text(text) => return Some(serde_json::from_str(&text).unwrap()),
                Message::Close(_) => return None,
                _ => {}
            }
        }
    }

    /// Events up to and including the first that `until` accepts.
    pub async fn until(&mut self, until: impl Fn(&EventMsg) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        loop {
            let event = self.next().await.expect("the socket stayed open");
            let done = until(&event.msg);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    pub async fn close(mut self) {
        let _ = self.socket.send(Message::Close(None)).await;
    }
}

/// The `tool_result` texts of a request the fake model server recorded (Anthropic wire).
pub fn tool_results(body: &Value) -> Vec<String> {
    let mut results = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                results.push(match &block["content"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                });
            }
        }
    }
    results
}

/// The sandbox image the OpenShell tests' machines name (the double runs no image).
pub const OPENSHELL_IMAGE: &str = "registry.example/paddock-sandbox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/// The owner of the folders the OpenShell tests grant (the sandbox runs as it; never root).
pub const FOLDER_OWNER: u32 = 1000;

/// A machine config selecting the OpenShell provider on the double registered as `double`.
pub fn openshell_config(extra_sandbox: &str) -> String {
    format!(
        "[sandbox]\nprovider = \"openshell\"\n{extra_sandbox}[openshell]\ngateway = \"double\"\nimage = \"{OPENSHELL_IMAGE}\"\n"
    )
}

pub fn mkdir(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The gateway double (real gRPC over mTLS) started under `root` and registered as this
/// process's `double` gateway: discovery reads the process's environment, as the
/// `openshell` CLI does, so this sets `XDG_CONFIG_HOME`, `OPENSHELL_SYSTEM_GATEWAY_DIR` and
/// `HOME` (nextest runs each test in its own process).
pub async fn registered_double(
    root: &Path,
    configure: impl FnOnce(&mut test_support::gateway_double::DoubleConfig),
) -> test_support::gateway_double::GatewayDouble {
    use test_support::gateway_double::{
        DoubleConfig, GatewayDouble, Registration, TestPki, register_gateway,
    };
    let pki = TestPki::generate();
    let mut config = DoubleConfig::new(root.join("double"));
    mkdir(&config.state_dir, 0o755);
    config.tls = Some(pki.clone());
    configure(&mut config);
    let double = GatewayDouble::start(config).await.unwrap();
    let (xdg, system, home) = (
        root.join("xdg"),
        root.join("etc-openshell"),
        root.join("home"),
    );
    mkdir(&xdg.join("openshell"), 0o700);
    mkdir(&system, 0o755);
    mkdir(&home, 0o755);
    register_gateway(
        &xdg.join("openshell"),
        "double",
        &double.endpoint(),
        &Registration::Mtls(&pki),
    );
    // SAFETY: set at the start of the test, before threads that read the environment.
    unsafe {
        std::env::set_var("XDG_CONFIG_HOME", &xdg);
        std::env::set_var("OPENSHELL_SYSTEM_GATEWAY_DIR", &system);
        std::env::set_var("HOME", &home);
    }
    double
}

/// A temporary folder owned by [`FOLDER_OWNER`], as an OpenShell session's grant.
pub fn owned_folder() -> (tempfile::TempDir, PathBuf) {
    let work = temp_dir();
    let path = work.path().canonicalize().unwrap();
    mkdir(&path, 0o755);
    std::os::unix::fs::chown(&path, Some(FOLDER_OWNER), Some(FOLDER_OWNER)).unwrap();
    (work, path)
}
