//! Where every durable event goes, in order, before the session goes on: the audit trail
//! (hash-chained, redacted), the event log (what clients replay), and the approvals inbox.
//! And the stream a client reads: the log after its last event, then live events, each once.
//!
//! **Live-only events** (`model_text_delta`, `tool_call_output`) are never logged. A client
//! connected while they happen gets them; a client that (re)connects later does not — their
//! content is in the durable event that completes them (`assistant_message`,
//! `tool_call_finished`), which it does get. A client that falls more than the live buffer
//! behind is caught up from the log (durable events only), never sent an event twice.

use std::collections::VecDeque;
use std::sync::Arc;

use agent::{EventSink, SinkError};
use async_trait::async_trait;
use protocol::Event;
use session_store::{EVENT_LOG_PAGE, LogRows, SqliteEventLog};
use tokio::sync::broadcast;

use crate::audit_sink::{AuditSink, commit_now, sink_error};
use crate::error::HostError;
use crate::inbox::Inbox;

/// Runs `work`, which waits on SQLite, without a hop to another thread where the runtime
/// allows it: on a multi-threaded runtime the current worker becomes a blocking thread for
/// the while (`block_in_place`; a commit takes tens of microseconds, a hop to the blocking
/// pool and back costs as much again and more on a loaded machine), elsewhere on the
/// blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => Ok(tokio::task::block_in_place(work)),
        _ => tokio::task::spawn_blocking(work).await,
    }
}

/// The durable sink of every session of the process.
pub(crate) struct Journal {
    pub(crate) audit: Arc<AuditSink>,
    pub(crate) log: SqliteEventLog,
    pub(crate) inbox: Arc<Inbox>,
}

#[async_trait]
impl EventSink for Journal {
    async fn record(&self, event: &Event) -> Result<(), SinkError> {
        self.record_batch(std::slice::from_ref(event)).await
    }

    /// The audit trail first (the record), then the event log, each in one transaction,
    /// both in one blocking section.
    async fn record_batch(&self, events: &[Event]) -> Result<(), SinkError> {
        let rows = self.audit.rows(events);
        let logged = LogRows::encode(events)
            .map_err(|e| sink_error(events, format!("the event log: {e}")))?;
        let store = self.audit.store();
        let log = self.log.clone();
        blocking(move || {
            commit_now(&store, &rows).map_err(|e| e.to_string())?;
            log.append_now(&logged)
                .map_err(|e| format!("the event log: {e}"))
        })
        .await
        .map_err(|e| sink_error(events, format!("the journal's writer failed: {e}")))?
        .map_err(|message| sink_error(events, message))?;
        for event in events {
            self.inbox.observe(event);
        }
        Ok(())
    }

    async fn last_seq(&self, session_id: &str) -> Result<Option<u64>, SinkError> {
        self.log.last_seq(session_id).await.map_err(|e| SinkError {
            seq: 0,
            kind: "last_seq".into(),
            message: format!("the event log: {e}"),
        })
    }
}

/// One session's events for one client: every logged event after `after`, then the live
/// ones as they happen. Each event comes once, in `seq` order.
pub struct EventStream {
    session_id: String,
    log: SqliteEventLog,
    live: broadcast::Receiver<Event>,
    /// The last `seq` handed out.
    last: u64,
    /// Logged events read but not yet handed out.
    buffered: VecDeque<Event>,
    /// True while reading the log (at the start, and after falling behind the live buffer).
    catching_up: bool,
    /// How often the client fell behind the live buffer and was caught up from the log.
    resyncs: u64,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("session_id", &self.session_id)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl EventStream {
    /// Subscribes first, then reads the log: an event committed in between is in one or the
    /// other (events are logged before they are broadcast), and duplicates are dropped by
    /// `seq`.
    pub(crate) fn new(
        session_id: String,
        log: SqliteEventLog,
        live: broadcast::Receiver<Event>,
        after: u64,
    ) -> Self {
        Self {
            session_id,
            log,
            live,
            last: after,
            buffered: VecDeque::new(),
            catching_up: true,
            resyncs: 0,
        }
    }

    /// The last `seq` handed out (a client reconnects with `after` = this).
    pub fn last_seq(&self) -> u64 {
        self.last
    }

    /// True while the events handed out come from the log (at the start, and after falling
    /// behind the live buffer), false once they are live.
    pub fn replaying(&self) -> bool {
        self.catching_up || !self.buffered.is_empty()
    }

    /// How often the stream fell behind the live buffer and was caught up from the log.
    pub fn resyncs(&self) -> u64 {
        self.resyncs
    }

    /// The next event; `Ok(None)` once the process shuts down.
    pub async fn next(&mut self) -> Result<Option<Event>, HostError> {
        loop {
            if let Some(event) = self.buffered.pop_front() {
                if event.seq > self.last {
                    self.last = event.seq;
                    return Ok(Some(event));
                }
                continue;
            }
            if self.catching_up {
                let page = self
                    .log
                    .after(&self.session_id, self.last, EVENT_LOG_PAGE)
                    .await?;
                if page.is_empty() {
                    self.catching_up = false;
                } else {
                    self.buffered.extend(page);
                }
                continue;
            }
            match self.live.recv().await {
                Ok(event) if event.session_id != self.session_id || event.seq <= self.last => {}
                Ok(event) => {
                    self.last = event.seq;
                    return Ok(Some(event));
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    self.resyncs += 1;
                    self.catching_up = true;
                }
                Err(broadcast::error::RecvError::Closed) => return Ok(None),
            }
        }
    }
}
