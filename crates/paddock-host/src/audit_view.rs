//! One audit row with the rows related to it: for a tool call (or a network denial), every
//! state of that call and the network denials joined to it by the row relation (the same
//! session and `call_id` column), never by matching text.

use audit_store::{AuditRecord, MAX_PAGE, Query, RecordKind, StoredEvent};
use serde::{Deserialize, Serialize};

use crate::error::HostError;
use crate::host::Host;

/// An audit row and what is joined to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct AuditEntry {
    pub event: StoredEvent,
    /// The tool call the row belongs to (its own, or the one a denial names).
    pub call_id: Option<String>,
    /// Every state row of that call (requested, approved, finished, …), oldest first.
    pub call: Vec<StoredEvent>,
    /// The network denials joined to that call, oldest first.
    pub denials: Vec<StoredEvent>,
}

impl Host {
    /// Row `seq` with its call's rows and the denials joined to the call.
    pub async fn audit_entry(&self, seq: i64) -> Result<AuditEntry, HostError> {
        let host = self.clone();
        tokio::task::spawn_blocking(move || {
            let store = host.audit_reader()?;
            let event = store
                .event(seq)?
                .ok_or(HostError::AuditRowNotFound { seq })?;
            let call_id = match &event.record {
                AuditRecord::ToolCall(call) => Some(call.call_id.clone()),
                AuditRecord::NetworkDenial(denial) => denial.call_id.clone(),
                _ => None,
            };
            let mut call = Vec::new();
            let mut denials = Vec::new();
            if let Some(call_id) = &call_id {
                for kind in [RecordKind::ToolCall, RecordKind::NetworkDenial] {
                    let mut query = Query {
                        session_id: Some(event.session_id.clone()),
                        call_id: Some(call_id.clone()),
                        kind: Some(kind),
                        limit: MAX_PAGE,
                        ..Query::default()
                    };
                    let rows = if kind == RecordKind::ToolCall {
                        &mut call
                    } else {
                        &mut denials
                    };
                    loop {
                        let page = store.query(&query)?;
                        rows.extend(page.events);
                        match page.next {
                            Some(next) => query.cursor = Some(next),
                            None => break,
                        }
                    }
                    rows.reverse();
                }
            }
            Ok(AuditEntry {
                event,
                call_id,
                call,
                denials,
            })
        })
        .await
        .map_err(|e| HostError::Internal(format!("reading the audit row: {e}")))?
    }
}
