//! The protocol under load and abuse: concurrency, ordering, cancel, duplicate ids, malformed
//! lines, shutdown and end of input.

use std::time::Duration;

use tool_protocol::{Data, ErrorCode, HostFrame, ReadFile, RunBash, RunnerFrame, ToolResult};

use super::harness::{Fixture, RawRunner, bash, process_gone, read_pid};

#[test]
fn a_hundred_calls_run_at_once_on_one_connection() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let gate = fx.work.join("gate");
    std::fs::create_dir(&gate).unwrap();
    // Each call waits until all hundred have arrived: only concurrent calls can all finish.
    let calls: Vec<_> = (0..100)
        .map(|i| {
            let command = format!(
                "touch {gate}/{i}; while [ $(ls {gate} | wc -l) -lt 100 ]; do sleep 0.02; done; \
                 echo {i}",
                gate = gate.display()
            );
            runner
                .start(RunBash {
                    timeout_ms: Some(60_000),
                    ..bash(&command)
                })
                .unwrap()
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        let reply = call.wait_at_most(Duration::from_secs(90)).unwrap();
        match reply.outcome {
            Ok(ToolResult::RunBash(r)) => {
                assert!(!r.timed_out, "call {i} waited alone");
                assert_eq!(r.stdout, Data::Text(format!("{i}\n")));
            }
            other => panic!("call {i}: {other:?}"),
        }
    }
}

#[test]
fn responses_come_back_out_of_order() {
    let fx = Fixture::new();
    let mut raw = RawRunner::start(&fx);
    raw.send_line(
        r#"{"type":"call","id":"slow","tool":"run_bash","args":{"command":"sleep 1; echo slow"}}"#,
    );
    raw.send_line(r#"{"type":"call","id":"fast","tool":"stat","args":{"path":"a.txt"}}"#);
    let first = raw.next_frame();
    assert!(
        matches!(&first, RunnerFrame::Result { id, .. } if id == "fast"),
        "{first:?}"
    );
    let mut ids = Vec::new();
    loop {
        match raw.next_frame() {
            RunnerFrame::Output { id, .. } => ids.push(id),
            RunnerFrame::Result { id, .. } => {
                assert_eq!(id, "slow");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        ids,
        vec!["slow".to_owned()],
        "output frames come before the result"
    );
}

#[test]
fn cancel_kills_the_group_and_ends_the_call_with_cancelled() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let pid_file = fx.work.join("child.pid");
    let pending = runner
        .start(bash(&format!(
            "sleep 60 & echo $! > {}; wait",
            pid_file.display()
        )))
        .unwrap();
    let grandchild = read_pid(&pid_file);
    runner.cancel(&pending.id).unwrap();
    let reply = pending.wait_at_most(Duration::from_secs(20)).unwrap();
    let e = reply.outcome.unwrap_err();
    assert_eq!(e.code, ErrorCode::Cancelled);
    assert!(process_gone(grandchild, Duration::from_secs(5)));
    // Cancelling an id that already ended is ignored, and the connection goes on.
    runner.cancel("long-gone").unwrap();
    assert!(matches!(
        runner.ok(ReadFile {
            path: "a.txt".into(),
            offset: None,
            limit: None
        }),
        ToolResult::ReadFile(_)
    ));
}

#[test]
fn a_duplicate_id_in_flight_is_refused_without_harming_the_first_call() {
    let fx = Fixture::new();
    let mut raw = RawRunner::start(&fx);
    raw.send_line(
        r#"{"type":"call","id":"d","tool":"run_bash","args":{"command":"sleep 0.5; echo first"}}"#,
    );
    raw.send_line(r#"{"type":"call","id":"d","tool":"stat","args":{"path":"a.txt"}}"#);
    assert_eq!(
        raw.next_line(),
        r#"{"type":"error","id":"d","code":"duplicate_id","message":"call id `d` is already in flight"}"#
    );
    let mut saw_result = false;
    while !saw_result {
        match raw.next_frame() {
            RunnerFrame::Output { .. } => {}
            RunnerFrame::Result { id, result } => {
                assert_eq!(id, "d");
                assert!(matches!(result, ToolResult::RunBash(_)));
                saw_result = true;
            }
            other => panic!("{other:?}"),
        }
    }
    // Once answered, the id may be used again.
    raw.send_line(r#"{"type":"call","id":"d","tool":"stat","args":{"path":"a.txt"}}"#);
    assert!(matches!(raw.next_frame(), RunnerFrame::Result { .. }));
}

#[test]
fn malformed_lines_get_named_errors_and_do_not_disturb_a_call_in_flight() {
    let fx = Fixture::new();
    let mut raw = RawRunner::start(&fx);
    raw.send_line(r#"{"type":"call","id":"busy","tool":"run_bash","args":{"command":"sleep 0.5; echo survived"}}"#);
    let mut oversized = vec![b'x'; 9 * 1024 * 1024];
    oversized.push(b'\n');
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"@ this is not json\n".to_vec(),
            r#"{"type":"error","code":"bad_json","message":"line is not JSON: unexpected character at byte 0"}"#,
        ),
        (
            b"[1,2]\n".to_vec(),
            r#"{"type":"error","code":"bad_frame","message":"a frame must be a JSON object, got an array"}"#,
        ),
        (
            br#"{"type":"call","id":"u","tool":"launch_missiles","args":{}}"#
                .iter()
                .chain(b"\n")
                .copied()
                .collect(),
            r#"{"type":"error","id":"u","code":"unknown_tool","message":"unknown tool `launch_missiles`"}"#,
        ),
        (
            br#"{"type":"call","id":"m","tool":"read_file","args":{}}"#
                .iter()
                .chain(b"\n")
                .copied()
                .collect(),
            r#"{"type":"error","id":"m","code":"bad_args","message":"`args.path`: missing field"}"#,
        ),
        (
            br#"{"type":"dance"}"#.iter().chain(b"\n").copied().collect(),
            r#"{"type":"error","code":"unknown_type","message":"unknown frame type `dance`"}"#,
        ),
        (
            b"{\"type\":\"call\",\"id\":\"\xff\"}\n".to_vec(),
            r#"{"type":"error","code":"bad_utf8","message":"line is not UTF-8 (first bad byte at offset 21)"}"#,
        ),
        (
            oversized,
            r#"{"type":"error","code":"line_too_long","message":"line of 9437184 bytes is longer than the limit of 8388608 bytes"}"#,
        ),
    ];
    for (bytes, expected) in &cases {
        raw.send(bytes);
        assert_eq!(&raw.next_line(), expected);
    }
    let mut stdout = Vec::new();
    loop {
        match raw.next_frame() {
            RunnerFrame::Output { chunk, .. } => stdout.extend_from_slice(chunk.as_bytes()),
            RunnerFrame::Result { id, .. } => {
                assert_eq!(id, "busy");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(stdout, b"survived\n");
}

#[test]
fn shutdown_answers_calls_in_flight_and_exits() {
    let fx = Fixture::new();
    let mut raw = RawRunner::start(&fx);
    raw.send_line(r#"{"type":"call","id":"long","tool":"run_bash","args":{"command":"sleep 60"}}"#);
    std::thread::sleep(Duration::from_millis(200));
    raw.send(HostFrame::Shutdown.encode().as_bytes());
    assert_eq!(
        raw.next_line(),
        r#"{"type":"error","id":"long","code":"cancelled","message":"the call was cancelled"}"#
    );
    raw.close_input();
    let status = raw.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn end_of_input_finishes_and_answers_calls_in_flight() {
    let fx = Fixture::new();
    let mut raw = RawRunner::start(&fx);
    raw.send_line(
        r#"{"type":"call","id":"last","tool":"run_bash","args":{"command":"sleep 0.3; echo bye"}}"#,
    );
    raw.close_input();
    let rest = raw.rest();
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(
        rest[1].starts_with(r#"{"type":"result","id":"last","tool":"run_bash""#),
        "{}",
        rest[1]
    );
    assert!(raw.child.wait().unwrap().success());
}
