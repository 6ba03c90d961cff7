//! Test-time PKI like OpenShell's local gateway's: a CA (`openshell-ca`), a server certificate
//! for `localhost` and `127.0.0.1`, and a client certificate with CN `openshell-client` and OU
//! `openshell-user`; plus writing a gateway registration the way `openshell gateway add` does.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};

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

fn fail(what: &str, e: &rcgen::Error) -> ! {
    panic!("generating the test PKI ({what}): {e}")
}

impl TestPki {
    /// A CA and client certificate with `client_cn`/`client_ou` (the gateway's principal).
    pub fn generate_for(client_cn: &str, client_ou: &str) -> Self {
        let ca_key = KeyPair::generate().unwrap_or_else(|e| fail("CA key", &e));
        let mut ca_params =
            CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| fail("CA", &e));
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "openshell-ca");
        let ca_cert = ca_params
            .self_signed(&ca_key)
            .unwrap_or_else(|e| fail("CA certificate", &e));
        let issuer = Issuer::new(ca_params, ca_key);

        let server_key = KeyPair::generate().unwrap_or_else(|e| fail("server key", &e));
        let mut server_params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
                .unwrap_or_else(|e| fail("server", &e));
        server_params
            .distinguished_name
            .push(DnType::CommonName, "openshell-server");
        server_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_cert = server_params
            .signed_by(&server_key, &issuer)
            .unwrap_or_else(|e| fail("server certificate", &e));

        let client_key = KeyPair::generate().unwrap_or_else(|e| fail("client key", &e));
        let mut client_params =
            CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| fail("client", &e));
        client_params
            .distinguished_name
            .push(DnType::CommonName, client_cn);
        client_params
            .distinguished_name
            .push(DnType::OrganizationalUnitName, client_ou);
        client_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client_cert = client_params
            .signed_by(&client_key, &issuer)
            .unwrap_or_else(|e| fail("client certificate", &e));

        Self {
            ca_pem: ca_cert.pem(),
            server_cert_pem: server_cert.pem(),
            server_key_pem: server_key.serialize_pem(),
            client_cert_pem: client_cert.pem(),
            client_key_pem: client_key.serialize_pem(),
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
