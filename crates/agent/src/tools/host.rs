//! Tools that run in the host process (connectors: MCP servers, web fetch, …). A host tool's
//! calls pass the same approval gate and audit trail as sandbox calls, recorded with
//! enforcement `host`. A [`HostToolSource`] offers tools whose list may change while a session
//! runs (an MCP server announcing a new list); it is read before every model request.

use std::sync::Arc;

use async_trait::async_trait;
use model_client::ToolSpec;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ToolEffect;

/// What a host tool returns to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostToolOutput {
    /// The result text the model reads.
    pub text: String,
    /// True when the tool reports a failure (the model is told it failed).
    pub is_error: bool,
}

/// Why a host tool call could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostToolError {
    #[error("cancelled")]
    Cancelled,
    #[error("{0}")]
    Failed(String),
}

/// A tool that runs in the host process. It holds whatever it needs (a connection, a key);
/// the agent gives it only the model's input.
#[async_trait]
pub trait HostTool: Send + Sync {
    /// Runs one call. Ends with [`HostToolError::Cancelled`] soon after `cancel` fires.
    async fn call(
        &self,
        input: &Value,
        cancel: &CancellationToken,
    ) -> Result<HostToolOutput, HostToolError>;

    /// Whether a `session` or `always` approval may answer this tool's calls. A destructive
    /// tool says no: each call is approved `once`.
    fn lasting_approvals(&self) -> bool {
        true
    }
}

/// One tool a [`HostToolSource`] offers now.
#[derive(Clone)]
pub struct HostToolEntry {
    pub spec: ToolSpec,
    pub effect: ToolEffect,
    pub tool: Arc<dyn HostTool>,
}

impl std::fmt::Debug for HostToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostToolEntry")
            .field("spec", &self.spec)
            .field("effect", &self.effect)
            .finish_non_exhaustive()
    }
}

/// Host tools whose list can change while a session runs. Read before every model request
/// (the specs sent) and when a call is prepared (the tool run).
pub trait HostToolSource: Send + Sync {
    /// The tools offered now.
    fn tools(&self) -> Vec<HostToolEntry>;

    /// The tool offered now under `name`, if any: what [`HostToolSource::tools`] would list
    /// under that name. Every call looks its tool up; a source with many tools answers this
    /// without building the whole list.
    fn tool(&self, name: &str) -> Option<HostToolEntry> {
        self.tools().into_iter().find(|e| e.spec.name == name)
    }

    /// Lines added to the system prompt (a connector that could not start, …).
    fn notices(&self) -> Vec<String> {
        Vec::new()
    }

    /// The session's settings changed (a folder granted or revoked, a host allowed): a
    /// source whose tools depend on them (what `web_fetch` may reach) takes the new ones.
    fn settings_changed(&self, settings: &protocol::SessionSettings) {
        let _ = settings;
    }
}
