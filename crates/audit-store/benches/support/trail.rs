//! Generated audit rows: the tool calls the audit-store bench fills its large trail with, and
//! that the `seed_trail` example (the web UI's audit benchmark) builds a machine's trail from.
//! Included by path from both (`#[path]`), so neither owns the other.

use audit_store::{
    AuditRecord, CallStatus, DecidedBy, DeciderKind, Decision, NewEvent, ToolCallRecord,
};
use protocol::{Attestation, EnforcementLevel};
use serde_json::json;

pub const TOOLS: &[&str] = &[
    "run_bash",
    "read_file",
    "write_file",
    "edit_file",
    "grep",
    "glob",
    "list_directory",
    "stat",
];
pub const LEVELS: &[EnforcementLevel] = &[
    EnforcementLevel::Openshell,
    EnforcementLevel::Local,
    EnforcementLevel::None,
];

pub fn call(i: usize) -> AuditRecord {
    let status = match i % 10 {
        0..=4 => CallStatus::Started,
        5..=8 => CallStatus::Finished,
        _ if i % 1000 == 9 => CallStatus::Denied,
        _ => CallStatus::Failed,
    };
    AuditRecord::ToolCall(ToolCallRecord {
        connector: None,
        call_id: format!("call-{}", i / 2),
        tool: TOOLS[i % TOOLS.len()].to_string(),
        args: json!({ "command": format!("cargo test -p crate{} -- --nocapture", i % 97), "cwd": "/home/alice/project" }),
        enforcement: LEVELS[(i / TOOLS.len()) % LEVELS.len()],
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
        duration_ms: (status == CallStatus::Finished).then_some(1234),
        truncated: false,
        output_preview: (status == CallStatus::Finished)
            .then(|| "test result: ok. 12 passed; 0 failed".to_string()),
        error: None,
    })
}

pub fn attestation() -> AuditRecord {
    AuditRecord::Attestation(Attestation {
        enforcement: EnforcementLevel::Local,
        config_hash: "sha256:00".into(),
        canaries: vec![],
        time_ms: 0,
        limits: None,
    })
}

pub fn events(from: usize, count: usize) -> Vec<NewEvent> {
    (from..from + count)
        .map(|i| NewEvent::new("bench", 1_700_000_000_000 + i as i64, call(i)))
        .collect()
}
