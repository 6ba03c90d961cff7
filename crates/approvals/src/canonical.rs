//! Canonical call arguments and approval keys.
//!
//! The canonical form of a call's arguments is JSON written with object keys sorted, `null`
//! members dropped, `path` and `cwd` members resolved against the call's folder and
//! normalised, and, for `run_bash`, the `command` replaced by the canonical text of its parse
//! (see [`crate::shell::canonical`]; left as written when it cannot be parsed) and `cwd`
//! always present. Two calls that do the same thing get the same key; an approval given for
//! one set of arguments never covers another.

pub use protocol::canonical::canonical_json;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::paths::resolve;
use crate::shell;

/// The canonical arguments of a call (an object; other values are returned unchanged).
pub fn canonical_args(tool: &str, args: &Value, cwd: &str) -> Value {
    let Value::Object(map) = args else {
        return args.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        if value.is_null() {
            continue;
        }
        let value = match (key.as_str(), value) {
            ("path" | "cwd", Value::String(p)) => Value::String(resolve(cwd, p)),
            ("command", Value::String(c)) if tool == "run_bash" => Value::String(
                shell::parse(c).map_or_else(|_| c.clone(), |script| shell::canonical(&script)),
            ),
            _ => drop_nulls(value),
        };
        out.insert(key.clone(), value);
    }
    if tool == "run_bash" && !out.contains_key("cwd") {
        out.insert("cwd".to_string(), Value::String(resolve(cwd, ".")));
    }
    Value::Object(out)
}

fn drop_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), drop_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(drop_nulls).collect()),
        other => other.clone(),
    }
}

/// The approval key of a call: `sha256:<hex>` of the tool name, a newline, and the canonical
/// JSON of its arguments. A digest, so that persisted approvals never hold argument values.
pub fn call_key(tool: &str, args: &Value, cwd: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update(b"\n");
    hasher.update(canonical_json(&canonical_args(tool, args, cwd)).as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn spelling_differences_share_a_key() {
        let a = call_key(
            "run_bash",
            &json!({"command": "git   status", "timeout_ms": null}),
            "/p",
        );
        let b = call_key(
            "run_bash",
            &json!({"command": "'git' status", "cwd": "/p/."}),
            "/p",
        );
        assert_eq!(a, b);
        let a = call_key(
            "write_file",
            &json!({"path": "src/../a.rs", "content": "x"}),
            "/p",
        );
        let b = call_key(
            "write_file",
            &json!({"content": "x", "path": "/p/a.rs"}),
            "/p",
        );
        assert_eq!(a, b);
        assert!(a.starts_with("sha256:") && a.len() == 7 + 64);
    }

    #[test]
    fn different_meaning_gets_a_different_key() {
        let base = call_key("run_bash", &json!({"command": "git status"}), "/p");
        for (tool, args, cwd) in [
            (
                "run_bash",
                json!({"command": "git status && git push"}),
                "/p",
            ),
            ("run_bash", json!({"command": "git status"}), "/q"),
            (
                "run_bash",
                json!({"command": "git status", "env": {"X": "1"}}),
                "/p",
            ),
            ("read_file", json!({"command": "git status"}), "/p"),
        ] {
            assert_ne!(call_key(tool, &args, cwd), base, "{tool} {args} {cwd}");
        }
        assert_ne!(
            call_key("write_file", &json!({"path": "a", "content": "x"}), "/p"),
            call_key("write_file", &json!({"path": "a", "content": "y"}), "/p")
        );
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let v = json!({"b": 1, "a": {"d": [ {"z": 1, "y": 2} ], "c": "x"}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"c":"x","d":[{"y":2,"z":1}]},"b":1}"#
        );
    }
}
