use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;
use crate::settings::{SettingValue, apply_changes};

const USER_FILE: &str = "\
# My Paddock settings.
[sandbox]
# gh for the release scripts
credentials = [\"gh\", \"mytool\"]

# Our deploy tool's login.
[[sandbox_credentials]]
name = \"mytool\"   # the CLI is called mytool
source = \".config/mytool\"
hosts = [\"api.mytool.example\"]
";

fn load(text: &str) -> MachineConfig {
    MachineConfig::from_texts(Some((text, Path::new("/c/config.toml")))).unwrap()
}

fn entry(name: &str, source: &str, hosts: &[&str]) -> CustomCredential {
    CustomCredential {
        name: name.into(),
        source: source.into(),
        hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
    }
}

#[test]
fn rows_list_the_built_in_entries_then_the_custom_ones_all_off_by_default() {
    let rows = credential_rows(&load("")).unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["aws", "gh", "kube", "ssh"]);
    assert!(rows.iter().all(|r| r.builtin && !r.enabled), "{rows:?}");
    let ssh = rows.iter().find(|r| r.name == "ssh").unwrap();
    assert_eq!(ssh.source, ".ssh");
    assert_eq!(ssh.hosts, ["github.com:22 (tcp)", "gitlab.com:22 (tcp)"]);
    let kube = rows.iter().find(|r| r.name == "kube").unwrap();
    assert!(kube.hosts_from_kubeconfig);

    let rows = credential_rows(&load(USER_FILE)).unwrap();
    let enabled: Vec<(&str, bool)> = rows.iter().map(|r| (r.name.as_str(), r.enabled)).collect();
    assert_eq!(
        enabled,
        [
            ("aws", false),
            ("gh", true),
            ("kube", false),
            ("ssh", false),
            ("mytool", true)
        ]
    );
    let custom = rows.last().unwrap();
    assert!(!custom.builtin);
    assert_eq!(custom.hosts, ["api.mytool.example"]);
}

#[test]
fn adding_and_changing_a_custom_entry_keeps_the_files_comments() {
    let added = write_custom(
        USER_FILE,
        &entry("registry", ".docker", &["registry.example:5000"]),
    )
    .unwrap();
    insta::assert_snapshot!("custom_entry_added", added);
    let config = load(&added);
    assert_eq!(config.credentials.len(), 2);

    let changed = write_custom(
        &added,
        &entry(
            "mytool",
            ".config/mytool2",
            &["api.mytool.example", "*.cdn.example"],
        ),
    )
    .unwrap();
    assert!(changed.contains("# Our deploy tool's login."), "{changed}");
    assert!(changed.contains("# the CLI is called mytool"), "{changed}");
    let config = load(&changed);
    assert_eq!(config.credentials[0].source, ".config/mytool2");
    assert_eq!(config.credentials[0].hosts.len(), 2);
    assert_eq!(config.credentials[1].name, "registry", "order kept");
}

#[test]
fn removing_a_custom_entry_turns_it_off_too() {
    let removed = remove_custom(USER_FILE, "mytool").unwrap();
    let config = load(&removed);
    assert!(config.credentials.is_empty());
    assert_eq!(config.enabled_credentials, ["gh"]);
    assert!(
        removed.contains("# gh for the release scripts"),
        "{removed}"
    );
    assert!(!removed.contains("sandbox_credentials"), "{removed}");
    let missing = remove_custom(USER_FILE, "nothere").unwrap_err().to_string();
    assert!(
        missing.contains("`nothere` is not a custom entry"),
        "{missing}"
    );
}

#[test]
fn each_bad_field_is_named() {
    let problems = [
        (entry("My Tool", ".x", &["a.example"]), "name:"),
        (
            entry("ssh", ".x", &["a.example"]),
            "name: `ssh` is a built-in entry's name",
        ),
        (entry("tool", "/etc/passwd", &["a.example"]), "source:"),
        (entry("tool", "../secrets", &["a.example"]), "source:"),
        (entry("tool", ".x", &[]), "hosts: list at least one host"),
        (
            entry("tool", ".x", &["a.example", "not a host"]),
            "hosts[1]:",
        ),
    ];
    for (bad, expected) in problems {
        let error = check_custom(&bad).unwrap_err();
        assert_eq!(error.code(), "invalid_request");
        let text = error.to_string();
        assert!(text.starts_with(expected), "{bad:?}: {text}");
    }
    check_custom(&entry("tool", ".config/tool", &["api.tool.example:8443"])).unwrap();
}

#[test]
fn machine_wide_entries_are_a_setting_and_unknown_names_are_refused() {
    let on = apply_changes(
        USER_FILE,
        &[(
            "sandbox.credentials".into(),
            SettingValue::List(vec!["ssh".into(), "mytool".into()]),
        )],
    )
    .unwrap();
    assert!(on.contains("# gh for the release scripts"), "{on}");
    assert_eq!(load(&on).enabled_credentials, ["ssh", "mytool"]);

    let unknown = "[sandbox]\ncredentials = [\"nosuch\"]\n";
    let error = MachineConfig::from_texts(Some((unknown, Path::new("/c/config.toml"))))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`sandbox.credentials`: `nosuch` is not a credential-share entry"),
        "{error}"
    );
    let shadowing =
        "[[sandbox_credentials]]\nname = \"gh\"\nsource = \".x\"\nhosts = [\"a.example\"]\n";
    let error = MachineConfig::from_texts(Some((shadowing, Path::new("/c/config.toml"))))
        .unwrap_err()
        .to_string();
    assert!(error.contains("is a built-in entry's name"), "{error}");
}
