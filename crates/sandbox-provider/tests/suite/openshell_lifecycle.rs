//! The OpenShell provider against the gateway double over real gRPC with mTLS: discovery,
//! lazy create → READY → attach → every tool → close → deleted; reconnect after a dropped
//! stream with the sandbox kept; exec timeouts; recreate and keep.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failed test with a line number"
)]

use crate::openshell_support;

use std::time::Duration;

use openshell_proto::v1::SandboxPhase;
use openshell_support::{Auth, Harness, bash, bash_result, progress_log};
use protocol::EnforcementLevel;
use sandbox_provider::openshell::{ExecSpec, SessionOptions};
use sandbox_provider::{CallError, Sandbox, SandboxProvider};
use tokio_util::sync::CancellationToken;
use tool_protocol::{
    Data, Delete, EditFile, Glob, Grep, ListDirectory, ReadBytes, ReadFile, Stat, ToolRequest,
    ToolResult, WriteFile,
};

async fn call(sandbox: &dyn Sandbox, request: ToolRequest) -> ToolResult {
    let outcome = sandbox.call(request, None, &CancellationToken::new()).await;
    outcome
        .result
        .unwrap_or_else(|e| panic!("tool call failed: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_lives_from_lazy_create_to_deletion_over_mtls() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let request = h.request(false);
    assert!(
        h.double.sandbox_names().is_empty(),
        "nothing is created before start"
    );

    let (progress, sink) = progress_log();
    let sandbox = provider.start(&request, &sink).await.unwrap();
    let name = sandbox.id().to_owned();
    assert_eq!(name, sandbox_policy::sandbox_name(&request.session_id));
    assert_eq!(h.double.phase(&name), Some(SandboxPhase::Ready));
    assert_eq!(sandbox.enforcement(), EnforcementLevel::Openshell);
    let progress = progress.lock().unwrap().join("\n");
    assert!(progress.contains("ready"), "{progress}");

    let attestation = sandbox.attestation();
    assert!(attestation.passed(), "{attestation:?}");
    assert!(attestation.config_hash.starts_with("sha256:"));
    let names: Vec<&str> = attestation
        .canaries
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    for expected in [
        "home_absent",
        "outside_read_refused",
        "outside_write_refused",
        "read_only_grant_refuses_write",
        "proxy_refuses_unlisted_host",
        "no_new_privs",
        "seccomp_filter",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert_eq!(
        names
            .iter()
            .filter(|n| n.starts_with("grant_verified:"))
            .count(),
        2
    );
    let labels = h.double.labels(&name).unwrap();
    assert_eq!(labels["paddock.machine"], "test-machine");

    // Every tool, through the one attached stream.
    let rw = h.rw.display().to_string();
    let file = format!("{rw}/notes.txt");
    let wrote = call(
        &*sandbox,
        ToolRequest::WriteFile(WriteFile {
            path: file.clone(),
            content: Data::from_bytes(b"alpha\nbeta\n".to_vec()),
            create_parents: None,
        }),
    )
    .await;
    assert!(
        matches!(wrote, ToolResult::WriteFile(ref w) if w.created),
        "{wrote:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "alpha\nbeta\n",
        "the write reached the host folder"
    );
    let read = call(
        &*sandbox,
        ToolRequest::ReadFile(ReadFile {
            path: file.clone(),
            offset: None,
            limit: None,
        }),
    )
    .await;
    assert!(
        matches!(read, ToolResult::ReadFile(ref r) if r.content.contains("beta")),
        "{read:?}"
    );
    let edited = call(
        &*sandbox,
        ToolRequest::EditFile(EditFile {
            path: file.clone(),
            old_string: "beta".into(),
            new_string: "gamma".into(),
            replace_all: None,
        }),
    )
    .await;
    assert!(
        matches!(edited, ToolResult::EditFile(ref e) if e.replacements == 1),
        "{edited:?}"
    );
    let bytes = call(
        &*sandbox,
        ToolRequest::ReadBytes(ReadBytes {
            path: file.clone(),
            offset: Some(6),
            length: Some(5),
        }),
    )
    .await;
    assert!(
        matches!(bytes, ToolResult::ReadBytes(ref b) if b.data.as_bytes() == b"gamma"),
        "{bytes:?}"
    );
    let stat = call(&*sandbox, ToolRequest::Stat(Stat { path: file.clone() })).await;
    assert!(
        matches!(stat, ToolResult::Stat(ref s) if s.size == 12),
        "{stat:?}"
    );
    let listing = call(
        &*sandbox,
        ToolRequest::ListDirectory(ListDirectory {
            path: Some(rw.clone()),
            depth: None,
            limit: None,
        }),
    )
    .await;
    assert!(
        matches!(listing, ToolResult::ListDirectory(ref l) if l.entries.iter().any(|e| e.path == "notes.txt")),
        "{listing:?}"
    );
    let globbed = call(
        &*sandbox,
        ToolRequest::Glob(Glob {
            pattern: "*.txt".into(),
            path: Some(rw.clone()),
            limit: None,
        }),
    )
    .await;
    assert!(format!("{globbed:?}").contains("notes.txt"), "{globbed:?}");
    let grepped = call(
        &*sandbox,
        ToolRequest::Grep(Grep {
            pattern: "gam+a".into(),
            path: Some(rw.clone()),
            include: None,
            exclude: None,
            case_insensitive: None,
            context: None,
            max_matches: None,
        }),
    )
    .await;
    assert!(format!("{grepped:?}").contains("gamma"), "{grepped:?}");
    let outcome = sandbox
        .call(
            bash("id -u; echo $OPENSHELL_SANDBOX; pwd; cat notes.txt"),
            None,
            &CancellationToken::new(),
        )
        .await;
    let (out, code) = bash_result(&outcome);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.starts_with("1000\n1\n"),
        "runs as the folders' owner inside OpenShell: {out}"
    );
    assert!(out.contains(&rw) && out.contains("gamma"), "{out}");
    assert!(outcome.denials.is_empty(), "{:?}", outcome.denials);
    let refused = sandbox
        .call(
            ToolRequest::WriteFile(WriteFile {
                path: format!("{}/new.txt", h.ro.display()),
                content: Data::from_bytes(b"x".to_vec()),
                create_parents: None,
            }),
            None,
            &CancellationToken::new(),
        )
        .await;
    assert!(
        refused.result.is_err(),
        "a read-only grant refuses writes: {refused:?}"
    );
    let deleted = call(
        &*sandbox,
        ToolRequest::Delete(Delete {
            path: file.clone(),
            recursive: None,
        }),
    )
    .await;
    assert!(matches!(deleted, ToolResult::Delete(_)), "{deleted:?}");
    assert!(!std::path::Path::new(&file).exists());

    sandbox.close().await.unwrap();
    assert_eq!(
        h.double.phase(&name),
        None,
        "close waits until the sandbox is gone"
    );
    let after = sandbox
        .call(bash("true"), None, &CancellationToken::new())
        .await;
    assert!(
        matches!(after.result, Err(CallError::Disconnected(_))),
        "{after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_attach_stream_fails_the_call_in_flight_and_the_next_call_reattaches() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let sandbox = provider.start(&h.request(false), &|_| {}).await.unwrap();
    let name = sandbox.id().to_owned();
    let id_before = h.double.sandbox_id(&name).unwrap();

    let slow = {
        let sandbox = sandbox.clone();
        tokio::spawn(async move {
            sandbox
                .call(bash("sleep 5; echo done"), None, &CancellationToken::new())
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        h.double.drop_attach_streams() >= 1,
        "an attach stream was open"
    );
    let lost = slow.await.unwrap();
    assert!(
        matches!(lost.result, Err(CallError::Disconnected(_))),
        "a transport error, not a result: {lost:?}"
    );

    let outcome = sandbox
        .call(bash("echo again"), None, &CancellationToken::new())
        .await;
    let (out, code) = bash_result(&outcome);
    assert_eq!((out.trim(), code), ("again", Some(0)));
    assert_eq!(
        h.double.sandbox_id(&name).unwrap(),
        id_before,
        "the same sandbox, not a new one"
    );
    sandbox.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_timeouts_report_124_as_timed_out_and_quick_124_as_an_exit() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let sandbox = provider.start(&h.request(false), &|_| {}).await.unwrap();
    let gateway = provider.gateway().await.unwrap();
    let slow = gateway
        .exec(
            sandbox.id(),
            &ExecSpec {
                argv: vec!["sleep".into(), "30".into()],
                timeout: Duration::from_secs(1),
                ..ExecSpec::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(slow.exit_code, 124);
    assert!(slow.timed_out);
    let quick = gateway
        .exec(
            sandbox.id(),
            &ExecSpec {
                argv: vec![
                    "bash".into(),
                    "-c".into(),
                    "echo $GREETING; exit 124".into(),
                ],
                environment: [("GREETING".to_owned(), "it's me".to_owned())].into(),
                timeout: Duration::from_secs(20),
                ..ExecSpec::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(quick.exit_code, 124);
    assert!(!quick.timed_out, "a command's own 124 is not a timeout");
    assert_eq!(String::from_utf8_lossy(&quick.stdout), "it's me\n");
    sandbox.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_sandbox_survives_close_and_a_folder_change_recreates_it() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let request = h.request(false);
    let options = SessionOptions {
        keep: Some(true),
        ..SessionOptions::default()
    };
    let kept = provider
        .start_session(&request, &options, &|_| {})
        .await
        .unwrap();
    let name = kept.id().to_owned();
    kept.close().await.unwrap();
    assert_eq!(
        h.double.phase(&name),
        Some(SandboxPhase::Ready),
        "keep leaves it running"
    );
    assert_eq!(h.double.labels(&name).unwrap()["paddock.keep"], "true");

    let (lines, sink) = progress_log();
    let resumed = provider
        .start_session(&request, &options, &sink)
        .await
        .unwrap();
    assert!(
        lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("reusing the kept sandbox")),
        "{:?}",
        lines.lock().unwrap()
    );
    assert_eq!(resumed.sandbox_id(), h.double.sandbox_id(&name).unwrap());

    let mut narrower = request.clone();
    narrower.folders.truncate(1);
    let (recreated, note) = provider
        .recreate(&resumed, &narrower, &SessionOptions::default(), &|_| {})
        .await
        .unwrap();
    assert!(note.contains("recreated"));
    assert_ne!(recreated.sandbox_id(), resumed.sandbox_id());
    let outcome = recreated
        .call(
            bash(&format!("ls {}", h.ro.display())),
            None,
            &CancellationToken::new(),
        )
        .await;
    let (_, code) = bash_result(&outcome);
    assert_ne!(code, Some(0), "the dropped folder is no longer reachable");
    recreated.close().await.unwrap();
    assert_eq!(h.double.phase(&name), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_ready_is_awaited_with_progress_and_exec_before_it_is_refused_as_not_ready() {
    let h = Harness::start(Auth::Mtls).await;
    h.double.set_ready_delay(Duration::from_millis(1500));
    let provider = h.provider();
    let request = h.request(false);
    let name = sandbox_policy::sandbox_name(&request.session_id);
    let (lines, sink) = progress_log();
    let starting = {
        let (provider, request) = (provider.clone(), request.clone());
        tokio::spawn(async move { provider.start(&request, &sink).await })
    };
    for _ in 0..200 {
        if h.double.phase(&name) == Some(SandboxPhase::Provisioning) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(h.double.phase(&name), Some(SandboxPhase::Provisioning));
    let gateway = provider.gateway().await.unwrap();
    let early = gateway
        .exec(
            &name,
            &ExecSpec {
                argv: vec!["true".into()],
                timeout: Duration::from_secs(5),
                ..ExecSpec::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(early, sandbox_provider::openshell::GatewayError::Precondition(ref why) if why.contains("not ready")),
        "{early:?}"
    );
    let sandbox = starting.await.unwrap().unwrap();
    let lines = lines.lock().unwrap().clone();
    let provisioning = lines
        .iter()
        .position(|l| l.contains(": provisioning"))
        .unwrap();
    let ready = lines.iter().position(|l| l.contains(": ready")).unwrap();
    assert!(provisioning < ready, "{lines:?}");
    sandbox.close().await.unwrap();
}
