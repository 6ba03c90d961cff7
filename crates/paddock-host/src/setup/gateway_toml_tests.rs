#![allow(clippy::unwrap_used, reason = "test code")]

use std::path::Path;

use super::*;
use crate::setup::files::unified_diff;

const PATH: &str = "/home/user/.config/openshell/gateway.toml";

/// A gateway.toml as a person keeps it: comments, a key order of their own, one value wrong
/// with a comment on it.
const COMMENTED: &str = r#"# My gateway. Keep the port in sync with the firewall.
[openshell]
version = 2

[openshell.gateway]
# docker, because podman is too old here
compute_driver = "docker"
log_level = "info"

[openshell.drivers.docker]
# pull only what I pre-loaded
image_pull_policy = "never"
enable_bind_mounts = false   # off until Paddock needs it
sandbox_pids_limit = 4096
"#;

fn diff(review: &Review, before: Option<&str>) -> String {
    unified_diff(Path::new(PATH), before, review.fixed.as_deref().unwrap())
}

#[test]
fn a_commented_file_is_fixed_keeping_every_comment_and_the_order() {
    let review = review(Some(COMMENTED), None);
    assert_eq!(review.driver, "docker");
    assert!(!review.driver_assumed);
    assert!(review.blocked.is_none());
    assert_eq!(review.missing.len(), 3, "{:?}", review.missing);
    insta::assert_snapshot!(diff(&review, Some(COMMENTED)));
    let fixed = review.fixed.unwrap();
    for line in COMMENTED
        .lines()
        .filter(|l| l.trim_start().starts_with('#'))
    {
        assert!(fixed.contains(line), "lost the comment {line:?}:\n{fixed}");
    }
    assert!(fixed.contains("enable_bind_mounts = true   # off until Paddock needs it"));
    // Fixed once, it needs nothing more: the edit is idempotent.
    let again = super::review(Some(&fixed), None);
    assert!(again.allows_bind_mounts(), "{again:?}");
    assert_eq!(again.fixed, None);
}

#[test]
fn a_missing_file_is_created_for_the_assumed_driver() {
    let review = review(None, None);
    assert_eq!(
        (review.driver.as_str(), review.driver_assumed),
        ("docker", true)
    );
    insta::assert_snapshot!(diff(&review, None));
    let again = super::review(review.fixed.as_deref(), None);
    assert!(again.allows_bind_mounts(), "{again:?}");
}

#[test]
fn the_environment_names_the_driver_when_the_file_does_not() {
    let text = "[openshell]\nversion = 2\n";
    let review = review(Some(text), Some("podman"));
    assert_eq!(
        (review.driver.as_str(), review.driver_assumed),
        ("podman", false)
    );
    let fixed = review.fixed.unwrap();
    assert!(fixed.contains("[openshell.drivers.podman]"), "{fixed}");
    assert!(!fixed.contains("docker"), "{fixed}");
    assert!(super::review(Some(&fixed), Some("podman")).allows_bind_mounts());
}

#[test]
fn a_file_without_a_version_gets_version_2() {
    let text = "[openshell.gateway]\ncompute_driver = \"docker\"\n";
    let review = review(Some(text), None);
    assert!(
        review
            .missing
            .iter()
            .any(|m| m.contains("openshell.version")),
        "{:?}",
        review.missing
    );
    let fixed = review.fixed.clone().unwrap();
    insta::assert_snapshot!(diff(&review, Some(text)));
    let parsed: toml::Value = toml::from_str(&fixed).unwrap();
    assert_eq!(parsed["openshell"]["version"].as_integer(), Some(2));
    assert!(super::review(Some(&fixed), None).allows_bind_mounts());
}

#[test]
fn drivers_without_bind_mounts_and_old_or_broken_files_are_left_to_the_user() {
    for (text, needle) in [
        (
            "[openshell]\nversion = 2\n[openshell.gateway]\ncompute_driver = \"vm\"\n",
            "`vm`",
        ),
        (
            "[openshell]\nversion = 2\n[openshell.gateway]\ncompute_driver = \"kubernetes\"\n",
            "`kubernetes`",
        ),
        ("[openshell]\nversion = 1\n", "schema 1"),
        ("[openshell]\nversion = 3\n", "not 2"),
        ("[openshell]\nversion = 2\ndrivers = 5\n", "not a table"),
    ] {
        let review = review(Some(text), None);
        assert_eq!(review.fixed, None, "{text}");
        let why = review.blocked.unwrap_or_default();
        assert!(why.contains(needle), "{text}: {why}");
    }
}

#[test]
fn a_broken_file_is_named_by_line_without_quoting_it() {
    let text = "[openshell]\nversion = 2\ntoken = \"sk-planted-secret-value\n";
    let review = review(Some(text), None);
    let why = review.blocked.unwrap();
    assert!(why.contains("line 3"), "{why}");
    assert!(!why.contains("sk-planted"), "{why}");
}

#[test]
fn a_file_that_already_allows_bind_mounts_needs_nothing() {
    let text = "[openshell]\nversion = 2\n\n[openshell.drivers.docker]\nallow_driver_config = true\n\
                enable_bind_mounts = true\nresource_admission = { enabled = false }\n";
    let review = review(Some(text), None);
    assert!(review.allows_bind_mounts(), "{review:?}");
    assert_eq!(review.fixed, None);
}

#[test]
fn the_location_follows_the_gateway_config_variable_then_xdg() {
    let env = HostEnvironment::from_vars([("HOME", "/home/u")]);
    assert_eq!(
        location(&env),
        Some(PathBuf::from("/home/u/.config/openshell/gateway.toml"))
    );
    let env = HostEnvironment::from_vars([("HOME", "/home/u"), ("XDG_CONFIG_HOME", "/x")]);
    assert_eq!(
        location(&env),
        Some(PathBuf::from("/x/openshell/gateway.toml"))
    );
    let env = HostEnvironment::from_vars([
        ("XDG_CONFIG_HOME", "/x"),
        ("OPENSHELL_GATEWAY_CONFIG", "/etc/gw.toml"),
    ]);
    assert_eq!(location(&env), Some(PathBuf::from("/etc/gw.toml")));
}
