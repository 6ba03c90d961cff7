//! Credential-share entries: enabled entries are copied owner-only into the private home and
//! wired for their tools; disabled ones are absent; the real files are never changed; the
//! copies are gone after close.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::time::SystemTime;

use sandbox_policy::{CredentialEntry, SandboxData};
use sandbox_provider::Sandbox;
use sandbox_provider::local::proxy::StaticResolver;
use support::*;

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

fn snapshot(path: &std::path::Path) -> (Vec<u8>, SystemTime) {
    (
        std::fs::read(path).unwrap(),
        std::fs::metadata(path).unwrap().modified().unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn entries_are_private_copies_wired_for_their_tools() {
    let port = echo_server();
    let data = SandboxData::builtin().unwrap();
    let gitbox =
        CredentialEntry::custom("gitbox", ".gitbox", &[&format!("git.test:{port}")]).unwrap();
    let w = world_with(WorldOptions {
        credentials: vec![
            data.credential("ssh").unwrap(),
            data.credential("gh").unwrap(),
            gitbox,
        ],
        resolver: StaticResolver::new().with("git.test", &[LOOPBACK]),
        loopback_hosts: vec![("git.test".into(), port)],
        ..WorldOptions::default()
    });
    let home = w.home();
    for dir in [".ssh", ".config/gh", ".gitbox"] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE-KEY\n").unwrap();
    std::fs::set_permissions(
        home.join(".ssh/id_ed25519"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::write(home.join(".ssh/config"), "Host example\n    User someone\n").unwrap();
    std::fs::write(
        home.join(".ssh/known_hosts"),
        "github.com ssh-ed25519 AAAA\n",
    )
    .unwrap();
    std::fs::write(home.join(".ssh/authorized_keys"), "NOT-FOR-THE-SANDBOX\n").unwrap();
    let _agent = UnixListener::bind(home.join(".ssh/agent.sock")).unwrap();
    std::fs::write(
        home.join(".config/gh/hosts.yml"),
        "github.com:\n    oauth_token: GH-SECRET\n",
    )
    .unwrap();
    std::fs::write(home.join(".gitbox/token"), "GITBOX-TOKEN\n").unwrap();
    let watched = [
        home.join(".ssh/id_ed25519"),
        home.join(".ssh/config"),
        home.join(".gitbox/token"),
    ];
    let before: Vec<_> = watched.iter().map(|p| snapshot(p)).collect();

    let s = w.start_with(&["ssh", "gitbox"]).await;
    let private_home = s.private_home();
    let r = bash(s.as_ref(), "stat -c '%a %n' ~/.ssh/id_ed25519 ~/.ssh ~/.gitbox/token; cat ~/.ssh/id_ed25519 ~/.gitbox/token; ls -A ~/.ssh").await;
    let out = stdout(&r);
    assert!(out.contains("600 /home/paddock/.ssh/id_ed25519"), "{out}");
    assert!(out.contains("700 /home/paddock/.ssh\n"), "{out}");
    assert!(out.contains("600 /home/paddock/.gitbox/token"), "{out}");
    assert!(
        out.contains("PRIVATE-KEY") && out.contains("GITBOX-TOKEN"),
        "{out}"
    );
    assert!(
        !out.contains("authorized_keys") && !out.contains("agent.sock"),
        "excluded files were copied: {out}"
    );

    // The entry that was not enabled is absent, and so is the real home.
    let r = bash(
        s.as_ref(),
        &format!(
            "cat ~/.config/gh/hosts.yml; ls -A {}",
            sandbox_provider::local::sh_quote(&home.display().to_string())
        ),
    )
    .await;
    assert!(
        !stdout(&r).contains("GH-SECRET"),
        "a disabled entry is readable"
    );
    assert!(stderr(&r).contains("No such file"), "{}", stderr(&r));

    // ssh and git use the copies, through the wall's proxy, with no agent.
    let r = bash(
        s.as_ref(),
        "echo \"agent=${SSH_AUTH_SOCK:-none}\"; echo \"$GIT_SSH_COMMAND\"; ssh -G github.com",
    )
    .await;
    let out = stdout(&r).to_lowercase();
    assert!(out.contains("agent=none"), "{out}");
    assert!(out.contains("ssh -f /home/paddock/.ssh/config"), "{out}");
    assert!(
        out.contains("proxycommand /run/paddock/bin/paddock-wall connect %h %p"),
        "{out}"
    );
    assert!(out.contains("identityagent none"), "{out}");
    // The proxy command tunnels to an entry's host (here the custom entry's loopback server).
    let r = bash(
        s.as_ref(),
        &format!("printf hello | /run/paddock/bin/paddock-wall connect git.test {port}"),
    )
    .await;
    assert_eq!(stdout(&r), "TUNNEL hello", "{}", stderr(&r));

    assert!(private_home.join(".ssh/id_ed25519").is_file());
    s.close().await.unwrap();
    assert!(!private_home.exists(), "the copies outlived the sandbox");
    let after: Vec<_> = watched.iter().map(|p| snapshot(p)).collect();
    assert_eq!(before, after, "the user's real files changed");
}

#[tokio::test]
async fn an_unknown_entry_is_refused_by_name() {
    let w = world();
    let err = w
        .provider
        .start_local(&w.request(&["nonesuch"]), &|_| {})
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("unknown credential entry `nonesuch`"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn kube_takes_its_hosts_from_the_kubeconfig_and_aws_keeps_credentials_out() {
    let port = echo_server();
    let data = SandboxData::builtin().unwrap();
    let w = world_with(WorldOptions {
        credentials: vec![
            data.credential("kube").unwrap(),
            data.credential("aws").unwrap(),
        ],
        resolver: StaticResolver::new()
            .with("kube.test", &[LOOPBACK])
            .with("other.test", &[LOOPBACK]),
        ..WorldOptions::default()
    });
    let home = w.home();
    std::fs::create_dir_all(home.join(".kube")).unwrap();
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(
        home.join(".kube/config"),
        format!("apiVersion: v1\nclusters:\n- name: test\n  cluster:\n    server: https://kube.test:{port}\n"),
    )
    .unwrap();
    std::fs::write(home.join(".aws/config"), "[default]\nregion = eu-west-1\n").unwrap();
    std::fs::write(
        home.join(".aws/credentials"),
        "[default]\naws_secret_access_key = AWS-SECRET\n",
    )
    .unwrap();

    let s = w.start_with(&["kube", "aws"]).await;
    let r = bash(
        s.as_ref(),
        "echo \"$KUBECONFIG\"; cat \"$AWS_CONFIG_FILE\"; cat ~/.aws/credentials",
    )
    .await;
    let out = stdout(&r);
    assert!(out.starts_with("/home/paddock/.kube/config\n"), "{out}");
    assert!(out.contains("region = eu-west-1"), "{out}");
    assert!(
        !out.contains("AWS-SECRET"),
        "aws credentials were copied without opting in"
    );
    // The kubeconfig's server is on the allow-list by name: the proxy gets past the name and
    // refuses only the (loopback) address; a name no entry added is refused by the policy.
    for (host, rule) in [
        ("kube.test", "engine:address"),
        ("other.test", "policy:strict"),
    ] {
        let command = format!("printf ping | /run/paddock/bin/paddock-wall connect {host} {port}");
        let outcome = s
            .call(
                run(&command),
                None,
                &tokio_util::sync::CancellationToken::new(),
            )
            .await;
        assert_eq!(outcome.denials.len(), 1, "{host}: {:?}", outcome.denials);
        assert_eq!(
            outcome.denials[0].rule.as_deref(),
            Some(rule),
            "{host}: {:?}",
            outcome.denials[0]
        );
    }
    s.close().await.unwrap();
}

fn run(command: &str) -> tool_protocol::ToolRequest {
    tool_protocol::ToolRequest::RunBash(tool_protocol::RunBash {
        command: command.into(),
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: Some(20_000),
        max_output_bytes: None,
    })
}
