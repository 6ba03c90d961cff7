//! Paddock's sandbox data (`config/sandbox.toml`, embedded at build time): network profiles,
//! companion hosts, known secrets, credential-share entries and baseline paths.

use std::collections::BTreeMap;

use protocol::NetworkProfileName;
use serde::Deserialize;

use crate::credentials::{CredentialEntry, check_entry_name, check_home_relative};
use crate::error::PolicyError;
use crate::host::{Cidr, HostPattern, HostRule, Transport};
use crate::secrets::{SecretSpec, check_secret_name};
use crate::validate::{check_absolute_path, check_allowed_ip, check_environment};

/// The data file, as shipped.
const BUILTIN: &str = include_str!("../../../config/sandbox.toml");

/// Paths every sandbox gets besides the session's folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    pub read_only: Vec<String>,
    pub read_write: Vec<String>,
}

/// The `open` profile's destinations: any address in `networks` on `ports`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAddresses {
    pub ports: Vec<u16>,
    pub networks: Vec<Cidr>,
}

/// A named network profile: hosts (port 443 unless written), or open addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkProfile {
    pub name: String,
    pub description: String,
    pub hosts: Vec<HostRule>,
    pub open: Option<OpenAddresses>,
}

/// Hosts that come with a key host (allowing `github.com` allows `api.github.com`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Companions(BTreeMap<String, Vec<String>>);

impl Companions {
    /// The companions of an exact host name (none for others).
    pub fn of(&self, host: &str) -> &[String] {
        self.0.get(host).map(Vec::as_slice).unwrap_or_default()
    }

    /// A host rule plus its companions on the same port and transport.
    pub fn expand(&self, rule: &HostRule) -> Vec<HostRule> {
        let mut rules = vec![rule.clone()];
        if let HostPattern::Exact(host) = &rule.pattern {
            rules.extend(self.of(host).iter().map(|companion| HostRule {
                pattern: HostPattern::Exact(companion.clone()),
                port: rule.port,
                transport: rule.transport,
            }));
        }
        rules
    }
}

/// All of Paddock's sandbox data, parsed and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxData {
    pub baseline: Baseline,
    pub companions: Companions,
    profiles: BTreeMap<String, NetworkProfile>,
    known_secrets: BTreeMap<String, Vec<HostRule>>,
    credentials: BTreeMap<String, CredentialEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawData {
    baseline: RawBaseline,
    profiles: BTreeMap<String, RawProfile>,
    #[serde(default)]
    companions: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    secrets: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    credentials: BTreeMap<String, RawCredential>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBaseline {
    read_only: Vec<String>,
    read_write: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    description: String,
    extends: Option<String>,
    #[serde(default)]
    hosts: Vec<String>,
    #[serde(default)]
    ports: Vec<u16>,
    #[serde(default)]
    allowed_ips: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCredential {
    description: String,
    source: String,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    optional: Vec<String>,
    #[serde(default)]
    hosts: Vec<String>,
    protocol: Option<String>,
    #[serde(default)]
    hosts_from_kubeconfig: bool,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

impl SandboxData {
    /// The data Paddock ships (`config/sandbox.toml`).
    pub fn builtin() -> Result<Self, PolicyError> {
        Self::parse(BUILTIN)
    }

    /// Parses and checks a data file of the same shape.
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        let raw: RawData = toml::from_str(text)
            .map_err(|error| PolicyError::data("sandbox.toml", error.to_string()))?;
        let baseline = Baseline {
            read_only: paths("baseline.read_only", &raw.baseline.read_only)?,
            read_write: paths("baseline.read_write", &raw.baseline.read_write)?,
        };
        let mut companions = BTreeMap::new();
        for (host, list) in raw.companions {
            let field = format!("companions.{host}");
            exact_name(&field, &host)?;
            let list = list
                .iter()
                .map(|companion| exact_name(&field, companion))
                .collect::<Result<Vec<_>, _>>()?;
            companions.insert(host, list);
        }
        let mut profiles = BTreeMap::new();
        for (name, profile) in &raw.profiles {
            profiles.insert(
                name.clone(),
                build_profile(&raw.profiles, name, profile, 0)?,
            );
        }
        for required in [
            NetworkProfileName::Strict,
            NetworkProfileName::Standard,
            NetworkProfileName::Open,
        ] {
            if !profiles.contains_key(required.as_str()) {
                return Err(PolicyError::data(
                    "profiles",
                    format!("profile `{}` is missing", required.as_str()),
                ));
            }
        }
        let mut known_secrets = BTreeMap::new();
        for (name, hosts) in raw.secrets {
            check_secret_name(&name)?;
            known_secrets.insert(
                name.clone(),
                host_rules(&format!("secrets.{name}"), &hosts)?,
            );
        }
        let mut credentials = BTreeMap::new();
        for (name, entry) in raw.credentials {
            credentials.insert(name.clone(), build_credential(&name, entry)?);
        }
        Ok(Self {
            baseline,
            companions: Companions(companions),
            profiles,
            known_secrets,
            credentials,
        })
    }

    /// A profile by its name.
    pub fn profile(&self, name: NetworkProfileName) -> Result<&NetworkProfile, PolicyError> {
        self.profile_named(name.as_str())
    }

    /// A profile by its name as text.
    pub fn profile_named(&self, name: &str) -> Result<&NetworkProfile, PolicyError> {
        self.profiles
            .get(name)
            .ok_or_else(|| PolicyError::UnknownProfile {
                name: name.to_owned(),
                known: self.profiles.keys().cloned().collect::<Vec<_>>().join(", "),
            })
    }

    /// A built-in credential entry (`ssh`, `gh`, `aws`, `kube`), off until the caller enables it.
    pub fn credential(&self, name: &str) -> Result<CredentialEntry, PolicyError> {
        self.credentials
            .get(name)
            .cloned()
            .ok_or_else(|| PolicyError::UnknownCredential {
                name: name.to_owned(),
                known: self.credential_names().join(", "),
            })
    }

    /// The built-in credential entries' names.
    pub fn credential_names(&self) -> Vec<String> {
        self.credentials.keys().cloned().collect()
    }

    /// The secrets Paddock knows the hosts of (`GITHUB_TOKEN`, ...), sorted.
    pub fn known_secret_names(&self) -> Vec<String> {
        self.known_secrets.keys().cloned().collect()
    }

    /// A secret Paddock knows the hosts of (`GITHUB_TOKEN`, ...); any other secret must be
    /// given its hosts with [`SecretSpec::new`].
    pub fn known_secret(&self, name: &str) -> Result<SecretSpec, PolicyError> {
        let hosts = self
            .known_secrets
            .get(name)
            .ok_or_else(|| PolicyError::InvalidSecret {
                name: name.to_owned(),
                reason: format!(
                    "Paddock does not know its hosts; name them (known: {})",
                    self.known_secrets
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?;
        Ok(SecretSpec {
            name: name.to_owned(),
            hosts: hosts.clone(),
            hosts_named_by_user: false,
        })
    }
}

fn paths(field: &str, paths: &[String]) -> Result<Vec<String>, PolicyError> {
    paths
        .iter()
        .map(|path| check_absolute_path(field, path))
        .collect()
}

fn exact_name(field: &str, host: &str) -> Result<String, PolicyError> {
    match HostRule::parse_in(field, host)?.pattern {
        HostPattern::Exact(name) if name == host => Ok(name),
        _ => Err(PolicyError::host(
            field,
            host,
            "must be one exact lower-case host name without a port",
        )),
    }
}

fn host_rules(field: &str, hosts: &[String]) -> Result<Vec<HostRule>, PolicyError> {
    hosts
        .iter()
        .map(|host| HostRule::parse_in(field, host))
        .collect()
}

fn build_profile(
    all: &BTreeMap<String, RawProfile>,
    name: &str,
    raw: &RawProfile,
    depth: usize,
) -> Result<NetworkProfile, PolicyError> {
    let field = format!("profiles.{name}");
    if depth > all.len() {
        return Err(PolicyError::data(field, "`extends` forms a cycle"));
    }
    let mut hosts = match &raw.extends {
        None => Vec::new(),
        Some(parent) => {
            let parent_raw = all.get(parent).ok_or_else(|| {
                PolicyError::data(&field, format!("extends unknown profile `{parent}`"))
            })?;
            build_profile(all, parent, parent_raw, depth + 1)?.hosts
        }
    };
    for rule in host_rules(&format!("{field}.hosts"), &raw.hosts)? {
        if !hosts.contains(&rule) {
            hosts.push(rule);
        }
    }
    let open = match (raw.ports.is_empty(), raw.allowed_ips.is_empty()) {
        (true, true) => None,
        (false, false) => {
            let networks = raw
                .allowed_ips
                .iter()
                .map(|ip| check_allowed_ip(&format!("{field}.allowed_ips"), ip))
                .collect::<Result<Vec<_>, _>>()?;
            if raw.ports.contains(&0) {
                return Err(PolicyError::data(&field, "ports must be from 1 to 65535"));
            }
            Some(OpenAddresses {
                ports: raw.ports.clone(),
                networks,
            })
        }
        _ => {
            return Err(PolicyError::data(
                &field,
                "`ports` and `allowed_ips` go together",
            ));
        }
    };
    Ok(NetworkProfile {
        name: name.to_owned(),
        description: raw.description.clone(),
        hosts,
        open,
    })
}

fn build_credential(name: &str, raw: RawCredential) -> Result<CredentialEntry, PolicyError> {
    check_entry_name(name)?;
    let field = format!("credentials.{name}");
    let transport = match raw.protocol.as_deref() {
        None => Transport::Proxy,
        Some("tcp") => Transport::Tcp,
        Some(other) => {
            return Err(PolicyError::data(
                &field,
                format!("protocol `{other}` is not supported (only `tcp`)"),
            ));
        }
    };
    let hosts = host_rules(&format!("{field}.hosts"), &raw.hosts)?
        .into_iter()
        .map(|rule| rule.with_transport(transport))
        .collect();
    check_environment(&raw.env)?;
    Ok(CredentialEntry {
        name: name.to_owned(),
        description: raw.description,
        source: check_home_relative(&format!("{field}.source"), &raw.source)?,
        include: raw.include,
        exclude: raw.exclude,
        optional: raw.optional,
        include_optional: false,
        hosts,
        hosts_named_by_user: false,
        hosts_from_kubeconfig: raw.hosts_from_kubeconfig,
        env: raw.env,
    })
}

#[cfg(test)]
#[path = "data_tests.rs"]
mod tests;
