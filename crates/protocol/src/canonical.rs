//! The canonical JSON form: object keys sorted by byte order at every level, no whitespace,
//! and `serde_json`'s escaping (only `"`, `\` and control characters are escaped; other
//! characters are written as UTF-8). A format, not behaviour: the audit chain hashes it and
//! exports it, and approval keys digest it, so both sides must write exactly the same bytes.

use serde_json::Value;

/// JSON text with object keys sorted at every level.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_canonical_json(value, &mut out);
    out
}

/// Appends the canonical JSON of `value` to `out`.
pub fn write_canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(key, out);
                out.push(':');
                if let Some(v) = map.get(key) {
                    write_canonical_json(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical_json(item, out);
            }
            out.push(']');
        }
        Value::String(s) => write_json_string(s, out),
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A JSON string with `serde_json`'s escaping: `"`, `\`, and control characters (as `\b`,
/// `\f`, `\n`, `\r`, `\t`, or `\u00xx`); everything else as UTF-8.
pub fn write_json_string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let b = c as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[b >> 4]));
                out.push(char::from(HEX[b & 0xf]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
#[path = "canonical_tests.rs"]
mod tests;
