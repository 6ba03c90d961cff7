//! The HTTP side of the fake server: recording and checking each request, and writing the
//! scripted reply.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;

use super::record::{REDACTED, RecordedRequest, StreamOutcome};
use super::render::{self, WireFormat};
use super::script::{Ending, Reply, ReplyBody};
use super::{Shared, invariants};

type Body = BoxBody<Bytes, std::io::Error>;
type FrameResult = Result<Frame<Bytes>, std::io::Error>;

fn full(status: u16, content_type: &str, body: String) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never: Infallible| match never {})
            .boxed(),
    );
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    if let Ok(value) = content_type.parse() {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

fn vendor_error(
    format: Option<WireFormat>,
    status: u16,
    kind: &str,
    message: &str,
) -> Response<Body> {
    let format = format.unwrap_or(WireFormat::OpenAi);
    full(
        status,
        "application/json",
        render::error_body(format, kind, Some(kind), message),
    )
}

/// The key a request presented, in its format's header.
fn presented_key(format: Option<WireFormat>, request: &Request<Incoming>) -> Option<String> {
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    match format {
        Some(WireFormat::Anthropic) => header("x-api-key"),
        _ => header("authorization")
            .map(|value| value.strip_prefix("Bearer ").unwrap_or(&value).to_owned()),
    }
    .filter(|key| !key.is_empty())
}

pub(super) async fn handle(
    request: Request<Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<Body>, Infallible> {
    let method = request.method().to_string();
    let http_version = format!("{:?}", request.version());
    let path = request.uri().path().to_owned();
    if method == "GET" && KEY_CHECK_PATHS.contains(&path.as_str()) {
        return Ok(key_check(&request, &shared, http_version, path));
    }
    let format = match (method.as_str(), path.as_str()) {
        ("POST", "/v1/messages") => Some(WireFormat::Anthropic),
        ("POST", "/v1/chat/completions") => Some(WireFormat::OpenAi),
        _ => None,
    };
    let key = presented_key(format, &request);
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if matches!(name.as_str(), "x-api-key" | "authorization") {
                REDACTED.to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect();
    let bytes = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let parsed: Result<Value, _> = serde_json::from_slice(&bytes);

    let (index, reply) = {
        let mut state = shared.lock();
        let index = state.requests.len();
        let key_accepted = state
            .required_key
            .as_ref()
            .is_none_or(|required| key.as_deref() == Some(required.as_str()));
        state.requests.push(RecordedRequest {
            index,
            method: method.clone(),
            path: path.clone(),
            http_version,
            format,
            headers,
            body: parsed.as_ref().cloned().unwrap_or(Value::Null),
            api_key_sent: key.is_some(),
            api_key_accepted: key_accepted,
        });
        let mut problems = match (&format, &parsed) {
            (None, _) => vec![format!("request #{index}: unexpected {method} {path}")],
            (Some(_), Err(error)) => {
                vec![format!("request #{index}: the body is not JSON ({error})")]
            }
            (Some(format), Ok(body)) => invariants::check(*format, body)
                .into_iter()
                .map(|problem| format!("request #{index} ({path}): {problem}"))
                .collect(),
        };
        // A broken request and a refused key are answered before any reply is consumed.
        let refusal = if !problems.is_empty() {
            Some(Refusal::Invalid(problems.join("; ")))
        } else if !key_accepted {
            Some(Refusal::Unauthorized)
        } else {
            None
        };
        let text = parsed
            .as_ref()
            .map(|body| body.to_string())
            .unwrap_or_default();
        let keyed = state
            .keyed
            .iter_mut()
            .find(|(marker, queue)| !queue.is_empty() && text.contains(marker.as_str()))
            .and_then(|(_, queue)| queue.pop_front());
        let reply = match refusal {
            Some(refusal) => Err(refusal),
            None => keyed.or_else(|| state.replies.pop_front()).ok_or_else(|| {
                let problem = format!(
                    "request #{index} ({path}): no scripted reply left (an unexpected retry or \
                     extra request?)"
                );
                problems.push(problem.clone());
                Refusal::NoReply(problem)
            }),
        };
        state.violations.extend(problems);
        (index, reply)
    };
    shared.changed.notify_waiters();

    let reply = match reply {
        Ok(reply) => reply,
        Err(refusal) => {
            shared.set_outcome(index, StreamOutcome::Completed);
            let message = |problem: &str| format!("FakeModelServer: {problem}");
            return Ok(match refusal {
                Refusal::Invalid(problem) => vendor_error(
                    format,
                    if format.is_none() { 404 } else { 400 },
                    "invalid_request_error",
                    &message(&problem),
                ),
                Refusal::NoReply(problem) => {
                    vendor_error(format, 500, "api_error", &message(&problem))
                }
                Refusal::Unauthorized => unauthorized(format, key.as_deref()),
            });
        }
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let body = parsed.unwrap_or(Value::Null);
    Ok(respond(&reply, format, &body, index, shared))
}

/// The GETs a client tests a key with (the model list; OpenRouter's `/key`), relative to the
/// server's OpenAI base (`/v1`); Anthropic's `/v1/models` is the same path. They consume no
/// scripted reply.
const KEY_CHECK_PATHS: &[&str] = &["/v1/models", "/v1/key"];

/// Answers a key check: `200` with an empty list when the key is the required one (or none
/// is required), else the vendor's `401`. The vendor is told by its key header.
fn key_check(
    request: &Request<Incoming>,
    shared: &Shared,
    http_version: String,
    path: String,
) -> Response<Body> {
    let format = if request.headers().contains_key("x-api-key") {
        WireFormat::Anthropic
    } else {
        WireFormat::OpenAi
    };
    let key = presented_key(Some(format), request);
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if matches!(name.as_str(), "x-api-key" | "authorization") {
                REDACTED.to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect();
    let accepted = {
        let mut state = shared.lock();
        let index = state.requests.len();
        let accepted = state
            .required_key
            .as_ref()
            .is_none_or(|required| key.as_deref() == Some(required.as_str()));
        state.requests.push(RecordedRequest {
            index,
            method: "GET".to_owned(),
            path,
            http_version,
            format: Some(format),
            headers,
            body: Value::Null,
            api_key_sent: key.is_some(),
            api_key_accepted: accepted,
        });
        state.outcomes.insert(index, StreamOutcome::Completed);
        accepted
    };
    shared.changed.notify_waiters();
    if accepted {
        full(
            200,
            "application/json",
            r#"{"data":[],"object":"list"}"#.to_owned(),
        )
    } else {
        unauthorized(Some(format), key.as_deref())
    }
}

/// Why a request gets no scripted reply.
enum Refusal {
    /// It broke an invariant (or its path is unknown).
    Invalid(String),
    /// The script has no reply left for it.
    NoReply(String),
    /// Its key is missing or wrong.
    Unauthorized,
}

fn unauthorized(format: Option<WireFormat>, presented: Option<&str>) -> Response<Body> {
    match format {
        Some(WireFormat::Anthropic) => {
            vendor_error(format, 401, "authentication_error", "invalid x-api-key")
        }
        _ => full(
            401,
            "application/json",
            render::error_body(
                WireFormat::OpenAi,
                "invalid_request_error",
                Some("invalid_api_key"),
                &format!(
                    "Incorrect API key provided: {}.",
                    presented.unwrap_or("(none)")
                ),
            ),
        ),
    }
}

fn respond(
    reply: &Reply,
    format: Option<WireFormat>,
    body: &Value,
    index: usize,
    shared: Arc<Shared>,
) -> Response<Body> {
    let format = format.unwrap_or(WireFormat::OpenAi);
    let (preamble, chunks) = match &reply.body {
        ReplyBody::Error {
            status,
            kind,
            code,
            message,
        } => {
            shared.set_outcome(index, StreamOutcome::Completed);
            return with_headers(
                full(
                    *status,
                    "application/json",
                    render::error_body(format, kind, code.as_deref(), message),
                ),
                reply,
            );
        }
        ReplyBody::Raw {
            status,
            content_type,
            body,
        } => {
            shared.set_outcome(index, StreamOutcome::Completed);
            return with_headers(full(*status, content_type, body.clone()), reply);
        }
        ReplyBody::Script(events) => {
            let model = body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("fake-model");
            let include_usage =
                body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));
            let rendered = render::render_stream(format, events, model, include_usage);
            (Some(rendered.preamble), rendered.chunks)
        }
        ReplyBody::RawStream(chunks) => (None, chunks.clone()),
    };
    let (sender, receiver) = mpsc::channel::<FrameResult>(4);
    let frames = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|frame| (frame, receiver))
    });
    tokio::spawn(produce(
        Production {
            preamble,
            chunks,
            gap: reply.gap,
            ending: reply.ending,
            piece_size: reply.piece_size,
        },
        sender,
        index,
        shared,
    ));
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(frames)));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    response.headers_mut().insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    with_headers(response, reply)
}

fn with_headers(mut response: Response<Body>, reply: &Reply) -> Response<Body> {
    for (name, value) in &reply.headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            hyper::header::HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

struct Production {
    preamble: Option<String>,
    chunks: Vec<String>,
    gap: Duration,
    ending: Ending,
    piece_size: Option<usize>,
}

/// Writes the stream into the body channel; records how it ended. The receiver is owned by
/// the response body, which hyper drops when the client goes away: a failed send or a
/// closed channel is how the server sees the disconnect.
async fn produce(
    production: Production,
    sender: mpsc::Sender<FrameResult>,
    index: usize,
    shared: Arc<Shared>,
) {
    let mut sent_chunks = 0usize;
    let outcome = 'run: {
        if let Some(preamble) = &production.preamble
            && !send(&sender, preamble, production.piece_size, &mut sent_chunks).await
        {
            break 'run StreamOutcome::ClientDisconnected {
                after_chunks: sent_chunks,
            };
        }
        for (events_sent, chunk) in production.chunks.iter().enumerate() {
            if let Some(outcome) = end_early(&production, events_sent, &sender, sent_chunks).await {
                break 'run outcome;
            }
            if events_sent > 0 && !production.gap.is_zero() {
                tokio::select! {
                    () = sender.closed() => {
                        break 'run StreamOutcome::ClientDisconnected { after_chunks: sent_chunks };
                    }
                    () = tokio::time::sleep(production.gap) => {}
                }
            }
            if !send(&sender, chunk, production.piece_size, &mut sent_chunks).await {
                break 'run StreamOutcome::ClientDisconnected {
                    after_chunks: sent_chunks,
                };
            }
        }
        match end_early(&production, production.chunks.len(), &sender, sent_chunks).await {
            Some(outcome) => outcome,
            None => StreamOutcome::Completed,
        }
    };
    drop(sender);
    shared.set_outcome(index, outcome);
}

/// Applies a scripted drop or stall once `events_sent` events are out.
async fn end_early(
    production: &Production,
    events_sent: usize,
    sender: &mpsc::Sender<FrameResult>,
    sent_chunks: usize,
) -> Option<StreamOutcome> {
    match production.ending {
        Ending::DropAfter(n) if n <= events_sent => {
            // hyper aborts without flushing what it buffered: let it take and write the
            // events first, so the client really receives them before the break.
            for _ in 0..200 {
                if sender.capacity() == sender.max_capacity() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            let _ = sender
                .send(Err(std::io::Error::other(
                    "FakeModelServer: scripted connection drop",
                )))
                .await;
            Some(StreamOutcome::ServerDropped)
        }
        Ending::StallAfter(n) if n <= events_sent => {
            sender.closed().await;
            Some(StreamOutcome::ClientDisconnected {
                after_chunks: sent_chunks,
            })
        }
        _ => None,
    }
}

/// Sends one chunk (in pieces, if asked); `false` when the client is gone.
async fn send(
    sender: &mpsc::Sender<FrameResult>,
    chunk: &str,
    piece_size: Option<usize>,
    sent_chunks: &mut usize,
) -> bool {
    if chunk.is_empty() {
        return !sender.is_closed();
    }
    let bytes = chunk.as_bytes();
    let pieces: Vec<&[u8]> = match piece_size {
        Some(size) => bytes.chunks(size).collect(),
        None => vec![bytes],
    };
    for piece in pieces {
        if sender
            .send(Ok(Frame::data(Bytes::copy_from_slice(piece))))
            .await
            .is_err()
        {
            return false;
        }
        *sent_chunks += 1;
        if piece_size.is_some() {
            // Separate writes, so the pieces arrive as separate reads.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    true
}
