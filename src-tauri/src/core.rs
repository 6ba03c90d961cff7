//! The desktop app's core: the host crate in this process, serving the same API as
//! `paddock up` on loopback with a token made for this launch (kept in memory, handed only to
//! the main window through the `connection` command). Keys go to the OS keychain unless the
//! user's config names another store; a missing or locked keychain is reported by the key
//! store's status (Settings ▸ Models shows it with the fix), never replaced by another store.

use model_client::KeyStoreKind;
use paddock_host::paths::Paths;
use paddock_host::{Host, HostOptions};
use paddock_server::api::Connection;
use paddock_server::{Server, ServerConfig};
use tokio::sync::oneshot;

/// The origins the webview's page has (Linux/macOS, and Windows/Android): the only cross
/// origins the in-process server answers.
pub const WEBVIEW_ORIGINS: [&str; 2] = ["tauri://localhost", "http://tauri.localhost"];

/// The running core: where the window reaches it, and how to stop it.
pub struct Core {
    pub connection: Connection,
    stop: Option<oneshot::Sender<()>>,
    served: Option<tauri::async_runtime::JoinHandle<()>>,
}

/// The server configuration of the desktop app: loopback on a free port, the webview's
/// origins, a token for this process only, and the embedded UI (also reachable in a browser
/// on that port for whoever has the token: no one outside this process).
pub fn server_config() -> ServerConfig {
    let mut config = ServerConfig::loopback(0);
    config.cross_origins = WEBVIEW_ORIGINS.iter().map(|o| (*o).to_owned()).collect();
    config.process_token = true;
    config
}

/// The host options of the desktop app: the machine's folders, and the OS keychain as the
/// key store when the user's config names none.
pub fn host_options(paths: Paths) -> HostOptions {
    let mut options = HostOptions::new(paths);
    options.default_key_store = Some(KeyStoreKind::Keychain);
    options
}

impl Core {
    /// Opens the host and starts serving; the error says what failed (shown in the window).
    pub async fn start() -> Result<Self, String> {
        let paths = Paths::from_env()?;
        let host = Host::open(host_options(paths))
            .await
            .map_err(|e| format!("Paddock could not open this machine's state: {e}"))?;
        let server = Server::bind(host, server_config())
            .await
            .map_err(|e| format!("Paddock could not start its local server: {e}"))?;
        for warning in server.warnings() {
            tracing::warn!("{warning}");
        }
        let connection = Connection {
            base_url: server.url().to_owned(),
            token: server.token().to_owned(),
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let served = tauri::async_runtime::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Ok(Self {
            connection,
            stop: Some(stop),
            served: Some(served),
        })
    }

    /// Stops serving and shuts the host down (running calls cancelled and recorded, sessions
    /// closed, sandboxes torn down); waits until that is done.
    pub fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            let _ = tauri::async_runtime::block_on(served);
        }
    }
}
