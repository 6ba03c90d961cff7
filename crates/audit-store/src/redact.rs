//! Redaction before storage. Applied to every string of a record (keys included) before it
//! is hashed and written, and again to every line of an export.
//!
//! Removed:
//! * values of keys that name a secret (`*token*`, `*secret*`, `*password*`, `*passwd*`,
//!   `*api_key*` / `*apikey*`, `*credential*`, `*private_key*`, `*access_key*`, `cookie`,
//!   `authorization`, `auth`) — except counts such as `input_tokens`;
//! * `Authorization:` header values, `Bearer …` tokens, `user:password@` in URLs, and
//!   `name=value` pairs whose name looks secret (`GITHUB_TOKEN=…`, `?api_key=…`);
//! * known secret shapes: `sk-…` (OpenAI, Anthropic), `ghp_…`/`gho_…`/`ghs_…`/`github_pat_…`,
//!   AWS `AKIA…`/`ASIA…`, Slack `xox?-…`, Google `AIza…`, PEM private keys;
//! * every secret registered with the store (model keys), wherever it appears.
//!
//! OpenShell placeholders `openshell:resolve:env:NAME` become `[secret NAME]`.

use regex::{Regex, RegexSet};
use serde_json::{Map, Value};

use crate::error::AuditError;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Registered secrets shorter than this are refused: they would redact ordinary text.
pub const MIN_SECRET_LEN: usize = 8;

/// Patterns and their replacements, applied in order.
const PATTERNS: &[(&str, &str)] = &[
    (
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
        "[redacted private key]",
    ),
    (
        r"openshell:resolve:env:([A-Za-z_][A-Za-z0-9_]*)",
        "[secret $1]",
    ),
    (
        r#"(?i)\b(authorization\s*[:=]\s*)(?:(?:bearer|basic|token|digest)\s+)?[^\s,;'"]+"#,
        "${1}[redacted]",
    ),
    (r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}", "${1}[redacted]"),
    (
        r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+):[^@\s/]+@",
        "${1}:[redacted]@",
    ),
    (
        r#"(?i)\b([A-Za-z0-9_.-]*(?:token|secret|password|passwd|api[_-]?key|access[_-]?key|private[_-]?key|credential)[A-Za-z0-9_.-]*)(\s*[=:]\s*)(?:"[^"]*"|'[^']*'|[^\s&;,'"\[][^\s&;,'"]*)"#,
        "${1}${2}[redacted]",
    ),
    (r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}", "[redacted]"),
    (
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        "[redacted]",
    ),
    (r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", "[redacted]"),
    (r"\bxox[abprs]-[A-Za-z0-9-]{10,}", "[redacted]"),
    (r"\bAIza[0-9A-Za-z_-]{35}", "[redacted]"),
];

/// The index in [`PATTERNS`] of the `name=value` pattern.
const NAME_VALUE_PATTERN: usize = 5;

/// Words that make a key's value secret (compared without `-` and `_`, lower case).
const SECRET_KEY_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "credential",
    "privatekey",
    "accesskey",
    "cookie",
    "authorization",
];

/// True when a key's value should never be stored.
pub fn is_secret_key(key: &str) -> bool {
    let compact: String = key
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    if compact == "auth" || compact == "pwd" {
        return true;
    }
    // Counts of model tokens are not secrets.
    if compact.ends_with("tokens") || compact.ends_with("count") {
        return false;
    }
    SECRET_KEY_WORDS.iter().any(|w| compact.contains(w))
}

/// Literals at least one of which every pattern's match contains (case-insensitively): text
/// without any of them is left alone without running the patterns.
const TRIGGERS: &str = r"(?i)BEGIN|openshell:|authorization|bearer|://|token|secret|passw|key|credential|sk-|gh[pousr]_|github_pat_|AKIA|ASIA|xox|AIza";

/// Redacts secrets from text and JSON values.
#[derive(Debug, Clone)]
pub struct Redactor {
    /// Matches text that may hold a secret: a trigger literal or a registered secret.
    screen: Regex,
    set: RegexSet,
    patterns: Vec<(Regex, &'static str)>,
    secrets: Vec<String>,
    registered: Option<Regex>,
}

impl Redactor {
    pub fn new() -> Result<Self, AuditError> {
        let compile = |p: &str| {
            Regex::new(p).map_err(|e| AuditError::Internal {
                message: format!("redaction pattern: {e}"),
            })
        };
        let patterns = PATTERNS
            .iter()
            .map(|(p, r)| Ok((compile(p)?, *r)))
            .collect::<Result<Vec<_>, AuditError>>()?;
        let set =
            RegexSet::new(PATTERNS.iter().map(|(p, _)| *p)).map_err(|e| AuditError::Internal {
                message: format!("redaction patterns: {e}"),
            })?;
        Ok(Redactor {
            screen: compile(TRIGGERS)?,
            set,
            patterns,
            secrets: Vec::new(),
            registered: None,
        })
    }

    /// Registers a secret (a model key) to be replaced wherever it appears.
    pub fn register(&mut self, secret: &str) -> Result<(), AuditError> {
        let secret = secret.trim();
        if secret.chars().count() < MIN_SECRET_LEN {
            return Err(AuditError::SecretTooShort {
                len: secret.chars().count(),
            });
        }
        if !self.secrets.iter().any(|s| s == secret) {
            self.secrets.push(secret.to_string());
            // Longest first, so a secret containing another is replaced whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
            let alternation: Vec<String> = self.secrets.iter().map(|s| regex::escape(s)).collect();
            let compile = |pattern: &str| {
                Regex::new(pattern).map_err(|e| AuditError::Internal {
                    message: format!("registered secrets: {e}"),
                })
            };
            let secrets = alternation.join("|");
            self.registered = Some(compile(&secrets)?);
            self.screen = compile(&format!("{TRIGGERS}|{secrets}"))?;
        }
        Ok(())
    }

    /// True when `text` may hold something to redact.
    fn may_hold_secret(&self, text: &str) -> bool {
        self.screen.is_match(text)
    }

    /// Text with every secret replaced.
    pub fn redact_text(&self, text: &str) -> String {
        if !self.may_hold_secret(text) {
            return text.to_string();
        }
        let mut out = match &self.registered {
            Some(re) => re.replace_all(text, REDACTED).into_owned(),
            None => text.to_string(),
        };
        let matches = self.set.matches(&out);
        if matches.matched_any() {
            for index in matches.iter() {
                let Some((re, replacement)) = self.patterns.get(index) else {
                    continue;
                };
                out = if index == NAME_VALUE_PATTERN {
                    // `name=value`: only when the name is a secret's (not `input_tokens: 5`).
                    re.replace_all(&out, |caps: &regex::Captures<'_>| {
                        if is_secret_key(&caps[1]) {
                            format!("{}{}{REDACTED}", &caps[1], &caps[2])
                        } else {
                            caps[0].to_string()
                        }
                    })
                    .into_owned()
                } else {
                    re.replace_all(&out, *replacement).into_owned()
                };
            }
        }
        out
    }

    /// Redacts a JSON value in place: secret-named keys emptied, every string redacted.
    pub fn redact_in_place(&self, value: &mut Value) {
        match value {
            Value::String(s) if self.may_hold_secret(s) => *s = self.redact_text(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_in_place(v)),
            Value::Object(map) => {
                if map.keys().any(|k| self.may_hold_secret(k)) {
                    *value = self.redact_value(value);
                    return;
                }
                for (key, v) in map.iter_mut() {
                    if is_secret_key(key) && !v.is_null() && !v.is_number() && !v.is_boolean() {
                        *v = Value::String(REDACTED.to_string());
                    } else {
                        self.redact_in_place(v);
                    }
                }
            }
            _ => {}
        }
    }

    /// A JSON value with secret-named keys emptied and every string redacted.
    pub fn redact_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.redact_text(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.redact_value(v)).collect())
            }
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, v) in map {
                    let redacted = if is_secret_key(key)
                        && !v.is_null()
                        && !v.is_number()
                        && !v.is_boolean()
                    {
                        Value::String(REDACTED.to_string())
                    } else {
                        self.redact_value(v)
                    };
                    out.insert(self.redact_text(key), redacted);
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
