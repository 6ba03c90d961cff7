//! Shared fixtures: a fake key, fast timeouts and retries, requests, event collection.

use std::time::Duration;

use futures::StreamExt;
use model_client::{
    ApiKey, ClientConfig, ContentBlock, Message, ModelError, ModelEvent, ModelRequest, ModelStream,
    RetryPolicy, Role, Timeouts, ToolSpec,
};
use serde_json::json;

/// The key the tests send; no error text may ever contain it.
pub const KEY: &str = "sk-test-0123456789-abcdefghij-SECRET";

pub fn key() -> ApiKey {
    ApiKey::new(KEY).unwrap()
}

/// Short waits so failure paths run in milliseconds.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        max_retry_after: Duration::from_secs(5),
    }
}

pub fn config(base_url: String) -> ClientConfig {
    ClientConfig {
        base_url,
        api_key: Some(key()),
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            first_byte: Duration::from_secs(10),
            idle: Duration::from_secs(10),
        },
        retry: fast_retry(),
        extra_ca_file: None,
    }
}

pub fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".to_owned(),
        description: "Reads a file of the workspace.".to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": { "path": { "type": "string" } },
            "required": ["path"],
        }),
    }
}

pub fn list_dir_tool() -> ToolSpec {
    ToolSpec {
        name: "list_dir".to_owned(),
        description: "Lists a folder.".to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": { "path": { "type": "string" } },
        }),
    }
}

/// One user message, a system prompt and two tools.
pub fn request() -> ModelRequest {
    let mut request = ModelRequest::new("test-model", vec![Message::user_text("Hi there")], 256);
    request.system = Some("You are a careful assistant.".to_owned());
    request.tools = vec![read_file_tool(), list_dir_tool()];
    request
}

/// A conversation whose last turn answers two tool calls (one failed).
pub fn request_with_tool_results() -> ModelRequest {
    let mut request = request();
    request.messages = vec![
        Message::user_text("What is in a.txt and in the folder?"),
        Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::text("Let me look."),
                ContentBlock::ToolUse {
                    id: "toolu_1".to_owned(),
                    name: "read_file".to_owned(),
                    input: json!({ "path": "a.txt" }),
                },
                ContentBlock::ToolUse {
                    id: "toolu_2".to_owned(),
                    name: "list_dir".to_owned(),
                    input: json!({ "path": "." }),
                },
            ],
        },
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_1".to_owned(),
                    content: "hello".to_owned(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_2".to_owned(),
                    content: "permission denied".to_owned(),
                    is_error: true,
                },
            ],
        },
    ];
    request
}

/// Every item of a stream: the events, then the error that ended it (if any).
pub async fn drain(mut stream: ModelStream) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => {
                assert!(
                    stream.next().await.is_none(),
                    "a stream must end after its error"
                );
                return (events, Some(error));
            }
        }
    }
    (events, None)
}

/// Asserts that neither the Display nor the Debug form of `error` holds the key.
pub fn assert_no_key(error: &ModelError) {
    let text = format!("{error} {error:?}");
    assert!(!text.contains(KEY), "the key leaked into an error: {text}");
}

/// The reply every HTTPS and proxy turn is scripted with.
pub fn greeting_reply() -> test_support::model_server::Reply {
    use test_support::model_server::{Reply, sse};
    Reply::stream([sse::text(GREETING), sse::usage(9, 3), sse::stop("end_turn")])
}

pub const GREETING: &str = "Hello over TLS";

/// Streams one turn and asserts it is exactly [`greeting_reply`].
pub async fn assert_greeting_turn(client: &dyn model_client::ModelClient) {
    let stream = client
        .stream(request(), model_client::CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta {
                text: GREETING.to_owned()
            },
            ModelEvent::Usage(model_client::Usage {
                input_tokens: 9,
                output_tokens: 3,
                ..model_client::Usage::default()
            }),
            ModelEvent::MessageStop {
                stop_reason: model_client::StopReason::EndTurn
            },
        ]
    );
}

/// Writes `pem` to `ca.pem` in a fresh folder (kept alive by the returned guard).
pub fn ca_file(pem: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("ca.pem");
    std::fs::write(&path, pem).unwrap();
    (folder, path)
}
