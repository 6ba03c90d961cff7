use super::*;

fn denial(line: &str) -> NetworkDenial {
    parse_denial(line, 7).unwrap().unwrap()
}

#[test]
fn the_notes_denied_net_line() {
    let d = denial(
        "NET:OPEN [MED] DENIED /usr/bin/curl(64) -> httpbin.org:443 [policy:- engine:opa] [reason:no matching policy]",
    );
    assert_eq!(d.host, "httpbin.org");
    assert_eq!(d.port, 443);
    assert_eq!(d.binary.as_deref(), Some("/usr/bin/curl"));
    assert_eq!(d.reason, "no matching policy");
    assert_eq!(d.rule.as_deref(), Some("policy:- engine:opa"));
    assert_eq!(d.time_ms, 7);
    assert_eq!(
        d.model_notice(),
        "[blocked by the sandbox's network policy: /usr/bin/curl tried httpbin.org:443. This is not a network fault; ask the user to allow it.]"
    );
}

#[test]
fn the_notes_ssrf_line() {
    let d = denial(
        "NET:OPEN [MED] DENIED /usr/bin/curl(1618) -> 169.254.169.254:80 [policy:- engine:ssrf] [reason:resolves to always-blocked address]",
    );
    assert_eq!((d.host.as_str(), d.port), ("169.254.169.254", 80));
    assert_eq!(d.reason, "resolves to always-blocked address");
    assert_eq!(d.rule.as_deref(), Some("policy:- engine:ssrf"));
}

#[test]
fn the_notes_http_line_takes_host_and_port_from_the_url() {
    let d = denial(
        "HTTP:POST [MED] DENIED POST http://api.github.com/user/repos [policy:github_api engine:opa]",
    );
    assert_eq!((d.host.as_str(), d.port), ("api.github.com", 80));
    assert_eq!(d.binary, None);
    assert_eq!(d.rule.as_deref(), Some("policy:github_api engine:opa"));
    let d =
        denial("HTTP:GET [LOW] DENIED GET https://example.com:8443/x?y=1 [policy:p engine:opa]");
    assert_eq!((d.host.as_str(), d.port), ("example.com", 8443));
    let d = denial("HTTP:GET [LOW] DENIED GET https://Example.com/ [policy:p engine:opa]");
    assert_eq!((d.host.as_str(), d.port), ("example.com", 443));
}

#[test]
fn allowed_lines_and_other_classes_are_not_denials() {
    for line in [
        "NET:OPEN [INFO] ALLOWED /usr/bin/curl(58) -> api.github.com:443 [policy:github_api engine:opa]",
        "PROC:LAUNCH [INFO] ALLOWED /bin/bash(1)",
        "CONFIG:UPDATE [INFO] policy version 3 loaded",
        "plain tracing line without a class",
        "",
    ] {
        assert_eq!(parse_denial(line, 0).unwrap(), None, "{line}");
    }
}

#[test]
fn reasons_keep_colons_and_quotes_and_v6_hosts_their_brackets() {
    let d = denial(
        "NET:OPEN [HIGH] DENIED /usr/bin/python3.11(9) -> [2001:db8::1]:443 [policy:- engine:opa] [reason:binary '/usr/bin/python3.11' not allowed in policy 'pypi']",
    );
    assert_eq!((d.host.as_str(), d.port), ("2001:db8::1", 443));
    assert_eq!(
        d.reason,
        "binary '/usr/bin/python3.11' not allowed in policy 'pypi'"
    );
    let d = denial(
        "NET:OPEN [MED] DENIED /usr/bin/curl(3) -> db.internal:5432 [policy:- engine:opa] [reason:resolves to 10.0.0.4 which is not in allowed_ips, connection rejected]",
    );
    assert_eq!(
        d.reason,
        "resolves to 10.0.0.4 which is not in allowed_ips, connection rejected"
    );
}

#[test]
fn unknown_binaries_and_missing_reasons_still_parse() {
    let d = denial("NET:OPEN [MED] BLOCKED -(0) -> example.org:443 [policy:- engine:opa]");
    assert_eq!(d.binary, None);
    assert_eq!(d.reason, "the connection was denied by the network policy");
}

#[test]
fn malformed_network_lines_are_errors_naming_the_problem() {
    let cases = [
        ("NET:OPEN DENIED /usr/bin/curl(1) -> a.b:443", "SEVERITY"),
        ("NET:OPEN [MED]", "no action"),
        (
            "NET:OPEN [MED] REFUSED /usr/bin/curl(1) -> a.b:443",
            "unknown action",
        ),
        (
            "NET:OPEN [MED] DENIED /usr/bin/curl(1) a.b:443 [policy:- engine:opa]",
            "-> host:port",
        ),
        (
            "NET:OPEN [MED] DENIED /usr/bin/curl(1) -> a.b [policy:- engine:opa]",
            "no port",
        ),
        (
            "NET:OPEN [MED] DENIED /usr/bin/curl(1) -> a.b:99999 [policy:- engine:opa]",
            "not a port",
        ),
        (
            "NET:OPEN [MED] DENIED /usr/bin/curl(1) -> a.b:0",
            "not a port",
        ),
        ("NET:OPEN [MED] DENIED /usr/bin/curl(1) -> :443", "no host"),
        (
            "NET:OPEN [MED] DENIED /usr/bin/curl(1) -> a.b:443 [policy]",
            "key:value",
        ),
        (
            "HTTP:GET [MED] DENIED GET /relative/path [policy:- engine:opa]",
            "no URL",
        ),
        ("NET:OPEN [MED] DENIED x -> [::1:443", "unclosed"),
    ];
    for (line, expected) in cases {
        let err = parse_denial(line, 0).unwrap_err();
        assert!(err.to_string().contains(expected), "{line}: {err}");
    }
}

#[test]
fn formatting_round_trips_through_the_parser() {
    let original = NetworkDenial {
        host: "blocked.example".into(),
        port: 443,
        binary: Some("/usr/bin/curl".into()),
        reason: "no matching policy".into(),
        rule: Some("policy:- engine:opa".into()),
        time_ms: 42,
    };
    let line = format_net_denial(&original, 77);
    assert_eq!(
        line,
        "NET:OPEN [MED] DENIED /usr/bin/curl(77) -> blocked.example:443 [policy:- engine:opa] [reason:no matching policy]"
    );
    assert_eq!(parse_denial(&line, 42).unwrap(), Some(original));
}
