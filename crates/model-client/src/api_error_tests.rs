use super::*;
use pretty_assertions::assert_eq;

#[test]
fn anthropic_error_body_is_read() {
    let body = r#"{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}"#;
    assert_eq!(
        from_status(404, body, None),
        ModelError::BadRequest {
            status: 404,
            message: "not_found_error: model: nope".to_owned()
        }
    );
}

#[test]
fn openai_context_length_code_maps_to_context_too_long() {
    let body = r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    assert!(matches!(
        from_status(400, body, None),
        ModelError::ContextTooLong { message } if message.contains("8192")
    ));
}

#[test]
fn anthropic_prompt_too_long_message_maps_to_context_too_long() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
    assert!(matches!(
        from_status(400, body, None),
        ModelError::ContextTooLong { .. }
    ));
}

#[test]
fn plain_text_and_string_errors_keep_their_text() {
    assert_eq!(
        from_status(502, "Bad Gateway\n", None),
        ModelError::Server {
            status: Some(502),
            message: "Bad Gateway".to_owned()
        }
    );
    assert_eq!(
        from_status(404, r#"{"error":"model 'llama9' not found"}"#, None),
        ModelError::BadRequest {
            status: 404,
            message: "model 'llama9' not found".to_owned()
        }
    );
}

#[test]
fn statuses_map_to_their_variants() {
    let retry_after = Some(Duration::from_secs(2));
    assert!(matches!(
        from_status(401, "{}", None),
        ModelError::Auth { status: 401, .. }
    ));
    assert!(matches!(
        from_status(429, "{}", retry_after),
        ModelError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(2)
    ));
    assert!(matches!(
        from_status(529, "{}", None),
        ModelError::Overloaded { .. }
    ));
    assert!(matches!(
        from_status(
            503,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            None
        ),
        ModelError::Overloaded { .. }
    ));
    assert!(matches!(
        from_status(413, "{}", None),
        ModelError::ContextTooLong { .. }
    ));
    assert!(matches!(
        from_status(500, "{}", None),
        ModelError::Server {
            status: Some(500),
            ..
        }
    ));
}

#[test]
fn long_messages_are_shortened() {
    let body = "x".repeat(10_000);
    let ModelError::Server { message, .. } = from_status(500, &body, None) else {
        panic!("expected a server error");
    };
    assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS + 1);
}

#[test]
fn stream_errors_map_by_kind() {
    let vendor = |kind: &str| VendorError {
        kind: Some(kind.to_owned()),
        code: None,
        message: "m".to_owned(),
    };
    assert!(matches!(
        from_stream_error(&vendor("overloaded_error")),
        ModelError::Overloaded { .. }
    ));
    assert!(matches!(
        from_stream_error(&vendor("rate_limit_error")),
        ModelError::RateLimited { .. }
    ));
    assert!(matches!(
        from_stream_error(&vendor("api_error")),
        ModelError::Server { status: None, .. }
    ));
}

#[test]
fn retryable_statuses() {
    for status in [408, 429, 500, 502, 503, 529] {
        assert!(status_is_retryable(status), "{status}");
    }
    for status in [400, 401, 403, 404, 413, 422] {
        assert!(!status_is_retryable(status), "{status}");
    }
}
