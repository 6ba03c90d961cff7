//! Unix socket paths of any length.
//!
//! A socket's address holds at most 107 bytes of path (`sun_path`), and a wall's host folder
//! under a long home folder easily passes that. [`SocketAddress`] keeps such a socket's folder
//! open and names the socket through `/proc/self/fd/N/NAME` instead, which the kernel resolves
//! to the same file; short paths are used as they are.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The most path bytes a socket address holds (`sun_path` is 108 bytes with its NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// A path `bind` and `connect` accept for a socket at a path of any length. Keep it alive
/// until the call that uses [`SocketAddress::path`] has returned.
#[derive(Debug)]
pub struct SocketAddress {
    path: PathBuf,
    /// The socket's folder, held open while `path` goes through `/proc/self/fd`.
    _folder: Option<File>,
}

impl SocketAddress {
    /// An address for the socket at `path`.
    ///
    /// # Errors
    /// The folder of a long path cannot be opened, or the socket's own name is too long.
    pub fn new(path: &Path) -> std::io::Result<Self> {
        if path.as_os_str().len() <= MAX_SOCKET_PATH {
            return Ok(Self {
                path: path.to_path_buf(),
                _folder: None,
            });
        }
        let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(too_long(path));
        };
        let folder = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(folder)?;
        let mut short = format!("/proc/self/fd/{}/", folder.as_raw_fd()).into_bytes();
        short.extend_from_slice(name.as_bytes());
        if short.len() > MAX_SOCKET_PATH {
            return Err(too_long(path));
        }
        Ok(Self {
            path: PathBuf::from(OsStr::from_bytes(&short)),
            _folder: Some(folder),
        })
    }

    /// The path to hand to `bind` or `connect`.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn too_long(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "{}: a socket's own name may hold at most {} bytes",
            path.display(),
            MAX_SOCKET_PATH - "/proc/self/fd/NNNN/".len()
        ),
    )
}

#[cfg(test)]
#[path = "socket_address_tests.rs"]
mod tests;
