//! OCSF 1.3 mappings.
//!
//! Tool calls → **API Activity** (`class_uid` 6003, category 6 Application Activity):
//! `activity_id` 1 Create (`write_file`, `upload`), 2 Read (`read_file`, `read_bytes`,
//! `list_directory`, `stat`, `glob`, `grep`, `download`), 3 Update (`edit_file`), 4 Delete
//! (`delete`), 99 Other (`run_bash`, connector tools); `type_uid` = 600300 + activity;
//! `time`; `api.operation` = tool, `api.request.uid` = call id, `api.service.name` =
//! `paddock`; `actor.app_name` = `Paddock`, `actor.session.uid` = session id;
//! `src_endpoint.name` = `sandbox:<enforcement>`; `status_id` 1 Success (finished),
//! 2 Failure (failed, denied), 99 Other (started, cancelled) with `status`;
//! `status_code` = exit code; `status_detail` = error; `action_id` 1 Allowed / 2 Denied;
//! `duration` (ms); `metadata.uid` = row number, `metadata.correlation_uid` = call id;
//! `unmapped` = enforcement, decision, decided_by, args, truncated, output_preview, hash.
//!
//! Network denials → **Network Activity** (`class_uid` 4001, category 4): `activity_id` 5
//! Refuse, `type_uid` 400105; `dst_endpoint.hostname` / `.port`; `actor.process.file` = the
//! program that tried; `action_id` 2 Denied; `disposition_id` 2 Blocked; `status_id` 2
//! Failure; `status_detail` = the wall's reason; `metadata.correlation_uid` = the call id
//! that caused it (joins it to the API Activity event); `unmapped.rule`, `unmapped.hash`.

use serde_json::{Value, json};

use crate::record::{AuditRecord, CallStatus, Decision, NetworkDenialRecord, ToolCallRecord};

pub const OCSF_VERSION: &str = "1.3.0";

fn metadata(seq: i64, correlation: Option<&str>) -> Value {
    json!({
        "version": OCSF_VERSION,
        "product": { "name": "Paddock", "vendor_name": "Paddock" },
        "log_name": "audit",
        "uid": seq.to_string(),
        "correlation_uid": correlation,
    })
}

/// The OCSF event for a record, when it has a class here.
pub fn event(
    seq: i64,
    time_ms: i64,
    session_id: &str,
    hash: &str,
    record: &AuditRecord,
) -> Option<Value> {
    match record {
        AuditRecord::ToolCall(call) => Some(api_activity(seq, time_ms, session_id, hash, call)),
        AuditRecord::NetworkDenial(denial) => Some(network_activity(seq, session_id, hash, denial)),
        _ => None,
    }
}

fn api_activity(
    seq: i64,
    time_ms: i64,
    session_id: &str,
    hash: &str,
    call: &ToolCallRecord,
) -> Value {
    let (activity_id, activity) = match call.tool.as_str() {
        "write_file" | "upload" => (1, "Create"),
        "read_file" | "read_bytes" | "list_directory" | "stat" | "glob" | "grep" | "download" => {
            (2, "Read")
        }
        "edit_file" => (3, "Update"),
        "delete" => (4, "Delete"),
        _ => (99, "Other"),
    };
    let (status_id, status) = match call.status {
        CallStatus::Finished => (1, "Success"),
        CallStatus::Failed | CallStatus::Denied => (2, "Failure"),
        CallStatus::Started => (99, "Started"),
        CallStatus::Cancelled => (99, "Cancelled"),
    };
    let denied = call.status == CallStatus::Denied || call.decision == Some(Decision::Deny);
    let (action_id, action) = if denied {
        (2, "Denied")
    } else {
        (1, "Allowed")
    };
    let (severity_id, severity) = if denied {
        (2, "Low")
    } else {
        (1, "Informational")
    };
    json!({
        "class_uid": 6003,
        "class_name": "API Activity",
        "category_uid": 6,
        "category_name": "Application Activity",
        "activity_id": activity_id,
        "activity_name": activity,
        "type_uid": 600300 + activity_id,
        "type_name": format!("API Activity: {activity}"),
        "time": time_ms,
        "severity_id": severity_id,
        "severity": severity,
        "status_id": status_id,
        "status": status,
        "status_code": call.exit_code.map(|c| c.to_string()),
        "status_detail": call.error,
        "action_id": action_id,
        "action": action,
        "duration": call.duration_ms,
        "actor": { "app_name": "Paddock", "session": { "uid": session_id } },
        "api": {
            "operation": call.tool,
            "request": { "uid": call.call_id },
            "service": { "name": "paddock" },
        },
        "src_endpoint": { "name": format!("sandbox:{}", call.enforcement.as_str()) },
        "metadata": metadata(seq, Some(&call.call_id)),
        "unmapped": {
            "enforcement": call.enforcement.as_str(),
            "decision": call.decision.map(Decision::as_str),
            "decided_by": call.decided_by,
            "args": call.args,
            "truncated": call.truncated,
            "output_preview": call.output_preview,
            "hash": hash,
        },
    })
}

fn network_activity(seq: i64, session_id: &str, hash: &str, record: &NetworkDenialRecord) -> Value {
    let denial = &record.denial;
    let process = denial.binary.as_ref().map(
        |path| json!({ "file": { "path": path, "name": path.rsplit('/').next().unwrap_or(path) } }),
    );
    json!({
        "class_uid": 4001,
        "class_name": "Network Activity",
        "category_uid": 4,
        "category_name": "Network Activity",
        "activity_id": 5,
        "activity_name": "Refuse",
        "type_uid": 400105,
        "type_name": "Network Activity: Refuse",
        "time": denial.time_ms,
        "severity_id": 2,
        "severity": "Low",
        "action_id": 2,
        "action": "Denied",
        "disposition_id": 2,
        "disposition": "Blocked",
        "status_id": 2,
        "status": "Failure",
        "status_detail": denial.reason,
        "message": denial.model_notice(),
        "dst_endpoint": { "hostname": denial.host, "port": denial.port },
        "actor": { "app_name": "Paddock", "session": { "uid": session_id }, "process": process },
        "metadata": metadata(seq, record.call_id.as_deref()),
        "unmapped": { "rule": denial.rule, "hash": hash },
    })
}
