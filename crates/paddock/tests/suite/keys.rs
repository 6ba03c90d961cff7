//! `paddock keys` through the real binary: the key piped on stdin, tested against the fake
//! model server's API (real HTTP, one GET of the model list), stored in the owner-only file
//! store or in a real gnome-keyring under `dbus-run-session`; `status` and `machine sandbox
//! status` name the store and say whether a key is present. A planted key never appears in
//! anything the binary prints (logs at trace level included) nor in its state files.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use test_support::model_server::FakeModelServer;
use tokio::io::AsyncWriteExt;

const KEY: &str = "sk-ant-planted-key-7f3a9c0d1e2b";
const WRONG_KEY: &str = "sk-ant-wrong-key-5566778899aa";

/// A `paddock` subprocess's machine: its own config, state and home.
struct Machine {
    root: tempfile::TempDir,
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Output {
    fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

impl Machine {
    fn new(config: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("config/paddock")).unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        std::fs::write(root.path().join("config/paddock/config.toml"), config).unwrap();
        Self { root }
    }

    fn state(&self) -> PathBuf {
        self.root.path().join("state/paddock")
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_paddock"));
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.path().join("home"))
            .env("XDG_CONFIG_HOME", self.root.path().join("config"))
            .env("XDG_STATE_HOME", self.root.path().join("state"))
            .env("PADDOCK_LOG", "trace")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// Runs `paddock ARGS` with `input` piped on stdin.
    async fn run(&self, args: &[&str], input: Option<&str>) -> Output {
        let mut command = self.command(args);
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command.spawn().unwrap();
        if let Some(input) = input {
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(input.as_bytes()).await.unwrap();
            drop(stdin);
        }
        let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
            .await
            .expect("paddock finished in time")
            .unwrap();
        Output {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

fn config(server: &FakeModelServer, store: &str) -> String {
    format!(
        "[models]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nkey_store = \"{store}\"\n",
        server.anthropic_base_url()
    )
}

/// Every file under `dir`, as bytes, must not hold `secret`.
fn assert_not_in_files(dir: &Path, secret: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            assert_not_in_files(&path, secret);
        } else if kind.is_file() && path.file_name().is_some_and(|n| n != "secrets.toml") {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds the key",
                path.display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_key_is_tested_stored_owner_only_shown_as_present_and_deleted() {
    let server = FakeModelServer::start().await.unwrap();
    server.require_api_key(KEY);
    let machine = Machine::new(&config(&server, "file"));
    let mut printed = String::new();

    let before = machine.run(&["keys", "status"], None).await;
    assert_eq!(before.code, 0, "{}", before.all());
    assert!(
        before.stdout.contains("key store: file: ")
            && before
                .stdout
                .lines()
                .any(|l| l.contains("anthropic") && l.contains("no key")),
        "{}",
        before.stdout
    );

    // A key the API refuses is not stored.
    let refused = machine
        .run(
            &["keys", "set", "anthropic"],
            Some(&format!("{WRONG_KEY}\n")),
        )
        .await;
    assert_eq!(refused.code, 1, "{}", refused.all());
    assert!(
        refused
            .stderr
            .contains("refused the key, so it was not stored"),
        "{}",
        refused.stderr
    );
    assert!(!refused.all().contains(WRONG_KEY), "{}", refused.all());
    let still_none = machine.run(&["keys", "status", "anthropic"], None).await;
    assert_eq!(still_none.code, 1, "no key yet: {}", still_none.all());

    let stored = machine
        .run(&["keys", "set", "anthropic"], Some(&format!("{KEY}\n")))
        .await;
    assert_eq!(stored.code, 0, "{}", stored.all());
    assert!(
        stored.stdout.contains("tested: GET ") && stored.stdout.contains("the key works"),
        "{}",
        stored.stdout
    );
    assert!(
        stored.stdout.contains("stored the anthropic key"),
        "{}",
        stored.stdout
    );
    printed.push_str(&stored.all());
    // The test was one authenticated GET of the model list, accepted; the refused one too.
    let gets: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET")
        .collect();
    assert_eq!(gets.len(), 2, "{gets:#?}");
    assert!(gets.iter().all(|r| r.path == "/v1/models"));
    assert_eq!(
        gets.iter().map(|r| r.api_key_accepted).collect::<Vec<_>>(),
        [false, true]
    );
    assert!(
        server.requests().iter().all(|r| r.method == "GET"),
        "no tokens spent"
    );

    // Owner-only file holding the key.
    let file = machine.state().join("secrets.toml");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let folder = std::fs::metadata(machine.state())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(folder, 0o700);
    assert!(std::fs::read_to_string(&file).unwrap().contains(KEY));

    let status = machine.run(&["keys", "status", "anthropic"], None).await;
    assert_eq!(status.code, 0, "{}", status.all());
    assert!(status.stdout.contains("key present"), "{}", status.stdout);
    printed.push_str(&status.all());
    let json = machine.run(&["keys", "status", "--json"], None).await;
    let value: Value = serde_json::from_str(json.stdout.trim()).unwrap();
    assert_eq!(value["store"], "file");
    let anthropic = value["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["provider"] == "anthropic")
        .unwrap();
    assert_eq!(anthropic["present"], true);
    printed.push_str(&json.all());

    let tested = machine.run(&["keys", "test"], None).await;
    assert_eq!(tested.code, 0, "{}", tested.all());
    printed.push_str(&tested.all());

    // The machine's status has the key store line too.
    let machine_status = machine.run(&["machine", "sandbox", "status"], None).await;
    assert!(
        machine_status.stdout.contains("\nkey store: file: ")
            && machine_status
                .stdout
                .contains("model key (anthropic): present"),
        "{}",
        machine_status.stdout
    );
    printed.push_str(&machine_status.all());
    let machine_json = machine
        .run(&["machine", "sandbox", "status", "--json"], None)
        .await;
    let value: Value = serde_json::from_str(machine_json.stdout.trim()).unwrap();
    assert_eq!(value["key_store"]["store"], "file");
    assert!(value["checks"].is_array(), "the wall's status is kept");
    printed.push_str(&machine_json.all());

    let deleted = machine.run(&["keys", "delete", "anthropic"], None).await;
    assert_eq!(deleted.code, 0, "{}", deleted.all());
    assert!(deleted.stdout.contains("deleted the anthropic key"));
    assert!(!std::fs::read_to_string(&file).unwrap().contains(KEY));
    let again = machine.run(&["keys", "delete", "anthropic"], None).await;
    assert!(
        again.stdout.contains("nothing to delete"),
        "{}",
        again.all()
    );
    printed.push_str(&deleted.all());

    assert!(!printed.is_empty());
    assert!(
        !printed.contains(KEY),
        "the key was printed (trace logs included):\n{printed}"
    );
    assert_not_in_files(machine.root.path(), KEY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_env_store_is_read_only_and_bad_input_is_refused_naming_it() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&config(&server, "env"));
    let env = machine.run(&["keys", "set", "anthropic"], Some(KEY)).await;
    assert_eq!(env.code, 1, "{}", env.all());
    assert!(env.stderr.contains("ANTHROPIC_API_KEY"), "{}", env.stderr);
    assert!(!env.all().contains(KEY), "{}", env.all());

    let file_machine = Machine::new(&config(&server, "file"));
    let empty = file_machine.run(&["keys", "set"], Some("\n")).await;
    assert_eq!(empty.code, 1);
    assert!(
        empty.stderr.contains("no key was given"),
        "{}",
        empty.stderr
    );
    let unknown = file_machine.run(&["keys", "set", "nope"], Some(KEY)).await;
    assert_eq!(unknown.code, 1);
    assert!(
        unknown
            .stderr
            .contains("`nope` is not a provider Paddock knows"),
        "{}",
        unknown.stderr
    );
    let spaced = file_machine
        .run(&["keys", "set", "anthropic"], Some("sk-ant two words here"))
        .await;
    assert_eq!(spaced.code, 1);
    assert!(spaced.stderr.contains("whitespace"), "{}", spaced.stderr);
    assert!(!spaced.all().contains("two words"), "{}", spaced.all());
    assert_eq!(server.request_count(), 0, "nothing reached the API");
}

/// Starts an unlocked gnome-keyring on the private bus, then runs the rest of the command.
const UNLOCK_THEN_RUN: &str = "printf ci-pass | gnome-keyring-daemon --unlock --components=secrets \
                               --daemonize >/dev/null && exec \"$@\"";

/// In one private D-Bus session: set (piped), status, a `secret-tool` lookup, delete, lookup.
const KEYCHAIN_SCRIPT: &str = r#"set -u
paddock="$1"
printf '%s\n' "$PLANTED" | "$paddock" keys set anthropic; echo "set-exit=$?"
"$paddock" keys status anthropic; echo "status-exit=$?"
echo "lookup=$(secret-tool lookup service paddock username anthropic)"
"$paddock" keys delete anthropic; echo "delete-exit=$?"
echo "after=$(secret-tool lookup service paddock username anthropic)"
"#;

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| Path::new(&dir).join(tool).is_file())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keychain_store_holds_the_key_in_a_real_gnome_keyring() {
    let missing: Vec<&str> = [
        "dbus-run-session",
        "gnome-keyring-daemon",
        "secret-tool",
        "bash",
    ]
    .into_iter()
    .filter(|tool| !on_path(tool))
    .collect();
    assert!(
        missing.is_empty(),
        "this test needs {missing:?}: install the Debian packages dbus, gnome-keyring and \
         libsecret-tools (`cargo xtask setup` does)"
    );
    let server = FakeModelServer::start().await.unwrap();
    server.require_api_key(KEY);
    let machine = Machine::new(&config(&server, "keychain"));
    let runtime = machine.root.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(&runtime, PermissionsExt::from_mode(0o700)).unwrap();
    let output = tokio::process::Command::new("dbus-run-session")
        .args(["--", "bash", "-c", UNLOCK_THEN_RUN, "keychain-test"])
        .args(["bash", "-c", KEYCHAIN_SCRIPT, "script"])
        .arg(env!("CARGO_BIN_EXE_paddock"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", machine.root.path().join("home"))
        .env("XDG_CONFIG_HOME", machine.root.path().join("config"))
        .env("XDG_STATE_HOME", machine.root.path().join("state"))
        .env("XDG_DATA_HOME", machine.root.path().join("data"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("PADDOCK_LOG", "trace")
        .env("PLANTED", KEY)
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), output)
        .await
        .expect("the keychain session finished in time")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report = format!("--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert!(output.status.success(), "{report}");
    for expected in ["set-exit=0", "status-exit=0", "delete-exit=0", "after=\n"] {
        assert!(stdout.contains(expected), "missing {expected:?}:\n{report}");
    }
    assert!(stdout.contains("key store: keychain"), "{report}");
    assert!(stdout.contains("key present"), "{report}");
    assert!(stdout.contains("tested: GET "), "{report}");
    // The one line that shows the key is secret-tool's own lookup, the proof it is stored.
    let shown: Vec<&str> = stdout.lines().filter(|l| l.contains(KEY)).collect();
    assert_eq!(shown, [format!("lookup={KEY}")], "{report}");
    assert!(!stderr.contains(KEY), "{report}");
    assert!(
        !machine.state().join("secrets.toml").exists(),
        "the keychain store writes no file"
    );
    assert_not_in_files(machine.root.path(), KEY);
}
