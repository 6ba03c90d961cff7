//! A depth-first walk of a folder that never follows a symbolic link and never leaves it.
//!
//! * Entries come in a deterministic order: each folder's entries sorted by name (bytes),
//!   a folder before its contents; so the relative paths come out in [`Path`] order.
//! * A symbolic link is reported as [`EntryKind::Symlink`] and neither read nor entered,
//!   wherever it points. Kinds come from the folder listing (`lstat` semantics), and files are
//!   opened with `O_NOFOLLOW` ([`open_no_follow`]), so a file swapped for a link after the
//!   listing is refused too.
//! * `.git` is always skipped; `.gitignore` files are honoured on request (their rules apply
//!   to their own folder and below; files above the base are not read).
//! * Entries below the base that cannot be read (permission denied, vanished) are skipped;
//!   only a failure on the base itself is an error.
//! * The walk checks `cancel` before every entry.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::SearchError;
use super::gitignore::{Gitignore, IgnoreStack};

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
    let entries = list_folder(base).map_err(|source| SearchError::Io {
        path: base.to_path_buf(),
        source,
    })?;
    let ignore = next_ignore(&IgnoreStack::empty(), options, base, 0, &entries);
    let mut stack = vec![Frame {
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
        });
        match decision {
            Visit::Stop => return Ok(()),
            Visit::SkipDir => continue,
            Visit::Continue => {}
        }
        if !is_dir {
            continue;
        }
        // Checked again just before listing: a folder swapped for a link since its parent
        // was listed is not entered. One that cannot be listed is skipped.
        if !fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Ok(entries) = list_folder(&path) else {
            continue;
        };
        let depth = frame.depth + 1;
        let ignore = next_ignore(&frame.ignore, options, &path, depth, &entries);
        stack.push(Frame {
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

/// `stack` plus the folder's own `.gitignore`, when the walk honours them and it has one
/// (a regular file: a linked `.gitignore` is not followed either).
fn next_ignore(
    stack: &IgnoreStack,
    options: WalkOptions,
    folder: &Path,
    depth: usize,
    entries: &[(OsString, EntryKind)],
) -> IgnoreStack {
    let has_gitignore = entries
        .iter()
        .any(|(name, kind)| name == ".gitignore" && *kind == EntryKind::File);
    if !options.respect_gitignore || !has_gitignore {
        return stack.clone();
    }
    let Ok(file) = open_no_follow(&folder.join(".gitignore")) else {
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

/// Opens a file for reading without following a final symbolic link (`O_NOFOLLOW`: a link
/// gives an error) and without blocking on a FIFO (`O_NONBLOCK`).
pub(crate) fn open_no_follow(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(open_flags::NO_FOLLOW | open_flags::NON_BLOCK)
        .open(path)
}

/// Opens an authorised base file (a link there, such as `/proc/self/fd/<n>`, is followed)
/// without blocking on a FIFO.
pub(crate) fn open_base_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(open_flags::NON_BLOCK)
        .open(path)
}

/// `open(2)` flag values, which differ between platforms (std does not export them).
mod open_flags {
    #[cfg(all(
        target_os = "linux",
        any(
            target_arch = "aarch64",
            target_arch = "arm",
            target_arch = "m68k",
            target_arch = "powerpc",
            target_arch = "powerpc64"
        )
    ))]
    pub(super) const NO_FOLLOW: i32 = 0o100_000;
    #[cfg(all(
        target_os = "linux",
        not(any(
            target_arch = "aarch64",
            target_arch = "arm",
            target_arch = "m68k",
            target_arch = "powerpc",
            target_arch = "powerpc64"
        ))
    ))]
    pub(super) const NO_FOLLOW: i32 = 0o400_000;
    #[cfg(target_os = "linux")]
    pub(super) const NON_BLOCK: i32 = if cfg!(any(target_arch = "mips", target_arch = "mips64")) {
        0x80
    } else if cfg!(target_arch = "sparc64") {
        0x4000
    } else {
        0o4000
    };
    #[cfg(target_vendor = "apple")]
    pub(super) const NO_FOLLOW: i32 = 0x0100;
    #[cfg(target_vendor = "apple")]
    pub(super) const NON_BLOCK: i32 = 0x0004;
    #[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
    compile_error!("tool-runner's search needs the O_NOFOLLOW value of this platform");
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
