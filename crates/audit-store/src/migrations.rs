//! Numbered migrations, applied in order, each recorded in `schema_migrations`.

use rusqlite::{Connection, params};

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
];

/// Applies the migrations a database lacks; refuses a database from a newer build.
pub fn migrate(conn: &mut Connection, now_ms: i64) -> Result<Vec<i64>, AuditError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version    INTEGER PRIMARY KEY,
             name       TEXT    NOT NULL,
             applied_ms INTEGER NOT NULL
         ) STRICT;",
    )?;
    let current: i64 = conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        [],
        |row| row.get(0),
    )?;
    let known = MIGRATIONS.last().map_or(0, |m| m.0);
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
        let tx = conn.transaction().map_err(migration_error)?;
        tx.execute_batch(sql).map_err(migration_error)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_ms) VALUES (?1, ?2, ?3)",
            params![version, name, now_ms],
        )
        .map_err(migration_error)?;
        tx.commit().map_err(migration_error)?;
        applied.push(*version);
    }
    Ok(applied)
}
