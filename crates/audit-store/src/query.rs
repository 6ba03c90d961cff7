//! Filtered, newest-first pages of events with an opaque keyset cursor.

use protocol::EnforcementLevel;
use rusqlite::types::Value as SqlValue;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::AuditError;
use crate::record::{CallStatus, Decision, RecordKind, StoredEvent};
use crate::store::{AuditStore, record_of};

/// Most rows a page may hold.
pub const MAX_PAGE: usize = 1000;

/// Filters for [`AuditStore::query`]; every set filter must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct Query {
    pub session_id: Option<String>,
    pub kind: Option<RecordKind>,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    pub decision: Option<Decision>,
    pub enforcement: Option<EnforcementLevel>,
    pub status: Option<CallStatus>,
    /// Inclusive lower bound, milliseconds since the Unix epoch.
    pub since_ms: Option<i64>,
    /// Exclusive upper bound.
    pub until_ms: Option<i64>,
    /// Case-insensitive substring of the stored (redacted) record.
    pub text: Option<String>,
    /// Rows per page; 0 means 50.
    pub limit: usize,
    /// The `next` cursor of the previous page.
    pub cursor: Option<String>,
}

/// One page, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct Page {
    pub events: Vec<StoredEvent>,
    /// Pass as `cursor` to get the next (older) page; `None` on the last page.
    pub next: Option<String>,
}

impl Query {
    /// Ties a cursor to its filters, so a cursor cannot be replayed against other filters.
    fn fingerprint(&self) -> String {
        let filters = Query {
            limit: 0,
            cursor: None,
            ..self.clone()
        };
        let json = serde_json::to_string(&filters).unwrap_or_default();
        hex::encode(&Sha256::digest(json.as_bytes())[..6])
    }

    /// The SQL `WHERE` clause and its parameters for these filters.
    pub(crate) fn where_clause(
        &self,
        with_cursor: bool,
    ) -> Result<(String, Vec<SqlValue>), AuditError> {
        let mut clauses: Vec<&str> = Vec::new();
        let mut params: Vec<SqlValue> = Vec::new();
        let mut text = |clause: &'static str, value: Option<String>, params: &mut Vec<SqlValue>| {
            if let Some(value) = value {
                clauses.push(clause);
                params.push(SqlValue::Text(value));
            }
        };
        text("session_id = ?", self.session_id.clone(), &mut params);
        text(
            "kind = ?",
            self.kind.map(|k| k.as_str().to_string()),
            &mut params,
        );
        text("call_id = ?", self.call_id.clone(), &mut params);
        text("tool = ?", self.tool.clone(), &mut params);
        text(
            "decision = ?",
            self.decision.map(|d| d.as_str().to_string()),
            &mut params,
        );
        text(
            "enforcement = ?",
            self.enforcement.map(|e| e.as_str().to_string()),
            &mut params,
        );
        text(
            "status = ?",
            self.status.map(|s| s.as_str().to_string()),
            &mut params,
        );
        text(
            "content LIKE ? ESCAPE '\\'",
            self.text.as_deref().map(like_pattern),
            &mut params,
        );
        if let Some(since) = self.since_ms {
            clauses.push("time_ms >= ?");
            params.push(SqlValue::Integer(since));
        }
        if let Some(until) = self.until_ms {
            clauses.push("time_ms < ?");
            params.push(SqlValue::Integer(until));
        }
        if let Some(cursor) = self.cursor.as_ref().filter(|_| with_cursor) {
            clauses.push("seq < ?");
            params.push(SqlValue::Integer(self.decode_cursor(cursor)?));
        }
        let filter = if clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", clauses.join(" AND "))
        };
        Ok((filter, params))
    }

    /// The index to read a page by: a time bound with no filter that has an index of its own
    /// reads `events_by_seq_time` (newest first, the time test answered from the index), which
    /// SQLite's planner would not choose over the table itself.
    pub(crate) fn index_hint(&self) -> &'static str {
        let indexed = self.session_id.is_some()
            || self.call_id.is_some()
            || self.tool.is_some()
            || self.decision.is_some()
            || self.enforcement.is_some()
            || self.status.is_some();
        if (self.since_ms.is_some() || self.until_ms.is_some()) && !indexed {
            "INDEXED BY events_by_seq_time"
        } else {
            ""
        }
    }

    fn encode_cursor(&self, before_seq: i64) -> String {
        hex::encode(format!("v1:{before_seq}:{}", self.fingerprint()))
    }

    fn decode_cursor(&self, cursor: &str) -> Result<i64, AuditError> {
        let bad = |why: &str| AuditError::BadCursor(why.to_string());
        let bytes = hex::decode(cursor).map_err(|_| bad("not a cursor this store issued"))?;
        let text = String::from_utf8(bytes).map_err(|_| bad("not a cursor this store issued"))?;
        let mut parts = text.split(':');
        let (Some("v1"), Some(seq), Some(fingerprint), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("not a cursor this store issued"));
        };
        if fingerprint != self.fingerprint() {
            return Err(bad("it was issued for different filters"));
        }
        seq.parse()
            .map_err(|_| bad("not a cursor this store issued"))
    }
}

fn like_pattern(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

impl AuditStore {
    /// A page of events matching `query`, newest first.
    pub fn query(&self, query: &Query) -> Result<Page, AuditError> {
        let limit = match query.limit {
            0 => 50,
            n if n > MAX_PAGE => {
                return Err(AuditError::BadQuery(format!(
                    "limit {n} is over the maximum of {MAX_PAGE}"
                )));
            }
            n => n,
        };
        if let (Some(since), Some(until)) = (query.since_ms, query.until_ms)
            && since >= until
        {
            return Err(AuditError::BadQuery(format!(
                "since_ms ({since}) must be before until_ms ({until})"
            )));
        }
        let (filter, params) = query.where_clause(true)?;
        let sql = format!(
            "SELECT seq, time_ms, session_id, content, prev_hash, hash FROM events {} {filter}
             ORDER BY seq DESC LIMIT {}",
            query.index_hint(),
            limit + 1
        );
        let mut statement = self.conn.prepare_cached(&sql)?;
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        let mut events = Vec::with_capacity(limit + 1);
        while let Some(row) = rows.next()? {
            let content: String = row.get(3)?;
            let (record, _) = record_of(&content)?;
            events.push(StoredEvent {
                seq: row.get(0)?,
                time_ms: row.get(1)?,
                session_id: row.get(2)?,
                record,
                prev_hash: row.get(4)?,
                hash: row.get(5)?,
            });
        }
        let next = if events.len() > limit {
            events.truncate(limit);
            events.last().map(|e| query.encode_cursor(e.seq))
        } else {
            None
        };
        Ok(Page { events, next })
    }

    /// The row numbered `seq`, or `None` when there is none.
    pub fn event(&self, seq: i64) -> Result<Option<StoredEvent>, AuditError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT seq, time_ms, session_id, content, prev_hash, hash FROM events WHERE seq = ?",
        )?;
        let mut rows = statement.query([seq])?;
        let Some(row) = rows.next()? else {
            return Ok(None);
        };
        let content: String = row.get(3)?;
        let (record, _) = record_of(&content)?;
        Ok(Some(StoredEvent {
            seq: row.get(0)?,
            time_ms: row.get(1)?,
            session_id: row.get(2)?,
            record,
            prev_hash: row.get(4)?,
            hash: row.get(5)?,
        }))
    }

    /// Every row of one tool call, oldest first: its states and the network denials it caused.
    pub fn call_history(&self, call_id: &str) -> Result<Vec<StoredEvent>, AuditError> {
        let mut events = Vec::new();
        let mut query = Query {
            call_id: Some(call_id.to_string()),
            limit: MAX_PAGE,
            ..Query::default()
        };
        loop {
            let page = self.query(&query)?;
            events.extend(page.events);
            match page.next {
                Some(next) => query.cursor = Some(next),
                None => break,
            }
        }
        events.reverse();
        Ok(events)
    }
}
