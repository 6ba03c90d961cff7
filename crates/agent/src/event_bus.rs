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

    /// Commits several durable events, in order, as one unit where the sink can (one
    /// transaction per store): returns only once every one is committed. The default records
    /// them one by one.
    async fn record_batch(&self, events: &[Event]) -> Result<(), SinkError> {
        for event in events {
            self.record(event).await?;
        }
        Ok(())
    }

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

/// Cleans an event of secrets the composition root knows (model keys, connector tokens,
/// secret values) before it is numbered: what the durable sink and every live observer get
/// is the cleaned event.
pub trait EventScrubber: Send + Sync {
    fn scrub(&self, msg: EventMsg) -> EventMsg;
}

/// The events of many sessions: one durable sink, one live broadcast.
#[derive(Clone)]
pub struct EventBus {
    sink: Arc<dyn EventSink>,
    live: broadcast::Sender<Event>,
    scrubber: Option<Arc<dyn EventScrubber>>,
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
        Self {
            sink,
            live,
            scrubber: None,
        }
    }

    /// Every event is cleaned by `scrubber` before the sink or an observer sees it.
    pub fn with_scrubber(mut self, scrubber: Arc<dyn EventScrubber>) -> Self {
        self.scrubber = Some(scrubber);
        self
    }

    fn scrub(&self, msg: EventMsg) -> EventMsg {
        match &self.scrubber {
            Some(scrubber) => scrubber.scrub(msg),
            None => msg,
        }
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
    /// Events held back by [`SessionEvents::hold`], committed with the next emitted event.
    held: std::sync::Mutex<Vec<Held>>,
}

/// An event held back until the session's next emit.
struct Held {
    turn_id: Option<String>,
    time_ms: i64,
    msg: EventMsg,
}

impl SessionEvents {
    pub(crate) fn new(bus: EventBus, session_id: String, last_seq: u64) -> Self {
        Self {
            bus,
            session_id,
            seq: Mutex::new(last_seq),
            held: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Holds a durable event back: it is numbered, committed and broadcast together with (and
    /// before) the next durable event this session emits, in one commit. For facts that need
    /// not be on disk before anything happens — a call's `tool_call_requested` while the
    /// gate, which acts on nothing, decides — so that a call allowed without asking commits
    /// its request, approval and start at once. Whoever holds must emit a durable event
    /// before it acts on anything outside the process; every path of a tool call does.
    pub(crate) fn hold(&self, turn_id: Option<&str>, msg: EventMsg) {
        let msg = self.bus.scrub(msg);
        self.held().push(Held {
            turn_id: turn_id.map(str::to_owned),
            time_ms: now_ms(),
            msg,
        });
    }

    /// Numbers the event, commits it when durable (after any held events, in one commit),
    /// then broadcasts them. A live-only event leaves held events held: it needs no commit.
    /// When the commit fails, held events stay held for the next emit.
    pub(crate) async fn emit(&self, turn_id: Option<&str>, msg: EventMsg) -> Result<(), SinkError> {
        let mut seq = self.seq.lock().await;
        let mut event = Event {
            seq: 0,
            session_id: self.session_id.clone(),
            turn_id: turn_id.map(str::to_owned),
            time_ms: now_ms(),
            msg: self.bus.scrub(msg),
        };
        let held = if event.is_durable() {
            std::mem::take(&mut *self.held())
        } else {
            Vec::new()
        };
        let mut next = *seq;
        let mut events: Vec<Event> = held
            .iter()
            .map(|h| {
                next += 1;
                Event {
                    seq: next,
                    session_id: self.session_id.clone(),
                    turn_id: h.turn_id.clone(),
                    time_ms: h.time_ms,
                    msg: h.msg.clone(),
                }
            })
            .collect();
        next += 1;
        event.seq = next;
        events.push(event);
        let recorded = match events.as_slice() {
            [event] if event.is_durable() => self.bus.sink.record(event).await,
            [_] => Ok(()),
            all => self.bus.sink.record_batch(all).await,
        };
        if let Err(e) = recorded {
            let mut still_held = self.held();
            let later = std::mem::replace(&mut *still_held, held);
            still_held.extend(later);
            return Err(e);
        }
        *seq = next;
        for event in events {
            // No live observer is not an error.
            let _ = self.bus.live.send(event);
        }
        Ok(())
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Vec<Held>> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
