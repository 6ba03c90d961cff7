#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Command, Stdio};

use protocol::{FolderAccess, FolderGrant, NetworkProfileName};

use super::*;

fn request(folders: &[&str]) -> SandboxRequest {
    SandboxRequest {
        session_id: "s".into(),
        folders: folders
            .iter()
            .map(|path| FolderGrant {
                path: (*path).to_owned(),
                access: FolderAccess::ReadWrite,
            })
            .collect(),
        cwd: folders.first().copied().unwrap_or("/").to_owned(),
        network_profile: NetworkProfileName::Strict,
        extra_hosts: Vec::new(),
        credentials: vec!["ssh".into()],
    }
}

fn refusal(home: &str, folders: &[&str]) -> String {
    check_location(Path::new(home), &request(folders))
        .unwrap_err()
        .to_string()
}

#[test]
fn homes_under_a_private_tmp_odd_paths_and_grants_are_refused() {
    let ok = "/var/lib/paddock/openshell/homes/pd-0123456789abcdef";
    check_location(Path::new(ok), &request(&["/srv/project"])).unwrap();
    for tmp in ["/tmp/state/homes/pd-1", "/var/tmp/state/homes/pd-1"] {
        let err = refusal(tmp, &["/srv/project"]);
        assert!(err.contains("PrivateTmp"), "{err}");
    }
    let err = refusal("/srv/my state/homes/pd-1", &["/srv/project"]);
    assert!(err.contains("contains ' '"), "{err}");
    let err = refusal("/srv/50%/homes/pd-1", &["/srv/project"]);
    assert!(err.contains("contains '%'"), "{err}");
    // The state folder inside a grant, and a grant inside the state folder.
    let err = refusal("/srv/project/.state/homes/pd-1", &["/srv/project"]);
    assert!(err.contains("/srv/project: this folder overlaps"), "{err}");
    let err = refusal("/srv/state/homes/pd-1", &["/srv/state/homes"]);
    assert!(err.contains("overlaps"), "{err}");
    let err = refusal("relative/homes/pd-1", &["/srv/project"]);
    assert!(err.contains("not an absolute path"), "{err}");
}

#[test]
fn ssh_goes_through_the_proxy_script_in_the_home() {
    let wiring = ssh_wiring("/var/lib/paddock/homes/pd-1");
    assert_eq!(
        wiring.proxy_command,
        "/bin/bash /var/lib/paddock/homes/pd-1/.paddock/ssh-proxy %h %p"
    );
    assert_eq!(wiring.home_inside, "/var/lib/paddock/homes/pd-1");
    assert!(wiring.comment.lines().all(|l| l.starts_with('#')));
}

fn me() -> Owner {
    let meta = std::fs::metadata("/proc/self").unwrap();
    Owner {
        uid: meta.uid(),
        gid: meta.gid(),
    }
}

fn ssh_entry() -> CredentialEntry {
    sandbox_policy::SandboxData::builtin()
        .unwrap()
        .credential("ssh")
        .unwrap()
}

#[test]
fn a_prepared_home_is_private_and_removed_unless_left() {
    let state = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    std::fs::create_dir(user.path().join(".ssh")).unwrap();
    std::fs::write(user.path().join(".ssh/id_ed25519"), "KEY\n").unwrap();
    let path = location(state.path(), "pd-a");
    // A leftover home of the same name is replaced.
    std::fs::create_dir_all(path.join("stale")).unwrap();

    let home = PrivateHome::prepare(&path, &[ssh_entry()], user.path(), me()).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&state.path().join(HOMES_DIR)), 0o711);
    assert_eq!(mode(&path), 0o700);
    assert!(!path.join("stale").exists(), "the leftover home was kept");
    assert_eq!(mode(&path.join(".ssh/id_ed25519")), 0o600);
    assert_eq!(
        std::fs::read_to_string(path.join(SSH_PROXY_PATH)).unwrap(),
        SSH_PROXY_SCRIPT
    );
    let config = std::fs::read_to_string(path.join(".ssh/config")).unwrap();
    assert!(
        config.contains(&format!(
            "ProxyCommand /bin/bash {}/{SSH_PROXY_PATH} %h %p",
            path.display()
        )),
        "{config}"
    );
    drop(home);
    assert!(!path.exists(), "a dropped home outlived its start");

    let home = PrivateHome::prepare(&path, &[ssh_entry()], user.path(), me()).unwrap();
    home.leave();
    assert!(
        path.join(".ssh/id_ed25519").is_file(),
        "a left home is kept"
    );
    PrivateHome::adopt(&path).remove().unwrap();
    assert!(!path.exists());
}

#[test]
fn a_failed_copy_leaves_no_home() {
    let state = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let path = location(state.path(), "pd-b");
    let err = PrivateHome::prepare(&path, &[ssh_entry()], user.path(), me()).unwrap_err();
    assert!(err.to_string().contains("credential entry `ssh`"), "{err}");
    assert!(!path.exists(), "a failed copy left its home");
}

#[test]
fn reaping_keeps_the_homes_of_live_sandboxes_only() {
    let state = tempfile::tempdir().unwrap();
    for name in ["pd-live", "pd-gone"] {
        std::fs::create_dir_all(location(state.path(), name).join(".ssh")).unwrap();
    }
    let live = BTreeSet::from(["pd-live".to_owned()]);
    assert_eq!(reap(state.path(), &live).unwrap(), ["pd-gone"]);
    assert!(location(state.path(), "pd-live").is_dir());
    assert!(!location(state.path(), "pd-gone").exists());
    let none = tempfile::tempdir().unwrap();
    assert!(reap(none.path(), &live).unwrap().is_empty());
}

/// One loopback server that answers the first read with `TUNNEL <what it read>`.
fn echo_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 256];
            let n = stream.read(&mut buf).unwrap_or(0);
            let _ = stream.write_all(b"TUNNEL ");
            let _ = stream.write_all(&buf[..n]);
        }
    });
    port
}

/// A tiny HTTP CONNECT proxy (like the sandbox's): `allowed` is tunnelled to `upstream`,
/// anything else gets 403. Returns its port.
fn connect_proxy(allowed: String, upstream: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let allowed = allowed.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(client.try_clone().unwrap());
                let mut first = String::new();
                reader.read_line(&mut first).unwrap();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                        break;
                    }
                }
                let mut client = client;
                if first.trim_end() != format!("CONNECT {allowed} HTTP/1.1") {
                    let _ = client.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\n");
                    return;
                }
                let mut server = TcpStream::connect(("127.0.0.1", upstream)).unwrap();
                client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .unwrap();
                let (mut to_server, mut from_server) =
                    (server.try_clone().unwrap(), client.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut reader, &mut to_server);
                });
                let _ = std::io::copy(&mut server, &mut from_server);
                let _ = client.shutdown(Shutdown::Write);
            });
        }
    });
    port
}

fn run_script(proxy: Option<u16>, host: &str, port: u16) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("ssh-proxy");
    std::fs::write(&script, SSH_PROXY_SCRIPT).unwrap();
    // `timeout` turns a hung tunnel into a failed test instead of a stuck one.
    let mut command = Command::new("timeout");
    command
        .args(["20", "/bin/bash"])
        .arg(&script)
        .args([host, &port.to_string()])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(proxy) = proxy {
        command.env("HTTPS_PROXY", format!("http://127.0.0.1:{proxy}"));
    }
    let mut child = command.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"hello").unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_proxy_script_tunnels_through_connect_and_reports_a_refusal() {
    let upstream = echo_server();
    let proxy = connect_proxy(format!("git.test:{upstream}"), upstream);
    let out = run_script(Some(proxy), "git.test", upstream);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "TUNNEL hello",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success());

    // Refused by the proxy, and not reachable directly (nothing listens): a clear failure.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = run_script(Some(proxy), "127.0.0.1", closed);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains(&format!(
            "the sandbox proxy refused 127.0.0.1:{closed} (HTTP/1.1 403 Forbidden)"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("cannot be reached directly either"),
        "{stderr}"
    );
}

#[test]
fn without_a_proxy_the_script_connects_directly() {
    let upstream = echo_server();
    let out = run_script(None, "127.0.0.1", upstream);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "TUNNEL hello",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
