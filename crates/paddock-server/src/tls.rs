//! TLS for a non-loopback address: rustls with the user's certificate chain and key.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::{ServeError, TlsFiles};

/// The acceptor of `files`, or an error naming the file and what is wrong with it.
pub(crate) fn acceptor(files: &TlsFiles) -> Result<tokio_rustls::TlsAcceptor, ServeError> {
    let chain = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            ServeError::Tls(format!(
                "--tls-cert {}: not a PEM certificate chain ({e})",
                files.cert.display()
            ))
        })?;
    if chain.is_empty() {
        return Err(ServeError::Tls(format!(
            "--tls-cert {}: holds no certificate",
            files.cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| {
        ServeError::Tls(format!(
            "--tls-key {}: not a PEM private key ({e})",
            files.key.display()
        ))
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServeError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| ServeError::Tls(format!("the certificate and key do not fit: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
