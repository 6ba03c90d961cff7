//! # session-store
//!
//! The SQLite [`SessionStore`]: a session's conversation, grants, settings and session
//! approvals, plus the machine-wide `always` approvals, survive a restart. Schema changes are
//! numbered migrations ([`migrations`]).

mod event_log;
mod migrations;
pub mod sqlite;

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use agent::{SessionRecord, SessionStore, SessionSummary, StoreError, session_title};
use approvals::StandingApproval;
use async_trait::async_trait;
use model_client::Message;
use protocol::{ProviderKind, SessionSettings};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

pub use event_log::{EVENT_LOG_PAGE, LogRows, SqliteEventLog};
pub use migrations::SCHEMA_VERSION;

/// Sessions in one SQLite file (`sessions.db` in Paddock's state folder).
#[derive(Clone)]
pub struct SqliteSessionStore {
    connection: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for SqliteSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteSessionStore").finish_non_exhaustive()
    }
}

fn backend<E: std::fmt::Display + 'static>(context: &str, e: E) -> StoreError {
    let error: &dyn std::any::Any = &e;
    match error.downcast_ref::<rusqlite::Error>() {
        Some(sqlite_error) if sqlite::is_busy(sqlite_error) => {
            StoreError::Busy(format!("{context}: {e}"))
        }
        _ => StoreError::Backend(format!("{context}: {e}")),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn to_json<T: serde::Serialize>(what: &str, value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| backend(&format!("encoding {what}"), e))
}

fn from_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

impl SqliteSessionStore {
    /// Opens (creating when missing) the database at `path` and applies pending migrations.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent)
                .map_err(|e| backend(&format!("creating {}", parent.display()), e))?;
        }
        let connection = sqlite::open_shared(path)
            .map_err(|e| backend(&format!("opening {}", path.display()), e))?;
        Self::init(connection, &path.display().to_string())
    }

    /// A private in-memory database (gone when the store is dropped).
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let connection = Connection::open_in_memory()
            .map_err(|e| backend("opening an in-memory database", e))?;
        Self::init(connection, ":memory:")
    }

    fn init(mut connection: Connection, name: &str) -> Result<Self, StoreError> {
        connection
            .execute_batch("PRAGMA foreign_keys = ON;")
            .map_err(|e| backend(&format!("configuring {name}"), e))?;
        migrations::migrate(&mut connection, migrations::MIGRATIONS).map_err(|e| match e {
            migrations::MigrationError::Busy(e) => backend(&format!("migrating {name}"), e),
            migrations::MigrationError::Refused(e) => StoreError::Corrupt(format!("{name}: {e}")),
        })?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    /// Runs `work` on the connection off the async runtime's threads, again while another
    /// process's lock makes it fail with `SQLITE_BUSY` (see [`sqlite::retry_busy`]).
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
        .map_err(|e| backend("the store's worker thread failed", e))?
    }
    /// Runs `change` (given the transaction and `id`) in one transaction that also marks session `id` as updated (and fails
    /// with [`StoreError::NotFound`] when there is no such session).
    async fn change_session(
        &self,
        id: String,
        change: impl Fn(&rusqlite::Transaction<'_>, &str) -> Result<(), StoreError> + Send + 'static,
    ) -> Result<(), StoreError> {
        self.run(move |connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| backend("starting a transaction", e))?;
            touch(&tx, &id)?;
            change(&tx, &id)?;
            tx.commit().map_err(|e| backend("committing", e))
        })
        .await
    }
}

fn touch(tx: &rusqlite::Transaction<'_>, id: &str) -> Result<(), StoreError> {
    let changed = tx
        .execute(
            "UPDATE sessions SET updated_ms = ?1 WHERE id = ?2",
            params![now_ms(), id],
        )
        .map_err(|e| backend("updating the session", e))?;
    if changed == 0 {
        return Err(StoreError::NotFound(id.to_owned()));
    }
    Ok(())
}

#[async_trait]
impl SessionStore for SqliteSessionStore {
    async fn create(&self, record: &SessionRecord) -> Result<(), StoreError> {
        let record = record.clone();
        self.run(move |connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| backend("starting a transaction", e))?;
            let exists: Option<i64> = tx
                .query_row(
                    "SELECT 1 FROM sessions WHERE id = ?1",
                    params![record.id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|e| backend("looking the session up", e))?;
            if exists.is_some() {
                return Err(StoreError::AlreadyExists(record.id.clone()));
            }
            tx.execute(
                "INSERT INTO sessions (id, settings, last_seq, created_ms, updated_ms, provider)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    record.id,
                    to_json("settings", &record.settings)?,
                    i64::try_from(record.last_seq).unwrap_or(i64::MAX),
                    record.created_ms,
                    record.updated_ms,
                    record.provider.map(ProviderKind::as_str)
                ],
            )
            .map_err(|e| backend("inserting the session", e))?;
            write_messages(&tx, &record.id, 0, &record.messages)?;
            write_session_approvals(&tx, &record.id, &record.session_approvals)?;
            write_paths(&tx, PathList::Downloads, &record.id, &record.downloads)?;
            write_paths(&tx, PathList::Written, &record.id, &record.written)?;
            tx.commit().map_err(|e| backend("committing", e))
        })
        .await
    }

    async fn load(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let id = id.to_owned();
        self.run(move |connection| {
            let row: Option<(String, i64, i64, i64, Option<String>)> = connection
                .query_row(
                    "SELECT settings, last_seq, created_ms, updated_ms, provider
                     FROM sessions WHERE id = ?1",
                    params![id],
                    |row| {
                        Ok((
                            row.get(0)?,
                            row.get(1)?,
                            row.get(2)?,
                            row.get(3)?,
                            row.get(4)?,
                        ))
                    },
                )
                .optional()
                .map_err(|e| backend("loading the session", e))?;
            let Some((settings, last_seq, created_ms, updated_ms, provider)) = row else {
                return Ok(None);
            };
            let settings: SessionSettings = from_json("session settings", &settings)?;
            let provider = provider.as_deref().map(provider_kind).transpose()?;
            let downloads = read_paths(connection, PathList::Downloads, &id)?;
            let written = read_paths(connection, PathList::Written, &id)?;
            let messages = read_column(
                connection,
                "SELECT message FROM messages WHERE session_id = ?1 ORDER BY idx",
                &id,
                "a message",
            )?;
            let session_approvals = read_column(
                connection,
                "SELECT approval FROM session_approvals WHERE session_id = ?1 ORDER BY idx",
                &id,
                "a session approval",
            )?;
            Ok(Some(SessionRecord {
                id: id.clone(),
                settings,
                messages,
                session_approvals,
                downloads,
                written,
                provider,
                last_seq: u64::try_from(last_seq).unwrap_or(0),
                created_ms,
                updated_ms,
            }))
        })
        .await
    }

    async fn save_messages(
        &self,
        id: &str,
        from: usize,
        messages: &[Message],
        last_seq: u64,
    ) -> Result<(), StoreError> {
        let messages = messages.to_vec();
        self.change_session(id.to_owned(), move |tx, id| {
            let stored: i64 = tx
                .query_row(
                    "SELECT COUNT(*) FROM messages WHERE session_id = ?1",
                    params![id],
                    |row| row.get(0),
                )
                .map_err(|e| backend("counting messages", e))?;
            if from as i64 > stored {
                return Err(StoreError::Corrupt(format!(
                    "saving messages from index {from}, but only {stored} are stored"
                )));
            }
            write_messages(tx, id, from, &messages)?;
            tx.execute(
                "UPDATE sessions SET last_seq = ?1 WHERE id = ?2",
                params![i64::try_from(last_seq).unwrap_or(i64::MAX), id],
            )
            .map_err(|e| backend("saving the event number", e))?;
            Ok(())
        })
        .await
    }

    async fn save_settings(&self, id: &str, settings: &SessionSettings) -> Result<(), StoreError> {
        let settings = to_json("settings", settings)?;
        self.change_session(id.to_owned(), move |tx, id| {
            tx.execute(
                "UPDATE sessions SET settings = ?1 WHERE id = ?2",
                params![settings, id],
            )
            .map_err(|e| backend("saving settings", e))?;
            Ok(())
        })
        .await
    }

    async fn save_session_approvals(
        &self,
        id: &str,
        approvals: &[StandingApproval],
    ) -> Result<(), StoreError> {
        let approvals = approvals.to_vec();
        self.change_session(id.to_owned(), move |tx, id| {
            write_session_approvals(tx, id, &approvals)
        })
        .await
    }

    async fn always_approvals(&self) -> Result<Vec<StandingApproval>, StoreError> {
        self.run(|connection| {
            let mut statement = connection
                .prepare("SELECT approval FROM always_approvals ORDER BY rowid")
                .map_err(|e| backend("reading approvals", e))?;
            let rows = statement
                .query_map([], |row| row.get::<_, String>(0))
                .map_err(|e| backend("reading approvals", e))?;
            let mut approvals = Vec::new();
            for row in rows {
                let text = row.map_err(|e| backend("reading approvals", e))?;
                approvals.push(from_json("an always approval", &text)?);
            }
            Ok(approvals)
        })
        .await
    }

    async fn add_always_approval(&self, approval: &StandingApproval) -> Result<(), StoreError> {
        let approval = approval.clone();
        let text = to_json("approval", &approval)?;
        self.run(move |connection| {
            connection
                .execute(
                    "INSERT OR IGNORE INTO always_approvals (id, approval) VALUES (?1, ?2)",
                    params![approval.id, text],
                )
                .map_err(|e| backend("saving an approval", e))?;
            Ok(())
        })
        .await
    }

    async fn remove_always_approval(&self, approval_id: &str) -> Result<bool, StoreError> {
        let approval_id = approval_id.to_owned();
        self.run(move |connection| {
            let removed = connection
                .execute(
                    "DELETE FROM always_approvals WHERE id = ?1",
                    params![approval_id],
                )
                .map_err(|e| backend("removing an approval", e))?;
            Ok(removed > 0)
        })
        .await
    }

    async fn add_downloads(&self, id: &str, paths: &[String]) -> Result<(), StoreError> {
        let paths = paths.to_vec();
        self.change_session(id.to_owned(), move |tx, id| {
            write_paths(tx, PathList::Downloads, id, &paths)
        })
        .await
    }

    async fn add_written(&self, id: &str, paths: &[String]) -> Result<(), StoreError> {
        let paths = paths.to_vec();
        self.change_session(id.to_owned(), move |tx, id| {
            write_paths(tx, PathList::Written, id, &paths)
        })
        .await
    }

    async fn save_provider(&self, id: &str, provider: ProviderKind) -> Result<(), StoreError> {
        self.change_session(id.to_owned(), move |tx, id| {
            tx.execute(
                "UPDATE sessions SET provider = ?1 WHERE id = ?2",
                params![provider.as_str(), id],
            )
            .map_err(|e| backend("saving the provider", e))?;
            Ok(())
        })
        .await
    }

    async fn list(&self) -> Result<Vec<SessionSummary>, StoreError> {
        self.run(|connection| {
            let mut statement = connection
                .prepare(
                    "SELECT s.id, s.created_ms, s.updated_ms,
                            (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id),
                            (SELECT message FROM messages m WHERE m.session_id = s.id AND idx = 0),
                            s.settings, s.provider
                     FROM sessions s ORDER BY s.updated_ms DESC, s.id",
                )
                .map_err(|e| backend("listing sessions", e))?;
            let rows = statement
                .query_map([], |row| {
                    Ok((
                        (
                            row.get::<_, String>(0)?,
                            row.get::<_, i64>(1)?,
                            row.get::<_, i64>(2)?,
                            row.get::<_, i64>(3)?,
                        ),
                        row.get::<_, Option<String>>(4)?,
                        row.get::<_, String>(5)?,
                        row.get::<_, Option<String>>(6)?,
                    ))
                })
                .map_err(|e| backend("listing sessions", e))?;
            let mut list = Vec::new();
            for row in rows {
                let ((id, created_ms, updated_ms, count), first, settings, provider) =
                    row.map_err(|e| backend("listing sessions", e))?;
                let title = match first {
                    Some(text) => session_title(&[from_json::<Message>("a message", &text)?]),
                    None => String::new(),
                };
                let settings: SessionSettings = from_json("session settings", &settings)?;
                list.push(SessionSummary {
                    id,
                    created_ms,
                    updated_ms,
                    message_count: u64::try_from(count).unwrap_or(0),
                    title,
                    folders: settings.folders,
                    provider: provider.as_deref().map(provider_kind).transpose()?,
                });
            }
            Ok(list)
        })
        .await
    }
}

fn write_messages(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    from: usize,
    messages: &[Message],
) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM messages WHERE session_id = ?1 AND idx >= ?2",
        params![id, from as i64],
    )
    .map_err(|e| backend("replacing messages", e))?;
    let mut insert = tx
        .prepare("INSERT INTO messages (session_id, idx, message) VALUES (?1, ?2, ?3)")
        .map_err(|e| backend("saving messages", e))?;
    for (offset, message) in messages.iter().enumerate() {
        insert
            .execute(params![
                id,
                (from + offset) as i64,
                to_json("a message", message)?
            ])
            .map_err(|e| backend("saving a message", e))?;
    }
    Ok(())
}

fn write_session_approvals(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    approvals: &[StandingApproval],
) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM session_approvals WHERE session_id = ?1",
        params![id],
    )
    .map_err(|e| backend("replacing approvals", e))?;
    for (index, approval) in approvals.iter().enumerate() {
        tx.execute(
            "INSERT INTO session_approvals (session_id, idx, approval) VALUES (?1, ?2, ?3)",
            params![id, index as i64, to_json("an approval", approval)?],
        )
        .map_err(|e| backend("saving an approval", e))?;
    }
    Ok(())
}

/// The session's lists of paths: downloaded files, written files.
#[derive(Debug, Clone, Copy)]
enum PathList {
    Downloads,
    Written,
}

impl PathList {
    fn table(self) -> &'static str {
        match self {
            PathList::Downloads => "session_downloads",
            PathList::Written => "session_written",
        }
    }

    fn what(self) -> &'static str {
        match self {
            PathList::Downloads => "downloaded paths",
            PathList::Written => "written paths",
        }
    }
}

fn write_paths(
    tx: &rusqlite::Transaction<'_>,
    list: PathList,
    id: &str,
    paths: &[String],
) -> Result<(), StoreError> {
    let what = list.what();
    let mut insert = tx
        .prepare(&format!(
            "INSERT OR IGNORE INTO {} (session_id, path) VALUES (?1, ?2)",
            list.table()
        ))
        .map_err(|e| backend(&format!("saving {what}"), e))?;
    for path in paths {
        insert
            .execute(params![id, path])
            .map_err(|e| backend(&format!("saving {what}"), e))?;
    }
    Ok(())
}

fn read_paths(
    connection: &Connection,
    list: PathList,
    id: &str,
) -> Result<Vec<String>, StoreError> {
    let what = format!("reading {}", list.what());
    let mut statement = connection
        .prepare(&format!(
            "SELECT path FROM {} WHERE session_id = ?1 ORDER BY rowid",
            list.table()
        ))
        .map_err(|e| backend(&what, e))?;
    let rows = statement
        .query_map(params![id], |row| row.get::<_, String>(0))
        .map_err(|e| backend(&what, e))?;
    let mut paths = Vec::new();
    for row in rows {
        paths.push(row.map_err(|e| backend(&what, e))?);
    }
    Ok(paths)
}

fn provider_kind(text: &str) -> Result<ProviderKind, StoreError> {
    match text {
        "openshell" => Ok(ProviderKind::Openshell),
        "local" => Ok(ProviderKind::Local),
        "direct" => Ok(ProviderKind::Direct),
        other => Err(StoreError::Corrupt(format!(
            "a session's provider `{other}` is not one of openshell, local, direct"
        ))),
    }
}

fn read_column<T: serde::de::DeserializeOwned>(
    connection: &Connection,
    sql: &str,
    id: &str,
    what: &str,
) -> Result<Vec<T>, StoreError> {
    let mut statement = connection
        .prepare(sql)
        .map_err(|e| backend(&format!("reading {what}"), e))?;
    let rows = statement
        .query_map(params![id], |row| row.get::<_, String>(0))
        .map_err(|e| backend(&format!("reading {what}"), e))?;
    let mut values = Vec::new();
    for row in rows {
        let text = row.map_err(|e| backend(&format!("reading {what}"), e))?;
        values.push(from_json(what, &text)?);
    }
    Ok(values)
}
