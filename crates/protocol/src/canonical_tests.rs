use serde_json::json;

use super::*;

#[test]
fn keys_are_sorted_at_every_level_without_whitespace() {
    let value = json!({"b": [{"z": 1, "a": null}], "a": {"y": true, "x": "s"}});
    assert_eq!(
        canonical_json(&value),
        r#"{"a":{"x":"s","y":true},"b":[{"a":null,"z":1}]}"#
    );
}

#[test]
fn strings_are_escaped_exactly_as_serde_json_does() {
    for text in [
        "plain",
        "quote \" and \\ slash",
        "\n\r\t\u{8}\u{c}",
        "\u{1}\u{1f}",
        "é ✓ 😀",
        "\u{7f}",
    ] {
        let mut out = String::new();
        write_json_string(text, &mut out);
        assert_eq!(out, serde_json::to_string(text).unwrap(), "{text:?}");
    }
}
