//! Test-time PKI like OpenShell's local gateway's: a CA (`openshell-ca`), a server certificate
//! for `localhost` and `127.0.0.1`, and a client certificate with CN `openshell-client` and OU
//! `openshell-user`; plus writing a gateway registration the way `openshell gateway add` does.

use std::path::{Path, PathBuf};

use crate::pki::TestCa;

/// PEM-encoded certificates and keys, generated fresh for each test.
#[derive(Clone)]
pub struct TestPki {
    pub ca_pem: String,
    pub server_cert_pem: String,
    pub server_key_pem: String,
    pub client_cert_pem: String,
    pub client_key_pem: String,
}

impl std::fmt::Debug for TestPki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TestPki { .. }")
    }
}

impl TestPki {
    /// A CA and client certificate with `client_cn`/`client_ou` (the gateway's principal).
    pub fn generate_for(client_cn: &str, client_ou: &str) -> Self {
        let ca = TestCa::new("openshell-ca");
        let server = ca.issue_server("openshell-server", &["localhost", "127.0.0.1"]);
        let client = ca.issue_client(client_cn, client_ou);
        Self {
            ca_pem: ca.cert_pem().to_owned(),
            server_cert_pem: server.cert_pem,
            server_key_pem: server.key_pem,
            client_cert_pem: client.cert_pem,
            client_key_pem: client.key_pem,
        }
    }

    /// The local gateway's PKI: client CN `openshell-client`, OU `openshell-user`.
    pub fn generate() -> Self {
        Self::generate_for("openshell-client", "openshell-user")
    }
}

/// How a registration authenticates (its `metadata.json` `auth_mode`).
#[derive(Debug, Clone)]
pub enum Registration<'a> {
    /// `auth_mode` absent (mTLS) with the bundle in `mtls/`.
    Mtls(&'a TestPki),
    /// `auth_mode: "plaintext"` (an `http://` endpoint).
    Plaintext,
    /// `auth_mode: "oidc"`, the token in `oidc_token.json`, the CA in `mtls/ca.crt`.
    Oidc { pki: &'a TestPki, token: &'a str },
}

/// Writes `<root>/gateways/<name>/` like `openshell gateway add`: `metadata.json` and the
/// credentials. Returns the gateway's folder.
pub fn register_gateway(
    root: &Path,
    name: &str,
    endpoint: &str,
    how: &Registration<'_>,
) -> PathBuf {
    let dir = root.join("gateways").join(name);
    let write = |path: PathBuf, text: &str| {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("creating {}: {e}", parent.display()));
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    };
    let mut metadata = serde_json::json!({
        "name": name,
        "gateway_endpoint": endpoint,
        "is_remote": false,
    });
    match how {
        Registration::Mtls(pki) => {
            write(dir.join("mtls/ca.crt"), &pki.ca_pem);
            write(dir.join("mtls/tls.crt"), &pki.client_cert_pem);
            write(dir.join("mtls/tls.key"), &pki.client_key_pem);
        }
        Registration::Plaintext => metadata["auth_mode"] = "plaintext".into(),
        Registration::Oidc { pki, token } => {
            metadata["auth_mode"] = "oidc".into();
            write(dir.join("mtls/ca.crt"), &pki.ca_pem);
            write(
                dir.join("oidc_token.json"),
                &serde_json::json!({ "access_token": token }).to_string(),
            );
        }
    }
    write(dir.join("metadata.json"), &metadata.to_string());
    dir
}

/// The subject CN and OU values of a DER certificate (the gateway's principal and roles).
pub fn subject_of(der: &[u8]) -> Option<(String, Vec<String>)> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let subject = cert.subject();
    let cn = subject
        .iter_common_name()
        .next()
        .and_then(|a| a.as_str().ok())?
        .to_owned();
    let ous = subject
        .iter_organizational_unit()
        .filter_map(|a| a.as_str().ok().map(str::to_owned))
        .collect();
    Some((cn, ous))
}
