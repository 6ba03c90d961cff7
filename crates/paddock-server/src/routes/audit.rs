//! The audit trail: query (every filter the store has, keyset pages), export (JSON Lines or
//! OCSF, streamed), verify (names the first broken row).

use std::io::Write;

use audit_store::{Page, Query, VerifyReport};
use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use paddock_host::{AuditEntry, ExportFormat};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;

use crate::api::AuditParams;
use crate::errors::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiPath, ApiQuery};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/audit", get(query))
        .route("/v1/audit/export", get(export))
        .route("/v1/audit/verify", get(verify))
        .route("/v1/audit/{seq}", get(show))
}

/// A filter value of the store's own type (`kind=tool_call`), or an error naming it.
fn parse<T: DeserializeOwned>(name: &str, value: Option<&String>) -> ApiResult<Option<T>> {
    value
        .map(|text| {
            serde_json::from_value(serde_json::Value::String(text.clone())).map_err(|_| {
                ApiError::bad_request(
                    "invalid_query",
                    format!("`{name}`: `{text}` is not one of its values (see the API docs)"),
                )
            })
        })
        .transpose()
}

fn to_query(params: &AuditParams) -> ApiResult<Query> {
    Ok(Query {
        session_id: params.session.clone(),
        kind: parse("kind", params.kind.as_ref())?,
        call_id: params.call_id.clone(),
        tool: params.tool.clone(),
        decision: parse("decision", params.decision.as_ref())?,
        enforcement: parse("enforcement", params.enforcement.as_ref())?,
        status: parse("status", params.status.as_ref())?,
        since_ms: params.since_ms,
        until_ms: params.until_ms,
        text: params.text.clone(),
        limit: params.limit.unwrap_or(50).clamp(1, audit_store::MAX_PAGE),
        cursor: params.cursor.clone(),
    })
}

/// One page of rows, newest first; pass `next` as `cursor` for the next (older) page.
#[utoipa::path(get, path = "/v1/audit", tag = "audit", params(AuditParams),
    responses((status = 200, body = Page), (status = 400, body = ErrorBody)))]
pub async fn query(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<AuditParams>,
) -> ApiResult<Json<Page>> {
    Ok(Json(state.host.audit_query(to_query(&params)?).await?))
}

/// One row with every row of its tool call and the network denials joined to that call
/// (same session, same call id).
#[utoipa::path(get, path = "/v1/audit/{seq}", tag = "audit",
    params(("seq" = i64, Path, description = "the row's number")),
    responses((status = 200, body = AuditEntry), (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    ApiPath(seq): ApiPath<i64>,
) -> ApiResult<Json<AuditEntry>> {
    Ok(Json(state.host.audit_entry(seq).await?))
}

/// Walks the whole chain.
#[utoipa::path(get, path = "/v1/audit/verify", tag = "audit",
    responses((status = 200, body = VerifyReport)))]
pub async fn verify(State(state): State<AppState>) -> ApiResult<Json<VerifyReport>> {
    Ok(Json(state.host.audit_verify().await?))
}

/// Sends chunks of an export to the response body.
struct ChunkWriter {
    buffer: Vec<u8>,
    sender: mpsc::Sender<Result<Vec<u8>, std::io::Error>>,
}

impl ChunkWriter {
    const CHUNK: usize = 64 * 1024;

    fn send(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.buffer);
        self.sender
            .blocking_send(Ok(chunk))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client left"))
    }
}

impl Write for ChunkWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= Self::CHUNK {
            self.send()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// The rows the filters select, oldest first, streamed: `format=jsonl` (verifiable offline,
/// default) or `format=ocsf`.
#[utoipa::path(get, path = "/v1/audit/export", tag = "audit", params(AuditParams),
    responses((status = 200, content_type = "application/x-ndjson", body = String),
        (status = 400, body = ErrorBody)))]
pub async fn export(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<AuditParams>,
) -> ApiResult<Response> {
    let format = match params.format.as_deref() {
        None | Some("jsonl") => ExportFormat::Jsonl,
        Some("ocsf") => ExportFormat::Ocsf,
        Some(other) => {
            return Err(ApiError::bad_request(
                "invalid_query",
                format!("`format`: `{other}` is not one of: jsonl, ocsf"),
            ));
        }
    };
    let mut query = to_query(&params)?;
    query.limit = 0;
    query.cursor = None;
    // Bad filters are refused before the body starts.
    state
        .host
        .audit_query(Query {
            limit: 1,
            ..query.clone()
        })
        .await?;
    let (sender, receiver) = mpsc::channel(4);
    let host = state.host.clone();
    tokio::task::spawn_blocking(move || {
        let mut writer = ChunkWriter {
            buffer: Vec::new(),
            sender: sender.clone(),
        };
        let written = host
            .audit_export_blocking(format, &query, &mut writer)
            .map_err(|e| e.to_string())
            .and_then(|_| writer.flush().map_err(|e| e.to_string()));
        if let Err(message) = written {
            tracing::warn!("an audit export ended early: {message}");
            let _ = sender.blocking_send(Err(std::io::Error::other(message)));
        }
    });
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(stream),
    )
        .into_response())
}
