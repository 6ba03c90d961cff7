//! Credential-share entries with the OpenShell provider, against the gateway double over gRPC
//! with mTLS: enabled entries are owner-only copies in the private home the sandbox mounts,
//! their hosts are in the policy, ssh reaches them through the sandbox's proxy with the
//! copies and no agent; a disabled entry is absent; the real files never change; the copies
//! are gone after close, after a refused start and after orphan reaping.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::openshell_support;

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use openshell_support::{Auth, Harness, OWNER, bash};
use protocol::{FolderAccess, FolderGrant};
use sandbox_policy::{CredentialEntry, SandboxData};
use sandbox_provider::openshell::{
    HOMES_DIR, OpenShellProvider, OpenShellSandbox, SSH_PROXY_PATH, SessionOptions,
};
use sandbox_provider::{ProviderError, Sandbox, SandboxProvider, SandboxRequest};
use tokio_util::sync::CancellationToken;

/// The name a test SSH server answers to (mapped to loopback by the double).
const GIT_HOST: &str = "git.test";

/// A loopback server that speaks the first line of SSH: it sends its banner and records the
/// client's, then hangs up (enough to prove an ssh client reached it).
fn ssh_banner_server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let _ = stream.write_all(b"SSH-2.0-PaddockTestServer\r\n");
            let mut line = String::new();
            let _ = BufReader::new(&stream).read_line(&mut line);
            record.lock().unwrap().push(line.trim_end().to_owned());
        }
    });
    (port, seen)
}

async fn harness() -> Harness {
    Harness::start_with(Auth::Mtls, |config| {
        config
            .hosts
            .insert(GIT_HOST.to_owned(), vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    })
    .await
}

fn builtin(name: &str) -> CredentialEntry {
    SandboxData::builtin().unwrap().credential(name).unwrap()
}

fn provider(h: &Harness, entries: Vec<CredentialEntry>) -> OpenShellProvider {
    OpenShellProvider::new(h.config(h.environment(&[]))).with_credentials(entries)
}

fn with_credentials(h: &Harness, names: &[&str]) -> SandboxRequest {
    SandboxRequest {
        credentials: names.iter().map(|n| (*n).to_owned()).collect(),
        ..h.request(false)
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Content and modification time of each file.
fn snapshot(paths: &[PathBuf]) -> Vec<(Vec<u8>, SystemTime)> {
    paths
        .iter()
        .map(|p| {
            (
                std::fs::read(p).unwrap(),
                std::fs::metadata(p).unwrap().modified().unwrap(),
            )
        })
        .collect()
}

fn homes(h: &Harness) -> Vec<String> {
    match std::fs::read_dir(h.state.join(HOMES_DIR)) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// stdout, stderr and exit code of a command run in the sandbox, with the call's denials.
async fn run(
    sandbox: &OpenShellSandbox,
    command: &str,
) -> (String, String, Option<i64>, Vec<protocol::NetworkDenial>) {
    let outcome = sandbox
        .call(bash(command), None, &CancellationToken::new())
        .await;
    match outcome.result {
        Ok(tool_protocol::ToolResult::RunBash(r)) => (
            r.stdout.to_text_lossy(),
            r.stderr.to_text_lossy(),
            r.exit_code,
            outcome.denials,
        ),
        other => panic!("not a run_bash result: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_are_private_copies_inside_wired_for_ssh_and_gone_after_close() {
    let h = harness().await;
    let (port, banners) = ssh_banner_server();
    let gitbox =
        CredentialEntry::custom("gitbox", ".gitbox", &[&format!("{GIT_HOST}:{port}")]).unwrap();
    let home = &h.home;
    write(&home.join(".ssh/id_ed25519"), "PRIVATE-KEY\n");
    std::fs::set_permissions(
        home.join(".ssh/id_ed25519"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    write(
        &home.join(".ssh/config"),
        "Host example\n    User someone\n",
    );
    write(
        &home.join(".ssh/known_hosts"),
        "github.com ssh-ed25519 AAAA\n",
    );
    write(&home.join(".ssh/authorized_keys"), "NOT-FOR-THE-SANDBOX\n");
    let _agent = UnixListener::bind(home.join(".ssh/agent.sock")).unwrap();
    write(
        &home.join(".config/gh/hosts.yml"),
        "github.com:\n    oauth_token: GH-SECRET\n",
    );
    write(&home.join(".gitbox/token"), "GITBOX-TOKEN\n");
    let watched = [
        home.join(".ssh/id_ed25519"),
        home.join(".ssh/config"),
        home.join(".ssh/known_hosts"),
        home.join(".gitbox/token"),
        home.join(".config/gh/hosts.yml"),
    ];
    let before = snapshot(&watched);

    let provider = provider(&h, vec![builtin("ssh"), builtin("gh"), gitbox]);
    let request = with_credentials(&h, &["ssh", "gitbox"]);
    let (progress, sink) = openshell_support::progress_log();
    let sandbox = provider
        .start_session(&request, &SessionOptions::default(), &sink)
        .await
        .unwrap();
    let private = sandbox.private_home().unwrap();
    assert_eq!(private, h.state.join(HOMES_DIR).join(sandbox.id()));
    assert!(
        progress.lock().unwrap().join("\n").contains("ssh, gitbox"),
        "{:?}",
        progress.lock().unwrap()
    );
    let checked: Vec<&str> = sandbox
        .attestation()
        .canaries
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert!(checked.contains(&"private_home_verified"), "{checked:?}");
    let shown = private.display().to_string();

    // The copies are there, owner-only and the sandbox user's; HOME is the private home.
    let (out, err, code, _) = run(
        &sandbox,
        "echo \"HOME=$HOME\"; stat -c '%a %u %n' ~/.ssh/id_ed25519 ~/.ssh ~/.gitbox/token; \
         cat ~/.ssh/id_ed25519 ~/.gitbox/token; ls -A ~/.ssh",
    )
    .await;
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&format!("HOME={shown}\n")), "{out}");
    assert!(
        out.contains(&format!("600 {OWNER} {shown}/.ssh/id_ed25519\n")),
        "{out}"
    );
    assert!(
        out.contains(&format!("700 {OWNER} {shown}/.ssh\n")),
        "{out}"
    );
    assert!(
        out.contains(&format!("600 {OWNER} {shown}/.gitbox/token\n")),
        "{out}"
    );
    assert!(
        out.contains("PRIVATE-KEY") && out.contains("GITBOX-TOKEN"),
        "{out}"
    );
    assert!(
        !out.contains("authorized_keys") && !out.contains("agent.sock"),
        "excluded files were copied: {out}"
    );

    // The entry that was not enabled is absent, and so is the real home.
    let (out, err, _, _) = run(
        &sandbox,
        &format!(
            "cat ~/.config/gh/hosts.yml; ls -A {}",
            test_support::gateway_double::shell_quote(&home.display().to_string())
        ),
    )
    .await;
    assert!(
        !out.contains("GH-SECRET"),
        "a disabled entry is readable: {out}"
    );
    assert!(!out.contains(".bash_history"), "the real home shows: {out}");
    assert!(err.contains("No such file"), "{err}");

    // The entries' hosts are in the policy; the disabled entry's are not.
    let policy = sandbox.live_policy().await.unwrap().policy.unwrap();
    let rules = &policy.network_policies;
    let ssh_hosts: Vec<(String, u32, String)> = rules["credential_ssh"]
        .endpoints
        .iter()
        .map(|e| (e.host.clone(), e.port, e.protocol.clone()))
        .collect();
    assert!(
        ssh_hosts.contains(&("github.com".into(), 22, "tcp".into())),
        "{ssh_hosts:?}"
    );
    let gitbox_rule = &rules["credential_gitbox"].endpoints[0];
    assert_eq!(
        (gitbox_rule.host.as_str(), gitbox_rule.port),
        (GIT_HOST, u32::from(port))
    );
    assert!(!rules.contains_key("credential_gh"), "{:?}", rules.keys());

    // ssh and git use the copies, through the proxy script, with no agent.
    let (out, err, _, _) = run(
        &sandbox,
        "echo \"agent=${SSH_AUTH_SOCK:-none}\"; echo \"$GIT_SSH_COMMAND\"; \
         ssh -F ~/.ssh/config -G github.com",
    )
    .await;
    // `ssh -G` prints keywords in lower case; the paths are compared in lower case too.
    let (out, lower) = (out.to_lowercase(), shown.to_lowercase());
    assert!(out.contains("agent=none"), "{out}{err}");
    assert!(
        out.contains(&format!("ssh -f {lower}/.ssh/config")),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "proxycommand /bin/bash {lower}/{SSH_PROXY_PATH} %h %p"
        )),
        "{out}"
    );
    assert!(out.contains("identityagent none"), "{out}");

    // A real ssh client reaches an entry's host through the sandbox's proxy.
    let (_, err, code, _) = run(
        &sandbox,
        &format!("$GIT_SSH_COMMAND -o BatchMode=yes -p {port} {GIT_HOST} true"),
    )
    .await;
    assert_ne!(code, Some(0), "the test server speaks only the banner");
    let seen = banners.lock().unwrap().clone();
    assert!(
        seen.iter().any(|b| b.starts_with("SSH-2.0-OpenSSH")),
        "no ssh client reached the server: {seen:?}; ssh said: {err}"
    );
    // A host no rule names is refused by the proxy, and the denial is reported.
    let (_, err, code, denials) = run(
        &sandbox,
        "ssh -F ~/.ssh/config -o BatchMode=yes -o ConnectTimeout=5 -p 22 other.test true",
    )
    .await;
    assert_ne!(code, Some(0));
    assert!(
        err.contains("the sandbox proxy refused other.test:22"),
        "{err}"
    );
    assert!(
        denials
            .iter()
            .any(|d| d.host == "other.test" && d.port == 22),
        "{denials:?}"
    );

    assert!(private.join(".ssh/id_ed25519").is_file());
    sandbox.close().await.unwrap();
    assert!(!private.exists(), "the copies outlived the sandbox");
    assert!(sandbox.private_home().is_none());
    assert!(h.double.sandbox_names().is_empty());
    assert_eq!(before, snapshot(&watched), "the user's real files changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_takes_its_hosts_from_the_kubeconfig_and_aws_keeps_credentials_out() {
    let h = harness().await;
    write(
        &h.home.join(".kube/config"),
        "apiVersion: v1\nclusters:\n- name: test\n  cluster:\n    server: https://kube.test:6443\n",
    );
    write(
        &h.home.join(".aws/config"),
        "[default]\nregion = eu-west-1\n",
    );
    write(
        &h.home.join(".aws/credentials"),
        "[default]\naws_secret_access_key = AWS-SECRET\n",
    );
    let provider = provider(&h, vec![builtin("kube"), builtin("aws")]);
    let sandbox = provider
        .start_session(
            &with_credentials(&h, &["kube", "aws"]),
            &SessionOptions::default(),
            &|_| {},
        )
        .await
        .unwrap();
    let shown = sandbox.private_home().unwrap().display().to_string();
    let (out, err, _, _) = run(
        &sandbox,
        "echo \"$KUBECONFIG\"; cat \"$AWS_CONFIG_FILE\"; cat ~/.aws/credentials",
    )
    .await;
    assert!(out.starts_with(&format!("{shown}/.kube/config\n")), "{out}");
    assert!(out.contains("region = eu-west-1"), "{out}");
    assert!(
        !out.contains("AWS-SECRET"),
        "aws credentials were copied without opting in"
    );
    assert!(err.contains("No such file"), "{err}");
    let policy = sandbox.live_policy().await.unwrap().policy.unwrap();
    let kube = &policy.network_policies["credential_kube"].endpoints[0];
    assert_eq!((kube.host.as_str(), kube.port), ("kube.test", 6443));
    sandbox.close().await.unwrap();

    // Opted in, the credentials file is copied too.
    let provider = self::provider(&h, vec![builtin("aws").with_optional_files()]);
    let sandbox = provider
        .start_session(
            &with_credentials(&h, &["aws"]),
            &SessionOptions::default(),
            &|_| {},
        )
        .await
        .unwrap();
    let (out, _, _, _) = run(&sandbox, "cat ~/.aws/credentials").await;
    assert!(out.contains("AWS-SECRET"), "{out}");
    sandbox.close().await.unwrap();
    assert!(homes(&h).is_empty(), "{:?}", homes(&h));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_start_leaves_no_copies() {
    // The gateway refuses the bind mounts: refused at create.
    let h = Harness::start_with(Auth::Mtls, |config| config.enable_bind_mounts = false).await;
    write(&h.home.join(".ssh/id_ed25519"), "PRIVATE-KEY\n");
    let watched = [h.home.join(".ssh/id_ed25519")];
    let before = snapshot(&watched);
    let err = provider(&h, vec![builtin("ssh")])
        .start_session(
            &with_credentials(&h, &["ssh"]),
            &SessionOptions::default(),
            &|_| {},
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unavailable { .. }), "{err}");
    assert!(err.to_string().contains("enable_bind_mounts"), "{err}");
    assert!(homes(&h).is_empty(), "copies left: {:?}", homes(&h));
    assert_eq!(before, snapshot(&watched));

    // The image shadows the private home: the attestation sees no copies and refuses.
    let h = harness().await;
    write(&h.home.join(".ssh/id_ed25519"), "PRIVATE-KEY\n");
    let request = with_credentials(&h, &["ssh"]);
    let home = h
        .state
        .join(HOMES_DIR)
        .join(sandbox_policy::sandbox_name(&request.session_id));
    h.double.shadow_mounts(&[&home.display().to_string()]);
    let err = provider(&h, vec![builtin("ssh")])
        .start_session(&request, &SessionOptions::default(), &|_| {})
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, ProviderError::AttestationFailed { .. }),
        "{text}"
    );
    assert!(text.contains("private_home_verified"), "{text}");
    assert!(!home.exists(), "copies left after a failed attestation");
    assert!(h.double.sandbox_names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_refused_before_anything_is_copied() {
    let h = harness().await;
    write(&h.home.join(".ssh/id_ed25519"), "PRIVATE-KEY\n");
    let provider = provider(&h, vec![builtin("ssh")]);
    let err = provider
        .start(&with_credentials(&h, &["nonesuch"]), &|_| {})
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("unknown credential entry `nonesuch` (this machine offers: ssh)"),
        "{err}"
    );
    // A grant that holds the state folder would put the copies within the grant.
    let mut request = with_credentials(&h, &["ssh"]);
    let holder = h.state_root.path().display().to_string();
    request.folders.push(FolderGrant {
        path: holder.clone(),
        access: FolderAccess::ReadWrite,
    });
    let err = provider
        .start(&request, &|_| {})
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("overlaps"), "{err}");
    assert!(err.contains(&holder), "{err}");
    assert!(!h.state.join(HOMES_DIR).exists());
    assert!(h.double.sandbox_names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_sandbox_keeps_its_home_and_reaping_removes_orphaned_homes() {
    let h = harness().await;
    write(&h.home.join(".gitbox/token"), "GITBOX-TOKEN\n");
    let gitbox = CredentialEntry::custom("gitbox", ".gitbox", &["git.test:2222"]).unwrap();
    let provider = provider(&h, vec![gitbox]);
    let request = with_credentials(&h, &["gitbox"]);
    let keep = SessionOptions {
        keep: Some(true),
        ..SessionOptions::default()
    };
    let kept = provider
        .start_session(&request, &keep, &|_| {})
        .await
        .unwrap();
    let home = kept.private_home().unwrap();
    kept.close().await.unwrap();
    assert!(
        home.join(".gitbox/token").is_file(),
        "a kept sandbox lost its home"
    );
    drop(kept);
    assert!(
        home.is_dir(),
        "dropping a closed, kept sandbox removed its home"
    );

    // Reused by the same session: the same home, still readable inside.
    let (lines, sink) = openshell_support::progress_log();
    let reused = provider
        .start_session(&request, &keep, &sink)
        .await
        .unwrap();
    assert!(
        lines.lock().unwrap().iter().any(|l| l.contains("reusing")),
        "{:?}",
        lines.lock().unwrap()
    );
    let (out, _, _, _) = run(&reused, "cat ~/.gitbox/token").await;
    assert_eq!(out, "GITBOX-TOKEN\n");
    reused.close().await.unwrap();

    // Leftovers: a home whose sandbox died with a crash, and an orphan sandbox with its home.
    let mut labels = h.double.labels(reused.id()).unwrap();
    labels.remove("paddock.keep");
    h.double.adopt_foreign_sandbox("pd-orphan", labels);
    for name in ["pd-orphan", "pd-crashed"] {
        write(
            &h.state.join(HOMES_DIR).join(name).join(".gitbox/token"),
            "x",
        );
    }
    let mut reaped = provider
        .reap_orphans(&sandbox_provider::NoLiveSessions)
        .await
        .unwrap();
    reaped.sort();
    assert_eq!(reaped, ["pd-crashed (private home)", "pd-orphan"]);
    let mut left = homes(&h);
    left.sort();
    assert_eq!(left, [reused.id()], "the kept sandbox's home stays");

    // Closing it for good removes both.
    let last = provider
        .start_session(&request, &SessionOptions::default(), &|_| {})
        .await
        .unwrap();
    last.close().await.unwrap();
    assert!(homes(&h).is_empty(), "{:?}", homes(&h));
    assert_eq!(h.double.sandbox_names(), Vec::<String>::new());
    assert_eq!(
        std::fs::metadata(h.state.join(HOMES_DIR)).unwrap().mode() & 0o777,
        0o711
    );
}
