use protocol::NetworkDenial;
use sandbox_provider::CallError;
use tool_protocol::{Data, ErrorCode, RunBashResult, ToolResult, WriteFileResult};

use super::*;

#[test]
fn bash_result_shows_exit_code_and_both_streams() {
    let rendered = render_result(&ToolResult::RunBash(RunBashResult {
        exit_code: Some(2),
        signal: None,
        timed_out: false,
        duration_ms: 7,
        stdout: Data::from("out"),
        stderr: Data::from("err\n"),
        stdout_dropped: 0,
        stderr_dropped: 3,
    }));
    assert_eq!(
        rendered.text,
        "exit code: 2\n[stdout]\nout\n[stderr]\nerr\n[3 bytes of stderr were dropped by the runner]\n"
    );
    assert_eq!(rendered.exit_code, Some(2));
    assert!(!rendered.is_error);
}

#[test]
fn write_result_names_the_path() {
    let rendered = render_result(&ToolResult::WriteFile(WriteFileResult {
        path: "/p/a.txt".into(),
        bytes_written: 5,
        created: true,
    }));
    assert_eq!(rendered.text, "created /p/a.txt (5 bytes)");
}

#[test]
fn errors_carry_the_runner_code() {
    let rendered = render_error(&CallError::Tool {
        code: ErrorCode::OutsideRoots,
        message: "/etc/passwd is outside the session's folders".into(),
    });
    assert!(rendered.is_error);
    assert_eq!(
        rendered.text,
        "error (outside_roots): /etc/passwd is outside the session's folders"
    );
}

#[test]
fn denials_use_the_providers_wording() {
    let denial = NetworkDenial {
        host: "example.com".into(),
        port: 443,
        binary: Some("/usr/bin/curl".into()),
        reason: "no matching policy".into(),
        rule: None,
        time_ms: 0,
    };
    let mut text = "exit code: 7".to_owned();
    append_denials(&mut text, std::slice::from_ref(&denial));
    assert_eq!(text, format!("exit code: 7\n{}", denial.model_notice()));
}

#[test]
fn truncation_keeps_head_and_tail() {
    let text: String = (0..1000).map(|i| format!("{i}\n")).collect();
    let (cut, truncated) = truncate_middle(&text, 200);
    assert!(truncated);
    assert!(cut.chars().count() <= 200 + 40, "{}", cut.len());
    assert!(cut.starts_with("0\n1\n"));
    assert!(cut.ends_with("999\n"));
    assert!(cut.contains("characters cut"));
    let (same, truncated) = truncate_middle("short", 200);
    assert_eq!((same.as_str(), truncated), ("short", false));
}

#[test]
fn truncation_respects_multibyte_characters() {
    let text = "é".repeat(500);
    let (cut, truncated) = truncate_middle(&text, 100);
    assert!(truncated);
    assert!(cut.starts_with('é') && cut.ends_with('é'));
}
