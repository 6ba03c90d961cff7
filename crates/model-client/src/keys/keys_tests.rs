use super::*;
use pretty_assertions::assert_eq;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const SECRET: &str = "sk-ant-test-0123456789abcdef";

fn key() -> ApiKey {
    match ApiKey::new(SECRET) {
        Ok(key) => key,
        Err(error) => panic!("test key rejected: {error}"),
    }
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0)
}

/// A file store in a fresh temporary state folder: `<tmp>/paddock/secrets.toml`.
fn file_store() -> (tempfile::TempDir, KeyStore) {
    let state = tempfile::tempdir().unwrap();
    let env = Environment::fixed([("XDG_STATE_HOME", state.path().to_string_lossy().to_string())]);
    let store = KeyStore::open_with(KeyStoreKind::File, env).unwrap();
    (state, store)
}

#[test]
fn api_key_never_prints_its_value() {
    let key = key();
    assert_eq!(format!("{key}"), "[redacted]");
    assert_eq!(format!("{key:?}"), "ApiKey([redacted])");
    #[derive(Debug)]
    #[allow(dead_code)]
    struct Holder {
        key: ApiKey,
    }
    let nested = format!("{:#?}", Holder { key: key.clone() });
    assert!(!nested.contains(SECRET), "{nested}");
    assert_eq!(key.expose_secret(), SECRET);
}

#[test]
fn api_key_is_trimmed_and_refuses_header_breaking_text() {
    assert_eq!(
        ApiKey::new(format!("  {SECRET}\n")).map(|k| k.expose_secret().to_owned()),
        Ok(SECRET.to_owned())
    );
    assert_eq!(ApiKey::new(" \n"), Err(InvalidApiKey::Empty));
    assert_eq!(
        ApiKey::new("sk-abc\r\nx-evil: 1"),
        Err(InvalidApiKey::BadCharacter)
    );
    assert_eq!(ApiKey::new("sk-\u{e9}"), Err(InvalidApiKey::BadCharacter));
    assert_eq!(ApiKey::new("sk a"), Err(InvalidApiKey::BadCharacter));
}

#[test]
fn environment_debug_prints_names_only() {
    let env = Environment::fixed([("ANTHROPIC_API_KEY", SECRET)]);
    let printed = format!("{env:?}");
    assert!(printed.contains("ANTHROPIC_API_KEY"), "{printed}");
    assert!(!printed.contains(SECRET), "{printed}");
}

#[test]
fn env_store_reads_provider_variables_and_refuses_writes() {
    let env = Environment::fixed([
        ("ANTHROPIC_API_KEY", SECRET),
        ("OPENROUTER_API_KEY", "sk-or-1"),
        ("OPENAI_API_KEY", ""),
    ]);
    let store = KeyStore::open_with(KeyStoreKind::Env, env).unwrap();
    assert_eq!(store.kind(), KeyStoreKind::Env);
    assert_eq!(
        store
            .get("anthropic")
            .unwrap()
            .map(|k| k.expose_secret().to_owned()),
        Some(SECRET.to_owned())
    );
    assert_eq!(
        store
            .get("openrouter")
            .unwrap()
            .map(|k| k.expose_secret().to_owned()),
        Some("sk-or-1".to_owned())
    );
    assert_eq!(store.get("openai").unwrap(), None, "empty means unset");
    assert_eq!(store.get("ollama").unwrap(), None);
    let refused = store.set("anthropic", &key()).unwrap_err();
    assert!(
        matches!(&refused, KeyStoreError::ReadOnly { variable } if variable == "ANTHROPIC_API_KEY")
    );
    assert!(refused.to_string().contains("ANTHROPIC_API_KEY"));
    assert!(matches!(
        store.delete("anthropic"),
        Err(KeyStoreError::ReadOnly { .. })
    ));
    assert_eq!(env_variable("my-local"), "MY_LOCAL_API_KEY");
}

#[test]
fn provider_names_are_checked_before_any_store_is_touched() {
    let store =
        KeyStore::open_with(KeyStoreKind::Env, Environment::fixed::<String, String>([])).unwrap();
    for bad in ["", "Anthropic", "../etc", "a b", "-x", &"a".repeat(65)] {
        let error = store.get(bad).unwrap_err();
        assert!(
            matches!(error, KeyStoreError::InvalidProvider { .. }),
            "{bad:?} gave {error}"
        );
    }
}

#[test]
fn file_store_round_trip_creates_owner_only_folder_and_file() {
    let (_state, store) = file_store();
    let path = store.file_path().unwrap().to_owned();
    assert_eq!(store.get("anthropic").unwrap(), None, "no file yet");
    store.set("anthropic", &key()).unwrap();
    store
        .set("openai", &ApiKey::new("sk-openai").unwrap())
        .unwrap();
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        store
            .get("anthropic")
            .unwrap()
            .map(|k| k.expose_secret().to_owned()),
        Some(SECRET.to_owned())
    );
    assert!(store.delete("anthropic").unwrap());
    assert!(
        !store.delete("anthropic").unwrap(),
        "second delete finds nothing"
    );
    assert_eq!(store.get("anthropic").unwrap(), None);
    assert_eq!(
        store
            .get("openai")
            .unwrap()
            .map(|k| k.expose_secret().to_owned()),
        Some("sk-openai".to_owned())
    );
    assert_eq!(mode(&path), 0o600, "rewrites keep the mode");
    let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("secrets.toml")]);
}

#[test]
fn file_store_refuses_a_file_readable_by_others_without_printing_it() {
    let (_state, store) = file_store();
    store.set("anthropic", &key()).unwrap();
    let path = store.file_path().unwrap().to_owned();
    for wide in [0o644, 0o640, 0o604, 0o660] {
        fs::set_permissions(&path, fs::Permissions::from_mode(wide)).unwrap();
        let error = store.get("anthropic").unwrap_err();
        assert!(
            matches!(error, KeyStoreError::InsecurePermissions { mode, expected: 0o600, .. } if mode == wide),
            "{wide:o}: {error}"
        );
        let text = error.to_string();
        assert!(text.contains("chmod 600"), "{text}");
        assert!(!text.contains(SECRET), "{text}");
        assert!(
            store.set("other", &key()).is_err(),
            "a write must not silently rewrite (and tighten) a refused file"
        );
    }
}

#[test]
fn file_store_refuses_a_folder_open_to_others() {
    let (_state, store) = file_store();
    store.set("anthropic", &key()).unwrap();
    let folder = store.file_path().unwrap().parent().unwrap().to_owned();
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o755)).unwrap();
    let error = store.get("anthropic").unwrap_err();
    assert!(
        matches!(
            error,
            KeyStoreError::InsecurePermissions {
                expected: 0o700,
                ..
            }
        ),
        "{error}"
    );
    assert!(matches!(
        store.set("anthropic", &key()),
        Err(KeyStoreError::InsecurePermissions { .. })
    ));
}

#[test]
fn file_store_refuses_a_symlinked_secrets_file() {
    let (state, store) = file_store();
    let path = store.file_path().unwrap().to_owned();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::set_permissions(path.parent().unwrap(), fs::Permissions::from_mode(0o700)).unwrap();
    let elsewhere = state.path().join("elsewhere.toml");
    fs::write(&elsewhere, format!("[keys]\nanthropic = \"{SECRET}\"\n")).unwrap();
    fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    let error = store.get("anthropic").unwrap_err();
    assert!(
        matches!(&error, KeyStoreError::UnsafeFile { reason, .. } if reason.contains("symbolic link")),
        "{error}"
    );
}

#[test]
fn a_malformed_secrets_file_error_names_the_line_but_not_the_content() {
    let (_state, store) = file_store();
    store.set("anthropic", &key()).unwrap();
    let path = store.file_path().unwrap().to_owned();
    fs::write(
        &path,
        format!("[keys]\nanthropic = \"{SECRET}\"\nopenai = {SECRET}\n"),
    )
    .unwrap();
    let error = store.get("anthropic").unwrap_err();
    assert!(
        matches!(error, KeyStoreError::Malformed { line: 3, .. }),
        "{error}"
    );
    let text = format!("{error} {error:?}");
    assert!(!text.contains(SECRET), "{text}");
}

#[test]
fn default_file_path_follows_xdg_then_home() {
    let xdg = Environment::fixed([("XDG_STATE_HOME", "/state"), ("HOME", "/home/u")]);
    let store = KeyStore::open_with(KeyStoreKind::File, xdg).unwrap();
    assert_eq!(
        store.file_path(),
        Some(Path::new("/state/paddock/secrets.toml"))
    );
    let home = Environment::fixed([("HOME", "/home/u"), ("XDG_STATE_HOME", "relative")]);
    let store = KeyStore::open_with(KeyStoreKind::File, home).unwrap();
    assert_eq!(
        store.file_path(),
        Some(Path::new("/home/u/.local/state/paddock/secrets.toml"))
    );
    let none = Environment::fixed::<String, String>([]);
    assert!(matches!(
        KeyStore::open_with(KeyStoreKind::File, none),
        Err(KeyStoreError::NoStateFolder)
    ));
}

#[test]
fn keychain_without_a_session_bus_fails_with_the_fix_instead_of_falling_back() {
    let env = Environment::fixed([("HOME", "/home/u"), ("ANTHROPIC_API_KEY", SECRET)]);
    let store = KeyStore::open_with(KeyStoreKind::Keychain, env).unwrap();
    for error in [
        store.get("anthropic").map(|_| ()).unwrap_err(),
        store.set("anthropic", &key()).unwrap_err(),
        store.delete("anthropic").map(|_| ()).unwrap_err(),
    ] {
        assert!(
            matches!(error, KeyStoreError::KeychainUnavailable { .. }),
            "{error}"
        );
        let text = error.to_string();
        assert!(text.contains("DBUS_SESSION_BUS_ADDRESS"), "{text}");
        assert!(text.contains("key_store = \"file\""), "{text}");
        assert!(text.contains("key_store = \"env\""), "{text}");
    }
    assert!(
        store.describe().contains("UNAVAILABLE"),
        "{}",
        store.describe()
    );
}

#[test]
fn key_store_kind_parses_from_settings_text() {
    assert_eq!(
        "keychain".parse::<KeyStoreKind>().unwrap(),
        KeyStoreKind::Keychain
    );
    assert_eq!("file".parse::<KeyStoreKind>().unwrap(), KeyStoreKind::File);
    assert_eq!("env".parse::<KeyStoreKind>().unwrap(), KeyStoreKind::Env);
    let error = "vault".parse::<KeyStoreKind>().unwrap_err();
    assert!(
        error
            .to_string()
            .contains("\"keychain\", \"file\" or \"env\"")
    );
    let parsed: KeyStoreKind = serde_json::from_str("\"file\"").unwrap();
    assert_eq!(parsed, KeyStoreKind::File);
    assert_eq!(KeyStoreKind::Env.to_string(), "env");
}
