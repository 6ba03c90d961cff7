//! Model keys: which store holds them and whether each provider has one (never the key
//! itself), storing one after the provider's API accepted it, deleting one, and testing the
//! stored one. A test is one authenticated GET that spends no tokens
//! (`model_client::check_key`).

use std::time::Duration;

use model_client::{
    ApiKey, ClientConfig, KeyNeed, KeyStore, KeyStoreError, KeyStoreKind, ModelError, Vendor,
};
use serde::{Deserialize, Serialize};

use crate::error::HostError;
use crate::host::Host;

/// How long a key test waits for the API's answer (local servers may be loading a model).
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// Where keys live on this machine and which providers have one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct KeyStatus {
    /// `keychain`, `file` or `env` (the `models.key_store` setting).
    pub store: String,
    /// Which store, where, and whether it can work here, in one line.
    pub description: String,
    /// False when the store cannot be used here (e.g. no keychain on a headless machine).
    pub usable: bool,
    /// Why it cannot, with the fix.
    pub problem: Option<String>,
    pub providers: Vec<ProviderKey>,
}

/// One provider's key, as far as the store tells (never the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ProviderKey {
    pub provider: String,
    /// The provider the machine config uses.
    pub configured: bool,
    /// `required`, `optional` or `none`.
    pub need: String,
    pub present: bool,
    /// The variable the `env` store reads.
    pub env_variable: String,
}

/// What testing a key against its provider's API found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct KeyCheck {
    pub provider: String,
    /// The API accepted the key (or, for a provider without keys, answered).
    pub ok: bool,
    /// What was asked and what happened, in plain words (never the key).
    pub detail: String,
}

/// A key was stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct KeySaved {
    pub provider: String,
    /// The store it went to, described.
    pub store: String,
    /// The test made before storing (`None` when it was skipped). A key the API refused is
    /// never stored; one the API could not be asked about is stored with `ok: false`.
    pub check: Option<KeyCheck>,
}

/// Where and how a provider's key is tested.
struct KeyTarget {
    vendor: Vendor,
    base_url: String,
    path: &'static str,
    need: KeyNeed,
}

fn need_name(need: KeyNeed) -> &'static str {
    match need {
        KeyNeed::Required => "required",
        KeyNeed::Optional => "optional",
        KeyNeed::None => "none",
    }
}

fn store_error(error: KeyStoreError) -> HostError {
    HostError::KeyStore(error)
}

impl Host {
    /// The provider `provider` as keys see it: the configured one (its base URL and vendor
    /// from the config) or a known preset; anything else is refused naming the choices.
    fn key_target(&self, provider: &str) -> Result<KeyTarget, HostError> {
        let models = self.config().models;
        let preset = model_client::preset(provider);
        if provider == models.provider {
            return Ok(KeyTarget {
                vendor: models.vendor,
                base_url: models.base_url,
                path: preset.map_or(model_client::default_key_check_path(models.vendor), |p| {
                    p.key_check_path
                }),
                need: preset.map_or(KeyNeed::Optional, |p| p.key),
            });
        }
        match preset {
            Some(preset) => Ok(KeyTarget {
                vendor: preset.vendor,
                base_url: preset.base_url.to_owned(),
                path: preset.key_check_path,
                need: preset.key,
            }),
            None => {
                let known: Vec<&str> = model_client::PROVIDERS.iter().map(|p| p.name).collect();
                Err(HostError::invalid(
                    "provider",
                    format!(
                        "`{}` is not a provider Paddock knows ({}) nor the configured one (`{}`)",
                        provider.chars().take(80).collect::<String>(),
                        known.join(", "),
                        models.provider
                    ),
                ))
            }
        }
    }

    /// Refuses a provider name keys cannot be about (not a preset, not the configured one),
    /// naming the choices.
    pub fn check_key_provider(&self, provider: &str) -> Result<(), HostError> {
        self.key_target(provider).map(|_| ())
    }

    /// Which store holds keys, whether it works here, and which providers have a key.
    pub async fn key_status(&self) -> KeyStatus {
        let models = self.config().models;
        let kind = models.key_store;
        let configured = models.provider.clone();
        let mut names: Vec<String> = model_client::PROVIDERS
            .iter()
            .map(|p| p.name.to_owned())
            .collect();
        if !names.contains(&configured) {
            names.insert(0, configured.clone());
        }
        let looked_up = tokio::task::spawn_blocking(move || {
            let store = match KeyStore::open(kind) {
                Ok(store) => store,
                Err(e) => return (kind.to_string(), Err(e.to_string()), Vec::new()),
            };
            let mut present = Vec::new();
            let mut problem = None;
            for name in &names {
                match store.get(name) {
                    Ok(key) => present.push((name.clone(), key.is_some())),
                    Err(e) => {
                        problem.get_or_insert_with(|| e.to_string());
                        present.push((name.clone(), false));
                    }
                }
            }
            (store.describe(), problem.map_or(Ok(()), Err), present)
        })
        .await;
        let (description, problem, present) = match looked_up {
            Ok(found) => found,
            Err(e) => (
                kind.to_string(),
                Err(format!("reading the key store: {e}")),
                Vec::new(),
            ),
        };
        let providers = present
            .into_iter()
            .map(|(provider, present)| {
                let need = model_client::preset(&provider).map_or(KeyNeed::Optional, |p| p.key);
                ProviderKey {
                    configured: provider == configured,
                    need: need_name(need).to_owned(),
                    env_variable: model_client::keys::env_variable(&provider),
                    provider,
                    present,
                }
            })
            .collect();
        KeyStatus {
            store: kind.to_string(),
            description,
            usable: problem.is_ok(),
            problem: problem.err(),
            providers,
        }
    }

    /// Tests `key` against `target` with one authenticated GET; the flag is true when the API
    /// refused the key (as opposed to not answering).
    async fn check_key_against(
        &self,
        provider: &str,
        target: &KeyTarget,
        key: Option<ApiKey>,
    ) -> (KeyCheck, bool) {
        let mut client = ClientConfig::new(target.base_url.clone(), key);
        client.extra_ca_file = self.config().models.extra_ca_file;
        client.timeouts.first_byte = CHECK_TIMEOUT;
        let url = format!("{}{}", target.base_url.trim_end_matches('/'), target.path);
        let result = model_client::check_key(target.vendor, &client, target.path).await;
        let refused = matches!(result, Err(ModelError::Auth { .. }));
        let check = KeyCheck {
            provider: provider.to_owned(),
            ok: result.is_ok(),
            detail: match result {
                Ok(()) => format!("GET {url} was answered: the key works"),
                Err(ModelError::Auth { status, message }) => {
                    format!("GET {url} refused the key (HTTP {status}): {message}")
                }
                Err(e) => format!("GET {url} could not tell: {e}"),
            },
        };
        (check, refused)
    }

    /// Stores `key` for `provider` in the configured key store. With `check`, the provider's
    /// API is asked first: a key it refuses is not stored (the previous one stays) and is
    /// [`HostError::KeyRefused`]; one it could not be asked about is stored with the check's
    /// failure reported. The `env` store is read-only and says which variable to set. The
    /// key is registered for redaction at once.
    pub async fn set_model_key(
        &self,
        provider: &str,
        key: &str,
        check: bool,
    ) -> Result<KeySaved, HostError> {
        let target = self.key_target(provider)?;
        if target.need == KeyNeed::None {
            return Err(HostError::invalid(
                "provider",
                format!("`{provider}` takes no API key (a local server)"),
            ));
        }
        let key = ApiKey::new(key).map_err(|e| HostError::invalid("key", e.to_string()))?;
        if key.expose_secret().chars().count() < audit_store::MIN_SECRET_LEN {
            return Err(HostError::invalid(
                "key",
                format!(
                    "the key is shorter than {} characters; an API key is longer (was it cut \
                     when pasted?)",
                    audit_store::MIN_SECRET_LEN
                ),
            ));
        }
        self.register_secret(key.clone()).await?;
        let kind = self.config().models.key_store;
        if kind == KeyStoreKind::Env {
            return Err(store_error(KeyStoreError::ReadOnly {
                variable: model_client::keys::env_variable(provider),
            }));
        }
        let checked = if check {
            let (result, refused) = self
                .check_key_against(provider, &target, Some(key.clone()))
                .await;
            if refused {
                return Err(HostError::KeyRefused {
                    provider: provider.to_owned(),
                    detail: result.detail,
                });
            }
            Some(result)
        } else {
            None
        };
        let account = provider.to_owned();
        let description = tokio::task::spawn_blocking(move || {
            let store = KeyStore::open(kind)?;
            store.set(&account, &key)?;
            Ok::<_, KeyStoreError>(store.describe())
        })
        .await
        .map_err(|e| HostError::Internal(format!("storing the key: {e}")))?
        .map_err(store_error)?;
        // The next session builds a client with the new key.
        *self.inner.model.lock().await = None;
        Ok(KeySaved {
            provider: provider.to_owned(),
            store: description,
            check: checked,
        })
    }

    /// Removes `provider`'s key from the configured store; `false` when there was none.
    pub async fn delete_model_key(&self, provider: &str) -> Result<bool, HostError> {
        self.key_target(provider)?;
        let kind = self.config().models.key_store;
        let account = provider.to_owned();
        let deleted = tokio::task::spawn_blocking(move || KeyStore::open(kind)?.delete(&account))
            .await
            .map_err(|e| HostError::Internal(format!("deleting the key: {e}")))?
            .map_err(store_error)?;
        *self.inner.model.lock().await = None;
        Ok(deleted)
    }

    /// Tests the stored key of `provider` against its API (one authenticated GET). No key
    /// where one is needed is [`HostError::ModelKeyMissing`], saying how to add one.
    pub async fn test_model_key(&self, provider: &str) -> Result<KeyCheck, HostError> {
        let target = self.key_target(provider)?;
        let kind = self.config().models.key_store;
        let account = provider.to_owned();
        let (key, described) = tokio::task::spawn_blocking(move || {
            let store = KeyStore::open(kind)?;
            Ok::<_, KeyStoreError>((store.get(&account)?, store.describe()))
        })
        .await
        .map_err(|e| HostError::Internal(format!("reading the key: {e}")))?
        .map_err(store_error)?;
        if key.is_none() && target.need == KeyNeed::Required {
            return Err(HostError::ModelKeyMissing {
                provider: provider.to_owned(),
                how: crate::wiring::how_to_add_key(provider, kind, &described),
            });
        }
        Ok(self.check_key_against(provider, &target, key).await.0)
    }
}
