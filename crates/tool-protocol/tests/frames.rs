//! Golden frames: the checked-in lines both sides must produce and accept byte for byte, and the
//! malformed lines both sides must answer with a named error.

use std::collections::BTreeMap;

use tool_protocol::{
    Call, Data, ErrorCode, Hello, HostFrame, Line, PROTOCOL_VERSION, ReadFile, Root, RootMode,
    RunBash, RunnerFrame, ToolRequest,
};

const HOST_GOLDEN: &str = include_str!("golden/host.jsonl");
const RUNNER_GOLDEN: &str = include_str!("golden/runner.jsonl");

fn text(line: &str) -> Line {
    Line::Text(line.to_owned())
}

#[test]
fn host_golden_lines_round_trip_byte_for_byte() {
    for (n, line) in HOST_GOLDEN.lines().enumerate() {
        let frame = HostFrame::decode(&text(line))
            .unwrap_or_else(|e| panic!("host.jsonl line {}: {e}", n + 1));
        assert_eq!(
            frame.encode(),
            format!("{line}\n"),
            "host.jsonl line {}",
            n + 1
        );
    }
}

#[test]
fn runner_golden_lines_round_trip_byte_for_byte() {
    for (n, line) in RUNNER_GOLDEN.lines().enumerate() {
        let frame = RunnerFrame::decode(&text(line))
            .unwrap_or_else(|e| panic!("runner.jsonl line {}: {e}", n + 1));
        assert_eq!(
            frame.encode(),
            format!("{line}\n"),
            "runner.jsonl line {}",
            n + 1
        );
    }
}

#[test]
fn typed_frames_encode_to_the_golden_lines() {
    let mut env = BTreeMap::new();
    env.insert("A".to_owned(), "1".to_owned());
    env.insert("B".to_owned(), "two".to_owned());
    let call = HostFrame::Call(Call {
        id: "1".into(),
        request: ToolRequest::RunBash(RunBash {
            command: "echo hi".into(),
            cwd: Some("/work/p".into()),
            env: Some(env),
            stdin: Some(Data::from("in\n")),
            timeout_ms: Some(5000),
            max_output_bytes: Some(1024),
        }),
    });
    let read = HostFrame::Call(Call {
        id: "2".into(),
        request: ReadFile {
            path: "src/main.rs".into(),
            offset: Some(10),
            limit: Some(20),
        }
        .into(),
    });
    let hello = RunnerFrame::Hello(Hello {
        protocol: PROTOCOL_VERSION,
        build_id: "fnv1a64:0123456789abcdef".into(),
        roots: vec![
            Root {
                path: "/work/p".into(),
                mode: RootMode::ReadWrite,
            },
            Root {
                path: "/data/ref".into(),
                mode: RootMode::ReadOnly,
            },
        ],
        cwd: "/work/p".into(),
        pid: 4242,
    });
    let host: Vec<&str> = HOST_GOLDEN.lines().collect();
    let runner: Vec<&str> = RUNNER_GOLDEN.lines().collect();
    assert_eq!(call.encode(), format!("{}\n", host[0]));
    assert_eq!(read.encode(), format!("{}\n", host[1]));
    assert_eq!(hello.encode(), format!("{}\n", runner[0]));
}

#[test]
fn malformed_lines_get_named_errors_with_the_call_id_when_readable() {
    let cases: &[(&str, Option<&str>, ErrorCode, &str)] = &[
        ("not json", None, ErrorCode::BadJson, "line is not JSON"),
        ("[1,2]", None, ErrorCode::BadFrame, "must be a JSON object"),
        ("{\"id\":\"3\"}", None, ErrorCode::BadFrame, "`type`"),
        (
            r#"{"type":"call","id":"5","tool":"nope","args":{}}"#,
            Some("5"),
            ErrorCode::UnknownTool,
            "unknown tool `nope`",
        ),
        (
            r#"{"type":"call","id":"5","tool":"read_file","args":{}}"#,
            Some("5"),
            ErrorCode::BadArgs,
            "`args.path`: missing field",
        ),
        (
            r#"{"type":"call","id":"5","tool":"read_file","args":{"path":1}}"#,
            Some("5"),
            ErrorCode::BadArgs,
            "`args.path`: expected a string, got a number",
        ),
        (
            r#"{"type":"call","id":"5","tool":"read_file","args":{"path":"a","bogus":1}}"#,
            Some("5"),
            ErrorCode::BadArgs,
            "`args.bogus`: unknown field",
        ),
        (
            r#"{"type":"call","id":"5","tool":"read_file","args":{"path":"a","offset":-1}}"#,
            Some("5"),
            ErrorCode::BadArgs,
            "`args.offset`: expected an unsigned integer",
        ),
        (
            r#"{"type":"call","tool":"read_file","args":{"path":"a"}}"#,
            None,
            ErrorCode::BadFrame,
            "`id`: missing field",
        ),
        (
            r#"{"type":"call","id":"6","tool":"read_file"}"#,
            Some("6"),
            ErrorCode::BadFrame,
            "`args`: missing field",
        ),
        (
            r#"{"type":"teleport","id":"9"}"#,
            Some("9"),
            ErrorCode::UnknownType,
            "unknown frame type `teleport`",
        ),
        (
            r#"{"type":"cancel","id":"1","extra":true}"#,
            Some("1"),
            ErrorCode::BadFrame,
            "`extra`: unknown field",
        ),
    ];
    for (line, id, code, needle) in cases {
        let err = HostFrame::decode(&text(line)).expect_err(line);
        assert_eq!(err.id.as_deref(), *id, "id for {line}");
        assert_eq!(err.code, *code, "code for {line}");
        assert!(
            err.message.contains(needle),
            "{line}: message {:?}",
            err.message
        );
    }
    let too_long = HostFrame::decode(&Line::TooLong { len: 9_000_000 }).unwrap_err();
    assert_eq!(too_long.code, ErrorCode::LineTooLong);
    assert!(too_long.message.contains("9000000 bytes"));
    let not_utf8 = HostFrame::decode(&Line::NotUtf8 { offset: 3 }).unwrap_err();
    assert_eq!(not_utf8.code, ErrorCode::BadUtf8);
}

#[test]
fn version_mismatch_names_both_versions() {
    let hello = Hello {
        protocol: PROTOCOL_VERSION + 1,
        build_id: "b".into(),
        roots: vec![],
        cwd: "/".into(),
        pid: 1,
    };
    let err = hello.check_version().unwrap_err();
    assert!(err.contains(&format!("protocol version {}", PROTOCOL_VERSION + 1)));
    assert!(err.contains(&format!("this host speaks version {PROTOCOL_VERSION}")));
}
