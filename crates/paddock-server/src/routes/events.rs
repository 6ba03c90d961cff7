//! A session's live events over a WebSocket: the logged events after `after`, then live ones
//! as they happen, each once, as JSON text frames (`protocol::Event`). Reconnect with
//! `after` = the last `seq` seen to miss nothing. Live-only events (text deltas, output
//! chunks) are not replayed; their content is in the durable events that follow them.
//!
//! Authentication: the bearer header, or a single-use ticket (`POST …/events/ticket`) in
//! `?ticket=` for browsers, which cannot set headers on a WebSocket.
//!
//! Each client has a queue of at most [`QUEUE_BYTES`] of frames, filled as events happen and
//! drained as the client takes them. Events replayed from the log wait for room (the log holds
//! them, not memory). A client that falls further behind on live events (it stopped reading,
//! or reads slower than the session runs) is disconnected at once (close code 1013, "too
//! slow"; tried for [`CLOSE_GRACE`] behind what it has not taken, then the connection is
//! dropped): the server holds at most that queue for it, and never holds the session's live
//! events back for it. It reconnects with `after` = the last `seq` it received and is caught
//! up from the log.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::stream::SplitSink;
use futures::{SinkExt, StreamExt};
use paddock_host::EventStream;
use tokio::sync::{Semaphore, TryAcquireError, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::api::{EventsParams, Ticket};
use crate::auth::{TICKET_LIFETIME, has_token};
use crate::errors::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiPath, ApiQuery};
use crate::state::{AppState, EventSocketStats};

/// The most bytes of frames that wait for one client; a client further behind is
/// disconnected. (One event larger than this is still sent to a client that has taken
/// everything before it.)
pub const QUEUE_BYTES: usize = 4 << 20;

/// How long a closing socket tries to send its close frame.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);

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
    ApiPath(id): ApiPath<String>,
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
    ApiPath(id): ApiPath<String>,
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
    let stats = Arc::clone(&state.event_sockets);
    Ok(upgrade
        .on_upgrade(move |socket| pump(socket, stream, shutdown, stats))
        .into_response())
}

/// Counts the socket while it is open.
struct OpenSocket(Arc<EventSocketStats>);

impl OpenSocket {
    fn new(stats: Arc<EventSocketStats>) -> Self {
        stats.open.fetch_add(1, Ordering::Relaxed);
        Self(stats)
    }
}

impl Drop for OpenSocket {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Reads the session's events into the client's queue and ends the socket: on shutdown, when
/// the client leaves, or when its queue is full (the client is disconnected, not waited for).
async fn pump(
    socket: WebSocket,
    mut events: EventStream,
    shutdown: CancellationToken,
    stats: Arc<EventSocketStats>,
) {
    let _open = OpenSocket::new(Arc::clone(&stats));
    let (sender, mut receiver) = socket.split();
    let (queue, pending) = mpsc::unbounded_channel::<(Message, u32)>();
    // One permit per byte the queue may still take.
    let room = Arc::new(Semaphore::new(QUEUE_BYTES));
    let (stop, stopped) = oneshot::channel::<CloseFrame>();
    let mut writer = tokio::spawn(write_frames(sender, pending, Arc::clone(&room), stopped));
    let end = loop {
        tokio::select! {
            () = shutdown.cancelled() => {
                break End::After(close_frame(
                    close_code::AWAY,
                    format!("server shutting down; reconnect with after={}", events.last_seq()),
                ));
            }
            next = events.next() => match next {
                Ok(Some(event)) => {
                    let text = match serde_json::to_string(&event) {
                        Ok(text) => text,
                        Err(e) => break End::After(close_frame(close_code::ERROR, format!("encoding an event: {e}"))),
                    };
                    let cost = u32::try_from(text.len().min(QUEUE_BYTES)).unwrap_or(u32::MAX);
                    if let Err(end) = reserve(&room, cost, events.replaying(), &shutdown, &stats).await {
                        break end;
                    }
                    if queue.send((Message::Text(text.into()), cost)).is_err() {
                        // The writer ended: the client is gone.
                        break End::Gone;
                    }
                }
                Ok(None) => break End::After(close_frame(close_code::AWAY, "server shutting down".into())),
                Err(e) => break End::After(close_frame(close_code::ERROR, format!("reading the event log: {e}"))),
            },
            message = receiver.next() => match message {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break End::Gone,
                Some(Ok(_)) => {}
            },
            _ = &mut writer => break End::WriterEnded,
        }
    };
    match end {
        End::WriterEnded => return,
        End::Gone => writer.abort(),
        End::Now(frame) => {
            let _ = stop.send(frame);
        }
        End::After(frame) => {
            // Behind the frames already queued; a client that does not take them in time is
            // cut off below.
            let _ = queue.send((Message::Close(Some(frame)), 0));
        }
    }
    drop(queue);
    if tokio::time::timeout(CLOSE_GRACE, &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
    // Dropping both halves closes the connection.
}

/// Makes room in the client's queue for a frame of `cost` bytes. An event from the log waits
/// for the client (the log holds it, not memory); a live one that does not fit ends the
/// socket: the client is too slow.
async fn reserve(
    room: &Semaphore,
    cost: u32,
    from_log: bool,
    shutdown: &CancellationToken,
    stats: &EventSocketStats,
) -> Result<(), End> {
    let permit = if from_log {
        tokio::select! {
            acquired = room.acquire_many(cost) => acquired.map_err(|_| End::Gone)?,
            () = shutdown.cancelled() => {
                return Err(End::Now(close_frame(close_code::AWAY, "server shutting down".into())));
            }
        }
    } else {
        match room.try_acquire_many(cost) {
            Ok(permit) => permit,
            Err(TryAcquireError::Closed) => return Err(End::Gone),
            Err(TryAcquireError::NoPermits) => {
                stats.too_slow.fetch_add(1, Ordering::Relaxed);
                return Err(End::Now(close_frame(
                    close_code::AGAIN,
                    format!(
                        "too slow: {} bytes of events waited for this client; reconnect with \
                         after= the last seq received",
                        QUEUE_BYTES - room.available_permits()
                    ),
                )));
            }
        }
    };
    // Given back by the writer once the frame is sent.
    permit.forget();
    Ok(())
}

/// How a socket ends.
enum End {
    /// The client left, or its connection failed.
    Gone,
    /// The writer stopped (the connection failed); nothing is left to end.
    WriterEnded,
    /// Close now, dropping what is queued (the client is too slow).
    Now(CloseFrame),
    /// Close after the queued frames.
    After(CloseFrame),
}

fn close_frame(code: u16, reason: String) -> CloseFrame {
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

/// Sends the queued frames until the queue ends, or `stop` asks to close now: then a close
/// frame is tried for [`CLOSE_GRACE`] (it waits behind a frame the client has not taken) and
/// the socket dropped.
async fn write_frames(
    sender: SplitSink<WebSocket, Message>,
    pending: mpsc::UnboundedReceiver<(Message, u32)>,
    room: Arc<Semaphore>,
    stop: oneshot::Receiver<CloseFrame>,
) {
    send_frames(sender, pending, &room, stop).await;
    // Nothing more is taken: a pump waiting for room stops waiting.
    room.close();
}

async fn send_frames(
    mut sender: SplitSink<WebSocket, Message>,
    mut pending: mpsc::UnboundedReceiver<(Message, u32)>,
    room: &Semaphore,
    mut stop: oneshot::Receiver<CloseFrame>,
) {
    loop {
        let (frame, len) = tokio::select! {
            biased;
            close = &mut stop => return close_now(&mut sender, close.ok()).await,
            frame = pending.recv() => match frame {
                Some(frame) => frame,
                None => return,
            },
        };
        tokio::select! {
            biased;
            close = &mut stop => return close_now(&mut sender, close.ok()).await,
            sent = sender.send(frame) => if sent.is_err() {
                return;
            },
        }
        room.add_permits(usize::try_from(len).unwrap_or(0));
    }
}

async fn close_now(sender: &mut SplitSink<WebSocket, Message>, frame: Option<CloseFrame>) {
    if let Some(frame) = frame {
        let _ = tokio::time::timeout(CLOSE_GRACE, sender.send(Message::Close(Some(frame)))).await;
    }
}
