use super::*;

const USER_FILE: &str = "\
# My Paddock settings.
[models]
# The model my team pays for.
model = \"claude-opus-4\"   # keep this one
key_store = \"env\"

[sandbox]
# strict is too strict for us
network_profile = \"standard\"
";

fn change(key: &str, value: SettingValue) -> Vec<(String, SettingValue)> {
    vec![(key.to_owned(), value)]
}

#[test]
fn a_change_keeps_the_files_comments_and_order() {
    let updated = apply_changes(
        USER_FILE,
        &change(
            "sandbox.extra_hosts",
            SettingValue::List(vec!["pypi.internal.example:8443".into()]),
        ),
    )
    .unwrap();
    insta::assert_snapshot!(updated);
    let config = MachineConfig::from_texts(Some((&updated, Path::new("/c/config.toml")))).unwrap();
    assert_eq!(config.extra_hosts, vec!["pypi.internal.example:8443"]);
    assert_eq!(config.models.model, "claude-opus-4");
}

#[test]
fn a_new_table_is_appended_and_unset_removes_a_key() {
    let updated = apply_changes(
        USER_FILE,
        &[
            (
                "approvals.mode".into(),
                SettingValue::Text("auto-edit".into()),
            ),
            ("models.model".into(), SettingValue::Unset),
        ],
    )
    .unwrap();
    assert!(
        updated.starts_with("# My Paddock settings.\n[models]\n"),
        "{updated}"
    );
    assert!(!updated.contains("claude-opus-4"));
    assert!(
        updated.ends_with("[approvals]\nmode = \"auto-edit\"\n"),
        "{updated}"
    );
}

/// A file of nothing but comments keeps them at its head: the first table made goes below them,
/// not above.
#[test]
fn a_file_of_comments_only_keeps_them_above_the_first_table() {
    let updated = apply_changes(
        "# my machine\n# (set up by hand)\n",
        &change("sandbox.provider", SettingValue::Text("direct".into())),
    )
    .unwrap();
    assert_eq!(
        updated,
        "# my machine\n# (set up by hand)\n[sandbox]\nprovider = \"direct\"\n"
    );
    let empty = apply_changes(
        "",
        &change("sandbox.provider", SettingValue::Text("local".into())),
    )
    .unwrap();
    assert_eq!(empty, "[sandbox]\nprovider = \"local\"\n");
}

#[test]
fn wrong_keys_and_shapes_name_the_key() {
    let unknown = apply_changes(
        USER_FILE,
        &change("sandbox.tool_runner", SettingValue::Text("/x".into())),
    )
    .unwrap_err();
    assert_eq!(unknown.code(), "invalid_setting");
    assert!(
        unknown
            .to_string()
            .starts_with("setting `sandbox.tool_runner`: not a setting"),
        "{unknown}"
    );
    let shape = apply_changes(
        USER_FILE,
        &change("sandbox.extra_hosts", SettingValue::Text("x".into())),
    )
    .unwrap_err();
    assert_eq!(
        shape.to_string(),
        "setting `sandbox.extra_hosts`: takes a list of texts"
    );
    let broken = apply_changes(
        "[models\nkey = \"sk-ant-secret-0123456789\"",
        &change("approvals.mode", SettingValue::Text("ask".into())),
    )
    .unwrap_err();
    assert!(!broken.to_string().contains("sk-ant"), "{broken}");
    assert!(broken.to_string().contains("line 1"), "{broken}");
}
