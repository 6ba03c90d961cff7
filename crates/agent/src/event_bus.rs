//! Where a session's events go: a durable [`EventSink`] (the audit store, wired in by the
//! composition root) and a broadcast for live observers (a terminal, a UI).

use std::sync::Arc;

use async_trait::async_trait;
use protocol::{Event, EventMsg};
use tokio::sync::{Mutex, broadcast};

/// Why a durable sink could not commit an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("recording event #{seq} ({kind}) failed: {message}")]
pub struct SinkError {
    pub seq: u64,
    pub kind: String,
    pub message: String,
}

/// Commits events durably. `record` returns only once the event is committed (for the audit
/// store: the row is in the database). The agent awaits it for every durable event, so a
/// tool call's `tool_call_started` is committed before the call runs and its
/// `tool_call_finished` before the model sees the result.
#[async_trait]
pub trait EventSink: Send + Sync {
    /// Commits one durable event (see [`Event::is_durable`]); events arrive in `seq` order.
    async fn record(&self, event: &Event) -> Result<(), SinkError>;

    /// The highest `seq` this sink committed for `session_id`, when it keeps track. A resumed
    /// session numbers its events after it, so no number is used twice even when the process
    /// was killed before the session store saved its own `last_seq`.
    async fn last_seq(&self, session_id: &str) -> Result<Option<u64>, SinkError> {
        let _ = session_id;
        Ok(None)
    }
}

/// A sink that commits nothing, for embedders that keep no audit trail (tests of other parts).
#[derive(Debug, Clone, Copy, Default)]
pub struct DiscardSink;

#[async_trait]
impl EventSink for DiscardSink {
    async fn record(&self, _event: &Event) -> Result<(), SinkError> {
        Ok(())
    }
}

/// The events of many sessions: one durable sink, one live broadcast.
#[derive(Clone)]
pub struct EventBus {
    sink: Arc<dyn EventSink>,
    live: broadcast::Sender<Event>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus")
            .field("live_receivers", &self.live.receiver_count())
            .finish_non_exhaustive()
    }
}

impl EventBus {
    /// `capacity` bounds how far a live observer may fall behind before it misses events
    /// (it then gets `RecvError::Lagged`); the durable sink never misses one.
    pub fn new(sink: Arc<dyn EventSink>, capacity: usize) -> Self {
        let (live, _) = broadcast::channel(capacity.max(16));
        Self { sink, live }
    }

    /// A live observer of every event emitted after this call.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.live.subscribe()
    }

    /// The sink's last committed `seq` of a session (see [`EventSink::last_seq`]).
    pub(crate) async fn last_committed_seq(
        &self,
        session_id: &str,
    ) -> Result<Option<u64>, SinkError> {
        self.sink.last_seq(session_id).await
    }
}

/// One session's numbered stream of events.
pub(crate) struct SessionEvents {
    bus: EventBus,
    session_id: String,
    /// The last `seq` used. Held while an event is recorded and broadcast, so the sink and
    /// observers see events in `seq` order even when tool calls run in parallel.
    seq: Mutex<u64>,
}

impl SessionEvents {
    pub(crate) fn new(bus: EventBus, session_id: String, last_seq: u64) -> Self {
        Self {
            bus,
            session_id,
            seq: Mutex::new(last_seq),
        }
    }

    /// Numbers the event, commits it when durable, then broadcasts it.
    pub(crate) async fn emit(&self, turn_id: Option<&str>, msg: EventMsg) -> Result<(), SinkError> {
        let mut seq = self.seq.lock().await;
        let event = Event {
            seq: *seq + 1,
            session_id: self.session_id.clone(),
            turn_id: turn_id.map(str::to_owned),
            time_ms: now_ms(),
            msg,
        };
        if event.is_durable() {
            self.bus.sink.record(&event).await?;
        }
        *seq = event.seq;
        // No live observer is not an error.
        let _ = self.bus.live.send(event);
        Ok(())
    }

    /// Emits an event whose loss is only logged (used outside turns, where no caller could act
    /// on the failure).
    pub(crate) async fn emit_logged(&self, turn_id: Option<&str>, msg: EventMsg) {
        if let Err(e) = self.emit(turn_id, msg).await {
            tracing::error!(session = %self.session_id, "{e}");
        }
    }

    pub(crate) async fn last_seq(&self) -> u64 {
        *self.seq.lock().await
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
