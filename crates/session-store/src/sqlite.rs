//! Opening a SQLite file that several Paddock processes share (four `paddock run`s and a
//! `paddock up` on one state folder): a busy timeout before anything else, WAL set once
//! (only when the file is not in WAL yet, retried while another opener holds the lock), and
//! writers that retry on `SQLITE_BUSY` instead of losing what they were writing.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

/// How long one statement waits for another process's lock (SQLite's busy handler).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a write keeps retrying after the busy handler gave up.
pub const RETRY_FOR: Duration = Duration::from_secs(60);

/// True for the errors another process's lock causes (`SQLITE_BUSY`, `SQLITE_LOCKED`).
pub fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `attempt` until it succeeds, fails with something other than a lock, or
/// [`RETRY_FOR`] passed; waits a little longer after each busy answer.
pub fn retry_busy<T, E>(
    mut attempt: impl FnMut() -> Result<T, E>,
    busy: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match attempt() {
            Err(e) if busy(&e) && started.elapsed() < RETRY_FOR => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Opens `path` for sharing: the busy timeout first (so every later statement waits for
/// other processes), then WAL journal mode, set only when the file is not in it yet: the
/// switch needs an exclusive lock, and a second process racing to set it again would get
/// `SQLITE_BUSY` without the busy handler being asked.
pub fn open_shared(path: &Path) -> Result<Connection, rusqlite::Error> {
    let connection = Connection::open(path)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    retry_busy(
        || {
            let mode: String = connection.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
            if mode.eq_ignore_ascii_case("wal") {
                return Ok(());
            }
            let set: String =
                connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
            if set.eq_ignore_ascii_case("wal") {
                Ok(())
            } else {
                // Another connection holds the file in a mode we cannot change now: retry.
                Err(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                    Some(format!("journal mode stayed `{set}`")),
                ))
            }
        },
        is_busy,
    )?;
    Ok(connection)
}
