//! A throwaway certificate authority for tests: one CA per test, and the server and client
//! certificates it signs (PEM). Shared by the gateway double (mTLS) and the fake model
//! server (HTTPS).

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};

/// A certificate and its private key, PEM-encoded.
#[derive(Clone)]
pub struct IssuedCert {
    pub cert_pem: String,
    pub key_pem: String,
}

impl std::fmt::Debug for IssuedCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IssuedCert { .. }")
    }
}

/// A CA generated fresh for one test. Nothing outside the test trusts it.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    cert_pem: String,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TestCa { .. }")
    }
}

fn fail(what: &str, e: &rcgen::Error) -> ! {
    panic!("generating the test PKI ({what}): {e}")
}

impl TestCa {
    /// A self-signed CA whose subject CN is `common_name`.
    pub fn new(common_name: &str) -> Self {
        let key = KeyPair::generate().unwrap_or_else(|e| fail("CA key", &e));
        let mut params =
            CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| fail("CA", &e));
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        let cert = params
            .self_signed(&key)
            .unwrap_or_else(|e| fail("CA certificate", &e));
        Self {
            issuer: Issuer::new(params, key),
            cert_pem: cert.pem(),
        }
    }

    /// The CA certificate, the one a client must trust.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// A server certificate (`serverAuth`) valid for exactly `names`: DNS names, or IP
    /// addresses written as such (`127.0.0.1`).
    pub fn issue_server(&self, common_name: &str, names: &[&str]) -> IssuedCert {
        let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        let mut params = CertificateParams::new(names).unwrap_or_else(|e| fail("server", &e));
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.sign(&params, "server certificate")
    }

    /// A client certificate (`clientAuth`) with subject CN `common_name` and OU
    /// `organizational_unit`.
    pub fn issue_client(&self, common_name: &str, organizational_unit: &str) -> IssuedCert {
        let mut params =
            CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| fail("client", &e));
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params
            .distinguished_name
            .push(DnType::OrganizationalUnitName, organizational_unit);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(&params, "client certificate")
    }

    fn sign(&self, params: &CertificateParams, what: &str) -> IssuedCert {
        let key = KeyPair::generate().unwrap_or_else(|e| fail(what, &e));
        let cert = params
            .signed_by(&key, &self.issuer)
            .unwrap_or_else(|e| fail(what, &e));
        IssuedCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}
