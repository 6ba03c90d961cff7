//! Set-id files in the read-write grants, found and stripped at every wall start (a resume
//! included) and at close, on both walls.
//!
//! The walls refuse every system call that would set `S_ISUID` or `S_ISGID` on what a sandbox
//! writes; this sweep is the second line (a kernel path the filters missed, a set-id file left
//! by a wall that crashed, or one placed from outside while a session ran). A set-id regular
//! file in a granted folder would let any local user who can reach it run it as its owner
//! (root, when Paddock runs as root). The walk opens everything relative to its folder's handle
//! and follows no link, so nothing outside the grants is touched; it stops after
//! [`MAX_ENTRIES`] entries, and then fails: what it did not look at is not reported clean.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use paddock_wall::pinned;
use protocol::{CanaryResult, FolderAccess, FolderGrant};

use crate::fd_stat::{fstat, stat_entry};

/// The most entries one sweep looks at.
pub const MAX_ENTRIES: usize = 200_000;

/// What one sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SetIdSweep {
    /// Files whose set-id bits were removed, with their mode before.
    pub stripped: Vec<(PathBuf, u32)>,
    /// Files or folders that could not be checked or stripped, with the reason.
    pub failed: Vec<(PathBuf, String)>,
    /// The walk stopped at its limit (`Some(limit)`), leaving entries unchecked.
    pub truncated: Option<usize>,
}

impl SetIdSweep {
    /// The attestation entry that records the sweep (the audit trail's first record of a
    /// session): it fails when a set-id file could not be stripped, and when the walk stopped
    /// at its limit (the rest of the folders was not checked).
    pub fn canary(&self) -> CanaryResult {
        let shown = |items: Vec<String>| -> String {
            let more = items.len().saturating_sub(10);
            let mut text = items.into_iter().take(10).collect::<Vec<_>>().join(", ");
            if more > 0 {
                text.push_str(&format!(" and {more} more"));
            }
            text
        };
        let mut detail = if self.stripped.is_empty() {
            "no set-uid or set-gid file in the read-write folders".to_owned()
        } else {
            format!(
                "removed set-uid/set-gid bits from {}",
                shown(
                    self.stripped
                        .iter()
                        .map(|(p, mode)| format!("{} (was {mode:o})", p.display()))
                        .collect()
                )
            )
        };
        if !self.failed.is_empty() {
            detail.push_str(&format!(
                "; could not strip {}",
                shown(
                    self.failed
                        .iter()
                        .map(|(p, why)| format!("{}: {why}", p.display()))
                        .collect()
                )
            ));
        }
        if let Some(limit) = self.truncated {
            detail = format!(
                "the sweep stopped after {limit} entries, so the rest of the read-write folders \
                 was not checked for set-uid or set-gid files; grant a smaller folder ({detail})"
            );
        }
        CanaryResult {
            name: "set_id_files_stripped".to_owned(),
            passed: self.failed.is_empty() && self.truncated.is_none(),
            detail,
        }
    }
}

/// The sweep at a wall's close: what it stripped or could not strip (or an unfinished walk) is
/// logged as a warning and returned; the close hands it to the session, which records it
/// (`sandbox_closed`) in the audit trail before the session's end is committed.
pub fn sweep_at_close(sandbox: &str, folders: &[FolderGrant], limit: usize) -> SetIdSweep {
    let report = sweep(folders, limit);
    if !report.stripped.is_empty() || !report.failed.is_empty() || report.truncated.is_some() {
        tracing::warn!(sandbox, "set-id files at close: {}", report.canary().detail);
    }
    report
}

/// Sweeps the read-write folders of `folders` (read-only ones are the user's, untouched),
/// looking at `limit` entries at most ([`MAX_ENTRIES`] but in tests).
pub fn sweep(folders: &[FolderGrant], limit: usize) -> SetIdSweep {
    let mut report = SetIdSweep::default();
    let mut budget = limit;
    for folder in folders {
        if folder.access != FolderAccess::ReadWrite {
            continue;
        }
        match pinned::open_folder(&folder.path) {
            Ok(root) => sweep_dir(&root.fd, Path::new(&folder.path), &mut report, &mut budget),
            Err(e) => report
                .failed
                .push((PathBuf::from(&folder.path), e.to_string())),
        }
    }
    if report.truncated.is_some() {
        report.truncated = Some(limit);
    }
    report
}

fn sweep_dir(dir: &OwnedFd, path: &Path, report: &mut SetIdSweep, budget: &mut usize) {
    let listing = match std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd())) {
        Ok(listing) => listing,
        Err(e) => {
            report.failed.push((path.to_owned(), e.to_string()));
            return;
        }
    };
    for entry in listing.flatten() {
        if *budget == 0 {
            report.truncated = Some(0);
            return;
        }
        *budget -= 1;
        let name = entry.file_name();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            match open_entry(dir, name.as_bytes(), libc::O_DIRECTORY) {
                Ok(fd) => sweep_dir(&fd, &path.join(&name), report, budget),
                // Replaced by a link, a file, or removed since it was listed: nothing of ours.
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ELOOP | libc::ENOENT | libc::ENOTDIR)
                    ) => {}
                Err(e) => report.failed.push((path.join(&name), e.to_string())),
            }
        } else if kind.is_file() {
            // One `fstatat` per file: the few with a set-id bit are opened, the rest never.
            match stat_entry(dir, name.as_bytes()) {
                Ok(stat) if is_set_id_file(stat.st_mode) => {
                    strip(dir, name.as_bytes(), &path.join(&name), report);
                }
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => report.failed.push((path.join(&name), e.to_string())),
            }
        }
    }
}

fn is_set_id_file(mode: u32) -> bool {
    mode & libc::S_IFMT == libc::S_IFREG && mode & (libc::S_ISUID | libc::S_ISGID) != 0
}

/// Removes the set-id bits of `name` in `dir`, opened following no link and checked again
/// through the open descriptor (it may have been replaced since it was looked at).
fn strip(dir: &OwnedFd, name: &[u8], child: &Path, report: &mut SetIdSweep) {
    let fd = match open_entry(dir, name, 0) {
        Ok(fd) => fd,
        // Replaced by a link (or removed) since it was listed: nothing of ours to strip.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOENT)) => return,
        Err(e) => {
            report.failed.push((child.to_owned(), e.to_string()));
            return;
        }
    };
    let stat = match fstat(&fd) {
        Ok(stat) => stat,
        Err(e) => {
            report.failed.push((child.to_owned(), e.to_string()));
            return;
        }
    };
    if !is_set_id_file(stat.st_mode) {
        return;
    }
    let mode = stat.st_mode & 0o7777;
    match fchmod(&fd, mode & !(libc::S_ISUID | libc::S_ISGID)) {
        Ok(()) => report.stripped.push((child.to_owned(), mode)),
        Err(e) => report.failed.push((child.to_owned(), e.to_string())),
    }
}

/// Opens `name` in `dir` for reading (with `flags` added), following no link and never
/// blocking (a FIFO).
fn open_entry(dir: &OwnedFd, name: &[u8], flags: i32) -> io::Result<OwnedFd> {
    let name = CString::new(name).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `name` is NUL-terminated and lives for the call; `dir` is an open descriptor.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY
                | libc::O_NOFOLLOW
                | libc::O_NONBLOCK
                | libc::O_CLOEXEC
                | libc::O_NOCTTY
                | flags,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by openat and is owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fchmod(fd: &OwnedFd, mode: u32) -> io::Result<()> {
    // SAFETY: integer arguments on an open descriptor.
    if unsafe { libc::fchmod(fd.as_raw_fd(), mode) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn grant(path: &Path, access: FolderAccess) -> FolderGrant {
        FolderGrant {
            path: path.canonicalize().unwrap().display().to_string(),
            access,
        }
    }

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    }

    #[test]
    fn strips_set_id_files_in_read_write_folders_only() {
        let dir = tempfile::tempdir().unwrap();
        let (rw, ro, outside) = (
            dir.path().join("rw"),
            dir.path().join("ro"),
            dir.path().join("outside"),
        );
        for d in [&rw, &ro, &outside] {
            std::fs::create_dir_all(d.join("sub")).unwrap();
        }
        let plant = |path: &Path, mode: u32| {
            std::fs::write(path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        plant(&rw.join("sub/suid"), 0o4755);
        plant(&rw.join("sgid"), 0o2755);
        plant(&rw.join("plain"), 0o755);
        plant(&ro.join("suid"), 0o4755);
        plant(&outside.join("suid"), 0o4755);
        // A link in the grant to a set-id file elsewhere is not followed.
        std::os::unix::fs::symlink(outside.join("suid"), rw.join("link")).unwrap();
        std::os::unix::fs::symlink(&outside, rw.join("dirlink")).unwrap();
        std::fs::create_dir(rw.join("setgid-dir")).unwrap();
        std::fs::set_permissions(
            rw.join("setgid-dir"),
            std::fs::Permissions::from_mode(0o2775),
        )
        .unwrap();

        let report = sweep(
            &[
                grant(&rw, FolderAccess::ReadWrite),
                grant(&ro, FolderAccess::ReadOnly),
            ],
            MAX_ENTRIES,
        );
        let mut stripped: Vec<_> = report
            .stripped
            .iter()
            .map(|(p, m)| {
                (
                    p.strip_prefix(rw.canonicalize().unwrap())
                        .unwrap()
                        .to_owned(),
                    *m,
                )
            })
            .collect();
        stripped.sort();
        assert_eq!(
            stripped,
            [
                (PathBuf::from("sgid"), 0o2755),
                (PathBuf::from("sub/suid"), 0o4755)
            ]
        );
        assert_eq!(mode(&rw.join("sub/suid")), 0o755);
        assert_eq!(mode(&rw.join("sgid")), 0o755);
        assert_eq!(
            mode(&ro.join("suid")),
            0o4755,
            "read-only grants are untouched"
        );
        assert_eq!(
            mode(&outside.join("suid")),
            0o4755,
            "links are not followed"
        );
        assert_eq!(
            mode(&rw.join("setgid-dir")),
            0o2775,
            "folders keep their set-gid"
        );
        let canary = report.canary();
        assert!(canary.passed, "{canary:?}");
        assert!(
            canary.detail.contains("sub/suid (was 4755)"),
            "{}",
            canary.detail
        );
        assert!(
            sweep(&[grant(&rw, FolderAccess::ReadWrite)], MAX_ENTRIES)
                .stripped
                .is_empty()
        );
    }

    #[test]
    fn a_sweep_cut_off_at_its_limit_fails_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let rw = dir.path().join("rw");
        std::fs::create_dir_all(rw.join("sub")).unwrap();
        for i in 0..10 {
            std::fs::write(rw.join(format!("sub/f{i}")), "").unwrap();
        }
        let folders = [grant(&rw, FolderAccess::ReadWrite)];
        let cut = sweep(&folders, 5);
        assert_eq!(cut.truncated, Some(5));
        let canary = cut.canary();
        assert!(!canary.passed, "{canary:?}");
        assert!(
            canary.detail.contains("stopped after 5 entries")
                && canary.detail.contains("not checked"),
            "{}",
            canary.detail
        );
        // Enough room: the same folder is clean.
        let whole = sweep(&folders, 11);
        assert_eq!(whole.truncated, None);
        assert!(whole.canary().passed, "{:?}", whole.canary());
    }
}
