#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use super::*;

fn stdio(name: &str) -> ConnectorConfig {
    ConnectorConfig {
        name: name.into(),
        transport: TransportKind::Stdio,
        enabled: true,
        command: Some("/usr/bin/server".into()),
        args: vec![],
        env: BTreeMap::new(),
        url: None,
        headers: BTreeMap::new(),
        risk: BTreeMap::new(),
    }
}

fn http(url: &str) -> ConnectorConfig {
    ConnectorConfig {
        transport: TransportKind::StreamableHttp,
        command: None,
        url: Some(url.into()),
        ..stdio("docs")
    }
}

#[test]
fn good_entries_pass() {
    stdio("github").validate().unwrap();
    let mut entry = http("https://mcp.example.com/mcp");
    entry
        .headers
        .insert("Authorization".into(), "Bearer {secret}".into());
    entry.validate().unwrap();
    assert!(entry.uses_secret());
}

#[test]
fn names_are_checked() {
    for bad in [
        "",
        "GitHub",
        "1abc",
        "a_b",
        "a.b",
        "abc-",
        "a--b",
        "abcdefghijklmnopqrstu",
    ] {
        let err = stdio(bad).validate().unwrap_err();
        assert_eq!(err.field, "name", "{bad}");
    }
}

#[test]
fn a_credential_in_the_file_is_refused_and_not_echoed() {
    let mut entry = stdio("github");
    entry
        .env
        .insert("GITHUB_TOKEN".into(), "ghp_plantedvalue".into());
    let err = entry.validate().unwrap_err();
    assert_eq!(err.field, "env.GITHUB_TOKEN");
    assert!(err.problem.contains("{secret}"), "{err}");
    assert!(!err.to_string().contains("ghp_plantedvalue"), "{err}");

    let mut entry = http("https://mcp.example.com/mcp");
    entry
        .headers
        .insert("Authorization".into(), "Bearer abc".into());
    assert_eq!(entry.validate().unwrap_err().field, "headers.Authorization");

    let entry = http("https://user:pw@mcp.example.com/mcp");
    let err = entry.validate().unwrap_err();
    assert_eq!(err.field, "url");
    assert!(!err.to_string().contains("pw@"), "{err}");
}

#[test]
fn transports_need_their_fields() {
    let mut entry = stdio("a");
    entry.command = None;
    assert_eq!(entry.validate().unwrap_err().field, "command");
    let mut entry = http("ftp://example.com/");
    assert_eq!(entry.validate().unwrap_err().field, "url");
    entry.url = None;
    assert_eq!(entry.validate().unwrap_err().field, "url");
    let mut entry = http("https://example.com/");
    entry.command = Some("x".into());
    assert_eq!(entry.validate().unwrap_err().field, "command");
    let mut entry = stdio("a");
    entry.env.insert("1BAD".into(), "x".into());
    assert_eq!(entry.validate().unwrap_err().field, "env.1BAD");
}

#[test]
fn names_are_used_once() {
    let err = validate_all(&[stdio("a"), stdio("b"), stdio("a")]).unwrap_err();
    assert_eq!(err.field, "connectors[2].name");
    let err = validate_all(&[stdio("a"), http("nope")]).unwrap_err();
    assert_eq!(err.field, "connectors[1].url");
}

#[test]
fn toml_entries_read_as_written() {
    let text = r#"
        name = "docs"
        transport = "streamable-http"
        url = "http://127.0.0.1:9000/mcp"
        headers = { Authorization = "Bearer {secret}" }
        risk = { search = "read", "*" = "write" }
    "#;
    let entry: ConnectorConfig = toml_like(text);
    entry.validate().unwrap();
    assert!(entry.enabled);
    assert_eq!(entry.risk["search"], Risk::Read);
}

fn toml_like(text: &str) -> ConnectorConfig {
    toml::from_str(text).unwrap()
}
