//! The composition root gives every wall the same credential-share entries: the built-ins and
//! the machine config's custom ones. Building the OpenShell provider contacts no gateway, so
//! what it offers is checked here without one.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use std::path::Path;

use paddock_host::config::MachineConfig;
use paddock_host::paths::Paths;
use paddock_host::wiring::{self as host, Helpers, SecretValues};
use sandbox_policy::SandboxData;

const CONFIG: &str = "[openshell]\nimage = \"registry.example/base@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"\n\
    [[sandbox_credentials]]\nname = \"mytool\"\nsource = \".config/mytool\"\nhosts = [\"api.mytool.example\"]\n";

fn setup() -> (tempfile::TempDir, Paths, Helpers, MachineConfig) {
    let root = tempfile::tempdir().unwrap();
    let paths = Paths {
        config_dir: root.path().join("config"),
        state_dir: root.path().join("state"),
    };
    let helpers = Helpers {
        tool_runner: root.path().join("bin/tool-runner"),
        paddock_wall: root.path().join("bin/paddock-wall"),
    };
    let config = MachineConfig::from_texts(Some((
        CONFIG,
        Path::new("/home/alice/.config/paddock/config.toml"),
    )))
    .unwrap();
    (root, paths, helpers, config)
}

#[test]
fn the_openshell_provider_offers_the_configs_custom_credential_entry() {
    let (_root, paths, helpers, config) = setup();
    let provider =
        host::openshell_provider(&config, &paths, &helpers, &SecretValues::default()).unwrap();
    let offered: Vec<&str> = provider
        .credentials()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert!(offered.contains(&"mytool"), "{offered:?}");
    let custom = provider
        .credentials()
        .iter()
        .find(|c| c.name == "mytool")
        .unwrap();
    assert_eq!(custom.source, ".config/mytool");
    // The built-ins are still offered next to it.
    for builtin in SandboxData::builtin().unwrap().credential_names() {
        assert!(
            offered.contains(&builtin.as_str()),
            "{builtin}: {offered:?}"
        );
    }
}

#[test]
fn both_walls_get_the_same_entries() {
    let (_root, paths, helpers, config) = setup();
    let openshell =
        host::openshell_provider(&config, &paths, &helpers, &SecretValues::default()).unwrap();
    let data = SandboxData::builtin().unwrap();
    let listed = host::credential_entries(&data, &config).unwrap();
    assert_eq!(openshell.credentials(), listed.as_slice());
}

#[test]
fn without_an_image_the_openshell_provider_is_refused_naming_the_key() {
    let (_root, paths, helpers, _) = setup();
    let config = MachineConfig::from_texts(None).unwrap();
    let err = host::openshell_provider(&config, &paths, &helpers, &SecretValues::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("openshell.image"), "{err}");
}
