//! `paddock run --resume` through the built binary and the local wall, after the session's
//! granted folder was replaced on the host by a symbolic link (by another session with write
//! access to its parent, say): to a never-granted sibling, or to the host's `/etc`. The
//! resumed session must be refused with an error naming the folder, and nothing behind the
//! link may reach the model, the terminal or the audit trail.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::cli_support;

use std::path::Path;

use cli_support::{Machine, model_config};
use serde_json::{Value, json};
use test_support::model_server::{FakeModelServer, Reply, sse};

/// Scripts one turn that reads `path` and then ends.
fn read_turn(server: &FakeModelServer, id: &str, path: &Path) {
    server.push(Reply::stream([
        sse::text("Reading it."),
        sse::tool_use(id, "read_file", json!({"path": path.display().to_string()})),
        sse::stop("tool_use"),
    ]));
    server.push(Reply::final_text("Done."));
}

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_whose_grant_became_a_link_is_refused_naming_the_folder() {
    for (name, target, secret_file, secret) in [
        ("sibling", "sibling", "secret.txt", "SIBLING-SECRET"),
        (
            "host /etc",
            "../../../../../../../../../../../../../../../../etc",
            "passwd",
            "root:x:0:0",
        ),
    ] {
        let server = FakeModelServer::start().await.unwrap();
        let machine = Machine::new(&model_config(&server));
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let work = root.join("work");
        std::fs::create_dir(&work).unwrap();
        std::fs::write(work.join("notes.txt"), "granted notes\n").unwrap();
        std::fs::create_dir(root.join("sibling")).unwrap();
        std::fs::write(root.join("sibling/secret.txt"), "SIBLING-SECRET\n").unwrap();

        // The first run grants `work` and reads a file through the wall.
        read_turn(&server, "toolu_1", &work.join("notes.txt"));
        let folder = work.display().to_string();
        let (code, stdout, stderr) = machine
            .run(&[
                "run",
                "read the notes",
                "--folder",
                &folder,
                "--approve-all",
                "--json",
            ])
            .await;
        assert_eq!(code, 0, "{name}: stdout:\n{stdout}\nstderr:\n{stderr}");
        let first = events(&stdout);
        let id = first[0]["session_id"].as_str().unwrap().to_owned();
        assert!(stdout.contains("granted notes"), "{name}: {stdout}");

        // Between the runs, the folder is replaced by a relative link.
        std::fs::rename(&work, root.join("work.was")).unwrap();
        std::os::unix::fs::symlink(target, &work).unwrap();
        read_turn(&server, "toolu_2", &work.join(secret_file));
        let (code, stdout, stderr) = machine
            .run(&["run", "--resume", &id, "read it again", "--json"])
            .await;
        let said = format!("{stdout}\n{stderr}");
        assert!(
            !said.contains(secret),
            "{name}: what the link leads to reached the session:\n{said}"
        );
        assert!(
            said.contains(&format!("{folder}: ")) && said.contains("symbolic link"),
            "{name}: the refusal does not name the folder and the link (exit {code}):\n{said}"
        );
        let (_, exported, _) = machine.run(&["audit", "export", "--format", "jsonl"]).await;
        assert!(!exported.contains(secret), "{name}: {exported}");
        let (code, verified, _) = machine.run(&["audit", "verify"]).await;
        assert_eq!(code, 0, "{name}: {verified}");
    }
}
