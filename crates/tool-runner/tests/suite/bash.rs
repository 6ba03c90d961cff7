//! `run_bash`: output, exit status, stdin and env, truncation, timeouts and process groups.

use std::collections::BTreeMap;
use std::fs;
use std::thread;
use std::time::Duration;

use tool_protocol::{Data, ErrorCode, RunBash, Stream, ToolResult};

use super::harness::{Fixture, bash, process_gone, read_pid};

fn result(reply: &tool_runner::client::Reply) -> &tool_protocol::RunBashResult {
    match &reply.outcome {
        Ok(ToolResult::RunBash(r)) => r,
        other => panic!("expected a run_bash result, got {other:?}"),
    }
}

#[test]
fn runs_in_the_working_folder_with_stdin_env_and_exit_code() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let mut env = BTreeMap::new();
    env.insert("GREETING".to_owned(), "hej".to_owned());
    let reply = runner
        .call(RunBash {
            command: "pwd; echo $GREETING; cat; echo oops >&2; exit 7".into(),
            cwd: Some("sub".into()),
            env: Some(env),
            stdin: Some(Data::from("from stdin\n")),
            timeout_ms: None,
            max_output_bytes: None,
        })
        .unwrap();
    let r = result(&reply);
    let expected = format!("{}\nhej\nfrom stdin\n", fx.work_path("sub"));
    assert_eq!(r.stdout, Data::Text(expected.clone()));
    assert_eq!(r.stderr, Data::Text("oops\n".into()));
    assert_eq!((r.exit_code, r.signal, r.timed_out), (Some(7), None, false));
    // The same bytes were streamed as output frames before the result.
    assert_eq!(reply.output_bytes(Stream::Stdout), expected.as_bytes());
    assert_eq!(reply.output_bytes(Stream::Stderr), b"oops\n");
}

#[test]
fn non_utf8_output_travels_as_base64() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let reply = runner.call(bash("printf '\\377\\376'")).unwrap();
    assert_eq!(result(&reply).stdout, Data::Bytes(vec![0xff, 0xfe]));
}

#[test]
fn oversized_output_keeps_head_and_tail() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let reply = runner
        .call(RunBash {
            max_output_bytes: Some(100),
            ..bash("echo START; head -c 500000 /dev/zero | tr '\\0' x; echo; echo END")
        })
        .unwrap();
    let r = result(&reply);
    let text = r.stdout.to_text_lossy();
    assert!(text.starts_with("START\n"), "{text}");
    assert!(text.ends_with("END\n"), "{text}");
    let total = 6 + 500_000 + 1 + 4;
    assert_eq!(r.stdout_dropped, total - 100);
    assert!(
        text.contains(&format!("\n[… {} bytes dropped …]\n", total - 100)),
        "{text}"
    );
    // Streaming stops at the cap too.
    assert_eq!(reply.output_bytes(Stream::Stdout).len(), 100);
}

#[test]
fn timeout_kills_the_whole_group_grandchildren_included() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let marker = fx.work.join("late-marker");
    let pid_file = fx.work.join("grandchild.pid");
    let command = format!(
        "(sleep 1.5; touch {}) & echo $! > {}; sleep 60",
        marker.display(),
        pid_file.display()
    );
    let reply = runner
        .call(RunBash {
            timeout_ms: Some(400),
            ..bash(&command)
        })
        .unwrap();
    let r = result(&reply);
    assert!(r.timed_out);
    assert_eq!((r.exit_code, r.signal), (None, Some(9)));
    let grandchild = read_pid(&pid_file);
    assert!(
        process_gone(grandchild, Duration::from_secs(5)),
        "grandchild {grandchild} lives"
    );
    thread::sleep(Duration::from_millis(1600));
    assert!(
        !marker.exists(),
        "the grandchild wrote its marker after the timeout"
    );
}

#[test]
fn timeout_above_the_ceiling_is_refused() {
    let fx = Fixture::new();
    let runner = fx.runner_with(&["--max-timeout-ms", "1000"]);
    let message = runner.refused(
        RunBash {
            timeout_ms: Some(5000),
            ..bash("true")
        },
        ErrorCode::BadArgs,
    );
    assert_eq!(
        message,
        "`args.timeout_ms`: 5000 is over this runner's ceiling of 1000 ms (--max-timeout-ms)"
    );
}

#[test]
fn an_orphan_holding_stdout_does_not_hang_the_call() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let pid_file = fx.work.join("orphan.pid");
    let pending = runner
        .start(bash(&format!(
            "sleep 60 & echo $! > {}; echo done",
            pid_file.display()
        )))
        .unwrap();
    let reply = pending.wait_at_most(Duration::from_secs(20)).unwrap();
    let r = result(&reply);
    assert_eq!((r.exit_code, r.timed_out), (Some(0), false));
    assert_eq!(r.stdout, Data::Text("done\n".into()));
    // It kept our pipe, so it was killed with its group.
    let orphan = read_pid(&pid_file);
    assert!(
        process_gone(orphan, Duration::from_secs(5)),
        "orphan {orphan} lives"
    );
}

#[test]
fn a_process_that_escaped_the_group_cannot_hang_the_call_either() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let pid_file = fx.work.join("escaped.pid");
    let pending = runner
        .start(bash(&format!(
            "setsid sleep 60 & echo $! > {}; echo done",
            pid_file.display()
        )))
        .unwrap();
    let reply = pending.wait_at_most(Duration::from_secs(20)).unwrap();
    assert_eq!(result(&reply).stdout, Data::Text("done\n".into()));
    // It is outside the group; clean it up ourselves.
    let escaped = read_pid(&pid_file);
    let _ = std::process::Command::new("kill")
        .arg(escaped.to_string())
        .status();
    // The runner still serves calls.
    let again = runner.call(bash("echo still here")).unwrap();
    assert_eq!(result(&again).stdout, Data::Text("still here\n".into()));
}

#[test]
fn a_background_process_with_its_own_output_is_left_running() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let pid_file = fx.work.join("daemon.pid");
    let reply = runner
        .call(bash(&format!(
            "sleep 30 >/dev/null 2>&1 & echo $! > {}",
            pid_file.display()
        )))
        .unwrap();
    assert_eq!(result(&reply).exit_code, Some(0));
    let daemon = read_pid(&pid_file);
    assert!(
        !process_gone(daemon, Duration::from_millis(300)),
        "it was killed"
    );
    let _ = std::process::Command::new("kill")
        .arg(daemon.to_string())
        .status();
}

#[test]
fn bad_arguments_are_refused_before_anything_runs() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let mut env = BTreeMap::new();
    env.insert("A=B".to_owned(), "x".to_owned());
    runner.refused(
        RunBash {
            env: Some(env),
            ..bash("true")
        },
        ErrorCode::BadArgs,
    );
    runner.refused(
        RunBash {
            timeout_ms: Some(0),
            ..bash("true")
        },
        ErrorCode::BadArgs,
    );
    runner.refused(
        RunBash {
            max_output_bytes: Some(64 * 1024 * 1024),
            ..bash("true")
        },
        ErrorCode::BadArgs,
    );
    runner.refused(
        RunBash {
            cwd: Some("a.txt".into()),
            ..bash("true")
        },
        ErrorCode::NotADirectory,
    );
    runner.refused(
        RunBash {
            cwd: Some(fx.outside.display().to_string()),
            ..bash(&format!("touch {}/pwned", fx.outside.display()))
        },
        ErrorCode::OutsideRoots,
    );
    assert!(!fx.outside.join("pwned").exists());
    fs::metadata(fx.outside.join("secret.txt")).unwrap();
}
