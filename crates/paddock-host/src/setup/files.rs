//! The files setup edits: a unified diff of the change, a backup that never replaces an older
//! one, and an atomic write that keeps the file's permissions.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::HostError;

/// The change from `before` (`None`: the file does not exist) to `after` as a unified diff
/// with three lines of context, headed by the file's path.
pub fn unified_diff(path: &Path, before: Option<&str>, after: &str) -> String {
    let shown = path.display().to_string();
    let old_name = if before.is_some() {
        shown.as_str()
    } else {
        "/dev/null"
    };
    similar::TextDiff::from_lines(before.unwrap_or(""), after)
        .unified_diff()
        .context_radius(3)
        .header(old_name, &shown)
        .to_string()
}

/// `path` with `.bak` appended, or `.bak.1`, `.bak.2`, … : the first name not taken, so an
/// earlier backup (Paddock's or the user's) is never replaced.
pub fn free_backup_path(path: &Path) -> PathBuf {
    let base = format!("{}.bak", path.display());
    let mut candidate = PathBuf::from(&base);
    let mut n = 1;
    while candidate.symlink_metadata().is_ok() {
        candidate = PathBuf::from(format!("{base}.{n}"));
        n += 1;
    }
    candidate
}

/// The file's current text; `None` when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<String>, HostError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HostError::io(format!("reading {}", path.display()), e)),
    }
}

/// Replaces `path` with `text`: the current file (if any) is first copied to a free backup
/// name, the new text goes to a temporary file with the same permissions (`new_mode` for a
/// new file) that is then renamed over it. Returns the backup's path.
pub fn write_with_backup(
    path: &Path,
    text: &str,
    new_mode: u32,
) -> Result<Option<PathBuf>, HostError> {
    let dir = path
        .parent()
        .ok_or_else(|| HostError::Internal(format!("{} has no folder", path.display())))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| HostError::io(format!("creating {}", dir.display()), e))?;
    let (backup, mode) = match std::fs::metadata(path) {
        Ok(meta) => {
            let backup = free_backup_path(path);
            std::fs::copy(path, &backup)
                .map_err(|e| HostError::io(format!("backing up {}", path.display()), e))?;
            (Some(backup), meta.permissions().mode() & 0o7777)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, new_mode),
        Err(e) => return Err(HostError::io(format!("reading {}", path.display()), e)),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = dir.join(format!(".{name}.paddock-{}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temporary)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(HostError::io(format!("writing {}", path.display()), e));
    }
    Ok(backup)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn backups_never_replace_an_earlier_one_and_the_mode_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.toml");
        std::fs::write(&path, "one\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let first = write_with_backup(&path, "two\n", 0o644).unwrap().unwrap();
        let second = write_with_backup(&path, "three\n", 0o644).unwrap().unwrap();
        assert_eq!(first, dir.path().join("gateway.toml.bak"));
        assert_eq!(second, dir.path().join("gateway.toml.bak.1"));
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "one\n");
        assert_eq!(std::fs::read_to_string(&second).unwrap(), "two\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "three\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 3, "no temporary file is left: {names:?}");
    }

    #[test]
    fn a_new_file_gets_the_given_mode_and_no_backup() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("new.toml");
        assert_eq!(write_with_backup(&path, "x = 1\n", 0o600).unwrap(), None);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let diff = unified_diff(&path, None, "x = 1\n");
        assert!(diff.starts_with("--- /dev/null\n+++ "), "{diff}");
        assert!(diff.contains("+x = 1"), "{diff}");
    }
}
