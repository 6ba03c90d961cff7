//! The hash chain: canonical content, hashes, and the checks `verify()` runs.
//!
//! **Canonical content** of a row is the UTF-8 JSON object
//! `{"record":…,"seq":…,"session_id":…,"time_ms":…}` where `record` is the redacted
//! [`crate::AuditRecord`] in its serde form (`{"type":"tool_call",…}`), written with object
//! keys sorted by byte order at every level, no whitespace, and `serde_json`'s escaping
//! (only `"`, `\` and control characters are escaped; other characters are written as UTF-8).
//!
//! **Hash**: `hash = hex(sha256(prev_hash ‖ content))`, where `prev_hash` is the previous
//! row's `hash` as 64 lowercase hex characters (ASCII), or 64 zeros for the first row.

pub use protocol::canonical::canonical_json;
use protocol::canonical::{write_canonical_json, write_json_string};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::record::AuditRecord;

/// The `prev_hash` of the first row.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The canonical content of a row whose record is already redacted JSON.
pub fn content(seq: i64, time_ms: i64, session_id: &str, record: &Value) -> String {
    let mut out = String::with_capacity(512);
    out.push_str("{\"record\":");
    write_canonical_json(record, &mut out);
    out.push_str(",\"seq\":");
    out.push_str(&seq.to_string());
    out.push_str(",\"session_id\":");
    write_json_string(session_id, &mut out);
    out.push_str(",\"time_ms\":");
    out.push_str(&time_ms.to_string());
    out.push('}');
    out
}

/// `hex(sha256(prev_hash ‖ content))`.
pub fn hash(prev_hash: &str, content: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prev_hash.as_bytes());
    hasher.update(content.as_bytes());
    hex::encode(hasher.finalize())
}

/// The newest row of a chain: keep it somewhere else (a log, a ticket) to detect a later
/// truncation or rewrite of the tail, which the chain alone cannot show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ChainHead {
    pub seq: i64,
    pub hash: String,
}

/// Why a row breaks the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum ChainProblem {
    /// Rows before this one are missing: `expected` was the next number.
    RowMissing { expected: i64 },
    /// `prev_hash` is not the previous row's hash (a row was replaced or the chain rewritten).
    HashMismatch,
    /// The content does not produce the stored hash, or disagrees with the row's columns.
    ContentChanged { detail: String },
    /// The anchored head is not in the chain as recorded.
    AnchorMismatch { detail: String },
}

/// The first row that breaks the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct BrokenRow {
    pub seq: i64,
    #[serde(flatten)]
    pub problem: ChainProblem,
}

impl std::fmt::Display for BrokenRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.problem {
            ChainProblem::RowMissing { expected } => write!(
                f,
                "row {} follows row {}: rows {expected}..{} are missing (sequence gap)",
                self.seq,
                expected - 1,
                self.seq - 1
            ),
            ChainProblem::HashMismatch => write!(
                f,
                "row {}: prev_hash is not the hash of row {} (hash mismatch)",
                self.seq,
                self.seq - 1
            ),
            ChainProblem::ContentChanged { detail } => {
                write!(f, "row {}: content changed ({detail})", self.seq)
            }
            ChainProblem::AnchorMismatch { detail } => {
                write!(f, "row {}: does not match the anchor ({detail})", self.seq)
            }
        }
    }
}

/// The result of walking a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct VerifyReport {
    pub rows: u64,
    pub head: Option<ChainHead>,
    pub first_broken: Option<BrokenRow>,
}

impl VerifyReport {
    pub fn is_intact(&self) -> bool {
        self.first_broken.is_none()
    }
}

/// One row as the checker sees it.
pub struct RowToCheck<'a> {
    pub seq: i64,
    pub time_ms: i64,
    pub session_id: &'a str,
    pub content: &'a str,
    pub prev_hash: &'a str,
    pub hash: &'a str,
    /// The stored filter columns (`None` for an export, which has none).
    pub columns: Option<crate::record::Columns>,
}

/// Walks rows in order and stops at the first broken one.
pub struct ChainChecker {
    expected_seq: i64,
    prev_hash: String,
    rows: u64,
    pub first_broken: Option<BrokenRow>,
}

impl Default for ChainChecker {
    fn default() -> Self {
        ChainChecker {
            expected_seq: 1,
            prev_hash: GENESIS.to_string(),
            rows: 0,
            first_broken: None,
        }
    }
}

impl ChainChecker {
    /// Checks the next row; returns false once the chain is broken.
    pub fn check(&mut self, row: &RowToCheck<'_>) -> bool {
        if self.first_broken.is_some() {
            return false;
        }
        let problem = self.problem(row);
        self.rows += 1;
        self.expected_seq = row.seq + 1;
        self.prev_hash = row.hash.to_string();
        if let Some(problem) = problem {
            self.first_broken = Some(BrokenRow {
                seq: row.seq,
                problem,
            });
            return false;
        }
        true
    }

    fn problem(&self, row: &RowToCheck<'_>) -> Option<ChainProblem> {
        if row.seq != self.expected_seq {
            return Some(ChainProblem::RowMissing {
                expected: self.expected_seq,
            });
        }
        if row.prev_hash != self.prev_hash {
            return Some(ChainProblem::HashMismatch);
        }
        if hash(row.prev_hash, row.content) != row.hash {
            return Some(ChainProblem::ContentChanged {
                detail: "its hash does not match its content".to_string(),
            });
        }
        let changed = |detail: &str| {
            Some(ChainProblem::ContentChanged {
                detail: detail.to_string(),
            })
        };
        let Ok(value) = serde_json::from_str::<Value>(row.content) else {
            return changed("its content is not JSON");
        };
        if value.get("seq").and_then(Value::as_i64) != Some(row.seq) {
            return changed("the content names another sequence number");
        }
        if value.get("time_ms").and_then(Value::as_i64) != Some(row.time_ms) {
            return changed("the `time_ms` column differs from the content");
        }
        if value.get("session_id").and_then(Value::as_str) != Some(row.session_id) {
            return changed("the `session_id` column differs from the content");
        }
        if let Some(columns) = &row.columns {
            let record = value.get("record").cloned().unwrap_or(Value::Null);
            match serde_json::from_value::<AuditRecord>(record) {
                Ok(record) if record.columns() == *columns => {}
                Ok(_) => return changed("a filter column differs from the content"),
                Err(_) => return changed("its record cannot be read"),
            }
        }
        None
    }

    pub fn report(self) -> VerifyReport {
        let head = (self.rows > 0).then(|| ChainHead {
            seq: self.expected_seq - 1,
            hash: self.prev_hash.clone(),
        });
        VerifyReport {
            rows: self.rows,
            head,
            first_broken: self.first_broken,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_exactly_as_serde_json_does() {
        let mut all: String = (0u32..0x80).filter_map(char::from_u32).collect();
        all.push_str("é漢字🦀\u{2028}\u{7f}");
        let mut ours = String::new();
        write_json_string(&all, &mut ours);
        assert_eq!(ours, Value::String(all.clone()).to_string());
    }

    #[test]
    fn content_is_the_canonical_json_of_its_fields() {
        let record = serde_json::json!({ "b": [1, {"z": null, "a": "x\n"}], "a": true });
        let text = content(7, 9, "s\"1", &record);
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(canonical_json(&value), text);
        assert_eq!(
            text,
            r#"{"record":{"a":true,"b":[1,{"a":"x\n","z":null}]},"seq":7,"session_id":"s\"1","time_ms":9}"#
        );
    }
}
