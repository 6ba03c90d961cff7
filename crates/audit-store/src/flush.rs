//! [`Durability::Flushed`](crate::Durability::Flushed): commits are not waited on to reach
//! the disk; a thread of the store flushes the write-ahead log within a bound after each
//! commit (one `fdatasync` covers every commit since the last), and [`WalFlusher::flush_now`]
//! flushes at once. A commit survives the process being killed as soon as it returns (it is
//! in the operating system's page cache, as with `synchronous=NORMAL`), and power loss once
//! the flush that follows it is done. A background flush that fails is reported by the
//! next commit or flush, so a trail that cannot reach the disk stops the sessions writing it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Default)]
struct State {
    /// When the oldest commit not yet flushed was made.
    dirty_since: Option<Instant>,
    /// Why the last background flush failed, until a caller is told.
    failed: Option<std::io::Error>,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    wal: PathBuf,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn sync(&self) -> std::io::Result<()> {
        sync_wal(&self.wal)
    }
}

/// The write-ahead log of the SQLite database at `database`.
pub(crate) fn wal_path(database: &Path) -> PathBuf {
    let mut wal = database.as_os_str().to_owned();
    wal.push("-wal");
    PathBuf::from(wal)
}

/// `fdatasync` of a WAL file (every commit written to it so far). A WAL that does not exist
/// holds nothing to flush.
pub(crate) fn sync_wal(wal: &Path) -> std::io::Result<()> {
    match std::fs::File::open(wal) {
        Ok(file) => file.sync_data(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Flushes one database's write-ahead log within `within` of each commit.
pub(crate) struct WalFlusher {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl WalFlusher {
    pub(crate) fn start(database: &Path, within: Duration) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            wal: wal_path(database),
        });
        let thread = std::thread::Builder::new()
            .name("audit-flush".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || run(&shared, within)
            })?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// A commit was made: it is flushed within the bound. Fails when an earlier background
    /// flush did (the commit is made; whether it reaches the disk is not known).
    pub(crate) fn committed(&self) -> std::io::Result<()> {
        let mut state = self.shared.state();
        if state.dirty_since.is_none() {
            state.dirty_since = Some(Instant::now());
            self.shared.wake.notify_one();
        }
        match state.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Flushes every commit made so far before returning.
    pub(crate) fn flush_now(&self) -> std::io::Result<()> {
        let failed = {
            let mut state = self.shared.state();
            state.dirty_since = None;
            state.failed.take()
        };
        match failed {
            Some(e) => Err(e),
            None => self.shared.sync(),
        }
    }
}

impl Drop for WalFlusher {
    fn drop(&mut self) {
        self.shared.state().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(shared: &Shared, within: Duration) {
    let mut state = shared.state();
    loop {
        match state.dirty_since {
            None if state.stop => return,
            None => {
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            Some(since) => {
                let due = since + within;
                let now = Instant::now();
                if now < due && !state.stop {
                    state = shared
                        .wake
                        .wait_timeout(state, due - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    continue;
                }
                state.dirty_since = None;
                drop(state);
                let synced = shared.sync();
                state = shared.state();
                if let Err(e) = synced {
                    state.failed = Some(e);
                }
            }
        }
    }
}
