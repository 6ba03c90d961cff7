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
//!
//! [`open_entry`] does the same for the protected paths the host mounts over a grant (files
//! too), and [`mount_state`] tells the launcher whether what it opened inside is a mount of its
//! own, and read-only: a mount bubblewrap placed elsewhere (its target followed a link swapped
//! in meanwhile) leaves the path an ordinary, writable part of the grant, and is caught.

use std::ffi::CString;
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// A folder's (or a protected file's) identity on its filesystem.
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
    let entry = walk(path, false)?;
    Ok(PinnedFolder {
        fd: entry.fd,
        identity: entry.identity,
    })
}

/// An open file or folder (an `O_PATH` handle) and its identity.
#[derive(Debug)]
pub struct PinnedEntry {
    pub fd: OwnedFd,
    pub identity: FolderIdentity,
    pub is_dir: bool,
}

/// Opens `path` like [`open_folder`], except that its last component may also be a regular
/// file (a protected path: a repository's `config`, a `.bashrc`). A link anywhere is refused.
pub fn open_entry(path: &str) -> Result<PinnedEntry, PinError> {
    walk(path, true)
}

fn walk(path: &str, last_may_be_file: bool) -> Result<PinnedEntry, PinError> {
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
    let io_error = |component: &Path, source| PinError::Io {
        path: path.to_owned(),
        component: component.display().to_string(),
        source,
    };
    let mut current = open_at(None, Path::new("/")).map_err(|e| io_error(Path::new("/"), e))?;
    let mut stat = fstat(&current).map_err(|e| io_error(Path::new("/"), e))?;
    let mut walked = PathBuf::from("/");
    let last = components.len().saturating_sub(1);
    for (index, component) in components.iter().enumerate().skip(1) {
        walked.push(component);
        let next = open_at(Some(&current), component.as_os_str().as_ref())
            .map_err(|e| io_error(&walked, e))?;
        stat = fstat(&next).map_err(|e| io_error(&walked, e))?;
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
            libc::S_IFREG if last_may_be_file && index == last => current = next,
            _ => {
                return Err(PinError::NotAFolder {
                    path: path.to_owned(),
                    component: walked.display().to_string(),
                });
            }
        }
    }
    Ok(PinnedEntry {
        fd: current,
        identity: FolderIdentity {
            device: stat.st_dev,
            inode: stat.st_ino,
        },
        is_dir: stat.st_mode & libc::S_IFMT == libc::S_IFDIR,
    })
}

/// How an open entry is mounted: whether it is the root of a mount of its own, and whether
/// that mount is read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MountState {
    pub mount_root: bool,
    pub read_only: bool,
}

/// The mount state of `fd` (`statx`'s `STATX_ATTR_MOUNT_ROOT`, `fstatvfs`'s `ST_RDONLY`).
pub fn mount_state(fd: &OwnedFd) -> io::Result<MountState> {
    // SAFETY: an all-zero `statx` is a valid value of this plain C struct.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open for the call, the empty path with AT_EMPTY_PATH names it, and
    // `stx` is a valid, writable struct.
    let rc = unsafe {
        libc::statx(
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_BASIC_STATS,
            &mut stx,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let root_bit = u64::try_from(libc::STATX_ATTR_MOUNT_ROOT).unwrap_or(0);
    if stx.stx_attributes_mask & root_bit == 0 {
        return Err(io::Error::other(
            "the kernel does not say whether a path is a mount's root",
        ));
    }
    // SAFETY: an all-zero `statvfs` is a valid value of this plain C struct.
    let mut fs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open for the call and `fs` is a valid, writable struct.
    if unsafe { libc::fstatvfs(fd.as_raw_fd(), &mut fs) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(MountState {
        mount_root: stx.stx_attributes & root_bit != 0,
        read_only: fs.f_flag & libc::ST_RDONLY != 0,
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
    fn opens_a_file_as_an_entry_but_never_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("repo")).unwrap();
        std::fs::write(root.join("repo/config"), "").unwrap();
        std::os::unix::fs::symlink("config", root.join("repo/linked")).unwrap();
        let file = open_entry(root.join("repo/config").to_str().unwrap()).unwrap();
        let meta = std::fs::symlink_metadata(root.join("repo/config")).unwrap();
        assert_eq!(file.identity.inode, meta.ino());
        assert!(!file.is_dir);
        assert!(
            open_entry(root.join("repo").to_str().unwrap())
                .unwrap()
                .is_dir
        );
        assert!(matches!(
            open_entry(root.join("repo/linked").to_str().unwrap()),
            Err(PinError::Link { .. })
        ));
        // Only the last component may be a file.
        assert!(matches!(
            open_entry(root.join("repo/config/x").to_str().unwrap()),
            Err(PinError::NotAFolder { .. })
        ));
        // A folder that is no mount of its own is told apart from the root, which is one.
        let inner = mount_state(&file.fd).unwrap();
        assert!(!inner.mount_root, "{inner:?}");
        let root_state = mount_state(&open_folder("/").unwrap().fd).unwrap();
        assert!(root_state.mount_root, "{root_state:?}");
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
