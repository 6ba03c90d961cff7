//! What every handler shares.

use std::sync::Arc;

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
}
