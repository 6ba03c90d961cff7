//! API keys: a redacting wrapper and the stores they live in.
//!
//! A key comes from exactly one store, chosen in the settings as `key_store = "keychain" |
//! "file" | "env"`; never from a config file. When the chosen store cannot work (a headless
//! server has no keychain) the error says so and names the fix; there is no silent fallback.
//!
//! Store calls block (the keychain is a D-Bus round trip): from async code, call them through
//! `tokio::task::spawn_blocking`.

mod api_key;
mod environment;
mod file;
mod keychain;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use api_key::{ApiKey, InvalidApiKey};
pub use environment::Environment;

use file::FileStore;
use keychain::KeychainStore;

/// The keychain service name under which every provider's key is stored.
pub const KEYCHAIN_SERVICE: &str = "paddock";

/// Which store holds the keys (the `key_store` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyStoreKind {
    /// The OS keychain (secret service over the D-Bus session bus on Linux).
    Keychain,
    /// An owner-only file, `$XDG_STATE_HOME/paddock/secrets.toml`.
    File,
    /// Read-only: `<PROVIDER>_API_KEY` environment variables.
    Env,
}

impl fmt::Display for KeyStoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Keychain => "keychain",
            Self::File => "file",
            Self::Env => "env",
        })
    }
}

impl FromStr for KeyStoreKind {
    type Err = KeyStoreError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "keychain" => Ok(Self::Keychain),
            "file" => Ok(Self::File),
            "env" => Ok(Self::Env),
            other => Err(KeyStoreError::UnknownKind {
                value: other.to_owned(),
            }),
        }
    }
}

/// What went wrong reading or writing a key. No variant holds a key or a file's contents.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyStoreError {
    #[error(
        "the OS keychain is unavailable: {reason}. Paddock does not fall back to another store \
         on its own: run it in a desktop session with a secret service (e.g. gnome-keyring), \
         or choose another store in the settings: key_store = \"file\" (an owner-only file in \
         the XDG state folder) or key_store = \"env\" (keys from <PROVIDER>_API_KEY variables)"
    )]
    KeychainUnavailable { reason: String },
    #[error("the OS keychain failed for account `{account}`: {message}")]
    Keychain { account: String, message: String },
    #[error(
        "refusing to use {path}: its permissions are {mode:04o}, wider than {expected:04o} \
         (other users could read the keys); fix it with `chmod {expected:o} {path}`"
    )]
    InsecurePermissions {
        path: PathBuf,
        mode: u32,
        expected: u32,
    },
    #[error("refusing to use {path}: {reason}")]
    UnsafeFile { path: PathBuf, reason: String },
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the secrets file {path} is not valid TOML (near line {line}); expected a [keys] table \
         of provider = \"key\" lines"
    )]
    Malformed { path: PathBuf, line: usize },
    #[error(
        "the env key store is read-only: set {variable} in the environment that starts Paddock, \
         or choose key_store = \"file\" or \"keychain\" in config.toml to store keys"
    )]
    ReadOnly { variable: String },
    #[error(
        "no folder for the secrets file: neither XDG_STATE_HOME nor HOME is set (set one, or \
         choose key_store = \"keychain\" or \"env\")"
    )]
    NoStateFolder,
    #[error(
        "`{name}` is not a provider name: use 1 to 64 lowercase letters, digits, `-` or `_`, \
         starting with a letter or digit"
    )]
    InvalidProvider { name: String },
    #[error("the key stored for `{provider}` is unusable: {reason}")]
    InvalidStoredKey {
        provider: String,
        reason: InvalidApiKey,
    },
    #[error("unknown key store `{value}`: use \"keychain\", \"file\" or \"env\"")]
    UnknownKind { value: String },
}

/// Where keys are read and written.
#[derive(Debug)]
pub struct KeyStore {
    backend: Backend,
}

#[derive(Debug)]
enum Backend {
    Keychain(KeychainStore),
    File(FileStore),
    Env(Environment),
}

impl KeyStore {
    /// The store the settings chose, with this process's environment.
    pub fn open(kind: KeyStoreKind) -> Result<Self, KeyStoreError> {
        Self::open_with(kind, Environment::process())
    }

    /// The store the settings chose, reading variables from `environment`.
    pub fn open_with(kind: KeyStoreKind, environment: Environment) -> Result<Self, KeyStoreError> {
        let backend = match kind {
            KeyStoreKind::Keychain => Backend::Keychain(KeychainStore::new(environment)),
            KeyStoreKind::File => Backend::File(FileStore::new(file::default_path(&environment)?)),
            KeyStoreKind::Env => Backend::Env(environment),
        };
        Ok(Self { backend })
    }

    /// A file store at an explicit path (the folder holding it must be owner-only).
    pub fn file_at(path: impl Into<PathBuf>) -> Self {
        Self {
            backend: Backend::File(FileStore::new(path.into())),
        }
    }

    pub fn kind(&self) -> KeyStoreKind {
        match self.backend {
            Backend::Keychain(_) => KeyStoreKind::Keychain,
            Backend::File(_) => KeyStoreKind::File,
            Backend::Env(_) => KeyStoreKind::Env,
        }
    }

    /// The key of `provider`, or `None` if the store has none.
    pub fn get(&self, provider: &str) -> Result<Option<ApiKey>, KeyStoreError> {
        check_provider(provider)?;
        let raw = match &self.backend {
            Backend::Keychain(store) => store.get(provider)?,
            Backend::File(store) => store.get(provider)?,
            Backend::Env(environment) => environment.get(&env_variable(provider)),
        };
        raw.map(|value| {
            ApiKey::new(value).map_err(|reason| KeyStoreError::InvalidStoredKey {
                provider: provider.to_owned(),
                reason,
            })
        })
        .transpose()
    }

    /// Stores `key` for `provider`, replacing any previous one.
    pub fn set(&self, provider: &str, key: &ApiKey) -> Result<(), KeyStoreError> {
        check_provider(provider)?;
        match &self.backend {
            Backend::Keychain(store) => store.set(provider, key),
            Backend::File(store) => store.set(provider, key),
            Backend::Env(_) => Err(KeyStoreError::ReadOnly {
                variable: env_variable(provider),
            }),
        }
    }

    /// Removes the key of `provider`; returns whether there was one.
    pub fn delete(&self, provider: &str) -> Result<bool, KeyStoreError> {
        check_provider(provider)?;
        match &self.backend {
            Backend::Keychain(store) => store.delete(provider),
            Backend::File(store) => store.delete(provider),
            Backend::Env(_) => Err(KeyStoreError::ReadOnly {
                variable: env_variable(provider),
            }),
        }
    }

    /// One line for status output: which store, where, and whether it can work here.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Keychain(store) => store.describe(),
            Backend::File(store) => format!(
                "file: {} (owner-only: folder 0700, file 0600)",
                store.path().display()
            ),
            Backend::Env(_) => "env: read-only, keys from <PROVIDER>_API_KEY variables \
                 (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY)"
                .to_owned(),
        }
    }

    /// The file a file store uses; `None` for other stores.
    pub fn file_path(&self) -> Option<&Path> {
        match &self.backend {
            Backend::File(store) => Some(store.path()),
            _ => None,
        }
    }
}

/// The environment variable holding `provider`'s key in the env store: `openrouter` →
/// `OPENROUTER_API_KEY`.
pub fn env_variable(provider: &str) -> String {
    format!(
        "{}_API_KEY",
        provider.to_ascii_uppercase().replace('-', "_")
    )
}

fn check_provider(name: &str) -> Result<(), KeyStoreError> {
    let valid = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if valid {
        Ok(())
    } else {
        Err(KeyStoreError::InvalidProvider {
            name: name.chars().take(80).collect(),
        })
    }
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
