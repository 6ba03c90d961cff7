//! `FakeModelServer`: a test double of the Anthropic Messages and OpenAI Chat Completions
//! APIs over real HTTP on `127.0.0.1:0`: plain ([`FakeModelServer::start`]) or HTTPS with a
//! per-server CA ([`FakeModelServer::start_tls`]), HTTP/2 when the client offers it and
//! HTTP/1.1 otherwise. [`TestConnectProxy`] is the HTTPS proxy double that goes with it.
//!
//! Each test scripts the answers ([`Reply`], built from [`sse`] events), points a real client
//! at [`FakeModelServer::anthropic_base_url`] or [`FakeModelServer::openai_base_url`], and
//! then inspects what arrived ([`FakeModelServer::requests`]) and how each stream ended
//! ([`FakeModelServer::wait_for_outcome`]). Every request is checked against the invariants
//! of its wire format ([`invariants`]); a violation is answered with a 400 and fails the test
//! when the server is dropped, as does a request for which no reply was scripted.

mod connect_proxy;
pub mod invariants;
mod listen;
mod record;
mod render;
mod script;
mod serve;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

pub use connect_proxy::{ConnectAttempt, TestConnectProxy};
pub use listen::AcceptedConnection;
pub use record::{REDACTED, RecordedRequest, StreamOutcome};
pub use render::WireFormat;
pub use script::{Reply, ScriptEvent, sse};
pub use sse::stop;

/// The fake model API. Dropping it stops the server; if any request broke an invariant (or
/// found no scripted reply), the drop panics with the list, failing the test.
pub struct FakeModelServer {
    addr: SocketAddr,
    /// The CA that signed the server's certificate; `None` for plain HTTP.
    ca_pem: Option<String>,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    /// Replies for the requests whose body contains a marker (one conversation among many).
    keyed: Vec<(String, VecDeque<Reply>)>,
    required_key: Option<String>,
    requests: Vec<RecordedRequest>,
    outcomes: HashMap<usize, StreamOutcome>,
    violations: Vec<String>,
    connections: Vec<AcceptedConnection>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the state half-written in a way that
        // matters to a test double; keep serving.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set_outcome(&self, index: usize, outcome: StreamOutcome) {
        self.lock().outcomes.insert(index, outcome);
        self.changed.notify_waiters();
    }

    /// Records a new connection; returns its index.
    fn record_connection(&self, connection: AcceptedConnection) -> usize {
        let index = {
            let mut state = self.lock();
            state.connections.push(connection);
            state.connections.len() - 1
        };
        self.changed.notify_waiters();
        index
    }

    fn update_connection(&self, index: usize, connection: AcceptedConnection) {
        if let Some(slot) = self.lock().connections.get_mut(index) {
            *slot = connection;
        }
        self.changed.notify_waiters();
    }
}

impl FakeModelServer {
    /// Starts serving plain HTTP on an ephemeral port of 127.0.0.1.
    pub async fn start() -> std::io::Result<Self> {
        Self::listen(None).await
    }

    /// Starts serving HTTPS on an ephemeral port of 127.0.0.1, with a certificate for
    /// `localhost` and `127.0.0.1` signed by a CA made for this server alone
    /// ([`FakeModelServer::ca_pem`]).
    pub async fn start_tls() -> std::io::Result<Self> {
        Self::start_tls_for_names(&["localhost", "127.0.0.1"]).await
    }

    /// Like [`FakeModelServer::start_tls`], but the certificate is valid for exactly `names`
    /// (pass names the client does not dial to provoke a hostname mismatch).
    pub async fn start_tls_for_names(names: &[&str]) -> std::io::Result<Self> {
        Self::listen(Some(listen::TlsIdentity::generate(names)?)).await
    }

    async fn listen(tls: Option<listen::TlsIdentity>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let shutdown = CancellationToken::new();
        let (acceptor, ca_pem) = match tls {
            Some(identity) => (Some(identity.acceptor), Some(identity.ca_pem)),
            None => (None, None),
        };
        tokio::spawn(listen::accept_loop(
            listener,
            acceptor,
            Arc::clone(&shared),
            shutdown.clone(),
        ));
        Ok(Self {
            addr,
            ca_pem,
            shared,
            shutdown,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The CA certificate (PEM) a client must trust to reach a TLS server; `None` for plain
    /// HTTP.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    fn origin(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The base URL for an Anthropic client (`http://127.0.0.1:PORT`, or `https://…`).
    pub fn anthropic_base_url(&self) -> String {
        self.origin()
    }

    /// The base URL for an OpenAI-compatible client (`http://127.0.0.1:PORT/v1`, or
    /// `https://…`).
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.origin())
    }

    /// Every TCP connection accepted so far, in order. A connection is recorded when it is
    /// accepted, before its TLS handshake: a client that reports a certificate error has
    /// already been counted.
    pub fn connections(&self) -> Vec<AcceptedConnection> {
        self.shared.lock().connections.clone()
    }

    /// The connections once none is still in its TLS handshake, waiting up to `timeout`
    /// (what there is then, otherwise).
    pub async fn settled_connections(&self, timeout: Duration) -> Vec<AcceptedConnection> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let connections = self.connections();
            let settled = !connections.contains(&AcceptedConnection::TlsHandshaking);
            if settled || tokio::time::timeout_at(deadline, notified).await.is_err() {
                return connections;
            }
        }
    }

    /// From now on, a request without exactly this key gets the vendor's 401 (and consumes
    /// no reply). The 401 message quotes the key that was sent, in full — worse than the
    /// real APIs — so tests can prove a client keeps it out of its errors.
    pub fn require_api_key(&self, key: &str) {
        self.shared.lock().required_key = Some(key.to_owned());
    }

    /// Queues the answer to the next request.
    pub fn push(&self, reply: Reply) -> &Self {
        self.shared.lock().replies.push_back(reply);
        self
    }

    /// Queues the answer to the next request whose body contains `marker` (say, a
    /// conversation's first message), ahead of the shared queue: several conversations can
    /// share one server, each following its own script whatever order their requests come in.
    /// No marker may contain another (`task 1` would also match `task 10`).
    pub fn push_for(&self, marker: &str, reply: Reply) -> &Self {
        let mut state = self.shared.lock();
        match state.keyed.iter_mut().find(|(m, _)| m == marker) {
            Some((_, queue)) => queue.push_back(reply),
            None => state
                .keyed
                .push((marker.to_owned(), VecDeque::from([reply]))),
        }
        drop(state);
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }

    /// Scripted replies not yet consumed.
    pub fn remaining_replies(&self) -> usize {
        let state = self.shared.lock();
        state.replies.len() + state.keyed.iter().map(|(_, q)| q.len()).sum::<usize>()
    }

    /// How the body of request `index` ended, waiting up to `timeout` for it to end.
    pub async fn wait_for_outcome(&self, index: usize, timeout: Duration) -> Option<StreamOutcome> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(outcome) = self.shared.lock().outcomes.get(&index) {
                return Some(*outcome);
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return None;
            }
        }
    }

    /// Takes the invariant violations recorded so far (so a test that provokes them on
    /// purpose can assert on them without failing at drop).
    pub fn take_violations(&self) -> Vec<String> {
        std::mem::take(&mut self.shared.lock().violations)
    }
}

impl Drop for FakeModelServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        let violations = self.take_violations();
        if !violations.is_empty() && !std::thread::panicking() {
            panic!(
                "FakeModelServer: {} request invariant violation(s):\n  - {}",
                violations.len(),
                violations.join("\n  - ")
            );
        }
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
