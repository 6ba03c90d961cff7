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
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| HostError::io(format!("opening {}", path.display()), e))?;
        // A few tries: `is_held` of another process holds a shared lock for an instant.
        let mut tries = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
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
        // For people looking at the folder: who holds it.
        let _ = file.set_len(0);
        let _ = writeln!(file, "{}", std::process::id());
        Ok(SessionLease { _file: file, path })
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

    /// Removes lock files no process holds (left by processes that died).
    pub fn sweep(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(session) = name.strip_suffix(".lock") else {
                continue;
            };
            if !self.is_held(session) && std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
        removed
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
}
