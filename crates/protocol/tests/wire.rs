//! The JSON shapes of ops and events, pinned: front ends in other languages depend on them.

use pretty_assertions::assert_eq;
use protocol::*;
use serde_json::json;

#[test]
fn submission_wire_shape() {
    let submission = Submission {
        id: "s1".into(),
        op: Op::Approval {
            call_id: "c1".into(),
            decision: ApprovalDecision::Deny {
                reason: Some("not that folder".into()),
            },
        },
    };
    let value = serde_json::to_value(&submission).unwrap();
    assert_eq!(
        value,
        json!({"id":"s1","op":{"type":"approval","call_id":"c1",
            "decision":{"type":"deny","reason":"not that folder"}}})
    );
    let back: Submission = serde_json::from_value(value).unwrap();
    assert_eq!(back, submission);
}

#[test]
fn start_session_parses_from_json() {
    let text = r#"{"id":"1","op":{"type":"start_session","settings":{
        "folders":[{"path":"/home/alice/project","access":"read_write"}],
        "cwd":null,"network_profile":"strict","extra_hosts":["pypi.org"],
        "credentials":[],"model":"claude-sonnet-4-5","approval_mode":"auto_edit"}}}"#;
    let submission: Submission = serde_json::from_str(text).unwrap();
    let Op::StartSession { settings } = submission.op else {
        panic!("wrong op: {submission:?}");
    };
    assert_eq!(settings.approval_mode, ApprovalMode::AutoEdit);
    assert_eq!(settings.folders[0].access, FolderAccess::ReadWrite);
}

#[test]
fn unknown_op_is_refused_with_its_name() {
    let err = serde_json::from_str::<Submission>(r#"{"id":"1","op":{"type":"format_disk"}}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("format_disk"), "{err}");
}

#[test]
fn event_wire_shape() {
    let event = Event {
        seq: 3,
        session_id: "sess".into(),
        turn_id: Some("t1".into()),
        time_ms: 1_700_000_000_000,
        msg: EventMsg::ToolCallFinished {
            call_id: "c1".into(),
            tool: "run_bash".into(),
            status: ToolCallStatus::Ok,
            exit_code: Some(0),
            duration_ms: 12,
            truncated: false,
            timed_out: false,
            enforcement: EnforcementLevel::Local,
            network_denials: vec![],
            output: "hi\n".into(),
        },
    };
    let value = serde_json::to_value(&event).unwrap();
    assert_eq!(
        value,
        json!({"seq":3,"session_id":"sess","turn_id":"t1","time_ms":1_700_000_000_000_i64,
            "msg":{"type":"tool_call_finished","call_id":"c1","tool":"run_bash","status":"ok",
            "exit_code":0,"duration_ms":12,"truncated":false,"timed_out":false,
            "enforcement":"local","network_denials":[],"output":"hi\n"}})
    );
    assert_eq!(event.msg.name(), "tool_call_finished");
    let back: Event = serde_json::from_value(value).unwrap();
    assert_eq!(back, event);
}

#[test]
fn streaming_fragments_are_not_durable() {
    let event = |msg| Event {
        seq: 1,
        session_id: "s".into(),
        turn_id: None,
        time_ms: 0,
        msg,
    };
    assert!(!event(EventMsg::ModelTextDelta { text: "x".into() }).is_durable());
    assert!(
        !event(EventMsg::ToolCallOutput {
            call_id: "c".into(),
            stream: OutputStream::Stdout,
            chunk: "x".into()
        })
        .is_durable()
    );
    assert!(event(EventMsg::SessionClosed).is_durable());
}

#[test]
fn approval_mode_parses_both_spellings() {
    assert_eq!(
        ApprovalMode::parse("auto-edit"),
        Some(ApprovalMode::AutoEdit)
    );
    assert_eq!(
        ApprovalMode::parse("auto_in_sandbox"),
        Some(ApprovalMode::AutoInSandbox)
    );
    assert_eq!(ApprovalMode::parse("yolo"), None);
    for mode in [
        ApprovalMode::Ask,
        ApprovalMode::AutoEdit,
        ApprovalMode::AutoInSandbox,
        ApprovalMode::Bypass,
    ] {
        assert_eq!(ApprovalMode::parse(mode.as_str()), Some(mode));
        assert_eq!(serde_json::to_value(mode).unwrap(), json!(mode.as_str()));
    }
}

#[test]
fn revoking_an_approval_has_a_pinned_shape() {
    let submission: Submission = serde_json::from_value(
        json!({"id":"s2","op":{"type":"revoke_approval","approval_id":"appr-1"}}),
    )
    .unwrap();
    assert_eq!(
        submission.op,
        Op::RevokeApproval {
            approval_id: "appr-1".into()
        }
    );
    assert_eq!(submission.op.name(), "revoke_approval");
    let msg = EventMsg::ApprovalRevoked {
        approval_id: "appr-1".into(),
        scope: ApprovalScope::Always,
        description: "commands starting with `cargo test`".into(),
    };
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        json!({"type":"approval_revoked","approval_id":"appr-1","scope":"always",
            "description":"commands starting with `cargo test`"})
    );
    assert_eq!(msg.name(), "approval_revoked");
}

#[test]
fn a_denials_notice_names_the_program_or_says_it_is_unknown() {
    let mut denial = NetworkDenial {
        host: "blocked.test".into(),
        port: 443,
        binary: Some("/usr/bin/curl".into()),
        reason: "not on the allow list".into(),
        rule: Some("policy:strict".into()),
        time_ms: 0,
    };
    assert_eq!(
        denial.model_notice(),
        "[blocked by the sandbox's network policy: /usr/bin/curl tried blocked.test:443. This is not a network fault; ask the user to allow it.]"
    );
    denial.binary = None;
    assert_eq!(denial.program(), "an unknown program");
    assert!(
        denial
            .model_notice()
            .contains("an unknown program tried blocked.test:443")
    );
    denial.rule = Some(NetworkDenial::CONNECTION_LIMIT_RULE.into());
    denial.reason =
        "the sandbox already has 256 connections open through the proxy, its limit".into();
    assert_eq!(
        denial.model_notice(),
        "[refused by the sandbox's network proxy: an unknown program tried blocked.test:443, but the sandbox already has 256 connections open through the proxy, its limit. This is not the network policy: close connections the sandbox no longer needs and retry.]"
    );
}
