//! The machine's connectors: one supervised [`Connector`] per `[[connectors]]` entry, kept in
//! step with the config (an edited entry's server is stopped and started anew when next
//! needed), a one-off test of an entry, and shutdown with the host.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

use crate::config::ConnectorConfig;
use crate::error::ConnectorError;
use crate::mcp;
use crate::secret::Secret;
use crate::supervisor::{Connector, ConnectorTool, SupervisorOptions, TokenSource};

/// What a test of a connector found.
#[derive(Debug, Clone)]
pub struct TestReport {
    pub ok: bool,
    /// What happened, in one or a few lines (no token).
    pub detail: String,
    pub tools: Vec<ConnectorTool>,
}

/// Every configured connector.
pub struct ConnectorSet {
    connectors: Mutex<BTreeMap<String, Arc<Connector>>>,
    tokens: TokenSource,
    on_token: Arc<dyn Fn(&Secret) + Send + Sync>,
    options: SupervisorOptions,
}

impl std::fmt::Debug for ConnectorSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectorSet")
            .field("connectors", &self.names())
            .finish_non_exhaustive()
    }
}

impl ConnectorSet {
    /// `tokens` reads a connector's token from the key store; `on_token` sees each token
    /// before it is used (the host registers it with its redactor).
    pub fn new(
        tokens: TokenSource,
        on_token: Arc<dyn Fn(&Secret) + Send + Sync>,
        options: SupervisorOptions,
    ) -> Self {
        Self {
            connectors: Mutex::new(BTreeMap::new()),
            tokens,
            on_token,
            options,
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Connector>>> {
        self.connectors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn build(&self, config: ConnectorConfig) -> Arc<Connector> {
        Connector::new(
            config,
            Arc::clone(&self.tokens),
            Arc::clone(&self.on_token),
            self.options,
        )
    }

    /// Brings the set in line with `configs`: new entries join, removed ones are stopped,
    /// changed ones are stopped and replaced (started again when next needed). Unchanged
    /// entries keep their running server.
    pub async fn sync(&self, configs: &[ConnectorConfig]) {
        let mut retired = Vec::new();
        {
            let mut map = self.map();
            let wanted: BTreeMap<&str, &ConnectorConfig> =
                configs.iter().map(|c| (c.name.as_str(), c)).collect();
            let names: Vec<String> = map.keys().cloned().collect();
            for name in names {
                let keep = wanted
                    .get(name.as_str())
                    .is_some_and(|c| *c == map[&name].config());
                if !keep && let Some(old) = map.remove(&name) {
                    retired.push(old);
                }
            }
            for config in configs {
                if !map.contains_key(&config.name) {
                    map.insert(config.name.clone(), self.build(config.clone()));
                }
            }
        }
        for connector in retired {
            connector.stop().await;
        }
    }

    pub fn names(&self) -> Vec<String> {
        self.map().keys().cloned().collect()
    }

    pub fn get(&self, name: &str) -> Result<Arc<Connector>, ConnectorError> {
        self.map()
            .get(name)
            .cloned()
            .ok_or_else(|| ConnectorError::NotFound(name.to_owned()))
    }

    pub fn all(&self) -> Vec<Arc<Connector>> {
        self.map().values().cloned().collect()
    }

    /// Starts every enabled connector that is not running; returns the ones that could not
    /// start, with why.
    pub async fn start_enabled(&self) -> Vec<(String, ConnectorError)> {
        let mut failed = Vec::new();
        let enabled: Vec<Arc<Connector>> = self
            .all()
            .into_iter()
            .filter(|c| c.config().enabled)
            .collect();
        let starts = enabled
            .iter()
            .map(|c| async move { (c, c.ensure_started().await) });
        for (connector, result) in futures::future::join_all(starts).await {
            if let Err(e) = result {
                failed.push((connector.name().to_owned(), e));
            }
        }
        failed
    }

    /// Starts `config` apart from the supervised connectors, lists its tools and stops it.
    pub async fn test(&self, config: &ConnectorConfig) -> TestReport {
        let probe = self.build(ConnectorConfig {
            enabled: true,
            ..config.clone()
        });
        let result = probe.ensure_started().await;
        let tools = probe.tools();
        probe.stop().await;
        match result {
            Ok(()) => TestReport {
                ok: true,
                detail: format!("the server started and lists {} tools", tools.len()),
                tools,
            },
            Err(e) => TestReport {
                ok: false,
                detail: e.to_string(),
                tools,
            },
        }
    }

    /// Stops every connector's server (the host is shutting down).
    pub async fn shutdown(&self) {
        let all: Vec<Arc<Connector>> = std::mem::take(&mut *self.map()).into_values().collect();
        futures::future::join_all(all.iter().map(|c| c.stop())).await;
    }
}

/// A direct client of one server, without supervision, approvals or audit: the baseline the
/// overhead benchmark measures the host's path against, and a tool for tests.
pub struct DirectClient {
    connection: mcp::Connection,
}

impl DirectClient {
    pub async fn connect(
        config: &ConnectorConfig,
        secret: Option<&Secret>,
    ) -> Result<Self, ConnectorError> {
        let connection = mcp::connect(
            config,
            secret,
            Arc::new(Notify::new()),
            SupervisorOptions::default().startup_timeout,
        )
        .await?;
        Ok(Self { connection })
    }

    pub async fn call(
        &self,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Result<mcp::CallOutcome, ConnectorError> {
        mcp::call_tool(&self.connection.peer, tool, arguments).await
    }

    pub async fn tools(&self) -> Result<Vec<mcp::ListedTool>, ConnectorError> {
        mcp::list_tools(&self.connection.peer).await
    }

    pub fn pid(&self) -> Option<u32> {
        self.connection.pid
    }

    pub async fn close(mut self) {
        self.connection.close().await;
    }
}
