//! The durable per-session event log (`events.db`): every durable event of every session
//! (`protocol::Event::is_durable`), keyed by session and `seq`, so a client that reconnects
//! reads every event after the last one it saw. Live-only events (text deltas, output chunks)
//! are never logged: their content reaches the log in the durable event that completes them
//! (`assistant_message`, `tool_call_finished`).

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use agent::StoreError;
use protocol::Event;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::{backend, migrations, sqlite};

/// Most events one read returns.
pub const EVENT_LOG_PAGE: usize = 1000;

/// Events encoded for the log (`session_id`, `seq`, `time_ms`, the event's JSON), ready for
/// [`SqliteEventLog::append_now`].
#[derive(Debug, Clone)]
pub struct LogRows(Vec<(String, i64, i64, String)>);

impl LogRows {
    pub fn encode(events: &[Event]) -> Result<Self, StoreError> {
        events
            .iter()
            .map(|event| {
                let text = serde_json::to_string(event)
                    .map_err(|e| backend("encoding an event for the log", e))?;
                let seq = i64::try_from(event.seq).unwrap_or(i64::MAX);
                Ok((event.session_id.clone(), seq, event.time_ms, text))
            })
            .collect::<Result<Vec<_>, StoreError>>()
            .map(Self)
    }
}

/// Durable events of every session, in one SQLite file shared by every Paddock process of
/// the machine. WAL with `synchronous=NORMAL`: an appended event survives the process being
/// killed (the audit trail, not this log, is the record that survives power loss).
#[derive(Clone)]
pub struct SqliteEventLog {
    connection: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for SqliteEventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteEventLog").finish_non_exhaustive()
    }
}

impl SqliteEventLog {
    /// Opens (creating, owner-only, when missing) the log at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent)
                .map_err(|e| backend(&format!("creating {}", parent.display()), e))?;
        }
        let name = path.display().to_string();
        let mut connection =
            sqlite::open_shared(path).map_err(|e| backend(&format!("opening {name}"), e))?;
        restrict(path)?;
        connection
            .execute_batch("PRAGMA synchronous = NORMAL;")
            .map_err(|e| backend(&format!("configuring {name}"), e))?;
        migrations::migrate(&mut connection, migrations::EVENT_LOG_MIGRATIONS).map_err(
            |e| match e {
                migrations::MigrationError::Busy(e) => backend(&format!("migrating {name}"), e),
                migrations::MigrationError::Refused(e) => {
                    StoreError::Corrupt(format!("{name}: {e}"))
                }
            },
        )?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl Fn(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || {
            let mut connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
            sqlite::retry_busy(
                || work(&mut connection),
                |e| matches!(e, StoreError::Busy(_)),
            )
        })
        .await
        .map_err(|e| backend("the event log's worker thread failed", e))?
    }

    /// Appends one durable event; returns once it is committed. The same event appended
    /// again (a retry) is accepted; another event under a number already used is refused.
    pub async fn append(&self, event: &Event) -> Result<(), StoreError> {
        self.append_batch(std::slice::from_ref(event)).await
    }

    /// Appends durable events in one transaction (all or none); returns once it is
    /// committed. Each is accepted again as a retry, or refused under a number already used
    /// for another event, as [`SqliteEventLog::append`] does.
    pub async fn append_batch(&self, events: &[Event]) -> Result<(), StoreError> {
        let rows = LogRows::encode(events)?;
        let log = self.clone();
        tokio::task::spawn_blocking(move || log.append_now(&rows))
            .await
            .map_err(|e| backend("the event log's worker thread failed", e))?
    }

    /// [`SqliteEventLog::append_batch`] on the calling thread, for a caller already in a
    /// blocking context (it waits for SQLite, and for other processes' locks).
    pub fn append_now(&self, rows: &LogRows) -> Result<(), StoreError> {
        let mut connection = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        sqlite::retry_busy(
            || {
                let transaction = connection
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(|e| backend("appending to the event log", e))?;
                for (session_id, seq, time_ms, text) in &rows.0 {
                    append_row(&transaction, session_id, *seq, *time_ms, text)?;
                }
                transaction
                    .commit()
                    .map_err(|e| backend("appending to the event log", e))
            },
            |e| matches!(e, StoreError::Busy(_)),
        )
    }

    /// Up to `limit` (at most [`EVENT_LOG_PAGE`]) events of `session_id` numbered after
    /// `after_seq`, in order.
    pub async fn after(
        &self,
        session_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<Event>, StoreError> {
        let session_id = session_id.to_owned();
        let after = i64::try_from(after_seq).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit.clamp(1, EVENT_LOG_PAGE)).unwrap_or(1);
        self.run(move |connection| {
            let mut statement = connection
                .prepare_cached(
                    "SELECT event FROM events WHERE session_id = ?1 AND seq > ?2
                     ORDER BY seq LIMIT ?3",
                )
                .map_err(|e| backend("reading the event log", e))?;
            let rows = statement
                .query_map(params![session_id, after, limit], |row| {
                    row.get::<_, String>(0)
                })
                .map_err(|e| backend("reading the event log", e))?;
            let mut events = Vec::new();
            for row in rows {
                let text = row.map_err(|e| backend("reading the event log", e))?;
                events.push(
                    serde_json::from_str(&text)
                        .map_err(|e| StoreError::Corrupt(format!("a logged event: {e}")))?,
                );
            }
            Ok(events)
        })
        .await
    }

    /// The highest logged `seq` of `session_id`, or `None` when it has no events.
    pub async fn last_seq(&self, session_id: &str) -> Result<Option<u64>, StoreError> {
        let session_id = session_id.to_owned();
        self.run(move |connection| {
            let last: Option<i64> = connection
                .query_row(
                    "SELECT MAX(seq) FROM events WHERE session_id = ?1",
                    params![session_id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|e| backend("reading the event log", e))?
                .flatten();
            Ok(last.map(|seq| u64::try_from(seq).unwrap_or(0)))
        })
        .await
    }
}

/// The log holds what sessions did (commands, file contents): owner-only.
fn restrict(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| backend(&format!("protecting {}", path.display()), e))
}

/// Inserts one logged event, or accepts it when the same event is already there.
fn append_row(
    connection: &Connection,
    session_id: &str,
    seq: i64,
    time_ms: i64,
    text: &str,
) -> Result<(), StoreError> {
    let inserted = connection
        .prepare_cached(
            "INSERT OR IGNORE INTO events (session_id, seq, time_ms, event)
             VALUES (?1, ?2, ?3, ?4)",
        )
        .and_then(|mut statement| statement.execute(params![session_id, seq, time_ms, text]))
        .map_err(|e| backend("appending to the event log", e))?;
    if inserted == 1 {
        return Ok(());
    }
    let logged: String = connection
        .query_row(
            "SELECT event FROM events WHERE session_id = ?1 AND seq = ?2",
            params![session_id, seq],
            |row| row.get(0),
        )
        .map_err(|e| backend("reading the event log", e))?;
    if logged == text {
        Ok(())
    } else {
        Err(StoreError::Corrupt(format!(
            "event #{seq} of session `{session_id}` is already logged with other content"
        )))
    }
}
