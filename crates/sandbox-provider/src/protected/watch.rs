//! Which folders changed between two sweeps: one inotify instance watching every folder the
//! scan walked, for entries created or moved in. A sweep then looks only at those folders.
//! When the kernel's queue overflowed, a watched folder was moved or a watch could not be
//! added, the sweep walks everything instead (the answer is the same, only slower).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Events that can bring a new entry into a folder, or make our names for folders stale.
const MASK: u32 = libc::IN_CREATE
    | libc::IN_MOVED_TO
    | libc::IN_MOVED_FROM
    | libc::IN_MOVE_SELF
    | libc::IN_DELETE_SELF
    | libc::IN_ONLYDIR
    | libc::IN_DONT_FOLLOW;

/// Changes to a protected file watched itself (one not mounted read-only).
const FILE_MASK: u32 = libc::IN_MODIFY
    | libc::IN_CLOSE_WRITE
    | libc::IN_ATTRIB
    | libc::IN_MOVE_SELF
    | libc::IN_DELETE_SELF
    | libc::IN_DONT_FOLLOW;

/// What happened since the last drain.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Changes {
    /// Folders that gained an entry, and watched files that changed.
    pub dirty: BTreeSet<PathBuf>,
    /// The names of watched folders may be stale, or events were lost: walk everything.
    pub rescan: bool,
    /// Watched folders that are gone (deleted).
    pub gone: BTreeSet<PathBuf>,
}

/// An inotify instance over a set of folders.
pub(crate) struct Watcher {
    fd: OwnedFd,
    folders: HashMap<i32, PathBuf>,
    /// The watches (among `folders`) that are files.
    files: HashSet<i32>,
    /// A watch could not be added (the per-user limit): every sweep walks everything.
    pub degraded: bool,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("folders", &self.folders.len())
            .field("degraded", &self.degraded)
            .finish()
    }
}

impl Watcher {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: plain integer flags; the returned descriptor is checked and owned below.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            // SAFETY: `fd` is a fresh descriptor nothing else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            folders: HashMap::new(),
            files: HashSet::new(),
            degraded: false,
        })
    }

    /// Watches one folder (a no-op for one already watched under the same name).
    pub(crate) fn watch(&mut self, folder: &Path) {
        self.add(folder, MASK);
    }

    /// Watches one file for changes in place.
    pub(crate) fn watch_file(&mut self, file: &Path) {
        if let Some(wd) = self.add(file, FILE_MASK) {
            self.files.insert(wd);
        }
    }

    fn add(&mut self, folder: &Path, mask: u32) -> Option<i32> {
        let name = CString::new(folder.as_os_str().as_bytes()).ok()?;
        // SAFETY: `name` is a NUL-terminated string that outlives the call.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), name.as_ptr(), mask) };
        if wd >= 0 {
            self.folders.insert(wd, folder.to_path_buf());
            return Some(wd);
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::ENOSPC) {
            self.degraded = true;
        }
        // A folder that vanished or is not a folder: nothing to watch.
        None
    }

    pub(crate) fn watched(&self) -> usize {
        self.folders.len()
    }

    /// Reads every event queued since the last call.
    pub(crate) fn drain(&mut self) -> Changes {
        let mut changes = Changes {
            rescan: self.degraded,
            ..Changes::default()
        };
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: the buffer is valid for writes of its whole length.
            let read = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    buffer.as_mut_ptr().cast(),
                    buffer.len(),
                )
            };
            if read <= 0 {
                break;
            }
            let read = read as usize;
            let mut at = 0;
            let header = size_of::<libc::inotify_event>();
            while at + header <= read {
                // SAFETY: the kernel wrote a whole `inotify_event` at `at`; it may be
                // unaligned in the buffer, hence the unaligned read.
                let event: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buffer.as_ptr().add(at).cast()) };
                at += header + event.len as usize;
                self.note(&event, &mut changes);
            }
        }
        changes
    }

    fn note(&mut self, event: &libc::inotify_event, changes: &mut Changes) {
        let mask = event.mask;
        if mask & libc::IN_Q_OVERFLOW != 0 {
            changes.rescan = true;
            return;
        }
        if mask & libc::IN_IGNORED != 0 {
            let file = self.files.remove(&event.wd);
            if let Some(folder) = self.folders.remove(&event.wd)
                && !file
            {
                changes.gone.insert(folder);
            }
            return;
        }
        let Some(folder) = self.folders.get(&event.wd) else {
            return;
        };
        if self.files.contains(&event.wd) {
            // A watched file changed, or was moved or deleted: its name is looked at again.
            changes.dirty.insert(folder.clone());
            return;
        }
        // A deleted folder takes nothing with it; a moved one makes our names for it (and what
        // is under it) stale.
        if mask & libc::IN_MOVE_SELF != 0
            || (mask & libc::IN_MOVED_FROM != 0 && mask & libc::IN_ISDIR != 0)
        {
            // A watched folder has another name now (or is gone): ours are stale.
            changes.rescan = true;
        }
        if mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0 {
            changes.dirty.insert(folder.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_entries_mark_their_folder_and_moves_ask_for_a_walk() {
        let root = tempfile::tempdir().unwrap();
        let sub = root.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let mut watcher = Watcher::new().unwrap();
        watcher.watch(root.path());
        watcher.watch(&sub);
        assert_eq!(watcher.drain(), Changes::default());

        std::fs::write(sub.join("new"), "x").unwrap();
        let changes = watcher.drain();
        assert_eq!(changes.dirty, BTreeSet::from([sub.clone()]));
        assert!(!changes.rescan);

        std::fs::rename(&sub, root.path().join("moved")).unwrap();
        let changes = watcher.drain();
        assert!(changes.rescan, "a watched folder was renamed");
        assert!(changes.dirty.contains(root.path()));

        let gone = root.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        watcher.drain();
        watcher.watch(&gone);
        std::fs::remove_dir(&gone).unwrap();
        let changes = watcher.drain();
        assert!(
            !changes.rescan,
            "a deleted folder leaves the other names right"
        );
        assert!(changes.gone.contains(&gone));
    }
}
