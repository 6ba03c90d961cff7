//! A session's live events over a WebSocket: the logged events after `after`, then live ones
//! as they happen, each once, as JSON text frames (`protocol::Event`). Reconnect with
//! `after` = the last `seq` seen to miss nothing. Live-only events (text deltas, output
//! chunks) are not replayed; their content is in the durable events that follow them.
//!
//! Authentication: the bearer header, or a single-use ticket (`POST …/events/ticket`) in
//! `?ticket=` for browsers, which cannot set headers on a WebSocket.
//!
//! A client that stops reading is disconnected (close code 1013, reason naming the `after`
//! to reconnect with) once a frame has waited [`SEND_TIMEOUT`]; the server never queues
//! without bound for it.

use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::{SinkExt, StreamExt};
use paddock_host::EventStream;

use crate::api::{EventsParams, Ticket};
use crate::auth::{TICKET_LIFETIME, has_token};
use crate::errors::{ApiError, ApiResult, ErrorBody};
use crate::extract::ApiQuery;
use crate::state::AppState;

/// How long one frame may wait for a client that is not reading.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/sessions/{id}/events", get(socket))
        .route("/v1/sessions/{id}/events/ticket", post(ticket))
}

/// A single-use ticket to open this session's event socket (30 seconds).
#[utoipa::path(post, path = "/v1/sessions/{id}/events/ticket", tag = "events",
    responses((status = 200, body = Ticket), (status = 404, body = ErrorBody)))]
pub async fn ticket(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Ticket>> {
    state.host.session(&id).await?;
    let ticket = state
        .tickets
        .issue(&id)
        .map_err(|e| ApiError::from(paddock_host::HostError::Internal(e.to_string())))?;
    Ok(Json(Ticket {
        ticket,
        expires_in_ms: u64::try_from(TICKET_LIFETIME.as_millis()).unwrap_or(u64::MAX),
    }))
}

/// The session's events (a WebSocket): replay after `after`, then live.
#[utoipa::path(get, path = "/v1/sessions/{id}/events", tag = "events", params(EventsParams),
    responses((status = 101, description = "switching to a WebSocket of `Event` JSON frames"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn socket(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiQuery(params): ApiQuery<EventsParams>,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> ApiResult<Response> {
    let authorized = has_token(&state, &headers)
        || params
            .ticket
            .as_deref()
            .is_some_and(|ticket| state.tickets.redeem(ticket, &id));
    if !authorized {
        return Err(ApiError::new(
            http::StatusCode::UNAUTHORIZED,
            "unauthorized",
            "open the socket with a fresh ticket (`POST …/events/ticket`, single use, 30 s) \
             or the bearer header",
        ));
    }
    let upgrade = upgrade.map_err(|_| {
        ApiError::bad_request(
            "websocket_expected",
            "this resource is a WebSocket: connect with an upgrade request",
        )
    })?;
    state.host.session(&id).await?;
    let stream = state.host.events(&id, params.after);
    let shutdown = state.shutdown.clone();
    Ok(upgrade
        .on_upgrade(move |socket| pump(socket, stream, shutdown))
        .into_response())
}

async fn close(
    socket: &mut futures::stream::SplitSink<WebSocket, Message>,
    code: u16,
    reason: String,
) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await;
}

async fn pump(
    socket: WebSocket,
    mut events: EventStream,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let (mut sender, mut receiver) = socket.split();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => {
                let reason = format!("server shutting down; reconnect with after={}", events.last_seq());
                close(&mut sender, close_code::AWAY, reason).await;
                return;
            }
            next = events.next() => match next {
                Ok(Some(event)) => {
                    let text = match serde_json::to_string(&event) {
                        Ok(text) => text,
                        Err(e) => {
                            close(&mut sender, close_code::ERROR, format!("encoding an event: {e}")).await;
                            return;
                        }
                    };
                    match tokio::time::timeout(SEND_TIMEOUT, sender.send(Message::Text(text.into()))).await {
                        Ok(Ok(())) => {}
                        Ok(Err(_)) => return,
                        Err(_) => {
                            // The client stopped reading: disconnect it rather than queue.
                            let reason = format!("too slow; reconnect with after={}", events.last_seq().saturating_sub(1));
                            close(&mut sender, close_code::AGAIN, reason).await;
                            return;
                        }
                    }
                }
                Ok(None) => {
                    close(&mut sender, close_code::AWAY, "server shutting down".into()).await;
                    return;
                }
                Err(e) => {
                    close(&mut sender, close_code::ERROR, format!("reading the event log: {e}")).await;
                    return;
                }
            },
            message = receiver.next() => match message {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
