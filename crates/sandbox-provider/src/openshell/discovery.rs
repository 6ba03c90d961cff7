//! Finding the gateway exactly like the OpenShell CLI, and its credentials.
//!
//! Order: `OPENSHELL_GATEWAY_ENDPOINT` (a URL, no metadata lookup), then the gateway *name*
//! from `OPENSHELL_GATEWAY`, `$XDG_CONFIG_HOME/openshell/active_gateway` (default
//! `~/.config`), `<system>/active_gateway` (`<system>` = `OPENSHELL_SYSTEM_GATEWAY_DIR`, default
//! `/etc/openshell`); the name's `gateways/<name>/metadata.json` is read from the user root, then
//! the system root. Names are sanitised (characters outside `[A-Za-z0-9._-]` become `_`).
//!
//! Everything is read through a [`HostEnvironment`], so tests point discovery at temp dirs.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The default system root of gateway registrations.
pub const SYSTEM_GATEWAY_DIR: &str = "/etc/openshell";

/// The variables and file-system roots discovery (and secret lookup) reads. Production uses
/// [`HostEnvironment::from_process`]; tests build one from a map.
#[derive(Clone, Default)]
pub struct HostEnvironment {
    vars: BTreeMap<String, String>,
}

impl fmt::Debug for HostEnvironment {
    /// Only the variable names: values may be secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostEnvironment")
            .field("vars", &self.vars.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl HostEnvironment {
    /// This process's environment (variables that are not UTF-8 are left out).
    pub fn from_process() -> Self {
        Self {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    pub fn from_vars<K: Into<String>, V: Into<String>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The same environment with `name` set to `value` (replacing an earlier value).
    pub fn with_var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// A variable's value; empty counts as unset.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `$XDG_CONFIG_HOME/openshell`, else `$HOME/.config/openshell`.
    pub fn user_root(&self) -> Option<PathBuf> {
        match (self.var("XDG_CONFIG_HOME"), self.var("HOME")) {
            (Some(xdg), _) => Some(Path::new(xdg).join("openshell")),
            (None, Some(home)) => Some(Path::new(home).join(".config").join("openshell")),
            (None, None) => None,
        }
    }

    /// `OPENSHELL_SYSTEM_GATEWAY_DIR`, else `/etc/openshell`.
    pub fn system_root(&self) -> PathBuf {
        PathBuf::from(
            self.var("OPENSHELL_SYSTEM_GATEWAY_DIR")
                .unwrap_or(SYSTEM_GATEWAY_DIR),
        )
    }
}

/// A bearer token: sent on every call, never shown.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

impl BearerToken {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The token itself, for the `authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How the channel is secured.
#[derive(Clone, PartialEq, Eq)]
pub enum TlsMode {
    /// `http://`: no TLS.
    Plaintext,
    /// TLS against the gateway's CA, presenting the client certificate (the local gateway).
    Mtls {
        ca: Vec<u8>,
        cert: Vec<u8>,
        key: Vec<u8>,
    },
    /// TLS against a given CA, no client certificate.
    CaOnly { ca: Vec<u8> },
    /// TLS against the system's roots.
    SystemRoots,
}

impl fmt::Debug for TlsMode {
    /// Names the mode only: the key never prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TlsMode {
    pub fn name(&self) -> &'static str {
        match self {
            TlsMode::Plaintext => "plaintext",
            TlsMode::Mtls { .. } => "mTLS",
            TlsMode::CaOnly { .. } => "TLS (gateway CA)",
            TlsMode::SystemRoots => "TLS (system roots)",
        }
    }
}

/// Where and how to reach the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayTarget {
    /// The registration's name (`None` for a direct `OPENSHELL_GATEWAY_ENDPOINT`).
    pub name: Option<String>,
    /// The URL, `https://127.0.0.1:17670` for the package-managed local gateway.
    pub endpoint: String,
    /// The URL's host: the TLS server name.
    pub host: String,
    pub tls: TlsMode,
    pub bearer: Option<BearerToken>,
    /// How it was found, in plain words (for `machine sandbox status`).
    pub found_by: String,
}

impl GatewayTarget {
    /// `mTLS`, `plaintext`, `OIDC bearer over TLS (system roots)`, ...
    pub fn auth_description(&self) -> String {
        match &self.bearer {
            Some(_) => format!("OIDC bearer over {}", self.tls.name()),
            None => self.tls.name().to_owned(),
        }
    }
}

/// Why no gateway could be used. Each message ends with what fixes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    #[error(
        "no OpenShell gateway is selected: OPENSHELL_GATEWAY_ENDPOINT and OPENSHELL_GATEWAY are \
         unset and there is no active_gateway in {user} or {system}; register one with \
         `openshell gateway add https://127.0.0.1:17670 --local` and select it with \
         `openshell gateway select <name>`"
    )]
    NoGateway { user: String, system: String },
    #[error(
        "gateway `{name}` is not registered: no gateways/{name}/metadata.json in {user} or \
         {system}; run `openshell gateway add <url> --name {name}`"
    )]
    NotRegistered {
        name: String,
        user: String,
        system: String,
    },
    #[error("{path}: {reason}")]
    BadFile { path: String, reason: String },
    #[error("gateway endpoint `{endpoint}`: {reason}")]
    BadEndpoint { endpoint: String, reason: String },
    #[error(
        "gateway `{name}` uses mTLS but its bundle is incomplete ({missing} missing in {dir}); \
         re-register it with `openshell gateway add <url> --local --name {name}`"
    )]
    MissingBundle {
        name: String,
        dir: String,
        missing: String,
    },
    #[error(
        "gateway `{name}` uses OIDC but has no usable access token ({reason}); run \
         `openshell gateway login {name}`"
    )]
    MissingToken { name: String, reason: String },
    #[error(
        "gateway `{name}`: auth mode `{mode}` is not supported by Paddock (use mTLS, OIDC or plaintext)"
    )]
    UnsupportedAuth { name: String, mode: String },
}

#[derive(Deserialize)]
struct Metadata {
    gateway_endpoint: String,
    #[serde(default)]
    auth_mode: Option<String>,
}

#[derive(Deserialize)]
struct OidcToken {
    #[serde(default)]
    access_token: String,
}

/// `[A-Za-z0-9._-]` kept, everything else `_` (the CLI's rule).
pub fn sanitize_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Finds the gateway and reads its credentials.
pub fn discover(env: &HostEnvironment) -> Result<GatewayTarget, DiscoveryError> {
    let user = env.user_root();
    let system = env.system_root();
    let shown_user = user
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "(no HOME or XDG_CONFIG_HOME)".into());
    let shown_system = system.display().to_string();

    if let Some(endpoint) = env.var("OPENSHELL_GATEWAY_ENDPOINT") {
        let (scheme, host) = split_endpoint(endpoint)?;
        // A direct URL: no metadata. Over https, the selected gateway's bundle is used when
        // one is registered; otherwise the system roots.
        let named = selected_name(env, user.as_deref(), &system)?
            .and_then(|(name, _)| registration_dir(&name, user.as_deref(), &system));
        let tls = match (scheme.as_str(), named) {
            ("http", _) => TlsMode::Plaintext,
            (_, Some(dir)) => read_bundle(&dir).unwrap_or(TlsMode::SystemRoots),
            (_, None) => TlsMode::SystemRoots,
        };
        return Ok(GatewayTarget {
            name: None,
            endpoint: endpoint.trim_end_matches('/').to_owned(),
            host,
            tls,
            bearer: None,
            found_by: "OPENSHELL_GATEWAY_ENDPOINT".into(),
        });
    }

    let Some((name, found_by)) = selected_name(env, user.as_deref(), &system)? else {
        return Err(DiscoveryError::NoGateway {
            user: shown_user,
            system: shown_system,
        });
    };
    let dir = registration_dir(&name, user.as_deref(), &system).ok_or_else(|| {
        DiscoveryError::NotRegistered {
            name: name.clone(),
            user: shown_user.clone(),
            system: shown_system.clone(),
        }
    })?;
    let metadata_path = dir.join("metadata.json");
    let metadata: Metadata = read_json(&metadata_path)?;
    let endpoint = metadata.gateway_endpoint.trim_end_matches('/').to_owned();
    let (scheme, host) = split_endpoint(&endpoint)?;
    let mode = metadata.auth_mode.unwrap_or_else(|| "mtls".into());
    let (tls, bearer) = match mode.as_str() {
        _ if scheme == "http" => (TlsMode::Plaintext, None),
        "plaintext" => {
            return Err(DiscoveryError::BadEndpoint {
                endpoint,
                reason: "auth mode `plaintext` needs an http:// endpoint".into(),
            });
        }
        "mtls" => match read_bundle(&dir) {
            Some(tls @ TlsMode::Mtls { .. }) => (tls, None),
            _ => {
                let missing = ["ca.crt", "tls.crt", "tls.key"]
                    .into_iter()
                    .filter(|f| !dir.join("mtls").join(f).is_file())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(DiscoveryError::MissingBundle {
                    name,
                    dir: dir.join("mtls").display().to_string(),
                    missing,
                });
            }
        },
        "oidc" => {
            let token_path = dir.join("oidc_token.json");
            let token: OidcToken =
                read_json(&token_path).map_err(|e| DiscoveryError::MissingToken {
                    name: name.clone(),
                    reason: e.to_string(),
                })?;
            if token.access_token.trim().is_empty() {
                return Err(DiscoveryError::MissingToken {
                    name,
                    reason: format!("{} has no access_token", token_path.display()),
                });
            }
            let tls = read_bundle(&dir).unwrap_or(TlsMode::SystemRoots);
            (tls, Some(BearerToken::new(token.access_token.trim())))
        }
        other => {
            return Err(DiscoveryError::UnsupportedAuth {
                name,
                mode: other.to_owned(),
            });
        }
    };
    Ok(GatewayTarget {
        name: Some(name),
        endpoint,
        host,
        tls,
        bearer,
        found_by: format!("{found_by}, {}", metadata_path.display()),
    })
}

/// The selected gateway's sanitised name and where the selection came from.
fn selected_name(
    env: &HostEnvironment,
    user: Option<&Path>,
    system: &Path,
) -> Result<Option<(String, String)>, DiscoveryError> {
    if let Some(name) = env.var("OPENSHELL_GATEWAY") {
        return Ok(Some((
            sanitize_name(name.trim()),
            "OPENSHELL_GATEWAY".into(),
        )));
    }
    let candidates = user
        .map(|u| u.join("active_gateway"))
        .into_iter()
        .chain([system.join("active_gateway")]);
    for path in candidates {
        match std::fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => {
                return Ok(Some((
                    sanitize_name(text.trim()),
                    path.display().to_string(),
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(DiscoveryError::BadFile {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                });
            }
        }
    }
    Ok(None)
}

/// `gateways/<name>` under the user root, else the system root, whichever has metadata.
fn registration_dir(name: &str, user: Option<&Path>, system: &Path) -> Option<PathBuf> {
    user.into_iter()
        .chain([system])
        .map(|root| root.join("gateways").join(name))
        .find(|dir| dir.join("metadata.json").is_file())
}

/// The bundle in `<dir>/mtls`: all three files → mTLS, the CA alone → CA-only.
fn read_bundle(dir: &Path) -> Option<TlsMode> {
    let mtls = dir.join("mtls");
    let read = |name: &str| std::fs::read(mtls.join(name)).ok();
    match (read("ca.crt"), read("tls.crt"), read("tls.key")) {
        (Some(ca), Some(cert), Some(key)) => Some(TlsMode::Mtls { ca, cert, key }),
        (Some(ca), _, _) => Some(TlsMode::CaOnly { ca }),
        _ => None,
    }
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, DiscoveryError> {
    let bad = |reason: String| DiscoveryError::BadFile {
        path: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| bad(format!("not the expected JSON: {e}")))
}

/// `(scheme, host)` of an `http(s)://host[:port][/]` URL; the host is the TLS server name.
pub fn split_endpoint(endpoint: &str) -> Result<(String, String), DiscoveryError> {
    let bad = |reason: &str| DiscoveryError::BadEndpoint {
        endpoint: endpoint.to_owned(),
        reason: reason.to_owned(),
    };
    let (scheme, rest) = endpoint
        .split_once("://")
        .ok_or_else(|| bad("must start with https:// or http://"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "https" && scheme != "http" {
        return Err(bad("must start with https:// or http://"));
    }
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return Err(bad("must not carry credentials"));
    }
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed
            .split_once(']')
            .map(|(h, _)| h.to_owned())
            .ok_or_else(|| bad("unclosed [ in an IPv6 host"))?
    } else {
        authority
            .rsplit_once(':')
            .map_or(authority, |(h, _)| h)
            .to_owned()
    };
    if host.is_empty() {
        return Err(bad("has no host"));
    }
    Ok((scheme, host))
}

#[cfg(test)]
#[path = "discovery_tests.rs"]
mod tests;
