//! The keychain store against a real secret service: gnome-keyring on a private D-Bus
//! session bus.
//!
//! The test cannot assume a session bus, and it must not skip silently when there is none.
//! So it re-executes this test binary, filtered to itself, under `dbus-run-session` with an
//! unlocked gnome-keyring, in a throwaway HOME. Without the packages (`dbus`,
//! `gnome-keyring`, `libsecret-tools`; `cargo xtask setup` installs them) it fails and says so.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use model_client::keys::KEYCHAIN_SERVICE;
use model_client::{ApiKey, KeyStore, KeyStoreKind};

/// Set in the re-executed child, which then runs the round trip itself.
const CHILD_MARKER: &str = "PADDOCK_KEYCHAIN_TEST_CHILD";
const TEST_NAME: &str = "keychain::round_trip_through_a_real_secret_service";
const VERIFIED: &str = "keychain round trip verified";
/// Starts an unlocked keyring (the password must be non-empty, or gnome-keyring tries to
/// prompt), then runs the rest of the command line.
const UNLOCK_THEN_RUN: &str = "printf ci-pass | gnome-keyring-daemon --unlock --components=secrets \
                               --daemonize >/dev/null && exec \"$@\"";

#[test]
fn round_trip_through_a_real_secret_service() {
    if std::env::var_os(CHILD_MARKER).is_some() {
        round_trip_in_session();
        return;
    }
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
        "the keychain test needs {missing:?}: install the Debian packages dbus, gnome-keyring \
         and libsecret-tools (`cargo xtask setup` does)"
    );
    let home = tempfile::tempdir().unwrap();
    let runtime = home.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(&runtime, PermissionsExt::from_mode(0o700)).unwrap();
    let output = Command::new("dbus-run-session")
        .args(["--", "bash", "-c", UNLOCK_THEN_RUN, "keychain-test"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD_MARKER, "1")
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(VERIFIED) && stdout.contains("1 passed"),
        "the keychain round trip under dbus-run-session failed ({}):\n--- stdout\n{stdout}\n--- \
         stderr\n{stderr}",
        output.status
    );
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| Path::new(&dir).join(tool).is_file())
    })
}

#[allow(
    clippy::print_stdout,
    reason = "the parent test reads this marker from the child's output"
)]
/// Runs inside the private session: set, read back (also with `secret-tool`), overwrite,
/// delete.
fn round_trip_in_session() {
    assert!(
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
        "dbus-run-session did not provide a session bus"
    );
    let account = format!("paddock-test-{}", std::process::id());
    let store = KeyStore::open(KeyStoreKind::Keychain).unwrap();
    assert!(
        !store.describe().contains("UNAVAILABLE"),
        "{}",
        store.describe()
    );
    assert_eq!(
        store.get(&account).unwrap(),
        None,
        "a fresh keyring is empty"
    );

    let first = ApiKey::new("sk-ant-keychain-test-first").unwrap();
    store.set(&account, &first).unwrap();
    assert_eq!(store.get(&account).unwrap(), Some(first));
    assert_eq!(
        secret_tool_lookup(&account).as_deref(),
        Some("sk-ant-keychain-test-first"),
        "the item must be stored under service `{KEYCHAIN_SERVICE}`, account = provider"
    );

    let second = ApiKey::new("sk-ant-keychain-test-second").unwrap();
    store.set(&account, &second).unwrap();
    assert_eq!(store.get(&account).unwrap(), Some(second));

    assert!(store.delete(&account).unwrap());
    assert_eq!(store.get(&account).unwrap(), None);
    assert_eq!(secret_tool_lookup(&account), None);
    assert!(!store.delete(&account).unwrap(), "nothing left to delete");
    println!("{VERIFIED}");
}

/// What `secret-tool lookup service paddock username <account>` prints; `None` when it
/// finds nothing.
fn secret_tool_lookup(account: &str) -> Option<String> {
    let output = Command::new("secret-tool")
        .args(["lookup", "service", KEYCHAIN_SERVICE, "username", account])
        .output()
        .unwrap();
    output.status.success().then(|| {
        String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_owned()
    })
}

/// Set in the re-executed child of the dead-bus test.
const DEAD_BUS_MARKER: &str = "PADDOCK_KEYCHAIN_DEAD_BUS_CHILD";
const DEAD_BUS_TEST: &str = "keychain::a_session_bus_that_does_not_answer_is_reported_with_the_fix";
const DEAD_BUS_VERIFIED: &str = "dead session bus reported";

/// `DBUS_SESSION_BUS_ADDRESS` is set but nothing listens there: the secret-service call
/// itself fails, and the store must say the keychain is unavailable and name the other
/// stores, not fall back to one. (A child process, because the bus address is read from the
/// real environment.)
#[test]
fn a_session_bus_that_does_not_answer_is_reported_with_the_fix() {
    if std::env::var_os(DEAD_BUS_MARKER).is_some() {
        dead_bus_in_child();
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", DEAD_BUS_TEST, "--nocapture", "--test-threads=1"])
        .env(DEAD_BUS_MARKER, "1")
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}", scratch.path().join("no-bus").display()),
        )
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(DEAD_BUS_VERIFIED),
        "the dead-bus child failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[allow(
    clippy::print_stdout,
    reason = "the parent test reads this marker from the child's output"
)]
fn dead_bus_in_child() {
    let store = KeyStore::open(KeyStoreKind::Keychain).unwrap();
    let key = ApiKey::new("sk-never-stored").unwrap();
    let errors = [
        store.get("anthropic").map(|_| ()).unwrap_err(),
        store.set("anthropic", &key).unwrap_err(),
    ];
    for error in errors {
        assert!(
            matches!(
                error,
                model_client::KeyStoreError::KeychainUnavailable { .. }
            ),
            "{error:?}"
        );
        let text = error.to_string();
        assert!(text.contains("could not be reached"), "{text}");
        assert!(text.contains("key_store = \"file\""), "{text}");
        assert!(!text.contains("sk-never-stored"), "{text}");
    }
    println!("{DEAD_BUS_VERIFIED}");
}
