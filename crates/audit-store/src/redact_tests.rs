use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn redactor() -> Redactor {
    let mut r = Redactor::new().unwrap();
    r.register("model-key-0123456789abcdef").unwrap();
    r
}

#[test]
fn secret_shapes_in_text_are_removed() {
    let r = redactor();
    let cases = [
        (
            "curl -H 'Authorization: Bearer abc.def.ghi' https://x",
            "curl -H 'Authorization: [redacted]' https://x",
        ),
        (
            "authorization=Basic dXNlcjpwYXNz",
            "authorization=[redacted]",
        ),
        (
            "token is Bearer eyJhbGciOiJIUzI1NiJ9.x.y",
            "token is Bearer [redacted]",
        ),
        ("OPENAI=sk-proj-ABCDEFGHIJKLMNOPQRSTUV", "OPENAI=[redacted]"),
        (
            "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz end",
            "key [redacted] end",
        ),
        (
            "git push https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/x",
            "git push https://[redacted]@github.com/x",
        ),
        (
            "export GITHUB_TOKEN=ghs_abcdefghijklmnopqrstuvwx",
            "export GITHUB_TOKEN=[redacted]",
        ),
        ("aws AKIAIOSFODNN7EXAMPLE ok", "aws [redacted] ok"),
        (
            "https://user:hunter22@db.example/x",
            "https://user:[redacted]@db.example/x",
        ),
        ("GET /x?api_key=abc123&q=1", "GET /x?api_key=[redacted]&q=1"),
        ("password: 'correct horse'", "password: [redacted]"),
        (
            "env: openshell:resolve:env:GITHUB_TOKEN",
            "env: [secret GITHUB_TOKEN]",
        ),
        (
            "GH_TOKEN=openshell:resolve:env:GH_TOKEN",
            "GH_TOKEN=[secret GH_TOKEN]",
        ),
        (
            "uses model-key-0123456789abcdef here",
            "uses [redacted] here",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
            "[redacted private key]",
        ),
        (
            "plain text with tokens: none",
            "plain text with tokens: none",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(r.redact_text(input), want, "{input}");
    }
}

#[test]
fn secret_named_keys_are_emptied_at_any_depth() {
    let r = redactor();
    let value = json!({
        "api_key": "x1", "Authorization": "y", "nested": [{ "client-secret": "z", "db_password": 7 }],
        "headers": { "X-Auth-Token": "t", "cookie": "c" }, "input_tokens": 120, "path": "a",
        "auth": { "user": "u" }, "model-key-0123456789abcdef": "as key"
    });
    assert_eq!(
        r.redact_value(&value),
        json!({
            "api_key": "[redacted]", "Authorization": "[redacted]",
            "nested": [{ "client-secret": "[redacted]", "db_password": 7 }],
            "headers": { "X-Auth-Token": "[redacted]", "cookie": "[redacted]" },
            "input_tokens": 120, "path": "a", "auth": "[redacted]", "[redacted]": "as key"
        })
    );
}

#[test]
fn redaction_is_idempotent() {
    let r = redactor();
    for text in [
        "Authorization: Bearer abcdefghijkl",
        "https://u:p4ssw0rd@h/x",
        "TOKEN=abc",
        "openshell:resolve:env:X",
        "sk-abcdefghijklmnopqrstuvwxyz",
    ] {
        let once = r.redact_text(text);
        assert_eq!(r.redact_text(&once), once, "{text}");
    }
}

#[test]
fn short_secrets_are_refused_without_echoing_them() {
    let mut r = Redactor::new().unwrap();
    let err = r.register("abc").unwrap_err().to_string();
    assert!(err.contains("at least 8") && !err.contains("abc"), "{err}");
}

#[test]
fn key_names() {
    for key in [
        "token",
        "GITHUB_TOKEN",
        "clientSecret",
        "passwd",
        "x-api-key",
        "apiKey",
        "private_key",
        "AWS_ACCESS_KEY_ID",
    ] {
        assert!(is_secret_key(key), "{key}");
    }
    for key in [
        "path",
        "input_tokens",
        "max_tokens",
        "token_count",
        "author",
        "command",
    ] {
        assert!(!is_secret_key(key), "{key}");
    }
}

#[test]
fn the_name_value_pattern_index_points_at_it() {
    assert!(PATTERNS[NAME_VALUE_PATTERN].1.contains("${2}"));
}
