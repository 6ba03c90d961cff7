//! Removing a host folder a sandbox's user wrote into: a local wall's folder, an OpenShell
//! private home.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Removes `path` and everything in it (a missing folder is already removed). A command
/// inside may have left folders it cannot list; when this process is not root (and so the
/// sandbox's user itself), those are opened up first. Symlinks are removed, never followed.
pub(crate) fn remove_sandbox_folder(path: &Path) -> std::io::Result<()> {
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            open_up(path);
            fs::remove_dir_all(path)
        }
    }
}

/// Makes `dir` and every folder below it listable and writable by its owner.
fn open_up(dir: &Path) {
    let is_dir = fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_dir());
    if !is_dir {
        return;
    }
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                open_up(&entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn removal_opens_up_folders_a_command_locked() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let locked = home.join("locked");
        fs::create_dir_all(locked.join("inner")).unwrap();
        fs::write(locked.join("inner").join("f"), "x").unwrap();
        std::os::unix::fs::symlink(root.path(), home.join("link-out")).unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        remove_sandbox_folder(&home).unwrap();
        assert!(!home.exists());
        assert!(root.path().is_dir(), "a symlink's target is never removed");
        remove_sandbox_folder(&home).unwrap();
    }
}
