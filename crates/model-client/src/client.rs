//! The one trait the agent talks to, and the default `complete` built on `stream`.

use std::pin::Pin;

use async_trait::async_trait;
use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::types::{ContentBlock, ModelEvent, ModelRequest, ModelResponse, Usage, Vendor};

/// A streamed response: events in order, ending with [`ModelEvent::MessageStop`] or with one
/// error (after which the stream yields nothing more).
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send>>;

/// A model API. `stream` is the one required method; `complete` collects it.
///
/// Cancelling `cancel` aborts the request: before the response starts it resolves to
/// [`ModelError::Cancelled`]; during the stream the next item is that error and the
/// connection is dropped at once (whether or not the stream is being polled).
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Which wire format this client speaks.
    fn vendor(&self) -> Vendor;

    /// Sends `request` and returns its events as they arrive. Transient failures (429, 5xx,
    /// 529, connection errors, timeouts) are retried with backoff, but only until the
    /// response body starts: a stream that has begun is never replayed.
    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelStream, ModelError>;

    /// Sends `request` and collects the whole response.
    async fn complete(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        collect_response(self.stream(request, cancel).await?).await
    }
}

/// Collects a stream into a response: consecutive text deltas form one text block, each
/// completed tool call one tool-use block. A tool call whose arguments are not a JSON object
/// fails the collection with [`ModelError::InvalidToolInput`].
pub async fn collect_response(mut stream: ModelStream) -> Result<ModelResponse, ModelError> {
    let mut content: Vec<ContentBlock> = Vec::new();
    let mut usage = Usage::default();
    while let Some(event) = stream.next().await {
        match event? {
            ModelEvent::TextDelta { text } => match content.last_mut() {
                Some(ContentBlock::Text { text: last }) => last.push_str(&text),
                _ => content.push(ContentBlock::Text { text }),
            },
            ModelEvent::ToolCallComplete { id, name, input } => match input {
                Ok(input) => content.push(ContentBlock::ToolUse { id, name, input }),
                // A response has no place for unparsed arguments; callers that answer them
                // (and let the model retry) read the stream instead.
                Err(invalid) => {
                    return Err(ModelError::InvalidToolInput {
                        id,
                        name,
                        message: invalid.error,
                    });
                }
            },
            ModelEvent::Usage(latest) => usage = latest,
            ModelEvent::MessageStop { stop_reason } => {
                return Ok(ModelResponse {
                    content,
                    stop_reason,
                    usage,
                });
            }
            ModelEvent::ToolCallStarted { .. } | ModelEvent::ToolCallInputDelta { .. } => {}
        }
    }
    Err(ModelError::protocol(
        "the stream ended without a message stop event",
    ))
}
