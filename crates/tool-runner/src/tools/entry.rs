//! Small facts about entries shared by the tools: kinds, times, and the checks a write target
//! must pass.

use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use tool_protocol::{ErrorCode, FileKind};

use crate::error::ToolError;
use crate::path_guard::{self, Location, Resolved};

pub fn kind(meta: &Metadata) -> FileKind {
    let file_type = meta.file_type();
    if file_type.is_symlink() {
        FileKind::Symlink
    } else if file_type.is_dir() {
        FileKind::Directory
    } else if file_type.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    }
}

/// What a non-regular, non-folder entry is, for messages.
pub fn special_kind(meta: &Metadata) -> &'static str {
    let file_type = meta.file_type();
    if file_type.is_fifo() {
        "a named pipe"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Modification time in milliseconds since the Unix epoch.
pub fn modified_ms(meta: &Metadata) -> Option<i64> {
    meta.mtime()
        .checked_mul(1000)?
        .checked_add(meta.mtime_nsec() / 1_000_000)
}

/// Opens the resolved path for reading when it is a regular file.
pub fn open_regular(resolved: &Resolved) -> Result<(File, Metadata), ToolError> {
    let (handle, meta) = resolved.existing()?;
    if meta.is_dir() {
        return Err(ToolError::is_a_directory(resolved.display()));
    }
    if !meta.is_file() {
        return Err(ToolError::new(
            ErrorCode::Io,
            format!(
                "{}: {}, not a regular file",
                resolved.display(),
                special_kind(meta)
            ),
        ));
    }
    let file = path_guard::reopen_for_reading(handle)
        .map_err(|e| ToolError::io(resolved.display(), &e))?;
    // Read the size from the open file: it is the one we will read.
    let meta = file
        .metadata()
        .map_err(|e| ToolError::io(resolved.display(), &e))?;
    Ok((file, meta))
}

/// A place a write tool may put a file: a name in an open folder of a read-write root, with the
/// permission bits to keep when it replaces a file.
pub struct WriteTarget<'a> {
    pub parent: &'a File,
    pub name: &'a OsStr,
    /// Permission bits of the file being replaced; `None` when it is new.
    pub keep_mode: Option<u32>,
}

impl<'a> WriteTarget<'a> {
    /// Checks that `resolved` may be written: in a read-write root, not a folder or special
    /// file, and not a file with more than one hard link (its other names may lie outside the
    /// session's folders; see the path guard's documentation).
    pub fn new(resolved: &'a Resolved) -> Result<Self, ToolError> {
        resolved.require_writable()?;
        let Location::Entry {
            parent,
            name,
            existing,
        } = &resolved.location
        else {
            return Err(ToolError::is_a_directory(resolved.display()));
        };
        let keep_mode = match existing {
            None => None,
            Some(existing) => {
                let meta = &existing.meta;
                if meta.is_dir() {
                    return Err(ToolError::is_a_directory(resolved.display()));
                }
                if !meta.is_file() {
                    return Err(ToolError::new(
                        ErrorCode::Io,
                        format!(
                            "{}: {}; only regular files are written",
                            resolved.display(),
                            special_kind(meta)
                        ),
                    ));
                }
                if meta.nlink() > 1 {
                    return Err(ToolError::new(
                        ErrorCode::PermissionDenied,
                        format!(
                            "{}: has {} hard links and another one may lie outside the \
                             session's folders; files with more than one link are not changed",
                            resolved.display(),
                            meta.nlink()
                        ),
                    ));
                }
                // Permission bits only: set-id bits are never carried onto new content.
                Some(meta.mode() & 0o1777)
            }
        };
        Ok(Self {
            parent,
            name,
            keep_mode,
        })
    }
}
