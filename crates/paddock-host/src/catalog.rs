//! What a front end shows so a user can choose well: the network profiles with the hosts each
//! includes, the credential-share rows, the secrets a session may be given (and whether the
//! key store holds each one's value), whether a typed folder can be granted, and whether the
//! key store can be used at all (with the fix when it cannot).

use model_client::{KeyStore, KeyStoreKind};
use protocol::NetworkProfileName;
use serde::{Deserialize, Serialize};

use crate::credentials::CredentialRow;
use crate::error::HostError;
use crate::host::Host;
use crate::wiring;

/// A network profile and what it lets a sandbox reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ProfileInfo {
    pub name: NetworkProfileName,
    pub description: String,
    /// The hosts it allows (`host:port`), its own and those of the profile it extends.
    pub hosts: Vec<String>,
    /// Hosts allowed with some of them because their tools fetch from them (`github.com`
    /// brings `api.github.com`, …).
    pub companions: Vec<CompanionHosts>,
    /// For a profile of addresses rather than names (`open`): what it allows, in words.
    pub addresses: Option<String>,
}

/// The hosts allowed along with one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct CompanionHosts {
    pub host: String,
    pub companions: Vec<String>,
}

/// A secret this machine may give its sessions (OpenShell only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SecretOffer {
    /// The variable the sandbox sees (`GITHUB_TOKEN`).
    pub name: String,
    /// The hosts the gateway injects its value for.
    pub hosts: Vec<String>,
    /// Offered to sessions (`sandbox.secrets`).
    pub offered: bool,
    /// The key store holds its value (never the value itself); `None` when the store
    /// cannot be read.
    pub has_value: Option<bool>,
}

/// Everything Settings ▸ Sandbox offers to choose from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SandboxCatalog {
    pub profiles: Vec<ProfileInfo>,
    pub credentials: Vec<CredentialRow>,
    /// The secrets Paddock knows the hosts of, and any others the machine offers.
    pub secrets: Vec<SecretOffer>,
}

/// Whether a typed path can be granted to a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct FolderCheck {
    /// The path as asked.
    pub path: String,
    /// The folder it names, with links resolved (what the session would be granted).
    pub canonical: Option<String>,
    /// Why it cannot be granted, when it cannot.
    pub problem: Option<String>,
}

/// The key store model keys and secrets go to, and whether it works.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct KeyStoreStatus {
    /// `keychain`, `file` or `env`.
    pub kind: String,
    /// Where keys are kept, in words.
    pub description: String,
    /// Keys can be stored here (`env` is read-only).
    pub writable: bool,
    /// Why it cannot be used, with the fix (a missing or locked keychain); `None` when it
    /// works.
    pub problem: Option<String>,
}

const PROFILES: [NetworkProfileName; 3] = [
    NetworkProfileName::Strict,
    NetworkProfileName::Standard,
    NetworkProfileName::Open,
];

fn profiles(data: &sandbox_policy::SandboxData) -> Result<Vec<ProfileInfo>, HostError> {
    let mut out = Vec::new();
    for name in PROFILES {
        let profile = data
            .profile(name)
            .map_err(|e| HostError::Internal(format!("the built-in profiles: {e}")))?;
        let mut companions = Vec::new();
        for rule in &profile.hosts {
            let host = rule.pattern.to_string();
            let list = data.companions.of(&host);
            if !list.is_empty() {
                companions.push(CompanionHosts {
                    host,
                    companions: list.to_vec(),
                });
            }
        }
        out.push(ProfileInfo {
            name,
            description: profile.description.clone(),
            hosts: profile.hosts.iter().map(ToString::to_string).collect(),
            companions,
            addresses: profile.open.as_ref().map(|open| {
                let ports: Vec<String> = open.ports.iter().map(ToString::to_string).collect();
                format!(
                    "any public IPv4 address ({} ranges) on ports {}",
                    open.networks.len(),
                    ports.join(" and ")
                )
            }),
        });
    }
    Ok(out)
}

/// A key store's status: `probe` reads an account that never holds a key, which reaches the
/// store (and so finds a missing or locked keychain) without reading any key.
fn key_store_status(kind: KeyStoreKind) -> KeyStoreStatus {
    match KeyStore::open(kind) {
        Ok(store) => {
            let problem = store
                .get("paddock-status-probe")
                .err()
                .map(|e| e.to_string());
            KeyStoreStatus {
                kind: kind.to_string(),
                description: store.describe(),
                writable: kind != KeyStoreKind::Env,
                problem,
            }
        }
        Err(e) => KeyStoreStatus {
            kind: kind.to_string(),
            description: kind.to_string(),
            writable: false,
            problem: Some(e.to_string()),
        },
    }
}

impl Host {
    /// The profiles with their hosts, the credential rows and the secrets.
    pub async fn sandbox_catalog(&self) -> Result<SandboxCatalog, HostError> {
        let config = self.config();
        let data = sandbox_policy::SandboxData::builtin()
            .map_err(|e| HostError::Internal(format!("the built-in sandbox data: {e}")))?;
        let mut names = data.known_secret_names();
        for name in &config.secrets {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        let present = self.secrets_present(&names).await;
        let secrets = names
            .iter()
            .map(|name| SecretOffer {
                hosts: data
                    .known_secret(name)
                    .map(|spec| spec.hosts.iter().map(ToString::to_string).collect())
                    .unwrap_or_default(),
                offered: config.secrets.contains(name),
                has_value: present.as_ref().map(|set| set.contains(name)),
                name: name.clone(),
            })
            .collect();
        Ok(SandboxCatalog {
            profiles: profiles(&data)?,
            credentials: self.credential_rows()?,
            secrets,
        })
    }

    /// Which of `names` have a value in the key store; `None` when it cannot be read.
    async fn secrets_present(&self, names: &[String]) -> Option<Vec<String>> {
        let kind = self.config().models.key_store;
        let names = names.to_vec();
        tokio::task::spawn_blocking(move || {
            let store = KeyStore::open(kind).ok()?;
            let mut present = Vec::new();
            for name in names {
                let found = match kind {
                    KeyStoreKind::Env => std::env::var_os(&name).is_some_and(|v| !v.is_empty()),
                    _ => store.get(&wiring::secret_account(&name)).ok()?.is_some(),
                };
                if found {
                    present.push(name);
                }
            }
            Some(present)
        })
        .await
        .ok()
        .flatten()
    }

    /// Whether `path` can be granted (an absolute path of an existing folder), and the
    /// folder it resolves to.
    pub fn check_folder_path(&self, path: &str) -> FolderCheck {
        let grant = protocol::FolderGrant {
            path: path.to_owned(),
            access: protocol::FolderAccess::ReadOnly,
        };
        match crate::sessions::check_folder_grant(&grant) {
            Ok(checked) => FolderCheck {
                path: path.to_owned(),
                canonical: Some(checked.path),
                problem: None,
            },
            Err(problem) => FolderCheck {
                path: path.to_owned(),
                canonical: None,
                problem: Some(problem),
            },
        }
    }

    /// The configured key store, and whether it can be used (the fix when it cannot).
    pub async fn key_store_status(&self) -> KeyStoreStatus {
        let kind = self.config().models.key_store;
        tokio::task::spawn_blocking(move || key_store_status(kind))
            .await
            .unwrap_or_else(|e| KeyStoreStatus {
                kind: kind.to_string(),
                description: kind.to_string(),
                writable: false,
                problem: Some(format!("checking the key store failed: {e}")),
            })
    }
}
