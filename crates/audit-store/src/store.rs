//! The store: open (pragmas, migrations), append, verify.
//!
//! Durability contract for callers: append a tool call's `started` row *before* the call runs,
//! and its result row *before* the model sees the result. `append` returns only after the
//! transaction committed; with [`Durability::Full`] (the default) a commit survives power loss,
//! with [`Durability::Normal`] (WAL) it survives a killed process (tested with `kill -9`), and
//! with [`Durability::Flushed`] it survives a killed process at once and power loss within a
//! bound.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use crate::chain::{self, ChainChecker, ChainHead, GENESIS, RowToCheck, VerifyReport};
use crate::error::AuditError;
use crate::flush::{self, WalFlusher};
use crate::migrations::migrate;
use crate::record::{Columns, NewEvent};
use crate::redact::Redactor;

/// How hard a commit is pushed to disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous=FULL`: a committed row survives power loss.
    #[default]
    Full,
    /// `synchronous=NORMAL` with WAL: a committed row survives the process being killed; the
    /// last commits may be lost on power loss.
    Normal,
    /// `synchronous=NORMAL` with WAL, and the log flushed to disk by a thread of the store at
    /// most `within` after each commit (one flush covers every commit before it): a committed
    /// row survives the process being killed at once and power loss after `within`. The
    /// cost of a commit is NORMAL's; [`AuditStore::flush`] flushes at once.
    Flushed { within: Duration },
}

/// Options for [`AuditStore::open_with`].
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    pub durability: Durability,
}

/// Where an appended event landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    pub seq: i64,
    pub hash: String,
}

/// How long one statement waits for another process's lock (SQLite's busy handler).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long opening and appending keep retrying after the busy handler gave up.
const RETRY_FOR: Duration = Duration::from_secs(60);

fn is_busy(error: &AuditError) -> bool {
    let (AuditError::Sqlite(sqlite) | AuditError::Migration { source: sqlite, .. }) = error else {
        return false;
    };
    matches!(
        sqlite.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Runs `attempt` again while another process's lock makes it fail (up to [`RETRY_FOR`]).
fn retry_busy<T>(mut attempt: impl FnMut() -> Result<T, AuditError>) -> Result<T, AuditError> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match attempt() {
            Err(e) if is_busy(&e) && started.elapsed() < RETRY_FOR => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Puts the file in WAL mode, once: the switch needs an exclusive lock, and a process racing
/// to set it again on a file already in WAL would get `SQLITE_BUSY` without the busy handler
/// being asked, so the mode is read first.
fn switch_to_wal(conn: &Connection) -> Result<(), AuditError> {
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
    if mode.eq_ignore_ascii_case("wal") {
        return Ok(());
    }
    let journal: String = conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))?;
    if journal.eq_ignore_ascii_case("wal") {
        Ok(())
    } else {
        Err(AuditError::Internal {
            message: format!("the audit database could not switch to WAL (got `{journal}`)"),
        })
    }
}

/// A hash-chained, append-only audit trail in one SQLite file.
pub struct AuditStore {
    pub(crate) conn: Connection,
    pub(crate) redactor: Redactor,
    path: PathBuf,
    /// Sessions known to have rows (so their next record need not open them).
    opened_sessions: HashSet<String>,
    /// The background flush of [`Durability::Flushed`].
    flusher: Option<WalFlusher>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl AuditStore {
    /// Opens (creating if needed) the store at `path` with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, AuditError> {
        Self::open_with(path, &OpenOptions::default())
    }

    pub fn open_with(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Self, AuditError> {
        let path = path.as_ref().to_path_buf();
        let existed = path.exists();
        let mut conn = Connection::open(&path)?;
        // First, so every later statement waits for other processes' locks.
        conn.busy_timeout(BUSY_TIMEOUT)?;
        retry_busy(|| switch_to_wal(&conn))?;
        let synchronous = match options.durability {
            Durability::Full => "FULL",
            Durability::Normal | Durability::Flushed { .. } => "NORMAL",
        };
        conn.execute_batch(&format!(
            "PRAGMA synchronous={synchronous}; PRAGMA cache_size=-32768; PRAGMA temp_store=MEMORY;"
        ))?;
        if !existed {
            restrict_permissions(&path)?;
        }
        retry_busy(|| migrate(&mut conn, now_ms()))?;
        let flusher = match options.durability {
            Durability::Flushed { within } => Some(WalFlusher::start(&path, within)?),
            Durability::Full | Durability::Normal => None,
        };
        Ok(AuditStore {
            conn,
            redactor: Redactor::new()?,
            path,
            opened_sessions: HashSet::new(),
            flusher,
        })
    }

    /// Makes every committed row survive power loss before returning: with
    /// [`Durability::Flushed`] or [`Durability::Normal`] the log is flushed now (with `Full`
    /// every commit already was).
    pub fn flush(&self) -> Result<(), AuditError> {
        if let Some(flusher) = &self.flusher {
            return Ok(flusher.flush_now()?);
        }
        Ok(flush::sync_wal(&flush::wal_path(&self.path))?)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Registers a secret (a model key) to be replaced wherever it would be stored or
    /// exported. Register every secret right after opening, before appending.
    pub fn register_secret(&mut self, secret: &str) -> Result<(), AuditError> {
        self.redactor.register(secret)
    }

    /// Appends one event in its own committed transaction.
    pub fn append(&mut self, event: &NewEvent) -> Result<Appended, AuditError> {
        let mut appended = self.append_batch(std::slice::from_ref(event))?;
        appended.pop().ok_or_else(|| AuditError::Internal {
            message: "an append wrote no row".to_string(),
        })
    }

    /// Appends events in one committed transaction (all or none). Another process holding
    /// the trail's lock is waited for (and retried after), never a lost event.
    pub fn append_batch(&mut self, events: &[NewEvent]) -> Result<Vec<Appended>, AuditError> {
        retry_busy(|| self.append_batch_once(events))
    }

    fn append_batch_once(&mut self, events: &[NewEvent]) -> Result<Vec<Appended>, AuditError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (mut seq, mut prev_hash) = tx
            .prepare_cached("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1")?
            .query_row([], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .optional()?
            .unwrap_or((0, GENESIS.to_string()));
        let mut opened_here: Vec<String> = Vec::new();
        let mut appended = Vec::with_capacity(events.len());
        {
            let mut exists =
                tx.prepare_cached("SELECT EXISTS(SELECT 1 FROM events WHERE session_id = ?1)")?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO events (seq, time_ms, session_id, kind, call_id, tool, enforcement,
                                     decision, decided_by, status, content, prev_hash, hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?;
            for event in events {
                let session_id = self.redactor.redact_text(&event.session_id);
                if !self.opened_sessions.contains(&session_id) && !opened_here.contains(&session_id)
                {
                    let stored = exists.query_row([&session_id], |row| row.get::<_, bool>(0))?;
                    if !stored && !event.record.opens_session() {
                        return Err(AuditError::SessionNotOpened {
                            session_id,
                            kind: event.record.kind().as_str(),
                        });
                    }
                    opened_here.push(session_id.clone());
                }
                let mut record = serde_json::to_value(&event.record)?;
                self.redactor.redact_in_place(&mut record);
                // Columns are copies of record fields, redacted the same way as the record.
                let mut columns: Columns = event.record.columns();
                columns.call_id = columns.call_id.map(|c| self.redactor.redact_text(&c));
                columns.tool = columns.tool.map(|t| self.redactor.redact_text(&t));
                seq += 1;
                let content = chain::content(seq, event.time_ms, &session_id, &record);
                let hash = chain::hash(&prev_hash, &content);
                insert.execute(params![
                    seq,
                    event.time_ms,
                    session_id,
                    columns.kind,
                    columns.call_id,
                    columns.tool,
                    columns.enforcement,
                    columns.decision,
                    columns.decided_by,
                    columns.status,
                    content,
                    prev_hash,
                    hash,
                ])?;
                appended.push(Appended {
                    seq,
                    hash: hash.clone(),
                });
                prev_hash = hash;
            }
        }
        tx.commit()?;
        self.opened_sessions.extend(opened_here);
        if let Some(flusher) = &self.flusher {
            flusher.committed()?;
        }
        Ok(appended)
    }

    /// The newest row's number and hash, for anchoring elsewhere.
    pub fn head(&self) -> Result<Option<ChainHead>, AuditError> {
        Ok(self
            .conn
            .query_row(
                "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1",
                [],
                |row| {
                    Ok(ChainHead {
                        seq: row.get(0)?,
                        hash: row.get(1)?,
                    })
                },
            )
            .optional()?)
    }

    /// Walks the whole chain and names the first broken row.
    pub fn verify(&self) -> Result<VerifyReport, AuditError> {
        let mut checker = ChainChecker::default();
        let mut statement = self.conn.prepare(
            "SELECT seq, time_ms, session_id, kind, call_id, tool, enforcement, decision,
                    decided_by, status, content, prev_hash, hash
             FROM events ORDER BY seq",
        )?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            let text = |i: usize| row.get::<_, Option<String>>(i);
            let session_id: String = row.get(2)?;
            let content: String = row.get(10)?;
            let prev_hash: String = row.get(11)?;
            let hash: String = row.get(12)?;
            let columns = stored_columns(
                &row.get::<_, String>(3)?,
                text(4)?,
                text(5)?,
                text(6)?.as_deref(),
                text(7)?.as_deref(),
                text(8)?.as_deref(),
                text(9)?.as_deref(),
            );
            let intact = checker.check(&RowToCheck {
                seq: row.get(0)?,
                time_ms: row.get(1)?,
                session_id: &session_id,
                content: &content,
                prev_hash: &prev_hash,
                hash: &hash,
                columns: Some(columns),
            });
            if !intact {
                break;
            }
        }
        Ok(checker.report())
    }

    /// Verifies the chain and that it still holds `anchor` (a head saved earlier), which
    /// detects a truncated or rewritten tail.
    pub fn verify_with_anchor(&self, anchor: &ChainHead) -> Result<VerifyReport, AuditError> {
        let mut report = self.verify()?;
        if report.first_broken.is_some() {
            return Ok(report);
        }
        let stored: Option<String> = self
            .conn
            .query_row(
                "SELECT hash FROM events WHERE seq = ?1",
                [anchor.seq],
                |row| row.get(0),
            )
            .optional()?;
        let detail = match stored {
            None => Some("the anchored row is gone (the chain was truncated)".to_string()),
            Some(hash) if hash != anchor.hash => {
                Some("its hash differs from the anchor (the chain was rewritten)".to_string())
            }
            Some(_) => None,
        };
        if let Some(detail) = detail {
            report.first_broken = Some(chain::BrokenRow {
                seq: anchor.seq,
                problem: chain::ChainProblem::AnchorMismatch { detail },
            });
        }
        Ok(report)
    }
}

/// Maps stored column text back to the static spellings `Columns` uses; unknown spellings
/// become `"?"` so they never compare equal to a derived column.
fn stored_columns(
    kind: &str,
    call_id: Option<String>,
    tool: Option<String>,
    enforcement: Option<&str>,
    decision: Option<&str>,
    decided_by: Option<&str>,
    status: Option<&str>,
) -> Columns {
    fn known(value: &str, spellings: &[&'static str]) -> &'static str {
        spellings
            .iter()
            .find(|s| **s == value)
            .copied()
            .unwrap_or("?")
    }
    Columns {
        kind: known(
            kind,
            &[
                "session",
                "attestation",
                "tool_call",
                "network_denial",
                "generic",
            ],
        ),
        call_id,
        tool,
        enforcement: enforcement.map(|e| known(e, &["openshell", "local", "none", "host"])),
        decision: decision.map(|d| known(d, &["allow", "deny"])),
        decided_by: decided_by.map(|d| known(d, &["user", "rule", "mode", "bypass"])),
        status: status.map(|s| known(s, &["started", "finished", "failed", "cancelled", "denied"])),
    }
}

#[cfg(unix)]
fn restrict_permissions(path: &Path) -> Result<(), AuditError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(())
}

#[cfg(not(unix))]
fn restrict_permissions(_path: &Path) -> Result<(), AuditError> {
    Ok(())
}

/// Parses a stored row's content back into its record.
pub(crate) fn record_of(content: &str) -> Result<(crate::AuditRecord, Value), AuditError> {
    let value: Value = serde_json::from_str(content)?;
    let record = serde_json::from_value(value.get("record").cloned().unwrap_or(Value::Null))?;
    Ok((record, value))
}
