//! `Host::submit`, the one entry every op of a front end passes: a session on the real local
//! wall driven only by submissions (a turn with an id chosen by the caller, an approval that
//! wins and one that comes second, standing approvals listed and an unknown one revoked, a
//! folder granted and revoked, a host allowed, an interrupt, the close), each bad op refused
//! naming its field before the session sees it, and ops for sessions this process does not
//! run refused with why.

use std::time::Duration;

use paddock_host::paths::Paths;
use paddock_host::wiring::Helpers;
use paddock_host::{EventStream, Host, HostError, HostOptions, NewSession, SessionState};
use protocol::{
    ApprovalDecision, ApprovalMode, ApprovalScope, ErrorCode, Event, EventMsg, FolderAccess,
    FolderGrant, Op, Submission, TurnStopReason,
};
use test_support::model_server::{FakeModelServer, Reply};

const WAIT: Duration = Duration::from_secs(60);

struct Machine {
    root: tempfile::TempDir,
    host: Host,
    model: FakeModelServer,
}

impl Machine {
    async fn start() -> Self {
        // SAFETY: set first in the test (nextest runs each test in its own process).
        unsafe { std::env::set_var("ANTHROPIC_API_KEY", "sk-ant-test-submit-key-0123456789") };
        let _ = rustls::crypto::ring::default_provider().install_default();
        let base =
            std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("paddock-host-submit");
        std::fs::create_dir_all(&base).unwrap();
        let root = tempfile::Builder::new()
            .prefix("t")
            .tempdir_in(base)
            .unwrap();
        let model = FakeModelServer::start().await.unwrap();
        let paths = Paths::under(root.path());
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::write(
            paths.config_file(),
            format!(
                "[models]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nkey_store = \"env\"\n",
                model.anthropic_base_url()
            ),
        )
        .unwrap();
        let mut options = HostOptions::new(paths);
        options.helpers = Some(Helpers {
            tool_runner: test_support::binaries::tool_runner(),
            paddock_wall: test_support::binaries::paddock_wall(),
        });
        let host = Host::open(options).await.unwrap();
        Self { root, host, model }
    }

    fn folder(&self, name: &str) -> String {
        let path = self.root.path().join(name);
        std::fs::create_dir_all(&path).unwrap();
        path.canonicalize().unwrap().display().to_string()
    }
}

fn op(id: &str, op: Op) -> Submission {
    Submission {
        id: id.to_owned(),
        op,
    }
}

async fn until(events: &mut EventStream, wanted: impl Fn(&EventMsg) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(WAIT, events.next())
            .await
            .expect("an event in time")
            .unwrap()
            .expect("the stream stayed open");
        let done = wanted(&event.msg);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

fn invalid_field(error: HostError) -> String {
    match error {
        HostError::InvalidRequest { field, .. } => field,
        other => panic!("not an invalid request: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_op_passes_submit_checked_then_routed() {
    let machine = Machine::start().await;
    let host = &machine.host;
    let work = machine.folder("work");
    let extra = machine.folder("extra");
    let marker = "task write a note";
    machine.model.push_for(
        marker,
        Reply::tool_call(
            "w1",
            "write_file",
            serde_json::json!({"path": format!("{work}/note.txt"), "content": "routed\n"}),
        ),
    );
    machine.model.push_for(marker, Reply::final_text("written"));
    let info = host
        .create_session(NewSession {
            folders: vec![FolderGrant {
                path: work.clone(),
                access: FolderAccess::ReadWrite,
            }],
            approval_mode: Some(ApprovalMode::Ask),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let id = info.id.clone();
    let mut events = host.events(&id, 0);

    // Refused before the session sees them, each naming what was wrong.
    let start = Op::StartSession {
        settings: info.settings.clone().unwrap(),
    };
    assert_eq!(
        invalid_field(host.submit(&id, op("s0", start)).await.unwrap_err()),
        "op"
    );
    let empty = Op::UserTurn { text: "  ".into() };
    assert_eq!(
        invalid_field(host.submit(&id, op("s1", empty)).await.unwrap_err()),
        "text"
    );
    let relative = Op::GrantFolder {
        grant: FolderGrant {
            path: "relative/folder".into(),
            access: FolderAccess::ReadOnly,
        },
    };
    assert_eq!(
        invalid_field(host.submit(&id, op("s2", relative)).await.unwrap_err()),
        "path"
    );
    let not_ours = Op::RevokeFolder {
        path: extra.clone(),
    };
    assert_eq!(
        invalid_field(host.submit(&id, op("s3", not_ours)).await.unwrap_err()),
        "path"
    );
    let bad_host = Op::AllowHost {
        host: "exa mple.com".into(),
    };
    assert_eq!(
        invalid_field(host.submit(&id, op("s4", bad_host)).await.unwrap_err()),
        "host"
    );
    let early = Op::Approval {
        call_id: "w1".into(),
        decision: ApprovalDecision::Approve {
            scope: ApprovalScope::Once,
        },
    };
    assert!(matches!(
        host.submit(&id, op("s5", early)).await,
        Err(HostError::ApprovalNotPending { .. })
    ));

    // A turn with the caller's id; its approval answered through submit, once.
    let turn = Op::UserTurn {
        text: marker.into(),
    };
    host.submit(&id, op("turn-1", turn)).await.unwrap();
    until(
        &mut events,
        |m| matches!(m, EventMsg::ToolCallAwaitingApproval { call_id, .. } if call_id == "w1"),
    )
    .await;
    assert_eq!(host.pending_approvals(Some(&id)).len(), 1);
    let approve = || Op::Approval {
        call_id: "w1".into(),
        decision: ApprovalDecision::Approve {
            scope: ApprovalScope::Once,
        },
    };
    host.submit(&id, op("a1", approve())).await.unwrap();
    assert!(
        matches!(
            host.submit(&id, op("a2", approve())).await,
            Err(HostError::ApprovalNotPending { .. })
        ),
        "a second answer to one call is refused"
    );
    let turn = until(&mut events, |m| matches!(m, EventMsg::TurnFinished { .. })).await;
    assert!(
        matches!(
            turn.last().unwrap().msg,
            EventMsg::TurnFinished {
                stop_reason: TurnStopReason::EndTurn,
                ..
            }
        ),
        "{turn:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(format!("{work}/note.txt")).unwrap(),
        "routed\n"
    );

    // Ops the session answers with events.
    host.submit(&id, op("l1", Op::ListApprovals)).await.unwrap();
    until(&mut events, |m| {
        matches!(m, EventMsg::StandingApprovals { .. })
    })
    .await;
    let revoke = Op::RevokeApproval {
        approval_id: "no-such-approval".into(),
    };
    host.submit(&id, op("r1", revoke)).await.unwrap();
    until(&mut events, |m| {
        matches!(
            m,
            EventMsg::Error {
                code: ErrorCode::InvalidOp,
                ..
            }
        )
    })
    .await;
    let grant = Op::GrantFolder {
        grant: FolderGrant {
            path: extra.clone(),
            access: FolderAccess::ReadOnly,
        },
    };
    host.submit(&id, op("g1", grant)).await.unwrap();
    until(
        &mut events,
        |m| matches!(m, EventMsg::FolderGranted { grant } if grant.path == extra),
    )
    .await;
    host.submit(
        &id,
        op(
            "g2",
            Op::RevokeFolder {
                path: extra.clone(),
            },
        ),
    )
    .await
    .unwrap();
    until(
        &mut events,
        |m| matches!(m, EventMsg::FolderRevoked { path } if *path == extra),
    )
    .await;
    host.submit(
        &id,
        op(
            "h1",
            Op::AllowHost {
                host: "example.org".into(),
            },
        ),
    )
    .await
    .unwrap();
    until(
        &mut events,
        |m| matches!(m, EventMsg::HostAllowed { host, .. } if host == "example.org"),
    )
    .await;
    host.submit(&id, op("i1", Op::Interrupt)).await.unwrap();
    let settings = host.session(&id).await.unwrap().settings.unwrap();
    assert!(settings.extra_hosts.contains(&"example.org".to_owned()));
    assert_eq!(settings.folders.len(), 1, "{settings:?}");

    // Close: the session is stored, its lease released, and ops for it refused with why.
    host.submit(&id, op("c1", Op::Close)).await.unwrap();
    until(&mut events, |m| matches!(m, EventMsg::SessionClosed)).await;
    assert_eq!(host.session(&id).await.unwrap().state, SessionState::Stored);
    assert!(matches!(
        host.submit(
            &id,
            op(
                "t2",
                Op::UserTurn {
                    text: "more".into()
                }
            )
        )
        .await,
        Err(HostError::SessionNotRunning { .. })
    ));
    assert!(matches!(
        host.submit("no-such-session", op("t3", Op::Interrupt))
            .await,
        Err(HostError::SessionNotFound { .. })
    ));
}
