//! `paddock up`: the web UI and the HTTP/WebSocket API on this machine, until SIGINT or
//! SIGTERM. Prints the URL and where the token is, and on a terminal the address that signs a
//! browser in (the token in the fragment, which browsers never send to a server); says loudly when it serves without a wall or without TLS; says
//! how to add a model key when there is none (the server runs without one); reaps sandboxes
//! that dead Paddock processes left (never a live process's).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use paddock_host::paths::Paths;
use paddock_host::{Host, HostError, HostOptions};
use paddock_server::{EmbeddedUi, Server, ServerConfig, TlsFiles};

/// The default address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8420";

#[derive(Debug, Clone, clap::Args)]
pub struct UpOptions {
    /// The address to serve (`IP:PORT`); a non-loopback address needs TLS.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// The TLS certificate chain (PEM), for a non-loopback address.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Serve a non-loopback address without TLS (warned about on every start).
    #[arg(long)]
    pub insecure_remote: bool,
    /// A host name clients use to reach this server (checked against the Host header).
    /// Repeatable.
    #[arg(long = "name", value_name = "HOST")]
    pub names: Vec<String>,
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the command's output is its interface"
)]
pub async fn up(paths: &Paths, options: UpOptions, json_logs: bool) -> anyhow::Result<ExitCode> {
    let host = Host::open(HostOptions::new(paths.clone())).await?;
    let reaped = host.reap_orphans().await;
    for name in &reaped.reaped {
        tracing::info!("reaped {name}, left by a Paddock process that is gone");
    }
    for skipped in &reaped.skipped {
        tracing::warn!("orphan reaping skipped {skipped}");
    }
    let config = ServerConfig {
        listen: options.listen,
        tls: options
            .tls_cert
            .zip(options.tls_key)
            .map(|(cert, key)| TlsFiles { cert, key }),
        insecure_remote: options.insecure_remote,
        names: options.names,
        assets: Some(Arc::new(EmbeddedUi)),
        cross_origins: Vec::new(),
        process_token: false,
    };
    let server = Server::bind(host.clone(), config)
        .await
        .context("starting the server")?;
    for warning in server.warnings() {
        // With `--log-format json` stderr carries only JSON lines: the log line says it.
        if !json_logs {
            eprintln!("{warning}");
        }
        tracing::warn!("{warning}");
    }
    println!("Paddock is serving {}", server.url());
    for line in sign_in_lines(
        server.url(),
        server.token(),
        server.token_file(),
        std::io::stdout().is_terminal(),
    ) {
        println!("{line}");
    }
    match host.model().await {
        Ok(_) => {}
        Err(HostError::ModelKeyMissing { provider, how }) => {
            println!(
                "no API key for the `{provider}` models yet: sessions cannot start until you add one."
            );
            println!("  {how}");
        }
        Err(e) => println!("the model API is not usable yet: {e}"),
    }
    println!("ready (Ctrl-C stops it; running sessions are closed and resume after a restart)");
    server.run(shutdown_signal()).await;
    println!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// How to sign in: the API token's file, and on a terminal (not a log a service manager
/// keeps) the address that signs a browser in. The token rides in the fragment (`#token=…`),
/// which browsers never send to a server or put in a `Referer`; the UI moves it into the
/// tab's session storage and takes it out of the address bar.
pub fn sign_in_lines(url: &str, token: &str, token_file: &Path, terminal: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if terminal {
        lines.push(format!(
            "Open in a browser (this address signs you in): {url}/#token={token}"
        ));
    } else {
        lines.push(format!(
            "Open {url}/ in a browser and sign in with the API token (a sign-in address is \
             printed when paddock up runs in a terminal)"
        ));
    }
    lines.push(format!(
        "API token: {} (send it as `Authorization: Bearer <token>`)",
        token_file.display()
    ));
    lines
}

/// SIGINT or SIGTERM.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!("cannot watch SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_printed_only_in_a_fragment_and_only_on_a_terminal() {
        let file = Path::new("/state/paddock/api-token");
        let shown = sign_in_lines("http://127.0.0.1:8420", "abc123", file, true);
        assert_eq!(
            shown,
            [
                "Open in a browser (this address signs you in): http://127.0.0.1:8420/#token=abc123",
                "API token: /state/paddock/api-token (send it as `Authorization: Bearer <token>`)",
            ]
        );
        let logged = sign_in_lines("http://127.0.0.1:8420", "abc123", file, false);
        assert!(
            logged.iter().all(|line| !line.contains("abc123")),
            "{logged:?}"
        );
        assert!(logged[0].starts_with("Open http://127.0.0.1:8420/ in a browser"));
    }
}
