//! Numbered migrations, applied in order, each recorded in `schema_migrations`.

use rusqlite::{Connection, TransactionBehavior, params};

use crate::error::AuditError;

/// Every migration this build knows: `(version, name, sql)`, in order.
pub const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "0001_events",
        include_str!("../migrations/0001_events.sql"),
    ),
    (
        2,
        "0002_query_indexes",
        include_str!("../migrations/0002_query_indexes.sql"),
    ),
    (
        3,
        "0003_time_bound_index",
        include_str!("../migrations/0003_time_bound_index.sql"),
    ),
];

/// Applies the migrations a database lacks; refuses a database from a newer build. Safe when
/// several processes open a fresh file at once: the applied versions are read inside an
/// immediate (write-locked) transaction, so exactly one applies each migration and the others
/// find it applied.
pub fn migrate(conn: &mut Connection, now_ms: i64) -> Result<Vec<i64>, AuditError> {
    let known = MIGRATIONS.last().map_or(0, |m| m.0);
    // A read first: an up-to-date database (the common case) takes no write lock.
    if current_version(conn).ok() == Some(known) {
        return Ok(Vec::new());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version    INTEGER PRIMARY KEY,
             name       TEXT    NOT NULL,
             applied_ms INTEGER NOT NULL
         ) STRICT;",
    )?;
    let current = current_version(&tx)?;
    if current > known {
        return Err(AuditError::NewerSchema {
            found: current,
            known,
        });
    }
    let mut applied = Vec::new();
    for (version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
        let migration_error = |source| AuditError::Migration {
            version: *version,
            name,
            source,
        };
        tx.execute_batch(sql).map_err(migration_error)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_ms) VALUES (?1, ?2, ?3)",
            params![version, name, now_ms],
        )
        .map_err(migration_error)?;
        applied.push(*version);
    }
    tx.commit()?;
    Ok(applied)
}

/// The highest applied migration (0 for a fresh file).
fn current_version(conn: &Connection) -> Result<i64, rusqlite::Error> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations')",
        [],
        |row| row.get(0),
    )?;
    if !exists {
        return Ok(0);
    }
    conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        [],
        |row| row.get(0),
    )
}
