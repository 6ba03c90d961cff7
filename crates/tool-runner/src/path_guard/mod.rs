//! The path guard: every file tool's path goes through [`PathGuard::resolve`] before any
//! operation, and the operation then uses the handles it returns, never the path text.
//!
//! # How a path is resolved (and why a swapped symlink cannot redirect it)
//!
//! 1. The text is checked (no NUL, not empty, at most 4096 bytes, components at most 255) and
//!    made absolute against the working folder. `..` stays a step of its own.
//! 2. The longest granted root whose path (as configured, or its canonical form) prefixes the
//!    leading names is the starting point; none means "outside the session's folders".
//! 3. The rest is walked one component at a time, each opened with
//!    `O_PATH | O_NOFOLLOW` *relative to the already-open parent directory*: the open goes
//!    through `/proc/self/fd/<parent>/<name>`, which the kernel resolves from the parent's
//!    open file, not from any path text. A symlink met on the way is read and its target is
//!    walked by the same rules (absolute targets start again at step 2; at most 40 links).
//!    `..` pops to the parent handle we already hold; `..` above a root leaves it, and the
//!    remaining path starts again at step 2.
//! 4. Directories are identified by device and inode: entering a directory that *is* a granted
//!    root (a nested or aliased grant) switches to that root and its mode.
//!
//! Because each step holds an open handle to a directory that was verified to lie inside a
//! root, replacing any component with a symlink after it was checked changes nothing: the
//! walk never goes back through path text. Tools then act through the handles: reads reopen
//! the final entry's handle (`/proc/self/fd/<n>`), writes create a temporary file and rename
//! it inside the parent handle, deletes unlink inside the parent handle.
//!
//! The remaining window is a directory we hold being *moved* out of the roots during a call;
//! that needs a process that can already write outside the roots, which the sandbox forbids
//! (and in direct mode, `run_bash` could do anything anyway).
//!
//! Hard links cannot be seen through a path: a file inside a root may share its inode with
//! one outside. Reads of such files are allowed (the file's content is reachable through a
//! root). Writes never change a file in place (temporary file and rename), and in addition
//! every write tool refuses an existing regular file with more than one link, so a write can
//! never even appear to change a file whose other name may lie outside the roots.

mod lexical;
mod walk;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use tool_protocol::{ErrorCode, RootMode};

use crate::error::ToolError;
use crate::sys;

pub use lexical::{MAX_NAME_BYTES, MAX_PATH_BYTES};

/// A folder the runner serves, opened once at start.
#[derive(Debug)]
pub struct GrantedRoot {
    /// As configured (absolute, normalised): results and errors name paths under it.
    path: PathBuf,
    mode: RootMode,
    /// Names of `path` and of its canonical form; both are accepted as prefixes.
    aliases: Vec<Vec<OsString>>,
    dir: File,
    dev: u64,
    ino: u64,
}

impl GrantedRoot {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn mode(&self) -> RootMode {
        self.mode
    }
}

/// A configuration the guard cannot start with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupError {
    pub path: String,
    pub problem: String,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.problem)
    }
}

impl std::error::Error for SetupError {}

fn setup_error(path: &str, problem: impl Into<String>) -> SetupError {
    SetupError {
        path: path.to_owned(),
        problem: problem.into(),
    }
}

/// Whether a final symlink is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalLink {
    /// Act on what the link points to (read, write, list).
    Follow,
    /// Act on the link itself (stat, delete).
    Keep,
}

/// How to resolve a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub final_link: FinalLink,
    /// Create missing folders on the way (only inside read-write roots).
    pub create_parents: bool,
}

impl Options {
    pub const FOLLOW: Options = Options {
        final_link: FinalLink::Follow,
        create_parents: false,
    };
    pub const KEEP_LINK: Options = Options {
        final_link: FinalLink::Keep,
        create_parents: false,
    };
    pub const CREATE_PARENTS: Options = Options {
        final_link: FinalLink::Follow,
        create_parents: true,
    };
}

/// An existing entry: an `O_PATH` handle to it and what it was when opened.
#[derive(Debug)]
pub struct Existing {
    pub handle: File,
    pub meta: Metadata,
}

/// Where a resolved path lives.
#[derive(Debug)]
pub enum Location {
    /// The path is a granted root.
    Root { dir: File, meta: Metadata },
    /// A name inside an open parent folder; `existing` is `None` when nothing has that name.
    Entry {
        parent: File,
        name: OsString,
        existing: Option<Existing>,
    },
}

/// A path the guard accepted: its real absolute path, the mode of the root that governs it,
/// and handles to act through.
#[derive(Debug)]
pub struct Resolved {
    pub path: PathBuf,
    pub mode: RootMode,
    pub location: Location,
}

impl Resolved {
    /// The path as results and messages show it.
    pub fn display(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }

    pub fn is_root(&self) -> bool {
        matches!(self.location, Location::Root { .. })
    }

    /// Refuses when the path lies in a read-only root.
    pub fn require_writable(&self) -> Result<(), ToolError> {
        match self.mode {
            RootMode::ReadWrite => Ok(()),
            RootMode::ReadOnly => Err(ToolError::read_only(self.display())),
        }
    }

    /// The entry's handle and metadata, or `not_found`.
    pub fn existing(&self) -> Result<(&File, &Metadata), ToolError> {
        match &self.location {
            Location::Root { dir, meta } => Ok((dir, meta)),
            Location::Entry {
                existing: Some(e), ..
            } => Ok((&e.handle, &e.meta)),
            Location::Entry { existing: None, .. } => Err(ToolError::not_found(self.display())),
        }
    }
}

/// The granted roots and the working folder; resolves tool paths against them.
#[derive(Debug)]
pub struct PathGuard {
    roots: Vec<GrantedRoot>,
    cwd: PathBuf,
}

impl PathGuard {
    /// Opens every root (which must be an absolute path to an existing folder, without `..`)
    /// and checks the working folder (default: the first root) lies inside them.
    pub fn new(roots: &[(String, RootMode)], cwd: Option<&str>) -> Result<Self, SetupError> {
        if roots.is_empty() {
            return Err(setup_error("--root", "at least one folder must be granted"));
        }
        let mut granted = Vec::with_capacity(roots.len());
        for (text, mode) in roots {
            granted.push(open_root(text, *mode)?);
        }
        let mut guard = PathGuard {
            cwd: granted[0].path.clone(),
            roots: granted,
        };
        if let Some(cwd) = cwd {
            if !cwd.starts_with('/') {
                return Err(setup_error(
                    cwd,
                    "the working folder must be an absolute path",
                ));
            }
            let resolved = guard
                .resolve("--cwd", cwd, Options::FOLLOW)
                .map_err(|e| setup_error(cwd, e.message))?;
            let (_, meta) = resolved
                .existing()
                .map_err(|e| setup_error(cwd, e.message))?;
            if !meta.is_dir() {
                return Err(setup_error(cwd, "the working folder is not a folder"));
            }
            guard.cwd = resolved.path;
        }
        Ok(guard)
    }

    pub fn roots(&self) -> &[GrantedRoot] {
        &self.roots
    }

    /// The folder relative paths resolve against.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Resolves `input` (the argument `field` of a call) or says why it is refused.
    pub fn resolve(
        &self,
        field: &str,
        input: &str,
        options: Options,
    ) -> Result<Resolved, ToolError> {
        lexical::check(field, input)?;
        let mut parts = lexical::split(OsStr::new(input));
        if !input.starts_with('/') {
            let mut absolute = lexical::split(self.cwd.as_os_str());
            absolute.append(&mut parts);
            parts = absolute;
        }
        walk::Walk::new(self, input, options).run(parts)
    }

    /// The root whose directory has this identity.
    pub(crate) fn root_by_identity(&self, dev: u64, ino: u64) -> Option<usize> {
        // The last match wins, so a later (more specific) grant of the same folder decides.
        self.roots
            .iter()
            .rposition(|root| root.dev == dev && root.ino == ino)
    }
}

fn open_root(text: &str, mode: RootMode) -> Result<GrantedRoot, SetupError> {
    if !text.starts_with('/') {
        return Err(setup_error(
            text,
            "a granted folder must be an absolute path",
        ));
    }
    if text.contains('\0') {
        return Err(setup_error(
            text,
            "a granted folder must not contain a NUL byte",
        ));
    }
    if lexical::split(OsStr::new(text)).contains(&lexical::Part::Parent) {
        return Err(setup_error(text, "a granted folder must not contain `..`"));
    }
    let names = lexical::names(OsStr::new(text));
    let mut path = PathBuf::from("/");
    path.extend(&names);
    let dir = OpenOptions::new()
        .read(true)
        .custom_flags(sys::O_PATH | sys::O_DIRECTORY)
        .open(&path)
        .map_err(|e| setup_error(text, format!("cannot open the folder: {e}")))?;
    let meta = dir
        .metadata()
        .map_err(|e| setup_error(text, format!("cannot stat the folder: {e}")))?;
    // The guard opens everything through /proc/self/fd; prove that works here and now.
    let through_proc = std::fs::metadata(proc_path(&dir)).map_err(|e| {
        setup_error(
            text,
            format!("the path guard needs /proc mounted (opening /proc/self/fd failed: {e})"),
        )
    })?;
    if (through_proc.dev(), through_proc.ino()) != (meta.dev(), meta.ino()) {
        return Err(setup_error(
            text,
            "/proc/self/fd does not show this process's files",
        ));
    }
    let canonical = std::fs::canonicalize(&path)
        .map_err(|e| setup_error(text, format!("cannot resolve the folder: {e}")))?;
    let mut aliases = vec![names];
    let canonical_names = lexical::names(canonical.as_os_str());
    if !aliases.contains(&canonical_names) {
        aliases.push(canonical_names);
    }
    Ok(GrantedRoot {
        path,
        mode,
        aliases,
        dev: meta.dev(),
        ino: meta.ino(),
        dir,
    })
}

/// `/proc/self/fd/<n>`: the open file itself, whatever its path is now.
pub fn proc_path(file: &File) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

/// `/proc/self/fd/<dir>/<name>`: `name` looked up inside the open folder `dir`.
pub fn child_path(dir: &File, name: &OsStr) -> PathBuf {
    let mut path = proc_path(dir);
    path.push(name);
    path
}

/// Opens `name` inside `dir` as an `O_PATH` handle without following a final symlink.
pub fn open_entry(dir: &File, name: &OsStr) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(sys::O_PATH | sys::O_NOFOLLOW)
        .open(child_path(dir, name))
}

/// Opens an entry we hold a handle to for reading (the same inode, never a path lookup).
/// Non-blocking, so a FIFO that slipped through cannot hang the call.
pub fn reopen_for_reading(handle: &File) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(sys::O_NONBLOCK)
        .open(proc_path(handle))
}

/// The error for a path that names no existing folder on the way.
pub(crate) fn missing_folder(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::NotFound,
        format!("{}: folder not found", path.display()),
    )
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
