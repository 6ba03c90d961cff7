//! Tools that run in the host process (connectors: MCP servers, web fetch, …). No connector
//! exists yet; this is the placement they plug into. A host tool's calls pass the same
//! approval gate and audit trail as sandbox calls, recorded with enforcement `host`.

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

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
}
