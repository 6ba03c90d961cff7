//! A depth-first walk of a folder that never follows a symbolic link and never leaves it.
//!
//! * Entries come in a deterministic order: each folder's entries sorted by name (bytes),
//!   a folder before its contents; so the relative paths come out in [`Path`] order.
//! * A symbolic link is reported as [`EntryKind::Symlink`] and neither read nor entered,
//!   wherever it points. Kinds come from the folder listing (`lstat` semantics).
//! * Every folder below the base is opened from its parent's handle (`openat(2)` with
//!   `O_NOFOLLOW`) and listed through that handle, and each entry carries the handle of its
//!   folder: files are opened from it ([`open_entry`], `O_NOFOLLOW`), never by path. So a file
//!   or folder swapped for a link after the listing is refused, and a folder renamed or
//!   swapped above cannot redirect the walk out of the tree. Opening from a handle also costs
//!   the kernel one lookup instead of one per path component.
//! * `.git` is always skipped; `.gitignore` files are honoured on request (their rules apply
//!   to their own folder and below; files above the base are not read).
//! * Entries below the base that cannot be read (permission denied, vanished) are skipped;
//!   only a failure on the base itself is an error.
//! * The walk checks `cancel` before every entry.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::SearchError;
use super::gitignore::{Gitignore, IgnoreStack};
use crate::sys;

/// `.gitignore` files larger than this are not read (their rules are not applied).
const MAX_GITIGNORE_BYTES: u64 = 1 << 20;

/// What an entry is, from the folder listing (a link is never resolved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// A socket, FIFO or device.
    Other,
}

/// One entry found by the walk.
#[derive(Debug)]
pub struct Entry<'a> {
    /// The base joined with the relative path.
    pub path: &'a Path,
    /// Relative to the base, components joined by `/` (lossy for names that are not UTF-8).
    pub relative: &'a str,
    /// The components of `relative`.
    pub components: &'a [&'a str],
    pub kind: EntryKind,
    /// The open folder holding the entry, and the entry's name in it.
    pub folder: &'a Arc<File>,
    pub name: &'a OsStr,
}

/// What the walk does after visiting an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    /// Go on (and enter this entry if it is a folder).
    Continue,
    /// Go on, but do not enter this folder.
    SkipDir,
    /// End the walk.
    Stop,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkOptions {
    /// Skip what `.gitignore` files under the base ignore.
    pub respect_gitignore: bool,
}

/// A folder being listed: its entries not yet visited, in reverse order (popped from the end).
struct Frame {
    folder: Arc<File>,
    path: PathBuf,
    relative: String,
    depth: usize,
    ignore: IgnoreStack,
    pending: Vec<(OsString, EntryKind)>,
}

/// Walks the folder `base`, calling `visit` for every entry below it (not for `base`).
///
/// `base` must be a folder; the caller resolves and authorises it, so a link at `base` itself
/// is followed (nothing below it is).
pub fn walk(
    base: &Path,
    options: WalkOptions,
    cancel: &AtomicBool,
    mut visit: impl FnMut(&Entry<'_>) -> Visit,
) -> Result<(), SearchError> {
    // The base itself is followed: the caller resolved and authorised it (it may be an open
    // handle such as `/proc/self/fd/<n>`). Nothing below it is.
    let metadata = fs::metadata(base).map_err(|source| SearchError::Io {
        path: base.to_path_buf(),
        source,
    })?;
    if !metadata.is_dir() {
        return Err(SearchError::Io {
            path: base.to_path_buf(),
            source: io::Error::new(io::ErrorKind::NotADirectory, "is not a folder"),
        });
    }
    let base_error = |source| SearchError::Io {
        path: base.to_path_buf(),
        source,
    };
    let folder = OpenOptions::new()
        .read(true)
        .custom_flags(sys::O_DIRECTORY)
        .open(base)
        .map_err(base_error)?;
    let entries = list_folder(&handle_path(&folder)).map_err(base_error)?;
    let ignore = next_ignore(&IgnoreStack::empty(), options, &folder, 0, &entries);
    let mut stack = vec![Frame {
        folder: Arc::new(folder),
        path: base.to_path_buf(),
        relative: String::new(),
        depth: 0,
        ignore,
        pending: entries,
    }];
    while let Some(frame) = stack.last_mut() {
        if cancel.load(Ordering::Relaxed) {
            return Err(SearchError::Cancelled);
        }
        let Some((name, kind)) = frame.pending.pop() else {
            stack.pop();
            continue;
        };
        if name == ".git" {
            continue;
        }
        let name_text = name.to_string_lossy();
        let relative = if frame.relative.is_empty() {
            name_text.into_owned()
        } else {
            format!("{}/{name_text}", frame.relative)
        };
        let components: Vec<&str> = relative.split('/').collect();
        let is_dir = kind == EntryKind::Dir;
        if options.respect_gitignore && frame.ignore.is_ignored(&components, is_dir) {
            continue;
        }
        let path = frame.path.join(&name);
        let decision = visit(&Entry {
            path: &path,
            relative: &relative,
            components: &components,
            kind,
            folder: &frame.folder,
            name: &name,
        });
        match decision {
            Visit::Stop => return Ok(()),
            Visit::SkipDir => continue,
            Visit::Continue => {}
        }
        if !is_dir {
            continue;
        }
        // Opened from the parent's handle without following a link: a folder swapped for a
        // link since its parent was listed is not entered. One that cannot be opened or
        // listed is skipped.
        let Ok(folder) = sys::open_at(
            frame.folder.as_ref(),
            &name,
            sys::O_DIRECTORY | sys::O_NOFOLLOW | sys::O_NONBLOCK,
        ) else {
            continue;
        };
        let Ok(entries) = list_folder(&handle_path(&folder)) else {
            continue;
        };
        let depth = frame.depth + 1;
        let ignore = next_ignore(&frame.ignore, options, &folder, depth, &entries);
        stack.push(Frame {
            folder: Arc::new(folder),
            path,
            relative,
            depth,
            ignore,
            pending: entries,
        });
    }
    Ok(())
}

/// The entries of a folder, sorted by name in reverse (the walk pops from the end).
fn list_folder(path: &Path) -> io::Result<Vec<(OsString, EntryKind)>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(path)? {
        let Ok(entry) = entry else { continue };
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let kind = if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        entries.push((entry.file_name(), kind));
    }
    entries.sort_unstable_by(|a, b| b.0.cmp(&a.0));
    Ok(entries)
}

/// The path through which the process reaches an open handle's file.
fn handle_path(file: &File) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

/// `stack` plus the folder's own `.gitignore`, when the walk honours them and it has one
/// (a regular file: a linked `.gitignore` is not followed either).
fn next_ignore(
    stack: &IgnoreStack,
    options: WalkOptions,
    folder: &File,
    depth: usize,
    entries: &[(OsString, EntryKind)],
) -> IgnoreStack {
    let has_gitignore = entries
        .iter()
        .any(|(name, kind)| name == ".gitignore" && *kind == EntryKind::File);
    if !options.respect_gitignore || !has_gitignore {
        return stack.clone();
    }
    let Ok(file) = open_entry(folder, OsStr::new(".gitignore")) else {
        return stack.clone();
    };
    let mut content = Vec::new();
    if file
        .take(MAX_GITIGNORE_BYTES)
        .read_to_end(&mut content)
        .is_err()
    {
        return stack.clone();
    }
    stack.push(depth, Gitignore::parse(&String::from_utf8_lossy(&content)))
}

/// Opens the entry `name` of the open folder `folder` for reading, without following a
/// symbolic link (`O_NOFOLLOW`: a link gives an error) and without blocking on a FIFO
/// (`O_NONBLOCK`).
pub(crate) fn open_entry(folder: &File, name: &OsStr) -> io::Result<File> {
    sys::open_at(folder, name, sys::O_NOFOLLOW | sys::O_NONBLOCK)
}

/// Opens an authorised base file (a link there, such as `/proc/self/fd/<n>`, is followed)
/// without blocking on a FIFO.
pub(crate) fn open_base_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(sys::O_NONBLOCK)
        .open(path)
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
