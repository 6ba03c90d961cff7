//! Builders for audit records used across the integration tests.
#![allow(dead_code)]
// Test setup: a panic here is a failed test with a line number.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use audit_store::{
    AuditRecord, AuditStore, CallStatus, DecidedBy, DeciderKind, Decision, NetworkDenialRecord,
    NewEvent, SessionEvent, SessionRecord, ToolCallRecord,
};
use protocol::{Attestation, CanaryResult, EnforcementLevel, NetworkDenial};
use serde_json::json;

pub fn temp_store() -> (tempfile::TempDir, AuditStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = AuditStore::open(dir.path().join("audit.db")).unwrap();
    (dir, store)
}

pub fn attestation(enforcement: EnforcementLevel) -> AuditRecord {
    AuditRecord::Attestation(Attestation {
        enforcement,
        config_hash: "sha256:00ff".into(),
        canaries: vec![CanaryResult {
            name: "home_absent".into(),
            passed: true,
            detail: "HOME is not mounted".into(),
        }],
        time_ms: 1_000,
        limits: None,
    })
}

pub fn session_started() -> AuditRecord {
    AuditRecord::Session(SessionRecord {
        event: SessionEvent::Started,
        provider: Some("local".into()),
        approval_mode: Some("ask".into()),
        folders: vec!["rw:/p".into()],
        note: None,
    })
}

pub fn call(
    call_id: &str,
    tool: &str,
    enforcement: EnforcementLevel,
    status: CallStatus,
) -> ToolCallRecord {
    ToolCallRecord {
        connector: None,
        call_id: call_id.into(),
        tool: tool.into(),
        args: json!({ "command": "cargo test", "cwd": "/p" }),
        enforcement,
        decision: Some(if status == CallStatus::Denied {
            Decision::Deny
        } else {
            Decision::Allow
        }),
        decided_by: Some(DecidedBy {
            kind: DeciderKind::Rule,
            name: Some("git-read-only".into()),
        }),
        status,
        exit_code: (status == CallStatus::Finished).then_some(0),
        duration_ms: (status == CallStatus::Finished).then_some(12),
        truncated: false,
        output_preview: (status == CallStatus::Finished).then(|| "ok".to_string()),
        error: None,
    }
}

pub fn tool_call(
    call_id: &str,
    tool: &str,
    enforcement: EnforcementLevel,
    status: CallStatus,
) -> AuditRecord {
    AuditRecord::ToolCall(call(call_id, tool, enforcement, status))
}

pub fn denial(call_id: &str, host: &str) -> AuditRecord {
    AuditRecord::NetworkDenial(NetworkDenialRecord {
        call_id: Some(call_id.into()),
        denial: NetworkDenial {
            host: host.into(),
            port: 443,
            binary: Some("/usr/bin/curl".into()),
            reason: "no matching policy".into(),
            rule: Some("profile:strict".into()),
            time_ms: 2_000,
        },
    })
}

pub fn event(session: &str, time_ms: i64, record: AuditRecord) -> NewEvent {
    NewEvent::new(session, time_ms, record)
}
