//! Which process runs which session. A process running a session holds an exclusive lock on
//! `leases/<session>.lock` (an OS file lock: it goes away with the process, even after
//! `kill -9`). So two processes never run one session at once, and orphan reaping asks the
//! locks, not the labels: a sandbox whose session is locked belongs to a live process and is
//! never touched.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use sandbox_provider::SessionOwners;

use crate::error::HostError;

/// The lock files of a state folder.
#[derive(Debug, Clone)]
pub struct Leases {
    dir: PathBuf,
}

/// A held lease: the session runs in this process until it is dropped.
#[derive(Debug)]
pub struct SessionLease {
    // Held open: closing the file releases the lock.
    _file: File,
    path: PathBuf,
}

impl SessionLease {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A session id as a file name (ids are UUIDs or `check-<pid>`; anything else is refused).
fn file_name(session_id: &str) -> Result<String, HostError> {
    let ok = !session_id.is_empty()
        && session_id.len() <= 128
        && session_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok {
        return Err(HostError::invalid(
            "session id",
            format!("`{session_id}` is not a session id"),
        ));
    }
    Ok(format!("{session_id}.lock"))
}

impl Leases {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// Takes the session's lease, or fails with [`HostError::SessionBusy`] when another live
    /// process (or another holder in this one) has it.
    pub fn acquire(&self, session_id: &str) -> Result<SessionLease, HostError> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| HostError::io(format!("creating {}", self.dir.display()), e))?;
        let path = self.dir.join(file_name(session_id)?);
        // A sweep may unlink the file between our open and our lock (it removes only files
        // it has locked itself): the lock we then get is on a file nobody else can find, so
        // it is given up and the path opened again.
        for _ in 0..100 {
            let mut file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(|e| HostError::io(format!("opening {}", path.display()), e))?;
            lock_exclusive(&file, &path, session_id)?;
            if !still_at(&file, &path) {
                continue;
            }
            // For people looking at the folder: who holds it.
            let _ = file.set_len(0);
            let _ = writeln!(file, "{}", std::process::id());
            return Ok(SessionLease { _file: file, path });
        }
        Err(HostError::SessionBusy {
            id: session_id.to_owned(),
        })
    }

    /// True while a live process holds the session's lease.
    pub fn is_held(&self, session_id: &str) -> bool {
        let Ok(name) = file_name(session_id) else {
            return false;
        };
        let Ok(file) = File::open(self.dir.join(name)) else {
            return false;
        };
        match file.try_lock_shared() {
            Ok(()) => false,
            Err(TryLockError::WouldBlock) => true,
            // Unknown: count it as live, so nothing of it is reaped.
            Err(TryLockError::Error(_)) => true,
        }
    }

    /// Removes lock files no process holds (left by processes that died). Each is removed
    /// while this process holds its lock, and only if the path still names the locked file,
    /// so a process that opened it a moment earlier finds it gone and opens a new one.
    pub fn sweep(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".lock") {
                continue;
            }
            let path = entry.path();
            let Ok(file) = OpenOptions::new().write(true).open(&path) else {
                continue;
            };
            if file.try_lock().is_ok()
                && still_at(&file, &path)
                && std::fs::remove_file(&path).is_ok()
            {
                removed += 1;
            }
        }
        removed
    }
}

/// Locks `file` exclusively, trying a few times: `is_held` of another process holds a shared
/// lock for an instant, and a sweep an exclusive one.
fn lock_exclusive(file: &File, path: &Path, session_id: &str) -> Result<(), HostError> {
    let mut tries = 0;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) if tries < 5 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(HostError::SessionBusy {
                    id: session_id.to_owned(),
                });
            }
            Err(TryLockError::Error(e)) => {
                return Err(HostError::io(format!("locking {}", path.display()), e));
            }
        }
    }
}

/// True when `path` still names the open `file` (same device and inode).
fn still_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

impl SessionOwners for Leases {
    fn is_live(&self, session_id: &str) -> bool {
        self.is_held(session_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let leases = Leases::new(dir.path().join("leases"));
        assert!(!leases.is_held("s1"));
        let lease = leases.acquire("s1").unwrap();
        assert!(leases.is_held("s1"));
        assert!(matches!(
            leases.acquire("s1"),
            Err(HostError::SessionBusy { .. })
        ));
        assert!(!leases.is_held("s2"));
        assert_eq!(leases.sweep(), 0, "a held lease is kept");
        drop(lease);
        assert!(!leases.is_held("s1"));
        assert_eq!(leases.sweep(), 1);
        assert!(matches!(
            leases.acquire("../etc/passwd"),
            Err(HostError::InvalidRequest { .. })
        ));
    }

    /// A sweep racing processes that take and drop one session's lease never lets two of
    /// them hold it at once: a sweeper that unlinked the file between one holder's open and
    /// its lock left that holder locking a file nobody else could see, while the next
    /// created a new one and locked that too.
    #[test]
    fn a_sweep_racing_acquires_never_lets_two_hold_one_session() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let leases = Leases::new(dir.path().join("leases"));
        let holders = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let sweeper = {
            let (leases, done) = (leases.clone(), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut swept = 0;
                while !done.load(Ordering::Relaxed) {
                    swept += leases.sweep();
                }
                swept
            })
        };
        let takers: Vec<_> = (0..4)
            .map(|_| {
                let (leases, holders, most) =
                    (leases.clone(), Arc::clone(&holders), Arc::clone(&most));
                std::thread::spawn(move || {
                    let mut held = 0;
                    for _ in 0..600 {
                        if let Ok(lease) = leases.acquire("s") {
                            let now = holders.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            std::thread::yield_now();
                            holders.fetch_sub(1, Ordering::SeqCst);
                            drop(lease);
                            held += 1;
                        }
                    }
                    held
                })
            })
            .collect();
        let held: usize = takers.into_iter().map(|t| t.join().unwrap()).sum();
        done.store(true, Ordering::Relaxed);
        let swept = sweeper.join().unwrap();
        assert!(
            held > 0 && swept > 0,
            "the race must happen: {held} held, {swept} swept"
        );
        assert_eq!(
            most.load(Ordering::SeqCst),
            1,
            "two processes held one session at once"
        );
    }
}
