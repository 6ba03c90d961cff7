//! What every handler shares.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use paddock_host::Host;

use crate::assets::StaticAssets;
use crate::auth::{ApiToken, Exposure, Tickets};

/// The server's state: the host, the token, what it is exposed as, and the socket tickets.
#[derive(Clone)]
pub struct AppState {
    pub host: Host,
    pub token: Arc<ApiToken>,
    pub exposure: Arc<Exposure>,
    pub tickets: Arc<Tickets>,
    /// The web UI's files, when this build serves one (the desktop shell and `paddock up`
    /// will embed it); `None` answers `/` with a short text.
    pub assets: Option<Arc<dyn StaticAssets>>,
    /// Cancelled when the server shuts down (event sockets close with "reconnect").
    pub shutdown: tokio_util::sync::CancellationToken,
    pub event_sockets: Arc<EventSocketStats>,
}

/// What the event sockets are doing, for the operator (and the tests that hold a client to
/// the bounded queue).
#[derive(Debug, Default)]
pub struct EventSocketStats {
    pub(crate) open: AtomicU64,
    pub(crate) too_slow: AtomicU64,
}

impl EventSocketStats {
    /// Event sockets open now.
    pub fn open(&self) -> u64 {
        self.open.load(Ordering::Relaxed)
    }

    /// Clients disconnected because their queue was full.
    pub fn disconnected_too_slow(&self) -> u64 {
        self.too_slow.load(Ordering::Relaxed)
    }
}
