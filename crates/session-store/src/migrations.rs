//! Numbered schema migrations. Each runs once, in order, inside a transaction; the number of
//! the last one applied is SQLite's `user_version`. Never edit a shipped migration: add one.

use rusqlite::{Connection, TransactionBehavior};

/// The session store's migrations, in order. Index `i` brings the schema from version `i` to
/// `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: sessions, their messages, and standing approvals.
    "CREATE TABLE sessions (
         id TEXT PRIMARY KEY,
         settings TEXT NOT NULL,
         last_seq INTEGER NOT NULL DEFAULT 0,
         created_ms INTEGER NOT NULL,
         updated_ms INTEGER NOT NULL
     );
     CREATE TABLE messages (
         session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
         idx INTEGER NOT NULL,
         message TEXT NOT NULL,
         PRIMARY KEY (session_id, idx)
     );
     CREATE TABLE session_approvals (
         session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
         idx INTEGER NOT NULL,
         approval TEXT NOT NULL,
         PRIMARY KEY (session_id, idx)
     );
     CREATE TABLE always_approvals (
         id TEXT PRIMARY KEY,
         approval TEXT NOT NULL
     );",
    // 2: the wall a session runs with (for listings and resume), and the files its commands
    // downloaded (running one asks, also after a resume).
    "ALTER TABLE sessions ADD COLUMN provider TEXT;
     CREATE TABLE session_downloads (
         session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
         path TEXT NOT NULL,
         PRIMARY KEY (session_id, path)
     );",
    // 3: the files a session wrote (file tools, redirections): running one later cannot be
    // checked, so auto-in-sandbox asks, also after a resume.
    "CREATE TABLE session_written (
         session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
         path TEXT NOT NULL,
         PRIMARY KEY (session_id, path)
     );",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The event log's migrations (`events.db`), in order.
pub(crate) const EVENT_LOG_MIGRATIONS: &[&str] = &[
    // 1: every durable event of every session, by session and number.
    "CREATE TABLE events (
         session_id TEXT NOT NULL,
         seq INTEGER NOT NULL,
         time_ms INTEGER NOT NULL,
         event TEXT NOT NULL,
         PRIMARY KEY (session_id, seq)
     ) WITHOUT ROWID;",
];

/// Why the schema could not be brought up to date.
#[derive(Debug)]
pub(crate) enum MigrationError {
    /// Another process held the lock for longer than we wait and retry.
    Busy(rusqlite::Error),
    /// The database cannot be used by this build (newer schema, a failed migration).
    Refused(String),
}

/// Brings the database up to the last of `migrations`. Refuses a database written by a newer
/// version (it would be misread). Safe when several processes open a fresh file at once:
/// the version is read inside an immediate (write-locked) transaction, so exactly one of
/// them applies each migration and the others find it applied.
pub(crate) fn migrate(
    connection: &mut Connection,
    migrations: &[&str],
) -> Result<(), MigrationError> {
    crate::sqlite::retry_busy(
        || migrate_once(connection, migrations),
        |e| matches!(e, MigrationError::Busy(_)),
    )
}

fn migrate_once(connection: &mut Connection, migrations: &[&str]) -> Result<(), MigrationError> {
    let target = migrations.len() as u32;
    let step = |what: String| {
        move |e: rusqlite::Error| {
            if crate::sqlite::is_busy(&e) {
                MigrationError::Busy(e)
            } else {
                MigrationError::Refused(format!("{what}: {e}"))
            }
        }
    };
    // A read first: an up-to-date database (the common case) takes no write lock.
    let current: u32 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(step("reading the schema version".into()))?;
    if current == target {
        return Ok(());
    }
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(step("locking the database to migrate it".into()))?;
    let current: u32 = tx
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(step("reading the schema version".into()))?;
    if current > target {
        return Err(MigrationError::Refused(format!(
            "the database has schema version {current}, newer than this Paddock's \
             {target}; upgrade Paddock"
        )));
    }
    for (index, sql) in migrations.iter().enumerate().skip(current as usize) {
        let version = index as i64 + 1;
        tx.execute_batch(sql)
            .map_err(step(format!("migration {version}")))?;
        tx.pragma_update(None, "user_version", version)
            .map_err(step(format!("migration {version}")))?;
    }
    tx.commit()
        .map_err(step("committing the migrations".into()))
}
