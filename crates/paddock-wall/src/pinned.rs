//! Opening a granted folder without following any symbolic link, so that what is checked is
//! what gets mounted and ruled.
//!
//! A grant is stored as text when the session is created; by the time a wall starts again
//! (resume, a grant change) the folder, or a folder above it, may have been replaced by a link.
//! [`open_folder`] walks the path from `/` one component at a time with
//! `O_PATH | O_NOFOLLOW`, refusing any component that is a link or not a folder, and returns
//! the open handle with the folder's identity (device and inode). The host mounts by that
//! handle (`bwrap --bind-fd`), and the launcher inside the wall opens the mounted path the same
//! way and compares the identity before it applies the Landlock rules from the same handle: a
//! swap between the check and the mount cannot win.

use std::ffi::CString;
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// A folder's identity on its filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FolderIdentity {
    pub device: u64,
    pub inode: u64,
}

impl fmt::Display for FolderIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device {} inode {}", self.device, self.inode)
    }
}

/// An open folder (an `O_PATH` handle) and its identity.
#[derive(Debug)]
pub struct PinnedFolder {
    pub fd: OwnedFd,
    pub identity: FolderIdentity,
}

/// Why a folder could not be pinned.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("{path}: the path is not absolute and plain (no `.`, `..` or repeated `/`)")]
    NotPlain { path: String },
    #[error(
        "{path}: {link} is now a symbolic link{target}; a granted folder must be reached without \
         following any link (grant the folder again by its real path)"
    )]
    Link {
        path: String,
        link: String,
        target: String,
    },
    #[error("{path}: {component} is not a folder")]
    NotAFolder { path: String, component: String },
    #[error("{path}: cannot open {component}: {source}")]
    Io {
        path: String,
        component: String,
        #[source]
        source: io::Error,
    },
}

/// Opens `path` (absolute, without `.`, `..` or empty components) following no link.
pub fn open_folder(path: &str) -> Result<PinnedFolder, PinError> {
    let plain = Path::new(path);
    let components: Vec<_> = plain.components().collect();
    let rebuilt: PathBuf = components.iter().collect();
    let only_normal = components
        .iter()
        .skip(1)
        .all(|c| matches!(c, Component::Normal(_)));
    if components.first() != Some(&Component::RootDir)
        || !only_normal
        || rebuilt.as_os_str() != plain.as_os_str()
    {
        return Err(PinError::NotPlain {
            path: path.to_owned(),
        });
    }
    let mut current = open_at(None, Path::new("/")).map_err(|source| PinError::Io {
        path: path.to_owned(),
        component: "/".to_owned(),
        source,
    })?;
    let mut walked = PathBuf::from("/");
    for component in components.iter().skip(1) {
        walked.push(component);
        let next = open_at(Some(&current), component.as_os_str().as_ref()).map_err(|source| {
            PinError::Io {
                path: path.to_owned(),
                component: walked.display().to_string(),
                source,
            }
        })?;
        let stat = fstat(&next).map_err(|source| PinError::Io {
            path: path.to_owned(),
            component: walked.display().to_string(),
            source,
        })?;
        match stat.st_mode & libc::S_IFMT {
            libc::S_IFDIR => current = next,
            libc::S_IFLNK => {
                let target = std::fs::read_link(&walked)
                    .map(|t| format!(" (to {})", t.display()))
                    .unwrap_or_default();
                return Err(PinError::Link {
                    path: path.to_owned(),
                    link: walked.display().to_string(),
                    target,
                });
            }
            _ => {
                return Err(PinError::NotAFolder {
                    path: path.to_owned(),
                    component: walked.display().to_string(),
                });
            }
        }
    }
    let stat = fstat(&current).map_err(|source| PinError::Io {
        path: path.to_owned(),
        component: path.to_owned(),
        source,
    })?;
    Ok(PinnedFolder {
        fd: current,
        identity: FolderIdentity {
            device: stat.st_dev,
            inode: stat.st_ino,
        },
    })
}

/// `openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)`: a link is opened as itself.
fn open_at(dir: Option<&OwnedFd>, name: &Path) -> io::Result<OwnedFd> {
    let name = CString::new(name.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    let dir = dir.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    // SAFETY: `name` is a valid NUL-terminated string for the call; `dir` is an open fd we
    // borrow (or AT_FDCWD). The returned fd, when valid, is owned by nobody else.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by openat and is not owned elsewhere.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: &OwnedFd) -> io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open for the call and `stat` is a valid, writable struct.
    let rc = unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) };
    if rc == 0 {
        Ok(stat)
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn pins_a_plain_folder_with_its_identity() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap();
        let pinned = open_folder(path.to_str().unwrap()).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(pinned.identity.device, meta.dev());
        assert_eq!(pinned.identity.inode, meta.ino());
    }

    #[test]
    fn refuses_a_link_at_any_depth_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real/inner")).unwrap();
        std::os::unix::fs::symlink("real", root.join("link")).unwrap();
        for (path, link) in [
            (root.join("link"), root.join("link")),
            (root.join("link/inner"), root.join("link")),
        ] {
            let err = open_folder(path.to_str().unwrap()).unwrap_err();
            let text = err.to_string();
            assert!(
                matches!(err, PinError::Link { .. }) && text.contains("symbolic link (to real)"),
                "{text}"
            );
            assert!(text.starts_with(&format!("{}: {}", path.display(), link.display())));
        }
    }

    #[test]
    fn refuses_paths_that_are_not_plain_or_not_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("file"), "").unwrap();
        let r = root.display();
        for bad in [
            format!("{r}/../x"),
            format!("{r}/./x"),
            format!("{r}//x"),
            format!("{r}/"),
            "relative".to_owned(),
        ] {
            assert!(
                matches!(open_folder(&bad), Err(PinError::NotPlain { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            open_folder(&format!("{r}/file")),
            Err(PinError::NotAFolder { .. })
        ));
        assert!(matches!(
            open_folder(&format!("{r}/missing")),
            Err(PinError::Io { .. })
        ));
    }
}
