//! The composition of the agent's events with the audit trail: every durable event is mapped to
//! an audit record and committed before the agent goes on. One sink serves every session of
//! the process: calls are remembered by session and call id, and each session's provider is
//! the one its `session_created` event names.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use agent::{EventSink, SinkError};
use async_trait::async_trait;
use audit_store::{
    AuditRecord, AuditStore, CallStatus, DecidedBy as AuditDecidedBy, DeciderKind, Decision,
    GenericRecord, NetworkDenialRecord, NewEvent, SessionEvent, SessionRecord, ToolCallRecord,
};
use protocol::{
    ApprovalMode, DecidedBy, Event, EventMsg, FolderAccess, ProviderKind, SessionSettings,
    ToolCallStatus,
};
use serde_json::Value;

/// What the sink remembers about a call between its events.
#[derive(Default, Clone)]
struct CallState {
    args: Value,
    decision: Option<Decision>,
    decided_by: Option<AuditDecidedBy>,
    /// Why it was denied, when it was.
    denial: Option<String>,
}

fn key(session: &str, call_id: &str) -> CallKey {
    (session.to_owned(), call_id.to_owned())
}

/// What the sink knows about a live session.
#[derive(Clone, Copy)]
struct SessionFacts {
    provider: ProviderKind,
    mode: ApprovalMode,
}

/// A call of a session: calls of different sessions may share an id (models number them
/// from 1 per conversation).
type CallKey = (String, String);

/// Commits agent events of every session to the audit store.
pub struct AuditSink {
    store: Arc<Mutex<AuditStore>>,
    sessions: Mutex<HashMap<String, SessionFacts>>,
    calls: Mutex<HashMap<CallKey, CallState>>,
}

impl AuditSink {
    pub fn new(store: AuditStore) -> Self {
        Self {
            store: Arc::new(Mutex::new(store)),
            sessions: Mutex::new(HashMap::new()),
            calls: Mutex::new(HashMap::new()),
        }
    }

    /// The store, shared with queries and exports of the same process.
    pub fn store(&self) -> Arc<Mutex<AuditStore>> {
        Arc::clone(&self.store)
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<CallKey, CallState>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn facts(&self, session_id: &str) -> Option<SessionFacts> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session_id)
            .copied()
    }

    /// The session's provider (`None` before its `session_created`, which never happens for
    /// a session started by the agent).
    fn provider(&self, session_id: &str) -> Option<ProviderKind> {
        self.facts(session_id).map(|f| f.provider)
    }

    fn decider(&self, session_id: &str, by: DecidedBy) -> AuditDecidedBy {
        let mode = self.facts(session_id).map(|f| f.mode);
        let (kind, name) = match by {
            DecidedBy::User | DecidedBy::StandingApproval => (DeciderKind::User, None),
            DecidedBy::Rule => (DeciderKind::Rule, None),
            DecidedBy::SafetyCheck => (DeciderKind::Rule, Some("safety_check".to_owned())),
            DecidedBy::Policy => (DeciderKind::Rule, Some("policy".to_owned())),
            DecidedBy::Mode if mode == Some(ApprovalMode::Bypass) => (DeciderKind::Bypass, None),
            DecidedBy::Mode => (DeciderKind::Mode, mode.map(|m| m.as_str().to_owned())),
        };
        AuditDecidedBy { kind, name }
    }

    fn session_record(
        event: SessionEvent,
        provider: ProviderKind,
        settings: &SessionSettings,
    ) -> AuditRecord {
        AuditRecord::Session(SessionRecord {
            event,
            provider: Some(provider.as_str().to_owned()),
            approval_mode: Some(settings.approval_mode.as_str().replace('_', "-")),
            folders: settings
                .folders
                .iter()
                .map(|f| match f.access {
                    FolderAccess::ReadWrite => format!("rw:{}", f.path),
                    FolderAccess::ReadOnly => format!("ro:{}", f.path),
                })
                .collect(),
            note: None,
        })
    }

    fn generic(event: &Event) -> AuditRecord {
        let mut data = serde_json::to_value(&event.msg).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut data {
            map.remove("type");
            if let Some(turn) = &event.turn_id {
                map.insert("turn_id".into(), Value::String(turn.clone()));
            }
        }
        AuditRecord::Generic(GenericRecord {
            name: event.msg.name().to_owned(),
            data,
        })
    }

    /// The audit records of one event (none for events that only update the sink's memory).
    fn records(&self, event: &Event) -> Vec<AuditRecord> {
        let session = event.session_id.as_str();
        match &event.msg {
            EventMsg::SessionCreated {
                settings,
                resumed,
                provider,
            } => {
                self.sessions
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(
                        session.to_owned(),
                        SessionFacts {
                            provider: *provider,
                            mode: settings.approval_mode,
                        },
                    );
                let kind = if *resumed {
                    SessionEvent::Resumed
                } else {
                    SessionEvent::Started
                };
                vec![Self::session_record(kind, *provider, settings)]
            }
            EventMsg::SessionClosed => {
                let provider = self.provider(session);
                self.sessions
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(session);
                self.calls().retain(|(s, _), _| s != session);
                vec![AuditRecord::Session(SessionRecord {
                    event: SessionEvent::Ended,
                    provider: provider.map(|p| p.as_str().to_owned()),
                    approval_mode: None,
                    folders: Vec::new(),
                    note: None,
                })]
            }
            EventMsg::SandboxReady { attestation, .. }
            | EventMsg::SandboxRecreated { attestation, .. } => {
                vec![
                    AuditRecord::Attestation(attestation.clone()),
                    Self::generic(event),
                ]
            }
            EventMsg::ToolCallRequested { call_id, args, .. } => {
                self.calls().insert(
                    (session.to_owned(), call_id.clone()),
                    CallState {
                        args: args.clone(),
                        ..CallState::default()
                    },
                );
                vec![Self::generic(event)]
            }
            EventMsg::ToolCallApproved { call_id, by, .. } => {
                let decider = self.decider(session, *by);
                if let Some(call) = self.calls().get_mut(&key(session, call_id)) {
                    call.decision = Some(Decision::Allow);
                    call.decided_by = Some(decider);
                }
                vec![Self::generic(event)]
            }
            EventMsg::ToolCallDenied {
                call_id,
                by,
                reason,
            } => {
                // The row is written at the call's `tool_call_finished` (status `denied`), which
                // names the wall the call would have run behind and is committed before the
                // model sees the refusal.
                let decider = self.decider(session, *by);
                if let Some(call) = self.calls().get_mut(&key(session, call_id)) {
                    call.decision = Some(Decision::Deny);
                    call.decided_by = Some(decider);
                    call.denial = Some(reason.clone());
                }
                vec![Self::generic(event)]
            }
            EventMsg::ToolCallStarted {
                call_id,
                tool,
                args,
                enforcement,
                ..
            } => {
                let call = self
                    .calls()
                    .get(&key(session, call_id))
                    .cloned()
                    .unwrap_or_default();
                vec![AuditRecord::ToolCall(ToolCallRecord {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    args: args.clone(),
                    enforcement: *enforcement,
                    connector: crate::connectors::connector_of(tool).map(str::to_owned),
                    decision: call.decision,
                    decided_by: call.decided_by,
                    status: CallStatus::Started,
                    exit_code: None,
                    duration_ms: None,
                    truncated: false,
                    output_preview: None,
                    error: None,
                })]
            }
            EventMsg::ToolCallFinished {
                call_id,
                tool,
                status,
                exit_code,
                duration_ms,
                truncated,
                enforcement,
                network_denials,
                output,
                ..
            } => {
                let call = self
                    .calls()
                    .remove(&key(session, call_id))
                    .unwrap_or_default();
                if *status == ToolCallStatus::Denied {
                    return vec![AuditRecord::ToolCall(ToolCallRecord {
                        call_id: call_id.clone(),
                        tool: tool.clone(),
                        args: call.args,
                        enforcement: *enforcement,
                        connector: crate::connectors::connector_of(tool).map(str::to_owned),
                        decision: Some(Decision::Deny),
                        decided_by: call.decided_by,
                        status: CallStatus::Denied,
                        exit_code: None,
                        duration_ms: None,
                        truncated: false,
                        output_preview: None,
                        error: call.denial.or_else(|| Some(output.clone())),
                    })];
                }
                let (status, error) = match status {
                    ToolCallStatus::Ok => (CallStatus::Finished, None),
                    ToolCallStatus::Cancelled => (CallStatus::Cancelled, None),
                    _ => (CallStatus::Failed, Some(output.clone())),
                };
                let mut records = vec![AuditRecord::ToolCall(ToolCallRecord {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    args: call.args,
                    enforcement: *enforcement,
                    connector: crate::connectors::connector_of(tool).map(str::to_owned),
                    decision: call.decision,
                    decided_by: call.decided_by,
                    status,
                    exit_code: *exit_code,
                    duration_ms: Some(*duration_ms),
                    truncated: *truncated,
                    output_preview: Some(output.clone()),
                    error,
                })];
                records.extend(network_denials.iter().map(|denial| {
                    AuditRecord::NetworkDenial(NetworkDenialRecord {
                        call_id: Some(call_id.clone()),
                        denial: denial.clone(),
                    })
                }));
                records
            }
            // Live-only fragments never reach a durable sink.
            EventMsg::ModelTextDelta { .. } | EventMsg::ToolCallOutput { .. } => Vec::new(),
            _ => vec![Self::generic(event)],
        }
    }
}

impl AuditSink {
    /// The audit rows of `events` (updating what the sink remembers of their calls).
    pub(crate) fn rows(&self, events: &[Event]) -> Vec<NewEvent> {
        events
            .iter()
            .flat_map(|event| {
                self.records(event)
                    .into_iter()
                    .map(|record| NewEvent::new(event.session_id.clone(), event.time_ms, record))
            })
            .collect()
    }
}

/// Commits `rows` in one transaction on the calling thread (a blocking context).
pub(crate) fn commit_now(
    store: &Mutex<AuditStore>,
    rows: &[NewEvent],
) -> Result<(), audit_store::AuditError> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut store = store.lock().unwrap_or_else(PoisonError::into_inner);
    store.append_batch(rows).map(|_| ())
}

/// The error of a batch's commit, named after its last event.
pub(crate) fn sink_error(events: &[Event], message: String) -> SinkError {
    let (seq, kind) = events
        .last()
        .map(|e| (e.seq, e.msg.name().to_owned()))
        .unwrap_or_default();
    SinkError { seq, kind, message }
}

#[async_trait]
impl EventSink for AuditSink {
    async fn record(&self, event: &Event) -> Result<(), SinkError> {
        self.record_batch(std::slice::from_ref(event)).await
    }

    async fn record_batch(&self, events: &[Event]) -> Result<(), SinkError> {
        let rows = self.rows(events);
        if rows.is_empty() {
            return Ok(());
        }
        let store = self.store();
        crate::journal::blocking(move || commit_now(&store, &rows))
            .await
            .map_err(|e| sink_error(events, format!("the audit writer failed: {e}")))?
            .map_err(|e| sink_error(events, e.to_string()))
    }
}
