//! The machine's resources beyond sessions: the wall's status, the audit trail (query, export,
//! verify), model providers and keys, secrets, network denials and hosts allowed on the
//! machine, and reaping what dead Paddock processes left.

use std::io::Write;

use audit_store::{AuditRecord, AuditStore, Page, Query, RecordKind, VerifyReport};
use model_client::{ApiKey, KeyNeed, KeyStore, KeyStoreKind, Message, ModelRequest};
use protocol::{MachineSandboxStatus, NetworkDenial, ProviderKind};
use serde::{Deserialize, Serialize};

use crate::error::HostError;
use crate::host::Host;
use crate::settings::SettingValue;
use crate::wiring;

/// A network connection a session's sandbox refused, with the call that hit it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct DeniedConnection {
    pub call_id: Option<String>,
    pub denial: NetworkDenial,
    /// The audit row that recorded it.
    #[cfg_attr(feature = "wire-schemas", ts(type = "number"))]
    pub audit_seq: i64,
}

/// A model provider Paddock knows, and whether this machine has its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ModelProvider {
    pub name: String,
    /// `anthropic` or `openai_compatible`.
    pub vendor: String,
    pub base_url: String,
    /// `required`, `optional` or `none`.
    pub key: String,
    /// The variable the `env` key store reads.
    pub env_variable: String,
    /// True for the provider the machine config uses.
    pub configured: bool,
    /// Whether the configured key store holds a key for it (never the key itself).
    pub has_key: bool,
}

/// What testing the model connection found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ModelCheck {
    pub ok: bool,
    pub provider: String,
    pub model: String,
    /// What happened, in plain words (never the key).
    pub detail: String,
}

/// What reaping removed, per wall.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ReapReport {
    pub reaped: Vec<String>,
    /// Walls that could not be checked, and why (reaping never fails a start).
    pub skipped: Vec<String>,
}

/// An export format of the audit trail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// One row per line with its hashes: verifiable offline.
    Jsonl,
    /// OCSF 1.3.0 events (API Activity, Network Activity).
    Ocsf,
}

fn key_need(need: KeyNeed) -> &'static str {
    match need {
        KeyNeed::Required => "required",
        KeyNeed::Optional => "optional",
        KeyNeed::None => "none",
    }
}

impl Host {
    /// Whether this machine can build the wall of `kind` (default: the configured one), with
    /// the fix for each failed check.
    pub async fn sandbox_status(
        &self,
        kind: Option<ProviderKind>,
    ) -> Result<MachineSandboxStatus, HostError> {
        let kind = kind.unwrap_or(self.config().provider);
        Ok(self.inspect_wall(kind).await?.status)
    }

    /// A read connection of the audit trail with every known secret registered, so nothing
    /// read through it (queries, exports) shows one.
    pub(crate) fn audit_reader(&self) -> Result<AuditStore, HostError> {
        let mut store = AuditStore::open(self.paths().audit_db())?;
        let secrets = self
            .inner
            .secrets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        for secret in secrets {
            store.register_secret(secret.expose_secret())?;
        }
        Ok(store)
    }

    /// One page of the audit trail, newest first (every filter of [`Query`], keyset paging).
    pub async fn audit_query(&self, query: Query) -> Result<Page, HostError> {
        let host = self.clone();
        tokio::task::spawn_blocking(move || Ok(host.audit_reader()?.query(&query)?))
            .await
            .map_err(|e| HostError::Internal(format!("the audit query: {e}")))?
    }

    /// Walks the whole chain; names the first broken row.
    pub async fn audit_verify(&self) -> Result<VerifyReport, HostError> {
        let host = self.clone();
        tokio::task::spawn_blocking(move || Ok(host.audit_reader()?.verify()?))
            .await
            .map_err(|e| HostError::Internal(format!("verifying the audit trail: {e}")))?
    }

    /// Writes the rows `query` selects (oldest first) to `out`, blocking: call it from a
    /// blocking thread (the server streams it in chunks). Returns the number of lines.
    pub fn audit_export_blocking(
        &self,
        format: ExportFormat,
        query: &Query,
        out: &mut dyn Write,
    ) -> Result<u64, HostError> {
        let store = self.audit_reader()?;
        Ok(match format {
            ExportFormat::Jsonl => store.export_jsonl(query, out)?,
            ExportFormat::Ocsf => store.export_ocsf(query, out)?,
        })
    }

    /// The connections a session's sandbox refused, newest first.
    pub async fn network_denials(
        &self,
        session_id: &str,
    ) -> Result<Vec<DeniedConnection>, HostError> {
        self.session(session_id).await?;
        let mut query = Query {
            session_id: Some(session_id.to_owned()),
            kind: Some(RecordKind::NetworkDenial),
            limit: audit_store::MAX_PAGE,
            ..Query::default()
        };
        let mut denials = Vec::new();
        loop {
            let page = self.audit_query(query.clone()).await?;
            for event in page.events {
                if let AuditRecord::NetworkDenial(record) = event.record {
                    denials.push(DeniedConnection {
                        call_id: record.call_id,
                        denial: record.denial,
                        audit_seq: event.seq,
                    });
                }
            }
            match page.next {
                Some(cursor) => query.cursor = Some(cursor),
                None => return Ok(denials),
            }
        }
    }

    /// Allows `host` on this machine (added to `sandbox.extra_hosts`, so every new session
    /// gets it) and, when `session_id` names a live session, for that session at once.
    pub async fn allow_host_on_machine(
        &self,
        host: &str,
        session_id: Option<&str>,
    ) -> Result<(), HostError> {
        agent::check_host(host).map_err(|p| HostError::invalid("host", p))?;
        let mut hosts = self.config().extra_hosts;
        if !hosts.iter().any(|h| h == host) {
            hosts.push(host.to_owned());
            self.update_settings(vec![(
                "sandbox.extra_hosts".to_owned(),
                SettingValue::List(hosts),
            )])
            .await?;
        }
        if let Some(session_id) = session_id {
            self.allow_host_for_session(session_id, host).await?;
        }
        Ok(())
    }

    /// The model providers Paddock knows, and which have a key in the configured store.
    pub async fn model_providers(&self) -> Result<Vec<ModelProvider>, HostError> {
        let config = self.config();
        let kind = config.models.key_store;
        let configured = config.models.provider.clone();
        tokio::task::spawn_blocking(move || {
            let store = KeyStore::open(kind)?;
            let mut providers = Vec::new();
            for preset in model_client::PROVIDERS {
                let has_key = match store.get(preset.name) {
                    Ok(key) => key.is_some(),
                    Err(model_client::KeyStoreError::KeychainUnavailable { .. }) => false,
                    Err(e) => return Err(HostError::KeyStore(e)),
                };
                providers.push(ModelProvider {
                    name: preset.name.to_owned(),
                    vendor: match preset.vendor {
                        model_client::Vendor::Anthropic => "anthropic".to_owned(),
                        model_client::Vendor::OpenAiCompatible => "openai_compatible".to_owned(),
                    },
                    base_url: preset.base_url.to_owned(),
                    key: key_need(preset.key).to_owned(),
                    env_variable: model_client::keys::env_variable(preset.name),
                    configured: preset.name == configured,
                    has_key,
                });
            }
            Ok(providers)
        })
        .await
        .map_err(|e| HostError::Internal(format!("listing the providers: {e}")))?
    }

    /// Stores a secret's value (offered to sessions by `sandbox.secrets`) in the key store.
    pub async fn store_secret(&self, name: &str, value: &str) -> Result<(), HostError> {
        crate::config::check_secret_name(name).map_err(|p| HostError::invalid("name", p))?;
        let config = self.config();
        if config.models.key_store == KeyStoreKind::Env {
            return Err(HostError::SecretRefused {
                name: name.to_owned(),
                reason: format!(
                    "the key store is `env` (read-only): set {name} in the environment that \
                     starts Paddock"
                ),
            });
        }
        let value = ApiKey::new(value).map_err(|e| HostError::invalid("value", e.to_string()))?;
        let account = wiring::secret_account(name);
        let kind = config.models.key_store;
        let stored = value.clone();
        tokio::task::spawn_blocking(move || KeyStore::open(kind)?.set(&account, &stored))
            .await
            .map_err(|e| HostError::Internal(format!("storing the secret: {e}")))??;
        self.register_secret(value).await
    }

    /// Tests the configured model connection with a one-token request. The answer says what
    /// happened, never the key.
    pub async fn test_model(&self) -> ModelCheck {
        let config = self.config();
        let provider = config.models.provider.clone();
        let model_name = config.models.model.clone();
        let check = |ok: bool, detail: String| ModelCheck {
            ok,
            provider: provider.clone(),
            model: model_name.clone(),
            detail,
        };
        let client = match self.model().await {
            Ok(client) => client,
            Err(e) => return check(false, e.to_string()),
        };
        let request = ModelRequest::new(
            model_name.clone(),
            vec![Message::user_text("Reply with: ok")],
            1,
        );
        let cancel = tokio_util::sync::CancellationToken::new();
        let answer = async {
            use futures::StreamExt as _;
            let mut stream = client.stream(request, cancel).await?;
            while let Some(event) = stream.next().await {
                event?;
            }
            Ok::<_, model_client::ModelError>(())
        };
        match answer.await {
            Ok(()) => check(true, format!("the `{model_name}` model answered")),
            Err(e) => check(false, e.to_string()),
        }
    }

    /// Removes sandboxes that dead Paddock processes of this machine left (both walls):
    /// a sandbox whose session a live process holds is never touched. Unusable walls are
    /// reported, not fatal.
    pub async fn reap_orphans(&self) -> ReapReport {
        let mut report = ReapReport::default();
        let config = self.config();
        let mut kinds = vec![ProviderKind::Local];
        if config.openshell_gateway.is_some() && config.openshell_image.is_some() {
            kinds.push(ProviderKind::Openshell);
        }
        for kind in kinds {
            let provider = match self.provider(kind) {
                Ok(provider) => provider,
                Err(e) => {
                    report.skipped.push(format!("{}: {e}", kind.as_str()));
                    continue;
                }
            };
            match provider.reap_orphans(&self.inner.leases).await {
                Ok(reaped) => report.reaped.extend(reaped),
                Err(e) => report.skipped.push(format!("{}: {e}", kind.as_str())),
            }
        }
        self.inner.leases.sweep();
        report
    }
}
