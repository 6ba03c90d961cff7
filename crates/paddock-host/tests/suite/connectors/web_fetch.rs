//! The built-in `web_fetch` through a session: asked like any host tool, audited under the
//! connector name `web_fetch` with enforcement `host`, bounded by the session's own network
//! allowances (a host the session was not given is refused; once allowed for the session, the
//! next call reaches it).

use audit_store::CallStatus;
use protocol::{ApprovalMode, EnforcementLevel, EventMsg};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Machine, approve_once, run_turn};

const PAGE: &str = "<html><body><h1>Install guide</h1><p>Run the installer.</p></body></html>";

/// A loopback HTTP/1.1 server answering every request with `PAGE`.
async fn docs_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let _ = stream.read(&mut request).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{PAGE}",
                    PAGE.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_fetch_is_asked_audited_and_follows_the_sessions_allowed_hosts() {
    let port = docs_server().await;
    // The page is served on loopback, reachable only through an allowed name and a port the
    // machine lists (`local_ports`); `localhost` is in no network profile.
    let machine = Machine::start(&format!("[web_fetch]\nlocal_ports = [{port}]\n")).await;
    let session = machine.session(ApprovalMode::Ask).await;
    let url = format!("http://localhost:{port}/guide");

    machine.script(&[("toolu_1", "web_fetch", json!({"url": url}))]);
    let mut asked = Vec::new();
    let events = run_turn(&machine, &session, "read the guide", |tool, _| {
        asked.push(tool.to_owned());
        approve_once(tool, false)
    })
    .await;
    assert_eq!(asked, ["web_fetch"], "the call asks in `ask` mode");
    let refused = super::text(machine.tool_results().last().unwrap());
    assert!(
        refused.starts_with("web_fetch: ") && refused.contains("localhost"),
        "a host the session was not given is refused, naming it: {refused}"
    );
    assert!(!refused.contains("Install guide"), "{refused}");
    let started = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallStarted { enforcement, .. } => Some(*enforcement),
            _ => None,
        })
        .expect("the approved call started");
    assert_eq!(started, EnforcementLevel::Host);

    // Allowed for this session (no sandbox is built for it): the next call reaches it.
    machine
        .host
        .allow_host_for_session(&session, &format!("localhost:{port}"))
        .await
        .unwrap();
    machine.script(&[("toolu_2", "web_fetch", json!({"url": url}))]);
    run_turn(&machine, &session, "again", approve_once).await;
    let fetched = super::text(machine.tool_results().last().unwrap());
    assert!(
        fetched.contains("Install guide") && fetched.contains("Run the installer."),
        "{fetched}"
    );
    assert!(!fetched.contains("<h1>"), "HTML becomes text: {fetched}");

    // Both calls are tool-call rows of the connector `web_fetch`, run on the host after the
    // user's approval; the first failed, the second finished.
    let rows: Vec<_> = machine
        .tool_rows()
        .await
        .into_iter()
        .filter(|r| r.status != CallStatus::Started)
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for row in &rows {
        assert_eq!(row.tool, "web_fetch");
        assert_eq!(row.connector.as_deref(), Some("web_fetch"));
        assert_eq!(row.enforcement, EnforcementLevel::Host);
        assert_eq!(row.decision, Some(audit_store::Decision::Allow));
        assert_eq!(
            row.decided_by.as_ref().map(|d| d.kind),
            Some(audit_store::DeciderKind::User)
        );
        assert_eq!(row.args, json!({"url": url}));
    }
    let by_call = |id: &str| rows.iter().find(|r| r.call_id == id).unwrap();
    assert_eq!(by_call("toolu_1").status, CallStatus::Failed);
    assert_eq!(by_call("toolu_2").status, CallStatus::Finished);
    assert!(
        by_call("toolu_2")
            .output_preview
            .as_deref()
            .is_some_and(|p| p.contains("Install guide")),
        "{:?}",
        by_call("toolu_2")
    );
}
