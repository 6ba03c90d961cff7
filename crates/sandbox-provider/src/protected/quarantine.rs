//! Moving what a session planted out of the user's folders, into Paddock's state folder, for
//! the user to look at: nothing is destroyed. Each move gets its own numbered folder holding
//! the original at its full path (`<root>/<n>/home/alice/project/.vscode/tasks.json`).

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// One session's quarantine folder.
#[derive(Debug)]
pub(crate) struct Quarantine {
    root: PathBuf,
    counter: AtomicU64,
}

impl Quarantine {
    /// `root` is created (owner-only) on the first move.
    pub(crate) fn new(root: PathBuf) -> Self {
        Self {
            root,
            counter: AtomicU64::new(0),
        }
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// A numbered folder of the quarantine no earlier move (of this run or an earlier one of
    /// the same session) used.
    fn claim(&self) -> io::Result<PathBuf> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.root)?;
        fs::set_permissions(&self.root, fs::Permissions::from_mode(0o700))?;
        loop {
            let n = self.counter.fetch_add(1, Ordering::Relaxed);
            let folder = self.root.join(format!("{n:04}"));
            match fs::DirBuilder::new().mode(0o700).create(&folder) {
                Ok(()) => return Ok(folder),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Moves `path` (a file, link or folder) into the quarantine; returns where it went.
    pub(crate) fn take(&self, path: &Path) -> io::Result<PathBuf> {
        fs::symlink_metadata(path)?;
        let relative = path.strip_prefix("/").unwrap_or(path);
        let destination = self.claim()?.join(relative);
        let parent = destination
            .parent()
            .ok_or_else(|| io::Error::other("a quarantine path without a folder"))?;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
        match fs::rename(path, &destination) {
            Ok(()) => {
                defang(&destination)?;
                Ok(destination)
            }
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                copy_tree(path, &destination)?;
                remove_tree(path)?;
                Ok(destination)
            }
            Err(e) => Err(e),
        }
    }
}

/// Copies a file, link or folder tree without following links.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        symlink(fs::read_link(from)?, to)
    } else if meta.is_dir() {
        fs::DirBuilder::new().mode(0o700).create(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if meta.is_file() {
        fs::copy(from, to)?;
        // Never keep set-id or execute bits on what the quarantine holds.
        fs::set_permissions(to, fs::Permissions::from_mode(meta.mode() & 0o644))
    } else {
        Ok(())
    }
}

/// Takes execute and set-id bits off every regular file under `path` (links untouched).
fn defang(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    if meta.is_dir() {
        for entry in fs::read_dir(path)? {
            defang(&entry?.path())?;
        }
    } else if meta.is_file() {
        fs::set_permissions(path, fs::Permissions::from_mode(meta.mode() & 0o644))?;
    }
    Ok(())
}

fn remove_tree(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    if meta.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_tree_moves_whole_and_keeps_its_path() {
        let work = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let planted = work.path().join(".vscode");
        fs::create_dir(&planted).unwrap();
        fs::write(planted.join("tasks.json"), "{}").unwrap();
        fs::set_permissions(
            planted.join("tasks.json"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        symlink("/etc/passwd", planted.join("link")).unwrap();
        let quarantine = Quarantine::new(state.path().join("q"));
        let moved = quarantine.take(&planted).unwrap();
        assert!(!planted.exists());
        assert!(moved.starts_with(state.path().join("q/0000")));
        assert!(moved.ends_with(planted.strip_prefix("/").unwrap()));
        assert_eq!(fs::read_to_string(moved.join("tasks.json")).unwrap(), "{}");
        let mode = fs::metadata(moved.join("tasks.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777,
            0o644,
            "nothing in quarantine stays executable"
        );
        assert!(
            fs::symlink_metadata(moved.join("link"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let mode = fs::metadata(state.path().join("q"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);

        let second = quarantine.take(&work.path().join("missing"));
        assert!(second.is_err(), "a path that is not there is an error");

        // A later run of the same session (a new counter) never overwrites what is kept.
        fs::create_dir(&planted).unwrap();
        fs::write(planted.join("tasks.json"), "second").unwrap();
        let again = Quarantine::new(state.path().join("q"))
            .take(&planted)
            .unwrap();
        assert_ne!(again, moved);
        assert_eq!(fs::read_to_string(moved.join("tasks.json")).unwrap(), "{}");
        assert_eq!(
            fs::read_to_string(again.join("tasks.json")).unwrap(),
            "second"
        );
    }

    #[test]
    fn across_filesystems_a_copy_is_made_without_execute_bits() {
        let state = tempfile::tempdir().unwrap();
        let file = state.path().join("hook");
        fs::write(&file, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o4755)).unwrap();
        let to = state.path().join("copy");
        copy_tree(&file, &to).unwrap();
        assert_eq!(
            fs::metadata(&to).unwrap().permissions().mode() & 0o7777,
            0o644
        );
    }
}
