//! The HTTP client connectors use: rustls (ring) with the platform's verifier.

use std::sync::Arc;

use crate::error::ConnectorError;

/// reqwest with rustls and the platform's roots. `proxies_from_env`: whether the
/// environment's `HTTPS_PROXY` and friends apply (MCP servers: yes; `web_fetch`: never, since
/// a proxy would resolve names itself, past the address check).
pub(crate) fn builder(proxies_from_env: bool) -> Result<reqwest::ClientBuilder, ConnectorError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone()).map_err(|e| {
        ConnectorError::Http(format!("the system's TLS roots could not be loaded: {e}"))
    })?;
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ConnectorError::Http(format!("TLS could not be configured: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(concat!("paddock/", env!("CARGO_PKG_VERSION")));
    if !proxies_from_env {
        builder = builder.no_proxy();
    }
    Ok(builder)
}

pub(crate) fn http_client(proxies_from_env: bool) -> Result<reqwest::Client, ConnectorError> {
    builder(proxies_from_env)?
        .build()
        .map_err(|e| ConnectorError::Http(format!("the HTTP client could not be built: {e}")))
}
