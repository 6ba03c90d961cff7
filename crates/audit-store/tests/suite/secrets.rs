//! Secrets planted in every field that reaches storage must not be stored or exported.

use crate::common;

use audit_store::{
    AuditRecord, AuditStore, CallStatus, DecidedBy, DeciderKind, Decision, GenericRecord,
    NetworkDenialRecord, NewEvent, Query, SessionEvent, SessionRecord, ToolCallRecord,
};
use protocol::{Attestation, CanaryResult, EnforcementLevel, NetworkDenial};
use serde_json::json;

const MODEL_KEY: &str = "mk-live-9f8e7d6c5b4a39281706";
const SK: &str = "sk-ant-api03-PLANTEDPLANTEDPLANTED00";
const GHP: &str = "ghp_PLANTED0123456789abcdefghijKLMNOP";
const AWS: &str = "AKIAPLANTED000000000";
const BEARER: &str = "eyJhbGciOiJub25lIn0.PLANTED.bearer";
const PASSWORD: &str = "hunter2-PLANTED-pw";

fn planted() -> Vec<NewEvent> {
    let text = format!(
        "key {MODEL_KEY} sk {SK} gh {GHP} aws {AWS} Authorization: Bearer {BEARER} password={PASSWORD}"
    );
    let session = format!("s-{MODEL_KEY}");
    vec![
        NewEvent::new(
            &session,
            1,
            AuditRecord::Session(SessionRecord {
                event: SessionEvent::Started,
                provider: Some(text.clone()),
                approval_mode: Some(text.clone()),
                folders: vec![format!("rw:/p/{GHP}")],
                note: Some(text.clone()),
            }),
        ),
        NewEvent::new(
            &session,
            2,
            AuditRecord::Attestation(Attestation {
                enforcement: EnforcementLevel::Local,
                config_hash: format!("sha256:{SK}"),
                canaries: vec![CanaryResult {
                    name: text.clone(),
                    passed: true,
                    detail: text.clone(),
                }],
                time_ms: 2,
                limits: None,
            }),
        ),
        NewEvent::new(
            &session,
            3,
            AuditRecord::ToolCall(ToolCallRecord {
                connector: None,
                call_id: format!("call-{AWS}"),
                tool: format!("tool {MODEL_KEY}"),
                args: json!({
                    "command": format!("curl -H 'Authorization: Bearer {BEARER}' https://u:{PASSWORD}@h/x?api_key={PASSWORD}"),
                    "env": { "GITHUB_TOKEN": GHP, "OPENAI_API_KEY": SK, "PLAIN": MODEL_KEY },
                    "nested": [{ "password": PASSWORD, "note": text }],
                    MODEL_KEY: "key as a key",
                }),
                enforcement: EnforcementLevel::Local,
                decision: Some(Decision::Allow),
                decided_by: Some(DecidedBy {
                    kind: DeciderKind::User,
                    name: Some(text.clone()),
                }),
                status: CallStatus::Failed,
                exit_code: Some(1),
                duration_ms: Some(5),
                truncated: true,
                output_preview: Some(text.clone()),
                error: Some(text.clone()),
            }),
        ),
        NewEvent::new(
            &session,
            4,
            AuditRecord::NetworkDenial(NetworkDenialRecord {
                call_id: Some(format!("call-{AWS}")),
                denial: NetworkDenial {
                    host: format!("{GHP}.example"),
                    port: 443,
                    binary: Some(format!("/tmp/{SK}")),
                    reason: text.clone(),
                    rule: Some(text.clone()),
                    time_ms: 4,
                },
            }),
        ),
        NewEvent::new(
            &session,
            5,
            AuditRecord::Generic(GenericRecord {
                name: text.clone(),
                data: json!({ "secret": "x", "list": [text], "token": GHP, "input_tokens": 7 }),
            }),
        ),
    ]
}

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in [MODEL_KEY, SK, GHP, AWS, BEARER, PASSWORD] {
        assert!(
            !text.contains(secret),
            "{what} holds a planted secret ({} chars)",
            secret.len()
        );
    }
}

#[test]
fn planted_secrets_never_reach_the_file_or_the_exports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let mut store = AuditStore::open(&path).unwrap();
    store.register_secret(MODEL_KEY).unwrap();
    store.append_batch(&planted()).unwrap();
    assert!(store.verify().unwrap().is_intact());

    // Every column of every row.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut stmt = conn.prepare("SELECT * FROM events").unwrap();
    let columns = stmt.column_count();
    let mut rows = stmt.query([]).unwrap();
    let mut cells = String::new();
    while let Some(row) = rows.next().unwrap() {
        for i in 0..columns {
            if let Ok(Some(text)) = row.get::<_, Option<String>>(i) {
                cells.push_str(&text);
                cells.push('\n');
            }
        }
    }
    assert_clean("the stored columns", cells.as_bytes());
    assert!(cells.contains("[redacted]"));

    // The raw database and WAL bytes, after a checkpoint.
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    for file in std::fs::read_dir(dir.path()).unwrap() {
        let file = file.unwrap().path();
        assert_clean(&file.display().to_string(), &std::fs::read(&file).unwrap());
    }

    // Queries and both exports.
    let page = store.query(&Query::default()).unwrap();
    assert_eq!(page.events.len(), 5);
    assert_clean(
        "a query page",
        serde_json::to_string(&page).unwrap().as_bytes(),
    );
    let mut jsonl = Vec::new();
    assert_eq!(
        store.export_jsonl(&Query::default(), &mut jsonl).unwrap(),
        5
    );
    assert_clean("the JSONL export", &jsonl);
    let mut ocsf = Vec::new();
    assert_eq!(store.export_ocsf(&Query::default(), &mut ocsf).unwrap(), 2);
    assert_clean("the OCSF export", &ocsf);
}

#[test]
fn a_secret_registered_later_is_still_kept_out_of_exports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let late = "late-registered-key-000111";
    {
        let mut store = AuditStore::open(&path).unwrap();
        store
            .append(&NewEvent::new(
                "s",
                1,
                AuditRecord::Session(SessionRecord {
                    event: SessionEvent::Started,
                    provider: None,
                    approval_mode: None,
                    folders: vec![],
                    note: Some(format!("uses {late}")),
                }),
            ))
            .unwrap();
    }
    let mut store = AuditStore::open(&path).unwrap();
    store.register_secret(late).unwrap();
    let mut jsonl = Vec::new();
    store.export_jsonl(&Query::default(), &mut jsonl).unwrap();
    let text = String::from_utf8(jsonl).unwrap();
    assert!(!text.contains(late));
    assert!(text.contains("\"redacted_on_export\":true"), "{text}");
    let report = audit_store::verify_jsonl(text.as_bytes()).unwrap();
    assert!(
        report
            .first_broken
            .unwrap()
            .to_string()
            .contains("redacted again on export")
    );
}

#[test]
fn placeholders_are_named_not_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = AuditStore::open(dir.path().join("a.db")).unwrap();
    let mut started = common::tool_call(
        "c1",
        "run_bash",
        EnforcementLevel::Openshell,
        CallStatus::Started,
    );
    if let AuditRecord::ToolCall(call) = &mut started {
        call.args = json!({ "command": "gh pr list", "env": { "GH_HOST": "openshell:resolve:env:GH_TOKEN" } });
    }
    store
        .append(&NewEvent::new(
            "s",
            1,
            common::attestation(EnforcementLevel::Openshell),
        ))
        .unwrap();
    store.append(&NewEvent::new("s", 2, started)).unwrap();
    let page = store.query(&Query::default()).unwrap();
    let AuditRecord::ToolCall(call) = &page.events[0].record else {
        panic!()
    };
    assert_eq!(call.args["env"]["GH_HOST"], "[secret GH_TOKEN]");
}
