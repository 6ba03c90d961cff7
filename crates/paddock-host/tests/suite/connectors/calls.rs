//! Calls of connector tools through a session: offered, asked, run, audited.

use audit_store::CallStatus;
use protocol::{ApprovalDecision, ApprovalMode, ApprovalScope, EnforcementLevel, EventMsg};
use serde_json::json;

use super::{Machine, all_events, approve_once, http_entry, notices, run_turn, stdio_entry};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connector_tools_are_offered_run_after_approval_and_audited_with_the_connector() {
    let machine = Machine::start(&format!("{}\n{}", stdio_entry(), http_entry("{http}"))).await;
    let session = machine.session(ApprovalMode::Ask).await;
    machine.script(&[
        ("toolu_1", "mcp__tracker__lookup", json!({"query": "rust"})),
        ("toolu_2", "mcp__docs__lookup", json!({"query": "tokio"})),
        ("toolu_3", "mcp__tracker__lookup", json!({"query": "fail"})),
    ]);
    let events = run_turn(&machine, &session, "look things up", approve_once).await;
    let offered = machine.offered(0);
    for name in [
        "mcp__tracker__lookup",
        "mcp__tracker__delete_item",
        "mcp__docs__lookup",
        "mcp__docs__whoami",
        "web_fetch",
        "run_bash",
    ] {
        assert!(offered.contains(&name.to_owned()), "{name}: {offered:?}");
    }
    let asked = events
        .iter()
        .filter(|e| matches!(e.msg, EventMsg::ToolCallAwaitingApproval { .. }))
        .count();
    assert_eq!(asked, 3, "each call asked under `ask`");
    let results = machine.tool_results();
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(super::text(&results[0]), "found: rust");
    assert_eq!(super::text(&results[1]), "found: tokio");
    // The server's error reached the model as a failed call, with what the server said.
    assert_eq!(results[2]["is_error"], true);
    let failed = super::text(&results[2]);
    assert!(failed.contains("the index is unavailable"), "{failed}");

    let rows = machine.tool_rows().await;
    let finished: Vec<_> = rows
        .iter()
        .filter(|r| r.status != CallStatus::Started)
        .collect();
    assert_eq!(finished.len(), 3, "{rows:?}");
    for row in &rows {
        assert_eq!(row.enforcement, EnforcementLevel::Host);
    }
    assert_eq!(finished[0].connector.as_deref(), Some("tracker"));
    assert_eq!(finished[0].args, json!({"query": "rust"}));
    assert_eq!(finished[0].output_preview.as_deref(), Some("found: rust"));
    assert_eq!(finished[1].connector.as_deref(), Some("docs"));
    assert_eq!(finished[2].status, CallStatus::Failed);
    assert!(
        finished[2]
            .error
            .as_deref()
            .unwrap()
            .contains("the index is unavailable")
    );
    assert!(
        machine
            .host
            .audit_verify()
            .await
            .unwrap()
            .first_broken
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mode_but_bypass_asks_including_auto_in_sandbox() {
    let machine = Machine::start(&stdio_entry()).await;
    for mode in [
        ApprovalMode::Ask,
        ApprovalMode::AutoEdit,
        ApprovalMode::AutoInSandbox,
        ApprovalMode::Bypass,
    ] {
        let session = machine.session(mode).await;
        machine.script(&[("toolu_1", "mcp__tracker__lookup", json!({"query": "q"}))]);
        let mut asked = 0;
        let events = run_turn(&machine, &session, "look", |_, _| {
            asked += 1;
            ApprovalDecision::Deny {
                reason: Some("not now".into()),
            }
        })
        .await;
        let finished = events
            .iter()
            .find_map(|e| match &e.msg {
                EventMsg::ToolCallFinished { status, .. } => Some(*status),
                _ => None,
            })
            .unwrap();
        if mode == ApprovalMode::Bypass {
            assert_eq!(asked, 0, "bypass asks nothing");
            assert_eq!(finished, protocol::ToolCallStatus::Ok);
        } else {
            assert_eq!(asked, 1, "{mode:?} must ask for a connector call");
            assert_eq!(finished, protocol::ToolCallStatus::Denied, "{mode:?}");
        }
    }
    // The denied calls never reached the server: only bypass's call ran.
    let ran = machine
        .tool_rows()
        .await
        .into_iter()
        .filter(|r| r.status == CallStatus::Finished)
        .count();
    assert_eq!(ran, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_tool_is_approved_once_each_time_a_write_tool_for_the_session() {
    let machine = Machine::start(&stdio_entry()).await;
    let session = machine.session(ApprovalMode::Ask).await;
    machine.script(&[
        ("toolu_1", "mcp__tracker__delete_item", json!({"id": "1"})),
        ("toolu_2", "mcp__tracker__delete_item", json!({"id": "1"})),
        ("toolu_3", "mcp__tracker__lookup", json!({"query": "a"})),
        ("toolu_4", "mcp__tracker__lookup", json!({"query": "a"})),
    ]);
    let mut asked = Vec::new();
    run_turn(&machine, &session, "delete", |tool, lasting| {
        asked.push((tool.to_owned(), lasting));
        // The user tries to approve for the whole session every time.
        ApprovalDecision::Approve {
            scope: ApprovalScope::Session,
        }
    })
    .await;
    assert_eq!(
        asked,
        [
            ("mcp__tracker__delete_item".to_owned(), false),
            ("mcp__tracker__delete_item".to_owned(), false),
            ("mcp__tracker__lookup".to_owned(), true),
        ],
        "a destructive tool asks every time, the same call too, and offers `once` only; a \
         session approval of a write tool covers the same call again"
    );
    let results = machine.tool_results();
    assert_eq!(super::text(&results[1]), "deleted 1");
    assert_eq!(results.len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_list_is_offered_at_the_next_model_request() {
    let machine = Machine::start(&stdio_entry()).await;
    let session = machine.session(ApprovalMode::Bypass).await;
    machine.script(&[("toolu_1", "mcp__tracker__add_tool", json!({}))]);
    run_turn(&machine, &session, "add", approve_once).await;
    assert!(
        !machine
            .offered(0)
            .contains(&"mcp__tracker__extra".to_owned())
    );
    // The notification may land just after the result: the next turn sees it for sure.
    let connector = machine.host.connector_set().get("tracker").unwrap();
    let deadline = tokio::time::Instant::now() + super::WAIT;
    while !connector.tools().iter().any(|t| t.tool.name == "extra") {
        assert!(tokio::time::Instant::now() < deadline, "no refresh");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    machine.script(&[("toolu_2", "mcp__tracker__extra", json!({}))]);
    run_turn(&machine, &session, "use it", approve_once).await;
    let last = machine.model.request_count() - 2;
    assert!(
        machine
            .offered(last)
            .contains(&"mcp__tracker__extra".to_owned())
    );
    let results = machine.tool_results();
    assert_eq!(super::text(results.last().unwrap()), "extra ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_fails_the_call_and_is_restarted_for_the_next() {
    let machine = Machine::start(&stdio_entry()).await;
    let session = machine.session(ApprovalMode::Bypass).await;
    let connector = machine.host.connector_set().get("tracker").unwrap();
    let first = connector.pid().unwrap();
    machine.script(&[("toolu_1", "mcp__tracker__crash", json!({}))]);
    run_turn(&machine, &session, "crash", approve_once).await;
    let crashed = &machine.tool_results()[0];
    assert_eq!(crashed["is_error"], true, "{crashed}");
    let deadline = tokio::time::Instant::now() + super::WAIT;
    while connector.restarts() < 1 || connector.pid().is_none() {
        assert!(tokio::time::Instant::now() < deadline, "no restart");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_ne!(connector.pid().unwrap(), first);
    machine.script(&[("toolu_2", "mcp__tracker__lookup", json!({"query": "back"}))]);
    run_turn(&machine, &session, "again", approve_once).await;
    assert_eq!(
        super::text(machine.tool_results().last().unwrap()),
        "found: back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connector_that_cannot_start_is_reported_and_the_session_goes_on() {
    let entry = "[[connectors]]\nname = \"broken\"\ntransport = \"stdio\"\ncommand = \"/nonexistent/mcp\"\n";
    let machine = Machine::start(&format!("{entry}\n{}", stdio_entry())).await;
    let session = machine.session(ApprovalMode::Bypass).await;
    machine.script(&[("toolu_1", "mcp__tracker__lookup", json!({"query": "x"}))]);
    run_turn(&machine, &session, "go", approve_once).await;
    let events = all_events(&machine.host, &session).await;
    let notices = notices(&events);
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].0, "connector:broken");
    assert!(
        notices[0]
            .1
            .contains("`/nonexistent/mcp` could not be started")
    );
    // The model is told too, and the other connector works.
    let system = machine.model.requests()[0].body["system"].to_string();
    assert!(
        system.contains("The connector `broken` is unavailable"),
        "{system}"
    );
    assert_eq!(super::text(&machine.tool_results()[0]), "found: x");
    // The notice is in the audit trail.
    let audited = machine.rows().await.into_iter().any(|e| {
        matches!(&e.record, audit_store::AuditRecord::Generic(g) if g.name == "notice" && g.data.to_string().contains("connector:broken"))
    });
    assert!(audited);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_stops_connector_processes_at_shutdown() {
    let machine = Machine::start(&stdio_entry()).await;
    let _session = machine.session(ApprovalMode::Ask).await;
    let pid = machine
        .host
        .connector_set()
        .get("tracker")
        .unwrap()
        .pid()
        .unwrap();
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    machine.host.shutdown().await;
    let gone = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.contains(") Z "))
    };
    let deadline = tokio::time::Instant::now() + super::WAIT;
    while !gone(pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server outlived the host"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
