//! What the local wall must still allow: allowed hosts through the proxy, read-only grants for
//! reading, the same file-tool answers as direct mode, and files owned by the folder's owner.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use protocol::{FolderAccess, FolderGrant, NetworkProfileName};
use sandbox_provider::direct::DirectProvider;
use sandbox_provider::local::RESTART_NOTE;
use sandbox_provider::local::proxy::StaticResolver;
use sandbox_provider::{Sandbox, SandboxProvider, ToolCallOutcome};
use support::*;
use tokio_util::sync::CancellationToken;
use tool_protocol::*;

/// An HTTP server on the host's loopback answering `SERVED <request line>`.
fn http_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            let first = head.lines().next().unwrap_or_default().to_owned();
            let body = format!("SERVED {first}");
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allowed_host_is_reachable_through_the_proxy() {
    let port = http_server();
    let w = world_with(WorldOptions {
        loopback_hosts: vec![("allowed.test".into(), port)],
        resolver: StaticResolver::new().with("allowed.test", &[LOOPBACK]),
        ..WorldOptions::default()
    });
    let s = w.start().await;
    // Plain HTTP through HTTP_PROXY (absolute form), as any proxy-aware tool does it.
    let script = format!(
        "import urllib.request\nprint(urllib.request.urlopen('http://allowed.test:{port}/hello', timeout=5).read().decode())"
    );
    let r = bash(s.as_ref(), &format!("python3 - <<'PY'\n{script}\nPY")).await;
    assert_eq!(
        stdout(&r).trim(),
        "SERVED GET /hello HTTP/1.1",
        "{}",
        stderr(&r)
    );
    // A CONNECT tunnel, as HTTPS clients use it.
    let script = format!(
        "import socket\ns = socket.create_connection(('127.0.0.1', 3128))\n\
         s.sendall(b'CONNECT allowed.test:{port} HTTP/1.1\\r\\n\\r\\n')\n\
         print(s.recv(200).decode().splitlines()[0])\ns.sendall(b'GET /tunnel HTTP/1.1\\r\\n\\r\\n')\n\
         data = b''\nwhile True:\n    c = s.recv(4096)\n    if not c: break\n    data += c\nprint(data.decode().split('\\r\\n\\r\\n')[1])"
    );
    let outcome = s
        .call(
            run(&format!("python3 - <<'PY'\n{script}\nPY")),
            None,
            &CancellationToken::new(),
        )
        .await;
    let r = bash_result(&outcome);
    assert_eq!(
        stdout(&r),
        "HTTP/1.1 200 Connection established\nSERVED GET /tunnel HTTP/1.1\n",
        "{}",
        stderr(&r)
    );
    assert!(outcome.denials.is_empty(), "{:?}", outcome.denials);
    // A refused host in the same session shows up on that call only.
    let outcome = s.call(run("python3 -c \"import urllib.request; urllib.request.urlopen('http://blocked.test/')\""), None, &CancellationToken::new()).await;
    assert_eq!(outcome.denials.len(), 1, "{:?}", outcome.denials);
    assert_eq!(outcome.denials[0].host, "blocked.test");
    assert!(stderr(&bash_result(&outcome)).contains("403"));
    s.close().await.unwrap();
}

fn run(command: &str) -> ToolRequest {
    ToolRequest::RunBash(RunBash {
        command: command.into(),
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: Some(20_000),
        max_output_bytes: None,
    })
}

fn bash_result(outcome: &ToolCallOutcome) -> RunBashResult {
    match &outcome.result {
        Ok(ToolResult::RunBash(r)) => r.clone(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_grant_is_readable() {
    let w = world();
    let s = w.start().await;
    let r = bash(
        s.as_ref(),
        &format!("cat {}/readme.txt", w.docs().display()),
    )
    .await;
    assert_eq!(stdout(&r), "read-only document\n");
    let outcome = s
        .call(
            ToolRequest::ReadFile(ReadFile {
                path: w.docs().join("readme.txt").display().to_string(),
                offset: None,
                limit: None,
            }),
            None,
            &CancellationToken::new(),
        )
        .await;
    match outcome.result {
        Ok(ToolResult::ReadFile(r)) => {
            assert!(r.content.contains("read-only document"), "{}", r.content)
        }
        other => panic!("{other:?}"),
    }
    s.close().await.unwrap();
}

/// The calls compared between direct mode and the wall.
fn file_calls(work: &str) -> Vec<ToolRequest> {
    vec![
        ToolRequest::WriteFile(WriteFile {
            path: format!("{work}/a.txt"),
            content: Data::from_bytes(b"alpha\nbeta\ngamma\n".to_vec()),
            create_parents: None,
        }),
        ToolRequest::WriteFile(WriteFile {
            path: format!("{work}/sub/b.rs"),
            content: Data::from_bytes(b"fn beta() {}\n".to_vec()),
            create_parents: Some(true),
        }),
        ToolRequest::ReadFile(ReadFile {
            path: format!("{work}/a.txt"),
            offset: Some(2),
            limit: Some(1),
        }),
        ToolRequest::EditFile(EditFile {
            path: format!("{work}/a.txt"),
            old_string: "beta".into(),
            new_string: "BETA".into(),
            replace_all: None,
        }),
        ToolRequest::ReadBytes(ReadBytes {
            path: format!("{work}/a.txt"),
            offset: Some(1),
            length: Some(5),
        }),
        ToolRequest::Glob(Glob {
            pattern: "**/*.rs".into(),
            path: Some(work.into()),
            limit: None,
        }),
        ToolRequest::Grep(Grep {
            pattern: "(?i)beta".into(),
            path: Some(work.into()),
            include: None,
            exclude: None,
            case_insensitive: None,
            context: None,
            max_matches: None,
        }),
        ToolRequest::ListDirectory(ListDirectory {
            path: Some(work.into()),
            depth: Some(2),
            limit: None,
        }),
        ToolRequest::Stat(Stat {
            path: format!("{work}/a.txt"),
        }),
        ToolRequest::Delete(Delete {
            path: format!("{work}/sub"),
            recursive: Some(true),
        }),
        ToolRequest::ReadFile(ReadFile {
            path: "/etc/hostname-outside".into(),
            offset: None,
            limit: None,
        }),
    ]
}

/// A result with the times and inodes (which differ between runs) taken out.
fn comparable(result: &Result<ToolResult, sandbox_provider::CallError>) -> String {
    let mut result = result.clone();
    match &mut result {
        Ok(ToolResult::ListDirectory(l)) => l.entries.iter_mut().for_each(|e| e.modified_ms = None),
        Ok(ToolResult::Stat(s)) => {
            s.modified_ms = None;
            s.inode = None;
        }
        _ => {}
    }
    format!("{result:?}")
}

#[tokio::test(flavor = "multi_thread")]
async fn file_tools_answer_as_in_direct_mode() {
    let w = world();
    let request = w.request(&[]);
    let work = w.work().display().to_string();
    let direct = DirectProvider::new(test_support::binaries::tool_runner());
    let mut answers = Vec::new();
    for provider in [
        &direct as &dyn SandboxProvider,
        &w.provider as &dyn SandboxProvider,
    ] {
        let _ = std::fs::remove_dir_all(w.work());
        std::fs::create_dir(w.work()).unwrap();
        let sandbox = provider.start(&request, &|_| {}).await.unwrap();
        let mut these = Vec::new();
        for call in file_calls(&work) {
            let outcome = sandbox.call(call, None, &CancellationToken::new()).await;
            these.push(comparable(&outcome.result));
        }
        sandbox.close().await.unwrap();
        answers.push(these);
    }
    assert_eq!(answers[0], answers[1]);
    assert!(answers[1][2].contains("beta"), "{}", answers[1][2]);
}

#[tokio::test(flavor = "multi_thread")]
async fn files_written_belong_to_the_folders_owner() {
    let w = world();
    std::fs::set_permissions(w.root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let euid = std::fs::metadata("/proc/self").unwrap().uid();
    if euid == 0 {
        // As root: give the folders to another user; the wall must become that user.
        for dir in [w.work(), w.docs()] {
            std::os::unix::fs::chown(&dir, Some(4321), Some(4321)).unwrap();
        }
    }
    let s = w.start().await;
    let r = bash(s.as_ref(), "id -u; echo x > owned.txt").await;
    let inside_uid: u32 = stdout(&r).trim().parse().unwrap();
    assert_ne!(inside_uid, 0, "the sandbox runs as root inside");
    let owner = std::fs::metadata(w.work().join("owned.txt")).unwrap().uid();
    let expected = if euid == 0 { 4321 } else { euid };
    assert_eq!(
        owner, expected,
        "a file written inside belongs to uid {owner}"
    );
    assert_eq!(inside_uid, expected);
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn changing_folders_recreates_the_wall() {
    let w = world();
    let old = w.start().await;
    bash(old.as_ref(), "echo kept > kept.txt").await;
    let extra = w.root.path().join("extra");
    std::fs::create_dir(&extra).unwrap();
    std::fs::write(extra.join("new.txt"), "new folder\n").unwrap();
    let mut request = w.request(&[]);
    request.folders.push(FolderGrant {
        path: extra.display().to_string(),
        access: FolderAccess::ReadOnly,
    });
    let old_dir = old.host_dir().to_path_buf();
    let (new, note) = w
        .provider
        .restart(old.as_ref(), &request, &|_| {})
        .await
        .unwrap();
    assert_eq!(note, RESTART_NOTE);
    assert!(note.contains("Shell state was lost"));
    assert!(!old_dir.exists());
    let r = bash(
        new.as_ref(),
        &format!("cat {}/new.txt kept.txt", extra.display()),
    )
    .await;
    assert_eq!(stdout(&r), "new folder\nkept\n", "{}", stderr(&r));
    new.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_starts_on_every_network_profile() {
    let w = world();
    for profile in [
        NetworkProfileName::Strict,
        NetworkProfileName::Standard,
        NetworkProfileName::Open,
    ] {
        let mut request = w.request(&[]);
        request.network_profile = profile;
        let sandbox = match w.provider.start_local(&request, &|_| {}).await {
            Ok(sandbox) => sandbox,
            Err(e) => panic!("{profile:?}: the wall did not start: {e}"),
        };
        let r = bash(sandbox.as_ref(), "echo started").await;
        assert_eq!(stdout(&r), "started\n", "{profile:?}");
        sandbox.close().await.unwrap();
    }
}

/// Hard links and renames into another folder work inside a read-write grant and in the
/// sandbox's `/tmp` (git writes objects this way; `git push` into a bare repository failed
/// with "Invalid cross-device link" while a Landlock domain of the runner denied them).
#[tokio::test(flavor = "multi_thread")]
async fn files_are_linked_and_moved_between_folders() {
    let w = world();
    let s = w.start().await;
    let script = r#"set -e
for base in "$PWD" /tmp; do
  rm -rf "$base/a" "$base/b"; mkdir -p "$base/a/d" "$base/b"; echo x > "$base/a/f"
  ln "$base/a/f" "$base/b/linked"
  python3 -c 'import os, sys; os.rename(sys.argv[1] + "/a/d", sys.argv[1] + "/b/d")' "$base"
  echo "moved in $base"
done"#;
    let r = bash(s.as_ref(), script).await;
    assert_eq!(r.exit_code, Some(0), "{}{}", stdout(&r), stderr(&r));
    assert!(w.work().join("b/linked").exists() && w.work().join("b/d").is_dir());
    assert_eq!(
        std::fs::metadata(w.work().join("b/linked"))
            .unwrap()
            .nlink(),
        2
    );
    assert!(stdout(&r).contains("moved in /tmp"), "{}", stdout(&r));
    s.close().await.unwrap();
}
