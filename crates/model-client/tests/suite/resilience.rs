//! Retries, timeouts and cancellation, proved from the server's side of the socket.

use std::time::{Duration, Instant};

use futures::StreamExt;
use model_client::anthropic::AnthropicClient;
use model_client::openai::OpenAiClient;
use model_client::{
    CancellationToken, ClientConfig, ModelClient, ModelError, ModelEvent, RetryPolicy, TimeoutPhase,
};
use pretty_assertions::assert_eq;
use test_support::model_server::{FakeModelServer, Reply, StreamOutcome, sse};

use crate::common::{self, assert_no_key, drain};

const OUTCOME_WAIT: Duration = Duration::from_secs(5);

async fn anthropic(
    configure: impl FnOnce(&mut ClientConfig),
) -> (FakeModelServer, AnthropicClient) {
    let server = FakeModelServer::start().await.unwrap();
    let mut config = common::config(server.anthropic_base_url());
    configure(&mut config);
    let client = AnthropicClient::new(&config).unwrap();
    (server, client)
}

fn hello() -> Reply {
    Reply::final_text("hello")
}

#[tokio::test]
async fn a_429_is_retried_after_the_retry_after_seconds() {
    let (server, client) = anthropic(|_| {}).await;
    server.push(
        Reply::error(429, "rate_limit_error", "Number of requests exceeded")
            .header("retry-after", "1"),
    );
    server.push(hello());
    let started = Instant::now();
    let response = client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(response.text(), "hello");
    assert_eq!(server.request_count(), 2);
    assert!(
        waited >= Duration::from_millis(950),
        "retry-after: 1 was not honoured (retried after {waited:?})"
    );
}

#[tokio::test]
async fn retry_after_ms_is_honoured_over_backoff() {
    let (server, client) = anthropic(|_| {}).await;
    server.push(Reply::error(429, "rate_limit_error", "slow").header("retry-after-ms", "300"));
    server.push(hello());
    let started = Instant::now();
    client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(290),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn server_errors_and_529_overloaded_are_retried() {
    let (server, client) = anthropic(|_| {}).await;
    server.push(Reply::error(500, "api_error", "Internal server error"));
    server.push(Reply::error(529, "overloaded_error", "Overloaded"));
    server.push(Reply::raw(502, "text/html", "<html>Bad Gateway</html>"));
    server.push(hello());
    let response = client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text(), "hello");
    assert_eq!(server.request_count(), 4);
}

#[tokio::test]
async fn when_retries_run_out_the_last_error_is_returned() {
    let (server, client) = anthropic(|config| config.retry.max_retries = 2).await;
    for _ in 0..3 {
        server.push(Reply::error(529, "overloaded_error", "Overloaded"));
    }
    server.push(hello());
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert_eq!(
        error,
        ModelError::Overloaded {
            message: "overloaded_error: Overloaded".to_owned()
        }
    );
    assert_eq!(server.request_count(), 3);
    assert_eq!(server.remaining_replies(), 1);
}

#[tokio::test]
async fn a_retry_after_longer_than_the_cap_is_returned_at_once() {
    let (server, client) = anthropic(|_| {}).await;
    server.push(Reply::error(429, "rate_limit_error", "daily limit").header("retry-after", "3600"));
    let started = Instant::now();
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(error, ModelError::RateLimited { retry_after: Some(after), .. } if after == Duration::from_secs(3600)),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_stream_broken_after_it_started_is_not_retried() {
    let (server, client) = anthropic(|_| {}).await;
    server.push(
        Reply::stream([
            sse::text("partial "),
            sse::text("never sent"),
            sse::stop("end_turn"),
        ])
        .drop_after(1),
    );
    server.push(hello());
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(
        events,
        vec![ModelEvent::TextDelta {
            text: "partial ".to_owned()
        }]
    );
    assert!(
        matches!(error, Some(ModelError::Network { .. })),
        "{error:?}"
    );
    assert_eq!(
        server.wait_for_outcome(0, OUTCOME_WAIT).await,
        Some(StreamOutcome::ServerDropped)
    );
    assert_eq!(
        server.request_count(),
        1,
        "a started stream must never be replayed"
    );
    assert_eq!(server.remaining_replies(), 1);
}

#[tokio::test]
async fn a_connection_refused_is_a_network_error_after_retries() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut config = common::config(format!("http://127.0.0.1:{port}"));
    config.retry.max_retries = 1;
    let client = AnthropicClient::new(&config).unwrap();
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(matches!(error, ModelError::Network { .. }), "{error:?}");
    assert!(error.is_transient());
    assert!(
        !error.to_string().contains(&format!(":{port}")),
        "no URL in errors: {error}"
    );
}

#[tokio::test]
async fn a_slow_response_head_times_out_and_is_retried() {
    let (server, client) = anthropic(|config| {
        config.timeouts.first_byte = Duration::from_millis(300);
    })
    .await;
    server.push(hello().delay(Duration::from_secs(3)));
    server.push(hello());
    let response = client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text(), "hello");
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_slow_response_head_without_retries_is_a_first_byte_timeout() {
    let (server, client) = anthropic(|config| {
        config.timeouts.first_byte = Duration::from_millis(300);
        config.retry = RetryPolicy::none();
    })
    .await;
    server.push(hello().delay(Duration::from_secs(3)));
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(
            error,
            ModelError::Timeout {
                phase: TimeoutPhase::FirstByte,
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_stream_that_goes_silent_times_out_and_the_connection_is_closed() {
    let (server, client) = anthropic(|config| {
        config.timeouts.idle = Duration::from_millis(300);
    })
    .await;
    server.push(
        Reply::stream([sse::text("a"), sse::text("b"), sse::stop("end_turn")]).stall_after(1),
    );
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(
        events,
        vec![ModelEvent::TextDelta {
            text: "a".to_owned()
        }]
    );
    assert!(
        matches!(
            error,
            Some(ModelError::Timeout {
                phase: TimeoutPhase::Idle,
                ..
            })
        ),
        "{error:?}"
    );
    assert!(
        matches!(
            server.wait_for_outcome(0, OUTCOME_WAIT).await,
            Some(StreamOutcome::ClientDisconnected { .. })
        ),
        "the server must see the client hang up"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn cancelling_mid_stream_ends_the_stream_and_drops_the_connection() {
    let server = FakeModelServer::start().await.unwrap();
    let client = OpenAiClient::new(&common::config(server.openai_base_url())).unwrap();
    server.push(
        Reply::stream([
            sse::text("first"),
            sse::text("second"),
            sse::stop("end_turn"),
        ])
        .stall_after(1),
    );
    let cancel = CancellationToken::new();
    let mut stream = client
        .stream(common::request(), cancel.clone())
        .await
        .unwrap();
    assert_eq!(
        stream.next().await.map(|item| item.ok()),
        Some(Some(ModelEvent::TextDelta {
            text: "first".to_owned()
        }))
    );
    cancel.cancel();
    assert_eq!(
        stream.next().await.map(|item| item.err()),
        Some(Some(ModelError::Cancelled))
    );
    assert!(stream.next().await.is_none());
    assert!(
        matches!(
            server.wait_for_outcome(0, OUTCOME_WAIT).await,
            Some(StreamOutcome::ClientDisconnected { .. })
        ),
        "the server must see the connection close after cancellation"
    );
}

#[tokio::test]
async fn cancelling_closes_the_connection_even_when_nobody_polls_the_stream() {
    let (server, client) = anthropic(|_| {}).await;
    server.push(Reply::final_text("first").stall_after(1));
    let cancel = CancellationToken::new();
    let stream = client
        .stream(common::request(), cancel.clone())
        .await
        .unwrap();
    cancel.cancel();
    assert!(
        matches!(
            server.wait_for_outcome(0, OUTCOME_WAIT).await,
            Some(StreamOutcome::ClientDisconnected { .. })
        ),
        "cancellation must not wait for the consumer to poll"
    );
    drop(stream);
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let (server, client) = anthropic(|_| {}).await;
    server.push(Reply::final_text("first").stall_after(1));
    let mut stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(ModelEvent::TextDelta { .. }))
    ));
    drop(stream);
    assert!(matches!(
        server.wait_for_outcome(0, OUTCOME_WAIT).await,
        Some(StreamOutcome::ClientDisconnected { .. })
    ));
}

#[tokio::test]
async fn cancelling_before_the_response_starts_returns_cancelled_at_once() {
    let (server, client) = anthropic(|_| {}).await;
    server.push(hello().delay(Duration::from_secs(10)));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let error = client
        .stream(common::request(), cancel)
        .await
        .err()
        .unwrap();
    assert_eq!(error, ModelError::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn cancelling_during_a_retry_wait_returns_cancelled_at_once() {
    let (server, client) =
        anthropic(|config| config.retry.max_retry_after = Duration::from_secs(60)).await;
    server.push(Reply::error(429, "rate_limit_error", "wait").header("retry-after", "30"));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let error = client
        .stream(common::request(), cancel)
        .await
        .err()
        .unwrap();
    assert_eq!(error, ModelError::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_success_that_is_not_an_event_stream_is_a_protocol_error() {
    let (server, client) = anthropic(|_| {}).await;
    server.push(Reply::raw(
        200,
        "application/json",
        r#"{"error":{"message":"streaming is disabled"}}"#,
    ));
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&error, ModelError::Protocol { message } if message.contains("application/json") && message.contains("streaming is disabled")),
        "{error:?}"
    );
}

#[tokio::test]
async fn bad_base_urls_are_config_errors() {
    for base in [
        "not a url",
        "ftp://example.test",
        "https://user:pw@example.test",
    ] {
        let error = OpenAiClient::new(&common::config(base.to_owned())).unwrap_err();
        assert!(
            matches!(error, ModelError::Config { .. }),
            "{base}: {error:?}"
        );
        assert!(!error.to_string().contains("pw@"), "{error}");
    }
}

#[tokio::test]
async fn the_client_debug_output_never_shows_the_key() {
    let server = FakeModelServer::start().await.unwrap();
    let anthropic = AnthropicClient::new(&common::config(server.anthropic_base_url())).unwrap();
    let openai = OpenAiClient::new(&common::config(server.openai_base_url())).unwrap();
    let printed = format!(
        "{anthropic:?} {openai:?} {:?}",
        common::config(String::new())
    );
    assert!(!printed.contains(common::KEY), "{printed}");
}

#[tokio::test]
async fn errors_of_every_kind_are_scrubbed_of_the_key() {
    let (server, client) = anthropic(|config| config.retry = RetryPolicy::none()).await;
    let echo = format!("your key {} is over quota", common::KEY);
    server.push(Reply::error(429, "rate_limit_error", echo.clone()));
    server.push(Reply::stream([
        sse::text("x"),
        sse::error("api_error", echo.clone()),
    ]));
    server.push(Reply::error(500, "api_error", echo));
    let first = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(matches!(first, ModelError::RateLimited { .. }), "{first:?}");
    assert_no_key(&first);
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (_, second) = drain(stream).await;
    let second = second.unwrap();
    assert!(
        matches!(second, ModelError::Server { status: None, .. }),
        "{second:?}"
    );
    assert_no_key(&second);
    let third = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert_no_key(&third);
    assert!(third.to_string().contains("[redacted]"), "{third}");
}

#[tokio::test]
async fn a_connection_that_cannot_open_in_time_is_a_connect_timeout() {
    // A listener that never accepts, with a backlog of one: once its queue is full, the
    // kernel drops further connection attempts and a connect hangs. Loopback only.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(1).unwrap();
    let addr = listener.local_addr().unwrap();
    let mut queued = Vec::new();
    loop {
        match tokio::time::timeout(
            Duration::from_millis(300),
            tokio::net::TcpStream::connect(addr),
        )
        .await
        {
            Ok(Ok(stream)) => queued.push(stream),
            Ok(Err(error)) => panic!("filling the accept queue failed: {error}"),
            Err(_) => break,
        }
        assert!(queued.len() < 64, "the accept queue never filled");
    }
    let mut config = common::config(format!("http://{addr}"));
    config.timeouts.connect = Duration::from_millis(300);
    config.retry = RetryPolicy::none();
    let client = AnthropicClient::new(&config).unwrap();
    let started = Instant::now();
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(
            error,
            ModelError::Timeout {
                phase: TimeoutPhase::Connect,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    drop(listener);
}
