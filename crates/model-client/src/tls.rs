//! The HTTP client's TLS: rustls (ring) with the platform's verifier, which trusts the
//! system's roots (on Linux the CA bundle, or `SSL_CERT_FILE` / `SSL_CERT_DIR` when set) plus
//! the configured extra CA file; ALPN offers `h2` then `http/1.1`. What a refused
//! certificate looks like in a failed request is also decided here.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::config::ClientConfig;
use crate::error::ModelError;
use crate::stream::describe_reqwest_error;

/// reqwest with rustls, the platform's verifier and the environment's proxies
/// (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`, read when the client is built).
pub(crate) fn http_client(config: &ClientConfig) -> Result<reqwest::Client, ModelError> {
    let config_error = |what: &str, error: &dyn std::fmt::Display| ModelError::Config {
        message: format!("{what}: {error}"),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = match &config.extra_ca_file {
        None => rustls_platform_verifier::Verifier::new(provider.clone())
            .map_err(|error| config_error("could not load the system's TLS roots", &error))?,
        Some(path) => {
            let roots = extra_roots(path)?;
            rustls_platform_verifier::Verifier::new_with_extra_roots(roots, provider.clone())
                .map_err(|error| {
                    config_error(
                        &format!("the extra CA file `{}` was refused", path.display()),
                        &error,
                    )
                })?
        }
    };
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| config_error("could not configure TLS", &error))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(config.timeouts.connect)
        .user_agent(concat!("paddock-model-client/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| ModelError::Config {
            message: describe_reqwest_error(error),
        })
}

/// The certificates of a PEM file (other PEM sections, such as keys, are skipped).
fn extra_roots(path: &Path) -> Result<Vec<CertificateDer<'static>>, ModelError> {
    let named = |what: String| ModelError::Config {
        message: format!("the extra CA file `{}` {what}", path.display()),
    };
    let bytes = std::fs::read(path).map_err(|error| named(format!("cannot be read: {error}")))?;
    let roots = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| named(format!("is not valid PEM: {error}")))?;
    if roots.is_empty() {
        return Err(named(
            "holds no certificate (expected `-----BEGIN CERTIFICATE-----` blocks)".to_owned(),
        ));
    }
    Ok(roots)
}

/// Why the server's certificate was refused, if that is what broke `error`.
pub(crate) fn refused_certificate(error: &reqwest::Error) -> Option<String> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = cause {
        if let Some(rustls::Error::InvalidCertificate(reason)) = rustls_error_in(current) {
            return Some(describe_certificate_error(reason));
        }
        cause = current.source();
    }
    None
}

/// rustls' error, if `error` is one or an `io::Error` wrapping one (tokio-rustls wraps it,
/// and the connector wraps that again). `io::Error::source` skips the wrapped error itself,
/// so the wrapping is opened here.
fn rustls_error_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut current = error;
    loop {
        if let Some(found) = current.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        let inner = current.downcast_ref::<std::io::Error>()?.get_ref()?;
        current = inner;
    }
}

fn describe_certificate_error(reason: &rustls::CertificateError) -> String {
    use rustls::CertificateError as Refusal;
    match reason {
        Refusal::UnknownIssuer => "it is not signed by a trusted certificate authority (add \
                                   the CA to the system's roots or to `extra_ca_file`)"
            .to_owned(),
        Refusal::NotValidForName | Refusal::NotValidForNameContext { .. } => {
            format!("it is not valid for this host name ({reason})")
        }
        Refusal::Expired | Refusal::ExpiredContext { .. } => format!("it has expired ({reason})"),
        other => other.to_string(),
    }
}
