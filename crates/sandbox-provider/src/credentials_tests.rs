#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::sync::Mutex;

use super::*;

/// Records what was handed over (the tests run as whoever runs them: no chown).
#[derive(Default)]
struct Recorder(Mutex<Vec<PathBuf>>);

impl HandOver for Recorder {
    fn hand_over(&self, path: &Path) -> Result<(), ProviderError> {
        self.0.lock().unwrap().push(path.to_path_buf());
        Ok(())
    }
}

fn wiring() -> SshWiring {
    SshWiring {
        comment: "# test wiring\n".into(),
        home_inside: "/inside/home".into(),
        proxy_command: "connect-tool %h %p".into(),
    }
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn ssh_entry() -> CredentialEntry {
    sandbox_policy::SandboxData::builtin()
        .unwrap()
        .credential("ssh")
        .unwrap()
}

#[test]
fn globs_match_names() {
    assert!(glob_matches("*.sock", "agent.sock"));
    assert!(glob_matches("agent.*", "agent.123"));
    assert!(glob_matches("id_?sa", "id_rsa"));
    assert!(!glob_matches("authorized_keys", "authorized_keys2"));
    assert!(glob_matches("*", ""));
    assert!(!glob_matches("config", "config.bak"));
}

#[test]
fn ssh_copies_are_private_wired_and_leave_excluded_files_and_sockets_out() {
    let user = tempfile::tempdir().unwrap();
    let private = tempfile::tempdir().unwrap();
    let ssh = user.path().join(".ssh");
    fs::create_dir_all(&ssh).unwrap();
    fs::write(ssh.join("id_ed25519"), "KEY\n").unwrap();
    fs::set_permissions(ssh.join("id_ed25519"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::write(ssh.join("config"), "Host example\n").unwrap();
    fs::write(ssh.join("authorized_keys"), "NO\n").unwrap();
    let _agent = UnixListener::bind(ssh.join("agent.sock")).unwrap();
    let owner = Recorder::default();

    let mut copied =
        copy_share(&ssh_entry(), user.path(), private.path(), &owner, &wiring()).unwrap();
    copied.sort();
    assert_eq!(
        copied,
        [
            PathBuf::from(".ssh/config"),
            PathBuf::from(".ssh/id_ed25519")
        ]
    );
    let home = private.path().join(".ssh");
    assert_eq!(mode(&home), 0o700);
    assert_eq!(
        mode(&home.join("id_ed25519")),
        0o600,
        "copies are owner-only"
    );
    assert!(!home.join("authorized_keys").exists());
    assert!(!home.join("agent.sock").exists());
    // The user's config is set aside and included after Paddock's.
    assert_eq!(
        fs::read_to_string(home.join("config.user")).unwrap(),
        "Host example\n"
    );
    let config = fs::read_to_string(home.join("config")).unwrap();
    assert_eq!(
        config,
        "# test wiring\nHost *\n    ProxyCommand connect-tool %h %p\n    IdentityAgent none\n    \
         ForwardAgent no\n    UserKnownHostsFile /inside/home/.ssh/known_hosts\n    \
         Include /inside/home/.ssh/config.user\n"
    );
    let handed = owner.0.lock().unwrap();
    for path in [home.clone(), home.join("id_ed25519"), home.join("config")] {
        assert!(handed.contains(&path), "{} not handed over", path.display());
    }
}

#[test]
fn a_missing_source_and_an_oversized_entry_are_refused_by_name() {
    let user = tempfile::tempdir().unwrap();
    let private = tempfile::tempdir().unwrap();
    let entry = CredentialEntry::custom("bulky", ".bulky", &["bulky.example"]).unwrap();
    let err = copy_share(
        &entry,
        user.path(),
        private.path(),
        &Recorder::default(),
        &wiring(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("credential entry `bulky`"), "{err}");

    let source = user.path().join(".bulky");
    fs::create_dir_all(&source).unwrap();
    let file = File::create(source.join("cache")).unwrap();
    file.set_len(MAX_ENTRY_BYTES + 1).unwrap();
    let err = copy_share(
        &entry,
        user.path(),
        private.path(),
        &Recorder::default(),
        &wiring(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("`bulky` holds more than 32 MiB"), "{err}");
}

#[test]
fn folders_deeper_than_the_limit_are_not_copied() {
    let user = tempfile::tempdir().unwrap();
    let private = tempfile::tempdir().unwrap();
    let mut deep = user.path().join(".deep");
    for level in 0..=MAX_DEPTH + 1 {
        fs::create_dir_all(&deep).unwrap();
        fs::write(deep.join(format!("file{level}")), "x").unwrap();
        deep.push("d");
    }
    let entry = CredentialEntry::custom("deep", ".deep", &["deep.example"]).unwrap();
    let copied = copy_share(
        &entry,
        user.path(),
        private.path(),
        &Recorder::default(),
        &wiring(),
    )
    .unwrap();
    assert_eq!(copied.len(), MAX_DEPTH + 1, "{copied:?}");
}

#[test]
fn unknown_entries_are_refused_with_what_is_on_offer() {
    let home = tempfile::tempdir().unwrap();
    let offered = [ssh_entry()];
    let err = enabled_entries(&offered, &["nonesuch".into()], home.path())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown credential entry `nonesuch` (this machine offers: ssh)"),
        "{err}"
    );
    let twice = enabled_entries(&offered, &["ssh".into(), "ssh".into()], home.path()).unwrap();
    assert_eq!(twice.len(), 1, "an entry named twice is enabled once");
}
