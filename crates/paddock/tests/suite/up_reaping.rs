//! Orphan reaping of local walls between real `paddock up` processes sharing one state
//! folder, attacked the two ways a pid check gets wrong: a live Paddock in a PID namespace of
//! its own, whose pid names no process here, keeps its wall (and its session keeps working)
//! when another `up` starts and reaps; and a dead one whose pid now belongs to another live
//! process has its wall reaped. Reaping asks the session leases, never `/proc/<pid>`.

use std::path::{Path, PathBuf};

use crate::up_support;

use paddock_host::lease::Leases;
use protocol::{EventMsg, ToolCallStatus};
use serde_json::json;
use test_support::model_server::{FakeModelServer, Reply};
use up_support::{Machine, Up, WAIT};

/// A session on `up` whose turn ran a command in its wall (the wall stays up with the
/// session); returns its id.
async fn session_with_a_wall(
    up: &Up,
    machine: &Machine,
    model: &FakeModelServer,
    name: &str,
) -> String {
    let marker = format!("task {name}");
    for turn in 0..2 {
        model.push_for(
            &marker,
            Reply::tool_call(
                format!("{name}_{turn}"),
                "run_bash",
                json!({"command": format!("echo {name} {turn}")}),
            ),
        );
        model.push_for(&marker, Reply::final_text("ran"));
    }
    let folder = machine.folder(name);
    let id = up.session(&folder, "bypass").await;
    turn(up, &id, &marker, &format!("{name}_0")).await;
    id
}

/// Sends a turn and checks its call ran (in the same wall: no rebuild).
async fn turn(up: &Up, id: &str, text: &str, call: &str) {
    let after = up.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(after["state"], "running", "{after}");
    let mut socket = up.events(id, 0).await;
    up.turn(id, text).await;
    // This turn's events: from its start to its end (the replay begins with earlier turns).
    let mut events = Vec::new();
    loop {
        let event = socket.next().await.expect("the socket stayed open");
        let started = matches!(&event.msg, EventMsg::TurnStarted { text: t } if t == text);
        if started || !events.is_empty() {
            let done = matches!(event.msg, EventMsg::TurnFinished { .. });
            events.push(event);
            if done {
                break;
            }
        }
    }
    assert!(
        events.iter().any(|e| matches!(
            &e.msg,
            EventMsg::ToolCallFinished { call_id, status: ToolCallStatus::Ok, .. } if call_id == call
        )),
        "{call} did not run in its wall: {events:#?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.msg, EventMsg::SandboxRecreated { .. })),
        "{events:#?}"
    );
}

fn wall(machine: &Machine, pid: u32, session: &str) -> PathBuf {
    machine
        .state()
        .join("walls")
        .join(format!("wall-{pid}-{session}-0"))
}

/// A pid no process has here (checked as it is chosen).
fn free_pid() -> u32 {
    (20_000..30_000)
        .rev()
        .find(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        .unwrap()
}

/// Waits until no process holds the session's lease (a killed process's locks go with it,
/// a moment after the kill).
async fn released(machine: &Machine, session: &str) {
    let leases = Leases::new(machine.state().join("leases"));
    tokio::time::timeout(WAIT, async {
        while leases.is_held(session) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the killed process's lease was released");
}

async fn kill(mut up: Up) {
    up.child.start_kill().unwrap();
    tokio::time::timeout(WAIT, up.child.wait())
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reaping_keeps_a_live_wall_whatever_its_pid_and_reaps_a_dead_one_whatever_its_pid() {
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model, "");
    // Paddock A runs as a pid no process has here; Paddock B as the pid of a live process
    // here (standing for a dead Paddock's pid given to another process).
    let unseen = free_pid();
    let mut other = tokio::process::Command::new("sleep")
        .arg("600")
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let reused = other.id().unwrap();
    let a = machine.up_in_pid_namespace("warn", unseen).await;
    let a_session = session_with_a_wall(&a, &machine, &model, "alpha").await;
    let a_wall = wall(&machine, unseen, &a_session);
    assert!(a_wall.is_dir(), "A's wall is up");
    // B's start reaps too, from a PID namespace where A's pid names nothing.
    let b = machine.up_in_pid_namespace("warn", reused).await;
    assert!(a_wall.is_dir(), "B's start reaped A's live wall");
    let b_session = session_with_a_wall(&b, &machine, &model, "beta").await;
    let b_wall = wall(&machine, reused, &b_session);
    assert!(b_wall.is_dir(), "B's wall is up");
    assert!(
        !Path::new(&format!("/proc/{unseen}")).exists(),
        "A's pid names no process here"
    );

    // Another `up` on the same state folder reaps at start: both live walls stay, working.
    let reaper = machine.up("info").await;
    assert!(
        a_wall.is_dir(),
        "a live Paddock's wall was reaped (its pid is not ours)"
    );
    assert!(b_wall.is_dir());
    turn(&a, &a_session, "again", "alpha_1").await;
    turn(&b, &b_session, "again", "beta_1").await;
    let (_, status) = reaper.stop().await;
    assert!(status.success());

    // Both die; B's pid still names a live process here. The next start reaps both walls.
    kill(a).await;
    kill(b).await;
    released(&machine, &a_session).await;
    released(&machine, &b_session).await;
    assert!(
        Path::new(&format!("/proc/{reused}")).exists(),
        "the pid B ran as is alive here"
    );
    assert!(
        a_wall.is_dir() && b_wall.is_dir(),
        "the dead left their walls"
    );
    let reaper = machine.up("info").await;
    assert!(
        !b_wall.exists(),
        "a dead Paddock's wall was kept because its pid is alive here"
    );
    assert!(!a_wall.exists());
    let stopped = reaper.stop_with(libc::SIGTERM).await;
    assert!(stopped.status.success());
    let log = stopped.stderr.join("\n");
    for name in [&a_wall, &b_wall] {
        let name = name.file_name().unwrap().to_str().unwrap();
        assert!(log.contains(&format!("reaped {name}")), "{log}");
    }
    other.start_kill().unwrap();
}
