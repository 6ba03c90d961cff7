//! Exports: JSON Lines of the chain (verifiable offline with [`verify_jsonl`]) and OCSF.
//!
//! Every exported line passes through the redactor again, so a secret registered after a row
//! was stored still never leaves the store; such a line carries `"redacted_on_export": true`
//! and its hash can no longer be checked.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

use crate::chain::{self, ChainChecker, ChainProblem, RowToCheck, VerifyReport, canonical_json};
use crate::error::AuditError;
use crate::ocsf;
use crate::query::Query;
use crate::store::{AuditStore, record_of};

impl AuditStore {
    /// Calls `each(seq, time_ms, session_id, content, prev_hash, hash)` for the rows matching
    /// `filters` (limit and cursor ignored), oldest first.
    fn for_each_row(
        &self,
        filters: &Query,
        mut each: impl FnMut(i64, i64, &str, &str, &str, &str) -> Result<(), AuditError>,
    ) -> Result<(), AuditError> {
        let (filter, params) = filters.where_clause(false)?;
        let sql = format!(
            "SELECT seq, time_ms, session_id, content, prev_hash, hash FROM events {} {filter} ORDER BY seq",
            filters.index_hint()
        );
        let mut statement = self.conn.prepare(&sql)?;
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = rows.next()? {
            let session_id: String = row.get(2)?;
            let content: String = row.get(3)?;
            let prev_hash: String = row.get(4)?;
            let hash: String = row.get(5)?;
            each(
                row.get(0)?,
                row.get(1)?,
                &session_id,
                &content,
                &prev_hash,
                &hash,
            )?;
        }
        Ok(())
    }

    /// Writes the matching rows as JSON Lines, oldest first:
    /// `{"hash","prev_hash","record","seq","session_id","time_ms"}` per line (keys sorted).
    /// An unfiltered export is the whole chain. Returns the number of lines.
    pub fn export_jsonl(&self, filters: &Query, out: &mut dyn Write) -> Result<u64, AuditError> {
        let mut lines = 0;
        self.for_each_row(
            filters,
            |seq, time_ms, session_id, content, prev_hash, hash| {
                let (_, stored) = record_of(content)?;
                let record = stored.get("record").cloned().unwrap_or(Value::Null);
                let redacted = self.redactor.redact_value(&record);
                let mut line = json!({
                    "seq": seq,
                    "time_ms": time_ms,
                    "session_id": self.redactor.redact_text(session_id),
                    "record": redacted,
                    "prev_hash": prev_hash,
                    "hash": hash,
                });
                if redacted != record {
                    line["redacted_on_export"] = Value::Bool(true);
                }
                writeln!(out, "{}", canonical_json(&line))?;
                lines += 1;
                Ok(())
            },
        )?;
        Ok(lines)
    }

    /// Writes the matching tool-call rows as OCSF API Activity (class 6003) and network
    /// denials as OCSF Network Activity (class 4001), one JSON object per line, oldest first.
    /// Other records have no OCSF class here and are skipped. Returns the number of lines.
    pub fn export_ocsf(&self, filters: &Query, out: &mut dyn Write) -> Result<u64, AuditError> {
        let mut lines = 0;
        self.for_each_row(filters, |seq, time_ms, session_id, content, _prev, hash| {
            let (record, _) = record_of(content)?;
            if let Some(event) = ocsf::event(seq, time_ms, session_id, hash, &record) {
                let event = self.redactor.redact_value(&event);
                writeln!(out, "{}", canonical_json(&event))?;
                lines += 1;
            }
            Ok(())
        })?;
        Ok(lines)
    }
}

/// Verifies an unfiltered JSON Lines export: the same chain checks as
/// [`AuditStore::verify`], without the store.
pub fn verify_jsonl(reader: impl BufRead) -> Result<VerifyReport, AuditError> {
    let mut checker = ChainChecker::default();
    for (index, line) in reader.lines().enumerate() {
        let line_no = index as u64 + 1;
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: &str| AuditError::BadExport {
            line: line_no,
            message: message.to_string(),
        };
        let value: Value = serde_json::from_str(&line).map_err(|e| bad(&e.to_string()))?;
        let int = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_i64)
                .ok_or_else(|| bad(&format!("`{key}` is missing")))
        };
        let text = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| bad(&format!("`{key}` is missing")))
        };
        let seq = int("seq")?;
        let time_ms = int("time_ms")?;
        let session_id = text("session_id")?;
        let record = value
            .get("record")
            .ok_or_else(|| bad("`record` is missing"))?;
        let content = chain::content(seq, time_ms, session_id, record);
        if value.get("redacted_on_export").and_then(Value::as_bool) == Some(true) {
            checker.first_broken.get_or_insert(chain::BrokenRow {
                seq,
                problem: ChainProblem::ContentChanged {
                    detail: "it was redacted again on export, so its hash cannot be checked"
                        .to_string(),
                },
            });
            break;
        }
        let intact = checker.check(&RowToCheck {
            seq,
            time_ms,
            session_id,
            content: &content,
            prev_hash: text("prev_hash")?,
            hash: text("hash")?,
            columns: None,
        });
        if !intact {
            break;
        }
    }
    Ok(checker.report())
}
